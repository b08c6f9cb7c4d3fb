"""The harness the durable-run tests stand on, proved on its own: a real Airflow deployment on 127.0.0.1
(tools/airflow_deployment.py: api-server, scheduler with the LocalExecutor, dag-processor, triggerer, metadata in
the tests' PostgreSQL) and the count of SQL executions a Spark Connect server ran (tools/connect_server.py, its UI's
REST API).

- a task process SIGKILLed mid-run is retried by the deployment within seconds and the run succeeds on try 2
  (cleared, it runs as try 3); a killed supervisor is noticed within the short heartbeat timeout; a running task
  marked failed loses its process within seconds;
- with 2 worker slots, 6 deferrable tasks are deferred at once (they hold no slot) and all finish in about one
  wait, not three, though the triggerer is SIGKILLed while they wait and another one started;
- the server's record of executions counts a tagged query's runs and tells them from another query's.
"""

from __future__ import annotations

import subprocess
import textwrap
import time
from pathlib import Path

import pytest
from airflow_deployment import (
    HEARTBEAT_TIMEOUT_S,
    Deployment,
    WhichProcess,
    task_process_pids,
)
from connect_server import REPO_ROOT, running_connect_server, sql_executions
from connect_server import executions_tagged as tagged
from spark_modes import needs_spark35_classic

pytestmark = [
    pytest.mark.airflow,
    # One deployment per suite run: the Connect matrix runs do not repeat it.
    needs_spark35_classic("the Airflow deployment tests run once, in the suite's main run"),
]

DAGS = Path(__file__).resolve().parent / "airflow_deployment_dags"
SLOTS = 2
DEFERRED_TASKS = 6
WAIT_S = 15  # deployment_slots.WAIT
SPARK4_PYTHON = REPO_ROOT / ".venv-spark4" / "bin" / "python"


def _wait_for(path: Path, timeout: float) -> float:
    """When `path` appeared (its content: the writer's time.time()); fails after `timeout`."""
    deadline = time.monotonic() + timeout
    while not path.exists() or not path.read_text().strip():
        assert time.monotonic() < deadline, f"{path.name} not written within {timeout:.0f}s"
        time.sleep(0.1)
    return float(path.read_text())


