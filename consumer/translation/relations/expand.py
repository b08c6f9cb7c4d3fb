"""ExpandRel: every input row emitted once per duplicate, as Spark's own Expand operator.

Output columns (spec, algebra.proto): one per field definition (a consistent field's value, or the k-th
duplicate of a switching field — NULL where a switching field has fewer duplicates than the widest), then the
input columns beyond the definitions as they are, then an i64 with the duplicate's ordinal. Producers built on
substrait-java do not count that ordinal column; like the grouping-set index it may go unnamed at the root.

The translation is `DataFrame.unpivot`: the consistent fields and passed-through columns are its ids, each
duplicate a struct of the switching fields' k-th values. Spark's analyzer turns that into one `Expand` node
(a single pass over the input, the operator Spark itself uses for grouping sets), with the ordinal as the
unpivot's variable column.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T
from substrait import algebra_pb2 as alg

from ...errors import PlanInvalidError, UnsupportedFeatureError
from ..relation import Relation, column
from ..scope import Scope, Typed

if TYPE_CHECKING:
    from ..consumer import SubstraitConsumer


def _switching(cx: SubstraitConsumer, field: alg.ExpandRel.SwitchingField, scope: Scope, path: str) -> list[Typed]:
    dups = [cx.expression(e, scope, f"{path}.duplicates[{k}]") for k, e in enumerate(field.duplicates)]
    if not dups:
        raise PlanInvalidError("switching field with no duplicates", path)
    return dups


def _common_type(dups: list[Typed], path: str) -> T.DataType:
    """The switching field's type: its duplicates' (they may differ only in nullability, per the spec)."""
    typed = [d.type for d in dups if not isinstance(d.type, T.NullType)]
    if not typed:
        return T.NullType()
    first = typed[0]
    for t in typed[1:]:
        if type(t) is not type(first):
            raise PlanInvalidError(f"switching field duplicates of different types: {first} and {t}", path)
    return first


CORRELATED = "expand inside a correlated subquery"


def translate_expand(cx: SubstraitConsumer, rel: alg.ExpandRel, path: str, outer: Scope | None) -> Relation:
    source = cx.rel(rel.input, f"{path}.input", outer)
    if not source.can_defer():
        raise UnsupportedFeatureError(CORRELATED, path)
    scope = Scope(source, outer)
    ids: list[Column | str] = []
    switching: list[tuple[str, list[Typed], T.DataType]] = []  # (struct field name, duplicates, type)
    names: list[str] = []
    types: list[T.DataType] = []
    switched: set[str] = set()  # output names taken from the duplicate's struct
    for i, f in enumerate(rel.fields):
        p = f"{path}.fields[{i}]"
        kind = f.WhichOneof("field_type")
        name = cx.names.fresh()
        if kind == "consistent_field":
            value = cx.expression(f.consistent_field, scope, f"{p}.consistent_field")
            ids.append(value.col.alias(name))
            types.append(value.type)
        elif kind == "switching_field":
            dups = _switching(cx, f.switching_field, scope, f"{p}.switching_field")
            t = _common_type(dups, f"{p}.switching_field")
            switching.append((name, dups, t))
            switched.add(name)
            types.append(t)
        else:
            raise PlanInvalidError("expand field with nothing set", p)
        names.append(name)
    for j in range(len(rel.fields), len(source.names)):  # input columns beyond the definitions pass through
        name = cx.names.fresh()
        ids.append(source.col(j).alias(name))
        names.append(name)
        types.append(source.types[j])
    ordinal = cx.names.fresh()
    copies = max((len(d) for _, d, _ in switching), default=1)
    if not switching:
        df = source.frame.select(*ids, F.lit(0).cast(T.LongType()).alias(ordinal))
        return _expanded(cx, df, names, types, ordinal)
    value_name = cx.names.fresh()
    structs: list[Column | str] = []
    for k in range(copies):
        parts = [_duplicate(d, k, t).alias(n) for n, d, t in switching]
        structs.append(F.struct(*parts).alias(str(k)))
    variable = cx.names.fresh()
    df = source.frame.unpivot(ids, structs, variable, value_name)
    cols = [F.col(f"{value_name}.{n}").alias(n) if n in switched else column(n) for n in names]
    df = df.select(*cols, F.col(variable).cast(T.LongType()).alias(ordinal))
    return _expanded(cx, df, names, types, ordinal)


def _duplicate(dups: list[Typed], k: int, t: T.DataType) -> Column:
    """The k-th duplicate in the field's type; NULL past the last one."""
    value = dups[k].col if k < len(dups) else F.lit(None)
    return value if isinstance(t, T.NullType) else value.cast(t)


def _expanded(cx: SubstraitConsumer, df, names: list[str], types: list[T.DataType], ordinal: str) -> Relation:
    cx.grouping_index_columns.add(ordinal)  # a trailing index column some producers do not name
    return Relation(df, [*names, ordinal], [*types, T.LongType()])
