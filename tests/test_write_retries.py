"""A retried write whose plan counts its MODIFIED_RECORDS gets the rows the earlier try committed, read back from
that commit's snapshot and its parent — not recomputed from inputs that may have moved on, and not applied twice."""

from __future__ import annotations

import pytest
from plan_builder import PlanBuilder, WriteRel, aggregate, field, filter_, i64, lit, named, sorted_rows, write
from substrait_spark.consumer.errors import UnsupportedFeatureError
from test_write_steps import NAMES, TYPES, catalogs_fixture, content, ns_fixture, rows_of, run, table, values  # noqa: F401

pytestmark = [pytest.mark.spark, pytest.mark.iceberg]

W = WriteRel


def records_plan(rel, b: PlanBuilder | None = None):
    """The write's MODIFIED_RECORDS as the plan's output rows."""
    return (b or PlanBuilder()).plan(rel, NAMES)


def rows(report) -> list[tuple]:
    return sorted_rows(tuple(r) for r in report.outputs[0].preview)


@pytest.mark.parametrize(
    ("op", "mode", "expected"),
    [
        (W.WRITE_OP_INSERT, W.CREATE_MODE_UNSPECIFIED, rows_of([7, 8])),
        (W.WRITE_OP_CTAS, W.CREATE_MODE_APPEND_IF_EXISTS, rows_of([7, 8])),
        (W.WRITE_OP_CTAS, W.CREATE_MODE_REPLACE_IF_EXISTS, rows_of([7, 8])),
    ],
    ids=["insert", "ctas-append", "ctas-replace"],
)
def test_retry_returns_the_rows_the_earlier_try_inserted(lake, catalogs, ns, op, mode, expected):
    table(lake, ns, range(3))
    rel = write(
        [ns, "t"], values(rows_of([7, 8])), NAMES, TYPES, op=op, create_mode=mode, output=W.OUTPUT_MODE_MODIFIED_RECORDS
    )
    first = run(lake, catalogs, records_plan(rel), run_key="dag/r/i")
    after = content(lake, ns)
    again = run(lake, catalogs, records_plan(rel), run_key="dag/r/i")
    assert again.steps[0].status == "skipped" and content(lake, ns) == after
    assert rows(first) == rows(again) == expected


def test_retry_of_a_ctas_that_created_the_table_returns_all_its_rows(lake, catalogs, ns):
    rel = write(
        [ns, "fresh"], values(rows_of([1, 2])), NAMES, TYPES, op=W.WRITE_OP_CTAS, output=W.OUTPUT_MODE_MODIFIED_RECORDS
    )
    first = run(lake, catalogs, records_plan(rel), run_key="dag/r/c")
    again = run(lake, catalogs, records_plan(rel), run_key="dag/r/c")
    assert again.steps[0].status == "skipped" and rows(first) == rows(again) == rows_of([1, 2])


def test_retry_returns_the_rows_the_earlier_try_deleted_even_after_later_commits(lake, catalogs, ns):
    table(lake, ns, range(6))
    b = PlanBuilder()
    doomed = filter_(named([ns, "t"], NAMES, TYPES), b.call("gte", field(0), lit(4, i64())))
    rel = write([ns, "t"], doomed, NAMES, TYPES, op=W.WRITE_OP_DELETE, output=W.OUTPUT_MODE_MODIFIED_RECORDS)
    first = run(lake, catalogs, records_plan(rel, b), run_key="dag/r/d")
    lake.catalog.load_table(f"{ns}.t").append(  # someone adds rows the predicate would match now
        lake.catalog.load_table(f"{ns}.t").scan(row_filter="id < 1").to_arrow()
    )
    again = run(lake, catalogs, records_plan(rel, b), run_key="dag/r/d")
    assert again.steps[0].status == "skipped" and rows(first) == rows(again) == rows_of([4, 5])


def test_a_plan_counting_a_retried_insert_counts_what_was_committed(lake, catalogs, ns):
    table(lake, ns, range(2))
    b = PlanBuilder()
    rel = write([ns, "t"], values(rows_of([5, 6, 9])), NAMES, TYPES, output=W.OUTPUT_MODE_MODIFIED_RECORDS)
    plan = b.plan(aggregate(rel, measures=[b.agg("count", field(0), out=i64(False))]), ["n"])
    assert [tuple(r) for r in run(lake, catalogs, plan, run_key="dag/r/n").outputs[0].preview] == [(3,)]
    assert [tuple(r) for r in run(lake, catalogs, plan, run_key="dag/r/n").outputs[0].preview] == [(3,)]


def test_retry_of_an_update_counting_its_after_images_is_refused(lake, catalogs, ns):
    from test_write_steps import KEYED

    table(lake, ns, range(3), schema=KEYED)
    rel = write(
        [ns, "t"], values([(1, "one", 9.0)]), NAMES, TYPES, op=W.WRITE_OP_UPDATE, output=W.OUTPUT_MODE_MODIFIED_RECORDS
    )
    run(lake, catalogs, records_plan(rel), run_key="dag/r/u")
    with pytest.raises(UnsupportedFeatureError, match="after-images are not recoverable"):
        run(lake, catalogs, records_plan(rel), run_key="dag/r/u")
