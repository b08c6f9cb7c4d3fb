"""The lines a person reads about a run (`consumer/running/narration.py`): what the Airflow task log and Dagster's
run log say of a run report, and the aligned tables the CLI prints."""

from __future__ import annotations

import pytest
from substrait_spark.consumer.running.narration import (
    Column,
    report_lines,
    result_table,
    text_table,
    total_rows,
    where_text,
    width,
)
from substrait_spark.consumer.running.report import (
    BoundParameter,
    ParameterSource,
    RootOutput,
    RunError,
    RunReport,
    RunStatus,
    Step,
    StepKind,
    StepStatus,
    TableRead,
)
from substrait_spark.hooks.spark_progress import StageState, progress_text

pytestmark = [pytest.mark.unit]


def ctas_report() -> RunReport:
    return RunReport(
        plan_uri="s3://plans/shop/top5.bin",
        plan_sha256="ab" * 32,
        producer="DataFusion",
        spec_version="0.58.0",
        status=RunStatus.SUCCESS,
        plan_version_id="v7",
        tables_read=[TableRead("orders", "lake.shop.orders", "iceberg", snapshot_id=42)],
        parameters=[BoundParameter(0, "date", "2025-01-31", ParameterSource.CALLER)],
        steps=[
            Step(
                0,
                StepKind.CTAS,
                "lake.shop.top5",
                "relations[0].root.input.write",
                StepStatus.COMMITTED,
                rows=5,
                snapshot_after=9,
                duration_s=1.25,
            )
        ],
        outputs=[RootOutput(0, ["name", "units"], rows=0)],
        duration_s=3.5,
        spark_application_id="local-1",
    )


def test_a_run_report_as_log_lines():
    assert report_lines(ctas_report()) == [
        "Plan s3://plans/shop/top5.bin: sha256 abababababab, version v7, producer DataFusion, spec 0.58.0",
        "Read table orders = lake.shop.orders (iceberg, snapshot 42)",
        "Parameter $0 (date) = '2025-01-31' from the caller",
        "Step 0 ctas lake.shop.top5: committed, 5 rows in 1.25 s (snapshot 9)",
        "Root 0: 0 rows, columns name, units",
        "Run success in 3.50 s on local-1: 5 rows from 1 root(s), 1 step(s), 1 changed a table",
    ]
    report = ctas_report()
    assert total_rows(report) == 5 and where_text(report) == "ctas lake.shop.top5"  # a write plan: its step's rows


def test_a_failed_run_says_why_and_its_exit_code():
    report = ctas_report()
    report.status, report.error = RunStatus.FAILED, RunError("execution failed", "Spark failed: boom", None, 1)
    assert report_lines(report)[-1] == "Run failed in 3.50 s on local-1: execution failed: Spark failed: boom (exit 1)"


def test_tables_align_wide_characters_and_show_null_and_line_breaks():
    lines = result_table(["name", "n"], [["Miyu 美優", 3], [None, 12], ["a\nb", None]])
    assert lines == [
        " name      | n",
        "-----------+------",
        " Miyu 美優 |    3",
        " NULL      |   12",
        " a\\nb      | NULL",
    ]
    assert {width(line[: line.index("|")]) for line in lines if "|" in line} == {11}
    assert text_table([Column("rows", right=True)], [[5], [120]]) == [" rows", "------", "    5", "  120"]


def test_stage_progress_text():
    stages = [StageState(5, 10, 0), StageState(4, 200, 120, 8)]
    assert progress_text("[1/2] q.bin", 23.4, stages) == (
        "[1/2] q.bin: 23 s, stage 4: 120/200 tasks done (8 running), stage 5: 0/10 tasks done"
    )
    assert (
        progress_text("x", 11, [StageState(1, 4, 1)], running=3)
        == "x: 11 s, stage 1: 1/4 tasks done, 3 task(s) running"
    )
