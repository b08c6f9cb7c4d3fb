"""What differs between kinds of session, checked on each (`make test` runs this file in every configuration:
classic 3.5, classic 4.x, Spark Connect from a 4.x client, Spark Connect from the 3.5 client; tests/spark_modes.py).

- A plan Spark rejects names the rejected relation by its plan path, also on Spark Connect where DataFrames are
  analyzed only when asked (the consumer analyzes the root once, and on failure each relation, inputs first).
- The run report counts rows (an `Observation` where the client reads it back; pyspark 3.5's Connect client
  cannot, so one aggregate after the action) and, on Connect, names the session, tags and operation ids.
- A job group (classic) or operation tag (Connect) cancels exactly the block's running work within seconds.
"""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from oracles import DuckDBOracle
from plan_builder import (
    ASC_NULLS_FIRST,
    PlanBuilder,
    cast,
    field,
    i8,
    i32,
    lit,
    make_map,
    project,
    run,
    sort,
    string,
    virtual,
)
from spark_modes import SparkMode, current_mode, spark_major

pytestmark = [pytest.mark.spark, pytest.mark.corpus]

CANCEL_WITHIN_S = 15


def _sort_by_a_map():
    # Maps have no ordering in Spark: its analyzer rejects the sort, not our translation.
    b = PlanBuilder()
    values = virtual(["a"], [i32()], [(1,), (2,)])
    rel = sort(project(values, make_map((field(0), lit("x")))), (field(1), ASC_NULLS_FIRST))
    return b.plan(rel, ["a", "m"])


def test_a_relation_spark_rejects_is_named_by_its_path(spark):
    from substrait_spark.consumer.errors import PlanInvalidError

    with pytest.raises(PlanInvalidError, match="Spark rejected the translated sort relation") as info:
        run(_sort_by_a_map(), spark)
    assert info.value.path == "relations[0].root.input.sort"


def test_a_run_names_the_relation_spark_rejects(spark):
    """On Spark Connect the run analyzes the plan only when it first uses it (no round trip while translating);
    the error is the same as classic Spark's during translation: exit 2, the sort's path."""
    from substrait_spark import run_plan
    from substrait_spark.consumer.errors import PlanInvalidError
    from substrait_spark.consumer.running.resolver import SessionCatalogResolver

    with pytest.raises(PlanInvalidError, match="Spark rejected the translated sort relation") as info:
        run_plan(plan_pb2_bytes(_sort_by_a_map()), spark=spark, catalogs=SessionCatalogResolver())
    assert info.value.path == "relations[0].root.input.sort" and info.value.exit_code == 2
    assert info.value.report.status == "failed" and info.value.report.error.path == info.value.path


def _ansi_sensitive_plan():
    """Three expressions whose Spark form depends on ANSI mode, with the spec's values [None, -56, None]."""
    b = PlanBuilder()
    values = virtual(["s", "x", "y"], [string(), i8(), i8()], [("abc", 100, 100)])
    rel = project(
        values,
        cast(field(0), i32()),  # RETURN_NULL: 'abc' is no integer
        b.call("add", field(1), field(2), out=i8(), options={"overflow": ["SILENT"]}),  # 200 wraps to -56
        b.call("divide", field(1), lit(0, i8()), out=i8()),  # on_division_by_zero: NULL by default
        emit=[3, 4, 5],
    )
    return b.plan(rel, ["n", "wrapped", "q"])


def test_a_run_gives_the_specs_results_with_ansi_mode_on(spark):
    """Spark 4 turns ANSI mode on; the engine's translation relies on it being off, and a run holds it off on the
    session it is given (restoring the session's value after). Checked against the spec's values."""
    from substrait_spark import run_plan
    from substrait_spark.consumer.running.resolver import SessionCatalogResolver

    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", "true")
    try:
        report = run_plan(
            plan_pb2_bytes(_ansi_sensitive_plan()),
            spark=spark,
            catalogs=SessionCatalogResolver(),
            output="preview",
        )
        assert spark.conf.get("spark.sql.ansi.enabled") == "true"  # the session's own setting, restored
    finally:
        spark.conf.set("spark.sql.ansi.enabled", before)
    assert report.outputs[0].preview == [[None, -56, None]]


