"""Run one generated plan through the engine and compare it with DuckDB's answer to the same SQL."""

from __future__ import annotations

from collections.abc import Sequence

from oracles import DuckDBOracle, assert_same_result

from .cache import Generated


def run_generated(generated: Generated, spark, resolver) -> tuple[list[str], list[tuple]]:
    """The plan's columns and rows on Spark (load_plan + to_dataframe, as the corpus tests run plans)."""
    from substrait_spark.consumer import load_plan, to_dataframe

    assert generated.plan is not None, f"{generated.name}: the producer wrote no plan: {generated.error}"
    df = to_dataframe(load_plan(str(generated.plan)), spark, resolver)
    return list(df.columns), [tuple(r) for r in df.collect()]


def assert_gives_duckdb_answer(
    generated: Generated, sql: str, spark, resolver, db: DuckDBOracle, ordered_keys: Sequence[int] = ()
) -> None:
    columns, rows = run_generated(generated, spark, resolver)
    expected = db.run(sql)
    assert_same_result(
        rows,
        expected.rows,
        ordered_keys=ordered_keys,
        actual_columns=columns,
        expected_columns=expected.columns,
        context=f"{generated.name} ({generated.plan}) vs DuckDB running {sql.strip()[:300]!r}",
    )
