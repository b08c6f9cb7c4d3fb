"""ExchangeRel: redistribution of the input's rows, as Spark partitioning.

An exchange changes where rows are, never which rows there are, so its output is the input's relation over
a repartitioned frame:

- scatter_by_fields  -> `repartition(partition_count, *fields)`: Exchange hashpartitioning on the fields;
- single_target      -> `repartition(partition_count, bucket)`: rows with the same bucket number share a
  partition (Spark hashes the bucket number; it cannot be told to use it as the partition index);
- round_robin        -> `repartition(partition_count)`: Exchange RoundRobinPartitioning;
- broadcast          -> `F.broadcast(df)`: a broadcast hint, a join above sends this side to every executor.

`partition_count` 0 leaves the number to Spark (`spark.sql.shuffle.partitions`). Refused: multi_target (a row
sent to several targets has no meaning within one DataFrame — duplicating it would change the result) and
targets naming URIs or extended locations (a Spark job cannot send partitions elsewhere).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from substrait import algebra_pb2 as alg

from ...errors import PlanInvalidError, UnsupportedFeatureError
from ..relation import Relation
from ..scope import Scope

if TYPE_CHECKING:
    from ..consumer import SubstraitConsumer

ExchangeRel = alg.ExchangeRel
Partitioner = Callable[["SubstraitConsumer", ExchangeRel, Relation, Scope, str], DataFrame]


def _repartition(frame: DataFrame, rel: ExchangeRel, cols: list[Column]) -> DataFrame:
    """Hash-partitioned by `cols`, into the plan's partition count if it sets one."""
    return frame.repartition(rel.partition_count, *cols) if rel.partition_count else frame.repartition(*cols)


def _scatter(cx: SubstraitConsumer, rel: ExchangeRel, source: Relation, scope: Scope, path: str) -> DataFrame:
    fields = rel.scatter_by_fields.fields
    if not len(fields):
        raise PlanInvalidError("scatter exchange with no fields", f"{path}.scatter_by_fields.fields")
    cols = [
        cx.expression(alg.Expression(selection=f), scope, f"{path}.scatter_by_fields.fields[{i}]").col
        for i, f in enumerate(fields)
    ]
    return _repartition(source.frame, rel, cols)


def _single(cx: SubstraitConsumer, rel: ExchangeRel, source: Relation, scope: Scope, path: str) -> DataFrame:
    p = f"{path}.single_target.expression"
    if not rel.single_target.HasField("expression"):
        raise PlanInvalidError("single-target exchange with no bucket expression", p)
    return _repartition(source.frame, rel, [cx.expression(rel.single_target.expression, scope, p).col])


def _round_robin(cx: SubstraitConsumer, rel: ExchangeRel, source: Relation, scope: Scope, path: str) -> DataFrame:
    if not rel.partition_count:
        # Spark's repartition() without columns needs a count; the session's shuffle partitions is its default.
        count = int(cx.spark.conf.get("spark.sql.shuffle.partitions") or "200")
        return source.frame.repartition(count)
    return source.frame.repartition(rel.partition_count)


def _broadcast(cx: SubstraitConsumer, rel: ExchangeRel, source: Relation, scope: Scope, path: str) -> DataFrame:
    return F.broadcast(source.frame)


PARTITIONERS: dict[str, Partitioner] = {
    "scatter_by_fields": _scatter,
    "single_target": _single,
    "round_robin": _round_robin,
    "broadcast": _broadcast,
}
REFUSED = {
    "multi_target": "multi-target exchange: a row sent to several targets has no meaning within one DataFrame",
}

_TARGET_REFUSED = "exchange target with a URI or extended location (Spark cannot send partitions elsewhere)"


def translate_exchange(cx: SubstraitConsumer, rel: ExchangeRel, path: str, outer: Scope | None) -> Relation:
    source = cx.rel(rel.input, f"{path}.input", outer)
    kind = rel.WhichOneof("exchange_kind")
    if kind is None:
        raise PlanInvalidError("exchange with no kind set", path)
    if kind in REFUSED:
        raise UnsupportedFeatureError(REFUSED[kind], f"{path}.{kind}")
    if rel.partition_count < 0:
        raise PlanInvalidError(f"negative partition count {rel.partition_count}", f"{path}.partition_count")
    for i, t in enumerate(rel.targets):
        if t.WhichOneof("target_type") is not None:
            raise UnsupportedFeatureError(_TARGET_REFUSED, f"{path}.targets[{i}]")
    if not source.can_defer():
        source = source.materialized()
    return source.over(PARTITIONERS[kind](cx, rel, source, Scope(source, outer), path))


def refusals(rel: ExchangeRel, path: str) -> Iterator[tuple[str, str]]:
    """What the translation refuses in an exchange, as (feature, path), without translating (`analyze`)."""
    kind = rel.WhichOneof("exchange_kind")
    if kind in REFUSED:
        yield REFUSED[kind], f"{path}.{kind}"
    for i, t in enumerate(rel.targets):
        if t.WhichOneof("target_type") is not None:
            yield _TARGET_REFUSED, f"{path}.targets[{i}]"
