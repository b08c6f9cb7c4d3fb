"""Deep and huge plans end cleanly on every entry point: a 10,000-deep plan (binary, JSON, textproto) and a 100 MB
plan give the loader's typed error (`PlanTooLargeError`, exit 2) within seconds — no RecursionError traceback, no
hang, no memory blow-up, no Spark session — through the loader, the CLI's run/validate/explain/lineage, `run_plan`,
the Airflow operator (`airflow dags test`) and a Dagster asset. The bounds are the engine's own (no policy); a
plan just under the depth bound still loads, validates and has its lineage (the bound leaves every walker room).

Times are printed (`-s`) and asserted far above what they are (well under a second of CPU each) but far below a
hang or a Spark start; the 100 MB plan is never read (its size is checked first), which tracemalloc and the
commands' peak memory show."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import subprocess
import time
import tracemalloc
from pathlib import Path

import pytest
from deep_plans import (
    DEEP,
    HUGE_BYTES,
    deep_binary,
    deep_casts_json,
    deep_json,
    deep_textproto,
    huge_json,
    small_plan,
)
from google.protobuf import json_format
from substrait_spark.consumer.loading.limits import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_PLAN_BYTES,
    Limit,
    PlanTooLargeError,
    json_depth,
)
from substrait_spark.consumer.loading.loader import load_plan, parse_plan_bytes
from test_cli import CLI, stub_java

TESTS = Path(__file__).resolve().parent
DEEP_PLANS = {
    "binary": deep_binary,
    "json": lambda: deep_json().encode(),
    "textproto": lambda: deep_textproto().encode(),
}
FILES = {"deep.bin": deep_binary, "deep.json": lambda: deep_json().encode(), "deep.txtpb": DEEP_PLANS["textproto"]}
TOO_DEEP = f"plan too large: plan nested deeper than {DEFAULT_MAX_DEPTH} messages (max_depth)"
TOO_BIG = f"more than max_plan_bytes {DEFAULT_MAX_PLAN_BYTES}"


@pytest.fixture(scope="module")
def plans(tmp_path_factory) -> dict[str, Path]:
    """The deep plans in each format, and the 100 MB one, as files."""
    root = tmp_path_factory.mktemp("deep-plans")
    files = {name: root / name for name in FILES}
    for name, make in FILES.items():
        files[name].write_bytes(make())
    files["huge.json"] = huge_json(root / "huge.json")
    assert files["huge.json"].stat().st_size == HUGE_BYTES
    return files


@pytest.mark.unit
@pytest.mark.parametrize("fmt", sorted(DEEP_PLANS))
def test_the_loader_refuses_a_10000_deep_plan_in_every_format_at_once(fmt):
    data = DEEP_PLANS[fmt]()
    start = time.perf_counter()
    with pytest.raises(PlanTooLargeError) as info:
        parse_plan_bytes(data)
    took = time.perf_counter() - start
    print(f"{fmt}: {len(data)} bytes, {DEEP} deep: refused in {took * 1000:.1f} ms")
    assert info.value.exit_code == 2 and info.value.limit is Limit.MAX_DEPTH
    assert str(info.value) == f"plan nested deeper than {DEFAULT_MAX_DEPTH} messages (max_depth)"
    assert took < 2.0


def _deepest(make, unit: int = 1) -> int:
    """The most levels of `make(n)` (JSON text) within the engine's depth bound, as the loader measures them."""
    return max(n for n in range(1, DEFAULT_MAX_DEPTH) if json_depth(json.loads(make(n)), 10**6) <= DEFAULT_MAX_DEPTH)


@pytest.mark.unit
@pytest.mark.parametrize("fmt", sorted(DEEP_PLANS))
def test_a_plan_just_under_the_depth_bound_loads_validates_and_has_its_lineage(fmt):
    """The deepest filter chain within the bound (each filter two levels) loads, validates, has its lineage and
    its picture — no walker recurses past Python's limit, with pytest's own frames under it — and two more
    filters are over it."""
    from substrait_spark.consumer.analysis.analyze import validate_plan
    from substrait_spark.consumer.analysis.lineage import column_lineage
    from substrait_spark.graph import build_graph

    n = _deepest(deep_json)
    make = {"binary": deep_binary, "json": deep_json, "textproto": deep_textproto}[fmt]
    data = make(n)
    loaded = parse_plan_bytes(data if isinstance(data, bytes) else data.encode())
    assert validate_plan(loaded) == []
    [(name, sources)] = column_lineage(loaded).roots[0].columns
    assert name == "a" and {f.field for f in sources} == {"a"}  # the value column, through every filter
    assert build_graph(loaded) is not None
    over = make(n + 1)
    with pytest.raises(PlanTooLargeError):
        parse_plan_bytes(over if isinstance(over, bytes) else over.encode())


