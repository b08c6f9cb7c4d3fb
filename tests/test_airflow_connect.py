"""Airflow over Spark Connect, end to end: the operator with the Spark provider's `spark_connect` connection type
against a real local Spark Connect server (pyspark 4.x's, tests/spark_modes.py), tasks run by `airflow dags test`
on SQLite, plans from a real S3-compatible server. The Airflow worker has no Java: `JAVA_HOME` unset and no `java`
on its PATH — a Connect client needs none.

Covered: the example daily DAG over Connect (result equal to DuckDB's q1, run report with the Connect session, the
task's operation tag), and `on_kill` interrupting exactly the task's operations (its tag) within seconds while
another client's operation on the same server goes on. The CLI without Java runs a plan over `sc://` too.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from local_stack import AirflowStack, seed_plans
from oracles import DuckDBOracle, assert_same_result, tpch_q01_until
from spark_modes import needs_spark35_classic
from test_airflow_e2e import DAY, _put_plan, _slow_plan

pytestmark = [
    pytest.mark.spark,
    pytest.mark.airflow,
    pytest.mark.corpus,
    # One kind of session per process on pyspark 3.5: this run's own session is classic; Airflow and the CLI talk
    # to the Connect server from subprocesses.
    needs_spark35_classic("the Airflow tests run once, in the suite's main run"),
]

TESTS = Path(__file__).resolve().parent
KILL_TIMEOUT_S = 30


def java_free_env(env: dict[str, str], shadow: Path) -> dict[str, str]:
    """`env` without Java: JAVA_HOME unset and every PATH folder that holds `java` replaced by a copy of it (as
    symlinks) without `java`, so that nothing the worker starts can find a JVM."""
    env = {k: v for k, v in env.items() if k not in ("JAVA_HOME", "SPARK_HOME")}
    folders = []
    for i, folder in enumerate(env.get("PATH", os.defpath).split(os.pathsep)):
        if folder and (Path(folder) / "java").exists():
            copy = shadow / f"bin{i}"
            copy.mkdir(parents=True, exist_ok=True)
            for entry in Path(folder).iterdir():
                if entry.name != "java" and not (copy / entry.name).exists():
                    (copy / entry.name).symlink_to(entry)
            folder = str(copy)
        folders.append(folder)
    env["PATH"] = os.pathsep.join(folders)
    assert shutil.which("java", path=env["PATH"]) is None
    return env


@pytest.fixture(scope="module")
def connect_stack(tmp_path_factory, s3_endpoint, tpch_dir, corpus, connect_url) -> tuple[AirflowStack, Path]:
    """Airflow whose `substrait_spark_default` connection is a `spark_connect` one to the test server."""
    seed_plans(s3_endpoint, corpus)
    home = tmp_path_factory.mktemp("airflow-connect")
    host, port = connect_url.removeprefix("sc://").split(":")
    tables = {t: str((tpch_dir / f"{t}.parquet").resolve()) for t in ("lineitem", "nation")}
    conn = {"conn_type": "spark_connect", "host": host, "port": int(port), "extra": {"tables": tables}}
    stack = AirflowStack(
        home,
        s3_endpoint,
        tpch_dir,
        home / "reports",
        dags=TESTS / "airflow_dags",
        extra_env={"AIRFLOW_CONN_SUBSTRAIT_SPARK_DEFAULT": json.dumps(conn)},
    )
    stack.migrate()
    return stack, tmp_path_factory.mktemp("no-java")


def _examples(stack: AirflowStack) -> AirflowStack:
    return AirflowStack(stack.home, stack.s3_endpoint, stack.tables_dir, stack.reports_dir, extra_env=stack.extra_env)


def test_daily_report_over_spark_connect_without_java(connect_stack, tpch_dir, spark):
    stack, shadow = connect_stack
    examples = _examples(stack)
    env = java_free_env(examples.env(), shadow)
    exe = Path(sys.executable).parent / "airflow"
    done = subprocess.run(
        [str(exe), "dags", "test", "substrait_daily_report", DAY], env=env, capture_output=True, text=True, timeout=900
    )
    run = examples.last_run("substrait_daily_report", done)
    assert run.state == "success", run.log[-6000:]
    report = run.value("pricing_summary")
    assert report["status"] == "success"
    connect = report["spark_connect"]
    assert str(uuid.UUID(connect["session_id"])) == connect["session_id"]
    # The task's operations carry its job group as their tag (what on_kill interrupts).
    assert [t for t in connect["operation_tags"] if t.startswith("substrait:substrait_daily_report:pricing_summary:")]
    # pyspark 3.5's Connect client keeps operation ids to itself (a 4.x client records them: tests/test_connect.py).
    assert connect["operation_ids"] is None
    assert report["spark_application_id"].startswith("local-")  # the Connect server's application
    out = report["outputs"][0]
    expected = tpch_q01_until(tpch_dir, DAY)
    rows = [tuple(r) for r in spark.read.parquet(out["location"]).collect()]
    assert out["rows"] == len(rows) == len(expected.rows)
    assert_same_result(rows, expected.rows, context=f"daily report over Spark Connect {DAY}")


BYSTANDER = textwrap.dedent(
    """
    import sys, threading
    from pyspark.sql.connect.session import SparkSession
    spark = SparkSession.builder.remote(sys.argv[1]).create()
    spark.addTag("bystander")
    outcome = []
    def run():
        try:
            # One partition: one task, so the server's second core stays free for the Airflow task's jobs.
            spark.range(0, 300_000_000_000, 1, 1).selectExpr("sum(id % 7)").collect()
            outcome.append("finished")
        except Exception as exc:
            outcome.append(type(exc).__name__)
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    print("started", flush=True)
    sys.stdin.readline()
    print("running" if worker.is_alive() else f"stopped: {outcome}", flush=True)
    spark.interruptTag("bystander")
    worker.join(60)
    spark.stop()
    """
)


def test_on_kill_interrupts_only_the_tasks_connect_operations(connect_stack, s3_endpoint, connect_url):
    stack, shadow = connect_stack
    _put_plan(s3_endpoint, "failures/slow.json", _slow_plan())
    # Another client's long operation on the same server, with its own tag: it must survive the task's kill.
    bystander = subprocess.Popen(
        [sys.executable, "-c", BYSTANDER, connect_url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "SPARK_CONNECT_MODE_ENABLED": "1"},
    )
    try:
        assert bystander.stdout is not None and bystander.stdin is not None
        assert bystander.stdout.readline().strip() == "started"
        exe = Path(sys.executable).parent / "airflow"
        proc = subprocess.Popen(
            [str(exe), "dags", "test", "substrait_test_kill", "2024-06-01"],
            env=java_free_env(stack.env(), shadow),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        lines: list[str] = []
        assert proc.stdout is not None
        deadline = time.monotonic() + 300
        for line in proc.stdout:
            lines.append(line)
            if "Running the plan in Spark job group" in line:
                break
            assert time.monotonic() < deadline, "".join(lines[-50:])
        else:
            pytest.fail("the task never started its plan:\n" + "".join(lines[-80:]))
        time.sleep(8)  # translation, then the plan's operation runs on the server
        killed = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            rest, _ = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired as exc:
            proc.kill()
            before = "".join(lines)[-3000:]
            pytest.fail(f"the task did not stop within 120 s of SIGTERM:\n{before}\n{exc.output!r:.3000}")
        elapsed = time.monotonic() - killed
        log = "".join(lines) + rest
        print(f"on_kill over Spark Connect: the task stopped {elapsed:.1f} s after SIGTERM")
        assert "Cancelling Spark job group substrait:substrait_test_kill:slow_plan:" in log, log[-5000:]
        assert "OPERATION_CANCELED" in log or "cancel" in log.lower(), log[-6000:]
        assert elapsed < KILL_TIMEOUT_S, f"the task took {elapsed:.0f} s to stop after SIGTERM"
        assert stack.last_run("substrait_test_kill").state_of("slow_plan") == "failed"
        bystander.stdin.write("\n")
        bystander.stdin.flush()
        assert bystander.stdout.readline().strip() == "running", "the kill interrupted another client's operation"
    finally:
        bystander.kill()
        bystander.wait(30)


def test_cli_runs_a_plan_over_spark_connect_without_java(connect_url, corpus, tpch_dir, tmp_path):
    env = java_free_env({**os.environ}, tmp_path / "no-java")
    env.pop("SPARK_CONNECT_MODE_ENABLED", None)
    plan = corpus / "ibm-substrait-compliance-tpch" / "q06.json"
    cli = Path(sys.executable).parent / "substrait-spark"
    done = subprocess.run(
        [str(cli), "run", str(plan), "--master", connect_url, "--tables-dir", str(tpch_dir),
         "--output-dir", str(tmp_path / "out"), "--output-format", "csv"],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    (report,) = json.loads((tmp_path / "out" / "summary.json").read_text())["plans"]
    assert report["spark_connect"]["session_id"]
    db = DuckDBOracle(tpch_dir, ["lineitem"])
    try:
        expected = db.run_file(TESTS / "tpch_sql" / "standard" / "q06.sql")
    finally:
        db.close()
    got = (tmp_path / "out" / "q06.csv").read_text().splitlines()
    assert len(got) == 2 and float(got[1]) == pytest.approx(float(expected.rows[0][0]))
