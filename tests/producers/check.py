"""Run one generated plan through the engine and compare it with DuckDB's answer to the same SQL."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from oracles import DuckDBOracle, assert_same_result

from .cache import Generated


def run_generated(generated: Generated, spark, resolver) -> tuple[list[str], list[tuple]]:
    """The plan's columns and rows on Spark (load_plan + to_dataframe, as the corpus tests run plans)."""
    from substrait_spark.consumer import load_plan, to_dataframe

    assert generated.plan is not None, f"{generated.name}: the producer wrote no plan: {generated.error}"
    df = to_dataframe(load_plan(str(generated.plan)), spark, resolver)
    return list(df.columns), [tuple(r) for r in df.collect()]


def _exactly_equal(actual: list[tuple], expected: list[tuple], keys: Sequence[int]) -> bool:
    """Cheap first check (hashing, no sorting): the same rows exactly, as multisets, and the same ORDER BY key
    sequence. Values are tagged with whether they are booleans, so True never passes for 1."""

    def tagged(row: tuple) -> tuple:
        return tuple((isinstance(v, bool), v) for v in row)

    if len(actual) != len(expected) or Counter(map(tagged, actual)) != Counter(map(tagged, expected)):
        return False
    return all(tuple(a[k] for k in keys) == tuple(e[k] for k in keys) for a, e in zip(actual, expected, strict=True))


def assert_gives_duckdb_answer(
    generated: Generated, sql: str, spark, resolver, db: DuckDBOracle, ordered_keys: Sequence[int] = ()
) -> None:
    columns, rows = run_generated(generated, spark, resolver)
    assert_is_duckdbs_answer(generated, columns, rows, sql, db, ordered_keys)


def assert_is_duckdbs_answer(
    generated: Generated,
    columns: list[str],
    rows: list[tuple],
    sql: str,
    db: DuckDBOracle,
    ordered_keys: Sequence[int] = (),
) -> None:
    """The plan's result on Spark (columns, rows) is DuckDB's answer to the SQL."""
    expected = db.run(sql)
    if len(columns) == len(expected.columns) and _exactly_equal(rows, expected.rows, ordered_keys):
        return
    assert_same_result(
        rows,
        expected.rows,
        ordered_keys=ordered_keys,
        actual_columns=columns,
        expected_columns=expected.columns,
        context=f"{generated.name} ({generated.plan}) vs DuckDB running {sql.strip()[:300]!r}",
    )