@pytest.mark.unit
def test_a_100mb_plan_is_refused_before_it_is_read(plans):
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(PlanTooLargeError) as info:
            load_plan(plans["huge.json"])
        took = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    print(f"100 MB plan: refused in {took * 1000:.1f} ms, peak Python memory {peak / 1e6:.2f} MB")
    assert info.value.limit is Limit.MAX_PLAN_BYTES and TOO_BIG in str(info.value)
    assert str(plans["huge.json"]) in str(info.value)
    assert took < 1.0 and peak < 5e6  # the 100 MB were never read into memory
    with pytest.raises(PlanTooLargeError, match=TOO_BIG):  # bytes handed over: refused before parsing
        parse_plan_bytes(b" " * (DEFAULT_MAX_PLAN_BYTES + 1))


def _timed(
    argv: list[str], env: dict[str, str], tmp: Path
) -> tuple[subprocess.CompletedProcess[str], float, float, float]:
    """A command's result, wall seconds, CPU seconds and peak resident memory (MB) — of that command alone, as
    GNU time measures it (the suite's other children, a Spark JVM among them, do not count)."""
    figures = tmp / "time.txt"
    done = subprocess.run(
        ["/usr/bin/time", "-o", str(figures), "-f", "%e %U %S %M", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    wall, user, system, kb = figures.read_text().split()[-4:]
    return done, float(wall), float(user) + float(system), int(kb) / 1024


@pytest.mark.unit
@pytest.mark.parametrize("command", ["run", "validate", "explain", "lineage"])
def test_every_cli_command_refuses_deep_and_huge_plans_in_one_line_without_spark(plans, tmp_path, command):
    """Exit 2 and one line on stderr naming the bound; no traceback; Spark's JVM never started (a stub `java`
    records any start); under 3 s of CPU and 200 MB peak memory (measured: 0.2-0.6 s, 30-53 MB)."""
    env, marker = stub_java(tmp_path)
    for name in ("deep.bin", "deep.json", "deep.txtpb", "huge.json"):
        done, wall, cpu, rss = _timed([CLI, command, str(plans[name])], env, tmp_path)
        print(f"{command} {name}: exit {done.returncode}, {wall:.2f} s wall, {cpu:.2f} s CPU, peak {rss:.0f} MB")
        assert done.returncode == 2, done.stderr
        assert (TOO_BIG if name == "huge.json" else TOO_DEEP) in done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr and done.stdout == ""
        assert cpu < 3.0 and wall < 20.0 and rss < 200, f"{wall:.2f} s wall, {cpu:.2f} s CPU, {rss:.0f} MB"
        assert not marker.exists(), f"Spark's JVM was started: {marker.read_text()}"


@pytest.mark.unit
def test_run_plan_refuses_deep_and_huge_plans_before_a_session(plans):
    """`run_plan` with no session: a session would be started if the plan got that far."""
    from substrait_spark import run_plan

    for plan in [plans["deep.json"], plans["deep.bin"].read_bytes(), plans["huge.json"]]:
        start = time.perf_counter()
        with pytest.raises(PlanTooLargeError) as info:
            run_plan(plan)
        took = time.perf_counter() - start
        what = plan.name if isinstance(plan, Path) else f"{len(plan)} bytes"
        print(f"run_plan({what}): {info.value.limit} refused in {took * 1000:.1f} ms")
        assert took < 2.0


@pytest.mark.airflow
@pytest.mark.spark
def test_the_operator_fails_deep_and_huge_plans_at_once(plans, tmp_path_factory, s3_endpoint, tpch_dir):
    """`airflow dags test`: both tasks fail with the typed error at once (the operator's own time, from the task
    log; the whole task's, with the task process's start, from the metadata database), not retried."""
    from local_stack import AirflowStack

    home = tmp_path_factory.mktemp("airflow-deep")
    stack = AirflowStack(home, s3_endpoint, tpch_dir, home / "reports", dags=TESTS / "airflow_dags")
    stack.migrate()
    env = {"AIRFLOW_VAR_DEEP_PLAN": str(plans["deep.json"]), "AIRFLOW_VAR_HUGE_PLAN": str(plans["huge.json"])}
    run = stack.dags_test("substrait_test_deep_plans", "2024-06-01", **env)
    assert run.state == "failed"
    assert {t: run.state_of(t) for t in ("deep_plan", "huge_plan")} == {"deep_plan": "failed", "huge_plan": "failed"}
    assert TOO_DEEP in run.log and TOO_BIG in run.log
    assert "RecursionError" not in run.log and "MemoryError" not in run.log
    own = {task: _execution_seconds(run.log, task) for task in ("deep_plan", "huge_plan")}
    with sqlite3.connect(home / "airflow.db") as db:
        durations = dict(
            db.execute(
                "SELECT task_id, duration FROM task_instance WHERE dag_id = ? AND run_id = ?",
                ("substrait_test_deep_plans", run.run_id),
            ).fetchall()
        )
    print(f"operator: execute() until the typed error (s): {own}; whole task with Airflow's start (s): {durations}")
    assert all(seconds < 2.0 for seconds in own.values()), own
    assert all(d is not None and d < 60.0 for d in durations.values()), durations


def _execution_seconds(log: str, task_id: str) -> float:
    """From Airflow's "Task started" to "Task failed with exception" in `task_id`'s part of an `airflow dags test`
    log (tasks run one after another): the operator's own time, without the task process's start."""
    part = log.split(f"[DAG TEST] starting task_id={task_id} ", 1)[1].split(f"[DAG TEST] end task task_id={task_id} ")[
        0
    ]
    stamps = {}
    for line in part.splitlines():
        for event in ("Task started", "Task failed with exception"):
            if event in line and event not in stamps:
                stamps[event] = dt.datetime.fromisoformat(line.split(" ", 1)[0].rstrip("Z"))
    return (stamps["Task failed with exception"] - stamps["Task started"]).total_seconds()


@pytest.mark.dagster
def test_a_dagster_asset_refuses_deep_and_huge_plans(plans, tmp_path):
    """At definition time (the plan is read to find its assets) and at materialization (the plan replaced by a
    deep one since): the blocking check fails with the typed error, nothing is materialized."""
    dagster = pytest.importorskip("dagster", reason="the dagster extra is not installed (make venv installs it)")
    from substrait_spark.dagster import SubstraitSparkResource, substrait_assets

    resource_ = SubstraitSparkResource()
    for name in ("deep.json", "huge.json"):
        start = time.perf_counter()
        with pytest.raises(PlanTooLargeError):
            substrait_assets(str(plans[name]), resource=resource_, root_asset=["deep"])
        print(f"dagster definitions from {name}: refused in {(time.perf_counter() - start) * 1000:.1f} ms")

    plan = tmp_path / "plan.json"
    plan.write_text(json_format.MessageToJson(small_plan()))
    assets = substrait_assets(str(plan), resource=resource_, root_asset=["deep"])
    plan.write_bytes(plans["deep.json"].read_bytes())
    start = time.perf_counter()
    result = dagster.materialize([assets], resources={"substrait": resource_}, raise_on_error=False)
    took = time.perf_counter() - start
    print(f"dagster materialize of a plan replaced by a {DEEP}-deep one: failed in {took:.2f} s")
    assert not result.success and result.asset_materializations_for_node(assets.op.name) == []
    [check] = result.get_asset_check_evaluations()
    assert not check.passed and check.metadata["exit_code"].value == 2
    assert TOO_DEEP in check.metadata["error"].value
    assert took < 30.0


@pytest.mark.spark
def test_a_plan_just_under_the_depth_bound_translates_and_runs(spark):
    """The deepest chain of casts within the bound (each two levels) translates and runs — no walker of the
    translator recurses past Python's limit — and gives what the innermost column holds."""
    from substrait_spark import run_plan

    n = _deepest(deep_casts_json)
    report = run_plan(deep_casts_json(n).encode(), spark, output="preview")
    assert report.outputs[0].preview == [[1]]
    with pytest.raises(PlanTooLargeError):  # and one more is over it
        parse_plan_bytes(deep_casts_json(n + 1).encode())
