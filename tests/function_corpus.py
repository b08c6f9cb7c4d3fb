"""Helpers for ``test_function_relation_corpus.py``: the consumer-testing function/relation snapshot corpus.

The corpus (``../shared/corpus/consumer-testing-function-relation-snapshots``, see its README.txt) holds one
small query per plan, written by several producers for the same consumer-testing test. A plan's file name is
``<test>-<producer>_plan.json``; no suffix means ibis-substrait from consumer-testing's ibis expressions.
Plans of one test (same folder, same test name) must give the same result.

Tables: the TPC-H tables (tpchgen-cli parquet, as the TPC-H corpus tests) and consumer-testing's own
table ``t`` (``load_custom_duckdb_table`` in consumer-testing's ``substrait_consumer/functional/common.py``:
``a BIGINT, b BIGINT, c BOOLEAN, d BOOLEAN`` and ten rows), registered here as a temp view.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CORPUS_NAME = "consumer-testing-function-relation-snapshots"

# File-name suffixes, longest first (``-validate-isthmus`` also ends in ``-isthmus``).
PRODUCER_SUFFIXES = ("validate-isthmus", "validate-datafusion", "isthmus", "duckdb", "datafusion", "ibis")
IBIS_EXPR = "ibis-expr"  # no suffix: ibis-substrait from consumer-testing's ibis expressions
# Which plan of a group is the reference the others are compared with: the first present, in this order.
REFERENCE_ORDER = ("isthmus", "duckdb", "datafusion", "ibis", IBIS_EXPR, "validate-isthmus", "validate-datafusion")

TABLE_T_VIEW = "consumer_testing_t"
TABLE_T_SCHEMA = "a BIGINT, b BIGINT, c BOOLEAN, d BOOLEAN"
TABLE_T_ROWS: list[tuple[int | None, int, bool, bool]] = [
    (1, 1, True, True),
    (2, 1, False, True),
    (3, 1, True, True),
    (-4, 1, True, True),
    (5, 1, False, True),
    (-6, 2, True, True),
    (7, 2, False, True),
    (8, 2, True, True),
    (9, 2, False, True),
    (None, 2, False, True),
]

# A result with more rows than this is compared by a digest computed in Spark (row count and the sum of a hash
# of each row's values as strings — a multiset fingerprint): collecting cross_join's 22.5 million rows at
# SF 0.01 would exhaust the driver.
MAX_COLLECTED_ROWS = 100_000
DIGEST_COLUMNS = ["rows", "sum of xxhash64(row as strings)"]


@dataclass(frozen=True)
class CorpusPlan:
    path: str  # relative to the corpus directory, e.g. "function/arithmetic/abs-duckdb_plan.json"
    group: str  # folder + test name, e.g. "function/arithmetic/abs"
    producer: str  # a PRODUCER_SUFFIXES entry or IBIS_EXPR

    @property
    def name(self) -> str:
        """The plan's name in the exception tables: its path without ``_plan.json``."""
        return self.path.removesuffix("_plan.json")


def split_name(stem: str) -> tuple[str, str]:
    """``abs-validate-isthmus`` -> (``abs``, ``validate-isthmus``); ``abs`` -> (``abs``, ``ibis-expr``)."""
    for suffix in PRODUCER_SUFFIXES:
        if stem.endswith("-" + suffix):
            return stem[: -len(suffix) - 1], suffix
    return stem, IBIS_EXPR


def discover(root: Path) -> list[CorpusPlan]:
    plans = []
    for file in sorted(root.rglob("*_plan.json")):
        rel = file.relative_to(root).as_posix()
        folder, _, base = rel.rpartition("/")
        test, producer = split_name(base.removesuffix("_plan.json"))
        plans.append(CorpusPlan(rel, f"{folder}/{test}", producer))
    return plans


def groups_of(plans: list[CorpusPlan]) -> dict[str, list[CorpusPlan]]:
    """Plans by group, each group in REFERENCE_ORDER."""
    out: dict[str, list[CorpusPlan]] = {}
    for p in plans:
        out.setdefault(p.group, []).append(p)
    return {g: sorted(ps, key=lambda p: REFERENCE_ORDER.index(p.producer)) for g, ps in sorted(out.items())}


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


def tables_read(plan_json: dict[str, Any]) -> set[str]:
    """Lower-cased last name part of every named table the plan reads."""
    return {n["namedTable"]["names"][-1].lower() for n in _walk(plan_json) if "namedTable" in n}