def test_a_dataframe_gives_the_specs_results_under_a_session_with_ansi_mode_on(spark):
    """`to_dataframe` on a session with ANSI on (Spark 4's default), the DataFrame used later as the caller likes:
    on classic Spark each expression keeps the behaviour it was translated with, so collecting under ANSI gives
    the spec's values; Spark Connect builds expressions when it executes, so there the caller collects inside
    `engine_settings` (as a run does) — without it ANSI's errors replace the spec's NULLs."""
    from substrait_spark.consumer import engine_settings, to_dataframe
    from substrait_spark.consumer.running.resolver import SessionCatalogResolver

    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", "true")
    try:
        df = to_dataframe(_ansi_sensitive_plan(), spark, SessionCatalogResolver())
        assert spark.conf.get("spark.sql.ansi.enabled") == "true"
        if current_mode() is SparkMode.CONNECT:
            with pytest.raises(Exception, match=r"CAST_INVALID_INPUT|ARITHMETIC_OVERFLOW|DIVIDE_BY_ZERO"):
                df.collect()
            with engine_settings(spark):
                rows = df.collect()
        else:
            rows = df.collect()
    finally:
        spark.conf.set("spark.sql.ansi.enabled", before)
    assert [tuple(r) for r in rows] == [(None, -56, None)]


def plan_pb2_bytes(plan) -> bytes:
    return plan.SerializeToString()


@pytest.fixture(scope="module")
def q06_revenue(tpch_dir):
    db = DuckDBOracle(tpch_dir, ["lineitem"])
    try:
        from conftest import TESTS_DIR

        return db.run_file(TESTS_DIR / "tpch_sql" / "standard" / "q06.sql").rows
    finally:
        db.close()


@pytest.mark.corpus
def test_run_report_counts_rows_and_names_the_connect_session(spark, corpus, tpch_dir, q06_revenue):
    from substrait_spark import TableMapResolver, run_plan

    report = run_plan(
        str(corpus / "ibm-substrait-compliance-tpch" / "q06.json"),
        spark=spark,
        catalogs=TableMapResolver.from_tables_dir(str(tpch_dir)),
        output="preview",
    )
    assert report.status == "success"
    (out,) = report.outputs
    assert out.rows == len(q06_revenue) == 1
    assert float(out.preview[0][0]) == pytest.approx(float(q06_revenue[0][0]))
    if current_mode() is SparkMode.CLASSIC:
        assert report.spark_connect is None
        return
    connect = report.spark_connect
    assert connect["session_id"] == spark.session_id and str(uuid.UUID(connect["session_id"])) == spark.session_id
    if spark_major() >= 4:  # the 4.x client reports every operation it ran: the count and the preview at least
        assert len(connect["operation_ids"]) >= 2 and all(uuid.UUID(i) for i in connect["operation_ids"])
    else:  # pyspark 3.5's Connect client keeps its operation ids to itself
        assert connect["operation_ids"] is None


def test_a_run_reports_the_roots_columns_without_an_analysis_round_trip(spark, corpus, tpch_dir, monkeypatch):
    """The report's columns are the names the consumer attached, the ones Spark gives the DataFrame; on Spark
    Connect the run asks the server nothing about the plan before it executes the root (the server analyzes the
    plan once, when it runs it: `df.columns`, or the 4.x client's `isStreaming` check when the run observes the
    row count, would each be an AnalyzePlan call as long as translating the plan)."""
    from substrait_spark import TableMapResolver, load_plan, run_plan, to_dataframe
    from substrait_spark.consumer.translation import plan_record

    plan = str(corpus / "ibm-substrait-compliance-tpch" / "q03.json")
    resolver = TableMapResolver.from_tables_dir(str(tpch_dir))
    expected = list(to_dataframe(load_plan(plan), spark, resolver).columns)
    schema_requests: list[str] = []
    monkeypatch.delenv(plan_record.ENV, raising=False)  # the suite's plan check explains each root it records
    if current_mode() is SparkMode.CONNECT:
        analyze = spark.client._analyze

        def counted(method: str, **kwargs):
            schema_requests.append(method)
            return analyze(method, **kwargs)

        monkeypatch.setattr(spark.client, "_analyze", counted)
    report = run_plan(plan, spark=spark, catalogs=resolver)  # rows counted, not kept
    assert report.status == "success"
    assert report.outputs[0].columns == expected == ["L_ORDERKEY", "REVENUE", "O_ORDERDATE", "O_SHIPPRIORITY"]
    assert schema_requests == []