def test_a_killed_task_process_is_retried_in_seconds(deployment: Deployment, tmp_path: Path) -> None:
    client = deployment.client
    run_id = client.trigger("deployment_retry", {"marker_dir": str(tmp_path), "seconds": 20, "retry_seconds": 1})
    _wait_for(tmp_path / "try-1", timeout=60)
    first = client.wait_for_task("deployment_retry", run_id, "sleep_and_mark", ["running"], try_number=1)
    processes = deployment.task_process_pids(first)
    assert processes is not None and processes.supervisor is not None, "no task process of a running task"

    killed = deployment.kill_task(first, WhichProcess.TASK)
    killed_at = time.time()
    assert killed == [processes.task]
    retry_started = _wait_for(tmp_path / "try-2", timeout=60)
    print(f"\nkill -> try 2 running its callable: {retry_started - killed_at:.1f}s")
    assert retry_started - killed_at < 15, "the retry did not start within seconds of the kill"
    assert task_process_pids(first.id) is None, "the killed try's processes outlived it"

    assert client.wait_for_run("deployment_retry", run_id, timeout=90) == "success"
    (task,) = client.task_instances("deployment_retry", run_id)
    assert (task.state, task.try_number) == ("success", 2)
    assert task.id != first.id  # each try is a task instance id of its own
    assert client.xcom("deployment_retry", run_id, "sleep_and_mark") == 2
    assert "SIGKILL" in client.log("deployment_retry", run_id, "sleep_and_mark", try_number=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["try-1", "try-2"]

    # Cleared, the task runs once more, as its next try.
    client.clear("deployment_retry", run_id, ["sleep_and_mark"])
    _wait_for(tmp_path / "try-3", timeout=60)
    assert client.wait_for_run("deployment_retry", run_id, timeout=90) == "success"
    assert client.xcom("deployment_retry", run_id, "sleep_and_mark") == 3


def test_marking_a_running_task_failed_ends_its_process(deployment: Deployment, tmp_path: Path) -> None:
    client = deployment.client
    run_id = client.trigger("deployment_retry", {"marker_dir": str(tmp_path), "seconds": 60})
    _wait_for(tmp_path / "try-1", timeout=60)
    running = client.wait_for_task("deployment_retry", run_id, "sleep_and_mark", ["running"], try_number=1)
    assert task_process_pids(running.id) is not None
    marked_at = time.monotonic()
    client.mark_failed("deployment_retry", run_id, "sleep_and_mark")
    while task_process_pids(running.id) is not None:
        assert time.monotonic() - marked_at < 20, "the task process outlived its task marked failed by 20s"
        time.sleep(0.1)
    print(f"\nmarked failed -> task process gone: {time.monotonic() - marked_at:.1f}s")
    assert client.wait_for_run("deployment_retry", run_id, timeout=30) == "failed"
    (task,) = client.task_instances("deployment_retry", run_id)
    assert (task.state, task.try_number) == ("failed", 1)  # marked failed: no retry


def test_a_lost_supervisor_is_noticed_by_the_heartbeat_timeout(deployment: Deployment, tmp_path: Path) -> None:
    """Killing the executor's worker that supervises the task (its heartbeats stop; the task process, orphaned, runs
    on): the scheduler notices within the short heartbeat timeout and the retry finishes the run."""
    client = deployment.client
    run_id = client.trigger("deployment_retry", {"marker_dir": str(tmp_path), "seconds": 30, "retry_seconds": 1})
    _wait_for(tmp_path / "try-1", timeout=60)
    first = client.wait_for_task("deployment_retry", run_id, "sleep_and_mark", ["running"], try_number=1)
    processes = deployment.task_process_pids(first)
    assert processes is not None and processes.supervisor is not None
    assert deployment.kill_task(first, WhichProcess.SUPERVISOR) == [processes.supervisor]
    killed_at = time.time()
    retry_started = _wait_for(tmp_path / "try-2", timeout=90)
    print(f"\nsupervisor kill -> try 2 running its callable: {retry_started - killed_at:.1f}s")
    assert HEARTBEAT_TIMEOUT_S <= retry_started - killed_at < HEARTBEAT_TIMEOUT_S + 20
    assert client.wait_for_run("deployment_retry", run_id, timeout=90) == "success"
    (task,) = client.task_instances("deployment_retry", run_id)
    assert (task.state, task.try_number) == ("success", 2)


def test_deferred_tasks_hold_no_worker_slot_and_outlive_the_triggerer(deployment: Deployment) -> None:
    client = deployment.client
    started = time.monotonic()
    run_id = client.trigger("deployment_slots")
    most_deferred = 0
    triggerer_killed = False
    while (state := client.run_state("deployment_slots", run_id)) not in ("success", "failed"):
        states = [t.state for t in client.task_instances("deployment_slots", run_id)]
        most_deferred = max(most_deferred, states.count("deferred"))
        if most_deferred == DEFERRED_TASKS and not triggerer_killed:
            # Every trigger is in the triggerer: kill it (no clean shutdown), start another; none is lost.
            deployment.kill_triggerer()
            triggerer_killed = True
            restarted = time.monotonic()
            deployment.restart_triggerer()
            print(f"\ntriggerer healthy again {time.monotonic() - restarted:.1f}s after the kill")
        assert time.monotonic() - started < 120, f"run still {state}: {states}"
        time.sleep(0.3)
    elapsed = time.monotonic() - started
    print(f"{DEFERRED_TASKS} tasks on {SLOTS} slots: run done in {elapsed:.1f}s, {most_deferred} deferred at once")
    assert state == "success", deployment.logs_tail()
    tasks = client.task_instances("deployment_slots", run_id)
    assert [(t.state, t.try_number) for t in tasks] == [("success", 1)] * DEFERRED_TASKS
    # More tasks deferred at once than there are slots: waiting in the triggerer holds none.
    assert most_deferred == DEFERRED_TASKS and triggerer_killed
    # Holding a slot while waiting would take DEFERRED_TASKS / SLOTS waits one after another.
    assert elapsed < WAIT_S * DEFERRED_TASKS / SLOTS


CLIENT = """
import sys
from pyspark.sql import SparkSession, functions as F

spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
print("session", spark.client._session_id)
assert spark.range(1000).selectExpr("sum(id) AS s").collect()[0].s == 499500
spark.addTag("counted")
for _ in range(2):
    assert spark.range(100).groupBy((F.col("id") % 7).alias("k")).count().count() == 7
"""


@pytest.mark.spark
def test_the_connect_servers_ui_counts_executions_by_tag(tmp_path: Path) -> None:
    if not SPARK4_PYTHON.exists():
        pytest.fail(f"no {SPARK4_PYTHON}: `make venv-spark4`")
    with running_connect_server(tmp_path / "server", ui=True) as server:
        assert server.ui_url is not None
        assert tagged(server.ui_url, "counted") == []
        done = subprocess.run(
            [str(SPARK4_PYTHON), "-c", textwrap.dedent(CLIENT), server.url],
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        session = done.stdout.split("session", 1)[1].split()[0]
        executions = sql_executions(server.ui_url)
        counted = tagged(server.ui_url, "counted")
        assert tagged(server.ui_url, "count") == []  # a tag is matched whole
    ours = [e for e in executions if e.is_root and any(session in t for t in e.job_tags)]
    assert len(ours) == 3, executions  # one untagged query, the tagged one twice
    assert len(counted) == 2, counted
    assert all(e.status == "COMPLETED" and len(e.operation_ids) == 1 for e in counted)
    assert len({op for e in counted for op in e.operation_ids}) == 2  # two operations, not one counted twice