def _only_rel(rel: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    (kind, body), *_ = rel.items()
    return kind, body


def order_keys(plan_json: dict[str, Any]) -> tuple[int, ...]:
    """Output positions of the ORDER BY keys when the plan's result is sorted, else ().

    The result is sorted when the root's input is a SortRel, possibly under FetchRels. A sort's and a fetch's
    output is their input's, so the sort's field references are output positions (through an emit, if any).
    A sort key that is not a plain field reference is not an output column: ordering is then not checked."""
    rel = plan_json["relations"][0]
    rel = rel.get("root", rel)["input"]
    emits: list[list[int]] = []
    while True:
        kind, body = _only_rel(rel)
        emit = body.get("common", {}).get("emit", {}).get("outputMapping")
        if kind == "fetch":
            if emit:
                emits.append(emit)
            rel = body["input"]
            continue
        if kind != "sort":
            return ()
        if emit:
            emits.append(emit)
        keys = []
        for s in body.get("sorts", []):
            ref = s.get("expr", {}).get("selection", {}).get("directReference", {}).get("structField")
            if ref is None:
                return tuple(keys)
            keys.append(ref.get("field", 0))
        for emit in reversed(emits):  # innermost first: a key position -> where that emit puts it
            keys = [emit.index(k) for k in keys if k in emit]
        return tuple(keys)


@dataclass
class Outcome:
    """What one plan did: rows and column names, or the error it raised."""

    plan: CorpusPlan
    rows: list[tuple] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    error: str | None = None  # "<ExceptionType>: <message>"
    order: tuple[int, ...] = ()
    seconds: float = 0.0

    @property
    def ran(self) -> bool:
        return self.error is None


def digest(df) -> tuple:
    """(row count, sum of each row's xxhash64 over its values cast to strings): equal multisets, equal digests."""
    from pyspark.sql import functions as F

    row_hash = F.xxhash64(*[F.coalesce(F.col(c).cast("string"), F.lit("\u0000NULL")) for c in df.columns])
    return tuple(df.agg(F.count(F.lit(1)), F.sum(row_hash)).first())


def table_t_arrow():
    """Table ``t`` as an Arrow table (for DuckDB and DataFusion)."""
    import pyarrow as pa

    types = {"BIGINT": pa.int64(), "BOOLEAN": pa.bool_()}
    fields = [(n, types[t]) for n, t in (c.strip().split() for c in TABLE_T_SCHEMA.split(","))]
    columns = list(zip(*TABLE_T_ROWS, strict=True))
    return pa.table({n: pa.array(col, t) for (n, t), col in zip(fields, columns, strict=True)})


def register_table_t(spark) -> None:
    spark.createDataFrame(TABLE_T_ROWS, TABLE_T_SCHEMA).createOrReplaceTempView(TABLE_T_VIEW)


def load(plan: CorpusPlan, root: Path) -> Any:
    """The plan loaded (`load_plan`), or the exception loading raised (`run_plan` records it)."""
    from substrait_spark.consumer import load_plan

    try:
        return load_plan(str(root / plan.path))
    except Exception as exc:  # recorded by run_plan
        return exc


def run_plan(plan: CorpusPlan, root: Path, spark, resolver, loaded: Any) -> Outcome:
    """Translate and collect one plan `load` gave (its plan, or the exception loading raised); any exception is
    recorded (first line of its message)."""
    from substrait_spark.consumer import SubstraitConsumer

    started = time.perf_counter()
    path = root / plan.path
    out = Outcome(plan, order=order_keys(json.loads(path.read_text(encoding="utf-8"))))
    consumer = None
    try:
        if isinstance(loaded, Exception):
            raise loaded
        consumer = SubstraitConsumer(spark, loaded.plan, resolver)
        df = consumer.root(0)
        out.columns = list(df.columns)
        out.rows = [tuple(r) for r in df.limit(MAX_COLLECTED_ROWS + 1).collect()]
        if len(out.rows) > MAX_COLLECTED_ROWS:
            out.rows, out.columns, out.order = [digest(df)], DIGEST_COLUMNS, ()
    except Exception as exc:  # every failure is recorded, then checked against the exception tables
        out.error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
    finally:
        if consumer is not None:
            consumer.close()
    out.seconds = time.perf_counter() - started
    return out