@pytest.mark.corpus
def test_the_cli_in_process_runs_on_the_callers_session_and_leaves_it_open(
    spark, corpus, tpch_dir, q06_revenue, tmp_path, capsys
):
    """`substrait-spark run` without `--master`, called in-process (`cli.main`), runs on the session this process
    has — on Connect the caller's Connect session, which it must not stop to start a local classic one (it did
    not create it) — and the caller's session still works afterwards. So does `run_plan` without a session."""
    import json

    from substrait_spark import run_plan
    from substrait_spark.cli import main

    plan = corpus / "ibm-substrait-compliance-tpch" / "q06.json"
    out = tmp_path / "out"
    argv = ["run", str(plan), "--tables-dir", str(tpch_dir), "--output-dir", str(out), "--output-format", "jsonl"]
    assert main(argv) == 0, capsys.readouterr().err
    (entry,) = json.loads((out / "summary.json").read_text())["plans"]
    (line,) = (out / "q06.jsonl").read_text().splitlines()
    (revenue,) = json.loads(line).values()
    assert float(revenue) == pytest.approx(float(q06_revenue[0][0]))
    if current_mode() is SparkMode.CONNECT:
        assert entry["spark_connect"]["session_id"] == spark.session_id
        assert not spark.is_stopped
    else:
        assert entry["spark_application_id"] == spark.sparkContext.applicationId
    assert spark.range(3).count() == 3  # the caller's session, still usable

    from substrait_spark.consumer.running.resolver import TableMapResolver

    report = run_plan(str(plan), None, TableMapResolver.from_tables_dir(str(tpch_dir)), output="preview")
    assert report.status == "success" and report.outputs[0].rows == 1
    if current_mode() is SparkMode.CONNECT:
        assert report.spark_connect["session_id"] == spark.session_id
    assert spark.range(3).count() == 3


@pytest.mark.skipif(
    current_mode() is not SparkMode.CONNECT,
    reason="Connect sessions only: classic 3.5 stages row-level commits (tests/test_rowlevel_writes.py)",
)
def test_row_level_delete_and_update_refuse_a_connect_session_and_say_why(spark):
    """DELETE/UPDATE stage a row-level statement whose commit carries the step key through Iceberg's JVM-only
    commit properties: on Spark Connect the writer says it cannot — before touching the table or the JVM — and the
    step rewrites the table from the pinned snapshot instead, recording that reason (`rowlevel.writer`)."""
    from substrait_spark.hooks.iceberg_stage import IcebergRowLevel

    why = IcebergRowLevel(target=None, spark=spark).unavailable
    assert why is not None and why.startswith("a Spark Connect session")


def test_cancelling_a_job_group_stops_only_its_own_work(spark):
    from substrait_spark.hooks.spark import cancel_job_group, job_group

    outcome: dict[str, str] = {}

    def work(group: str) -> None:
        with job_group(spark, group, "a long job"):
            try:
                spark.range(0, 200_000_000_000).selectExpr("sum(id % 7)").collect()
                outcome[group] = "finished"
            except Exception as exc:
                outcome[group] = f"{type(exc).__name__}: {exc}"

    group = f"cancel-me-{uuid.uuid4().hex[:8]}"
    other = f"keep-me-{uuid.uuid4().hex[:8]}"
    workers = [threading.Thread(target=work, args=(g,), daemon=True) for g in (group, other)]
    for w in workers:
        w.start()
    time.sleep(6)  # both jobs run
    start = time.monotonic()
    cancel_job_group(spark, group)
    workers[0].join(CANCEL_WITHIN_S)
    elapsed = time.monotonic() - start
    try:
        assert not workers[0].is_alive(), f"the cancelled job still ran {CANCEL_WITHIN_S} s later"
        assert "cancel" in outcome[group].lower(), outcome[group]
        assert workers[1].is_alive() and other not in outcome, f"the other group's job stopped too: {outcome}"
        print(f"job group cancelled in {elapsed:.1f} s")
    finally:
        cancel_job_group(spark, other)
        workers[1].join(60)
