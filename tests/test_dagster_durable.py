"""Dagster durable materializations on Spark Connect, killed for real: `dagster asset materialize` of the heavy
three-output plan is SIGKILLed while the server runs its heavy output; the run is marked failed (as Dagster's run
monitoring does with a run whose worker died) and re-executed from failure: the step reattaches to the operation
the killed worker left running — the server's own record of SQL executions (its UI's REST API) shows that query
ran once — takes the output it had finished as it was, and every output has DuckDB's rows. And a run stopped as
Dagster stops one (SIGTERM to the run's process) interrupts its operation on the server within seconds.

The state is the Dagster instance's (a temporary DAGSTER_HOME), the server a real local Spark Connect server
(pyspark 4.x) with its UI on 127.0.0.1, the run worker the 3.5 Connect client. The plan and the server fixture are
`test_durable_runs`'.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from connect_server import application_id
from durable_plans import csv_rows, execution_statuses, executions_of, running_jobs_of, wait_until_ended

dagster = pytest.importorskip("dagster", reason="the dagster extra is not installed (make venv installs it)")

from dagster import DagsterInstance, DagsterRunStatus  # noqa: E402
from dagster._core.instance.ref import InstanceRef  # noqa: E402
from substrait_spark.dagster import metadata as md  # noqa: E402
from substrait_spark.dagster.durable import DagsterStore, run_state  # noqa: E402

# Tiers by test: the instance's store and the signal handlers need Dagster alone, the runs Spark too.

BIN = Path(sys.executable).parent
OP = "outputs"  # the asset op, and its root result's asset

DEFINITIONS = """
import os
from dagster import Definitions
from substrait_spark.dagster import SparkResource, SubstraitSparkResource, substrait_assets

resource = SubstraitSparkResource(
    spark=SparkResource(master=os.environ["TEST_CONNECT_URL"]), tables_dir=os.environ["TEST_TABLES_DIR"]
)
outputs = substrait_assets(
    os.environ["TEST_PLAN"], resource=resource, name="outputs", root_asset=["outputs"],
    results={"path": os.environ["TEST_OUT"], "format": "csv"},
)
defs = Definitions(assets=[outputs], resources={"substrait": resource})
"""

REEXECUTE = """
import sys
from dagster import DagsterInstance, ReexecutionOptions, execute_job
from dagster._core.definitions.reconstruct import ReconstructableRepository

instance = DagsterInstance.get()
killed = instance.get_run_by_id(sys.argv[2])
if not killed.is_finished:  # what run monitoring does with a run whose worker died
    instance.report_run_failed(killed)
job = ReconstructableRepository.for_file(sys.argv[1], "defs").get_reconstructable_job(killed.job_name)
result = execute_job(job, instance, reexecution_options=ReexecutionOptions.from_failure(killed.run_id, instance))
print(result.run_id, result.success)
"""


class Deployment:
    """The definitions file, the instance folder and the environment of one test's runs."""

    def __init__(self, tmp: Path, url: str, plan: Path, tpch_dir: Path) -> None:
        self.home = tmp / "dagster_home"
        self.home.mkdir()
        (self.home / "dagster.yaml").write_text("telemetry:\n  enabled: false\nnux:\n  enabled: false\n")
        self.definitions = tmp / "definitions.py"
        self.definitions.write_text(DEFINITIONS)
        self.out = tmp / "out"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("DAGSTER")}
        self.env.update(
            DAGSTER_HOME=str(self.home),
            TEST_CONNECT_URL=url,
            TEST_TABLES_DIR=str(tpch_dir),
            TEST_PLAN=str(plan),
            TEST_OUT=str(self.out),
            SPARK_LOCAL_IP="127.0.0.1",
        )
        self.cwd = tmp
        self.log = tmp / "materialize.log"

    def instance(self) -> DagsterInstance:
        return DagsterInstance.from_ref(InstanceRef.from_dir(str(self.home)))

    def materialize(self) -> subprocess.Popen:
        """`dagster asset materialize` of the plan's assets, in its own process group."""
        cmd = [str(BIN / "dagster"), "asset", "materialize", "-f", str(self.definitions), "--select", "*"]
        with self.log.open("ab") as log:  # a file, not a pipe: nobody reads it while the run goes on
            return subprocess.Popen(
                cmd, env=self.env, cwd=self.cwd, start_new_session=True, stdout=log, stderr=subprocess.STDOUT
            )

    def started_heavy_operation(self, proc: subprocess.Popen, timeout_s: float = 180) -> tuple[str, dict[str, Any]]:
        """The run's id and the instance's record of output 1's (the heavy one's) operation once it started."""
        deadline = time.monotonic() + timeout_s
        with self.instance() as instance:
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    pytest.fail(f"the run ended before its heavy output started: {self.log.read_text()[-3000:]}")
                found = _heavy_record(instance)
                if found is not None:
                    return found
                time.sleep(0.2)
        pytest.fail(f"the heavy output did not start within {timeout_s} s")


def _heavy_record(instance: DagsterInstance) -> tuple[str, dict[str, Any]] | None:
    runs = instance.get_runs(limit=1)
    if not runs:
        return None
    key = f"dagster/{runs[0].run_id}/{OP}"  # the step's run key: its state's scope
    generation = run_state(instance, key).stored()
    if generation is None:
        return None
    record = DagsterStore(instance, key).get(f"substrait_run.{generation.id}.output.1.0")
    return (runs[0].run_id, record) if record is not None else None


@pytest.fixture
def deployment(connect_with_ui, outputs_plan_file, tpch_dir, tmp_path) -> Iterator[Deployment]:
    url, ui = connect_with_ui
    assert application_id(ui)  # asked before the heavy query keeps the server's cores busy
    yield Deployment(tmp_path, url, outputs_plan_file, tpch_dir)


def kill_group(proc: subprocess.Popen, signo: signal.Signals) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signo)


@pytest.mark.spark
@pytest.mark.dagster
def test_a_reexecution_from_failure_reattaches_to_the_killed_workers_operation(
    deployment,
    connect_with_ui,
    outputs_expected,
):
    _, ui = connect_with_ui
    first = deployment.materialize()
    try:
        killed_id, heavy = deployment.started_heavy_operation(first)
        time.sleep(3)  # the server is running the heavy query
        assert running_jobs_of(ui, heavy["operation_id"]) > 0, "the heavy query is not running on the server"
        kill_group(first, signal.SIGKILL)  # the run worker and its step process die, no cleanup
    finally:
        kill_group(first, signal.SIGKILL)
        first.wait(30)
    assert not (deployment.out.parent / "out_1").exists()

    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", REEXECUTE, str(deployment.definitions), killed_id],
        env=deployment.env,
        cwd=deployment.cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-5000:]
    rerun_id, success = done.stdout.split()[-2:]
    assert success == "True" and rerun_id != killed_id, done.stderr[-5000:]
    print(f"re-execution took {time.monotonic() - started:.1f} s")

    with deployment.instance() as instance:
        event = instance.get_latest_materialization_event(dagster.AssetKey([OP]))
        assert event is not None and event.run_id == rerun_id
        meta = event.asset_materialization.metadata
    assert meta[md.DURABILITY].value == "durable"
    outputs = meta[md.RESUMED].value
    assert [o["resumed"] for o in outputs] == ["earlier", "reattached", "fresh"], outputs
    assert outputs[1]["operations"][0]["operation_id"] == heavy["operation_id"]
    assert outputs[1]["operations"][0]["session_id"] == heavy["session_id"]
    # The server ran the killed worker's heavy query once (reattached, not submitted again), and the output the
    # killed run had finished was not run again.
    assert executions_of(ui, heavy["operation_id"]) == 1
    assert executions_of(ui, outputs[0]["operations"][0]["operation_id"]) == 1
    for i in range(3):  # every output complete, with DuckDB's rows
        assert csv_rows(deployment.out.parent / f"out_{i}") == outputs_expected[i], i
    assert meta[md.ROW_COUNT].value == len(outputs_expected[0])


@pytest.mark.spark
@pytest.mark.dagster
def test_a_terminated_run_interrupts_its_operation_on_the_server(deployment, connect_with_ui):
    """Dagster stops a run with a signal to its process (SIGTERM as a container stop or `kill`; `dagster dev`'s
    Terminate sends the step's process a SIGINT, handled the same): the heavy query stops on the server."""
    _, ui = connect_with_ui
    run = deployment.materialize()
    try:
        run_id, heavy = deployment.started_heavy_operation(run)
        op = heavy["operation_id"]
        time.sleep(3)
        assert running_jobs_of(ui, op) > 0, "the heavy query is not running on the server"
        os.kill(run.pid, signal.SIGTERM)  # the run's process only: Dagster stops its step process itself
        stopped = time.monotonic()
        wait_until_ended(ui, op, timeout_s=5)
        print(f"the heavy query stopped {time.monotonic() - stopped:.1f} s after SIGTERM")
        run.wait(60)
    finally:
        kill_group(run, signal.SIGKILL)
        run.wait(30)
    assert execution_statuses(ui, op) == ["FAILED"], "the heavy query was not interrupted"
    assert not (deployment.out.parent / "out_1" / "_SUCCESS").exists()
    with deployment.instance() as instance:
        assert instance.get_run_by_id(run_id).status in (DagsterRunStatus.CANCELED, DagsterRunStatus.FAILURE)
        logs = [e.user_message for e in instance.all_logs(run_id)]
    assert any(m.startswith(f"Interrupted Spark Connect operation(s) {op}") for m in logs), logs[-20:]


# --- on classic Spark, durable=False, the store and the handlers --------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
PRICING_PLAN = ROOT / "dags_examples" / "plans" / "daily_pricing_summary.json"


CLASSIC = """
import os
from dagster import Definitions
from substrait_spark.dagster import SubstraitSparkResource, substrait_assets

resource = SubstraitSparkResource(tables_dir=os.environ["TEST_TABLES_DIR"], durable=os.environ["TEST_DURABLE"] == "1")
pricing = substrait_assets(
    os.environ["TEST_PLAN"], resource=resource, name="pricing", parameters={"0": "1995-06-17"}, root_asset=["pricing"],
    results={"path": os.environ["TEST_OUT"], "format": "parquet"},
)
defs = Definitions(assets=[pricing], resources={"substrait": resource})
"""


@pytest.mark.spark
@pytest.mark.dagster
@pytest.mark.parametrize("durable", [True, False])
def test_on_classic_spark_a_run_says_it_is_not_durable_and_a_reexecution_runs_a_finished_step_again(
    durable, spark, tpch_dir, tmp_path, monkeypatch
):
    """In process (the session of the test, classic): durable, the materialization says classic Spark is not
    durable; `durable=False` keeps no state. Re-executing a step its run finished runs it again either way (its
    results written again), not the earlier run's report."""
    from dagster import ReexecutionOptions, execute_job
    from dagster._core.definitions.reconstruct import ReconstructableRepository
    from substrait_spark.consumer.running.report import Durability

    out = tmp_path / "pricing"
    definitions = tmp_path / "definitions.py"
    definitions.write_text(CLASSIC)
    for name, value in {"TEST_TABLES_DIR": tpch_dir, "TEST_PLAN": PRICING_PLAN, "TEST_OUT": out}.items():
        monkeypatch.setenv(name, str(value))
    monkeypatch.setenv("TEST_DURABLE", "1" if durable else "0")
    job = ReconstructableRepository.for_file(str(definitions), "defs").get_reconstructable_job("__ASSET_JOB")
    in_process = {"execution": {"config": {"in_process": {}}}}
    (tmp_path / "home").mkdir()
    with DagsterInstance.from_ref(InstanceRef.from_dir(str(tmp_path / "home"))) as instance:
        first = execute_job(job, instance, run_config=in_process)
        assert first.success
        [m] = first.asset_materializations_for_node("pricing")
        state = run_state(instance, f"dagster/{first.run_id}/pricing").stored()
        if durable:  # the classic driver dies with the worker: said, nothing to resume
            assert m.metadata[md.DURABILITY].value == Durability.CLASSIC.value and state is not None
        else:
            assert md.DURABILITY not in m.metadata and state is None
        assert md.RESUMED not in m.metadata
        shutil.rmtree(out)
        again = execute_job(
            job, instance, run_config=in_process, reexecution_options=ReexecutionOptions(parent_run_id=first.run_id)
        )
        assert again.success
        said = [e.user_message for e in instance.all_logs(again.run_id)]
    assert not any("finished in an earlier try" in line for line in said), said
    assert any(out.glob("*.parquet")), "the re-executed step did not write its result again"


@pytest.mark.dagster
def test_the_state_is_the_instances_under_the_run_key(tmp_path):
    """What one process sets, another's instance reads (the re-execution's worker); each step its own keys."""
    home = tmp_path / "home"
    home.mkdir()
    with DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as one:
        DagsterStore(one, "dagster/run-a/op").set("substrait_run", {"generation": "g", "phase": "running"})
        DagsterStore(one, "dagster/run-a/op").set("substrait_run", {"generation": "g2", "phase": "running"})
    with DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as other:
        assert DagsterStore(other, "dagster/run-a/op").get("substrait_run") == {"generation": "g2", "phase": "running"}
        assert DagsterStore(other, "dagster/run-a/other_op").get("substrait_run") is None
        assert DagsterStore(other, "dagster/run-b/op").get("substrait_run") is None
        assert run_state(other, "dagster/run-a/op").stored().id == "g2"


@pytest.mark.dagster
def test_a_stop_signal_in_a_run_goes_on_as_the_handler_before_it_and_the_handlers_come_back():
    from substrait_spark.dagster.durable import interrupting_operations

    class Stopped(BaseException):  # what Dagster's handler raises: DagsterExecutionInterruptedError
        pass

    def dagsters(signo, frame):
        raise Stopped(signo)

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    said: list[str] = []
    try:
        signal.signal(signal.SIGINT, dagsters)
        signal.signal(signal.SIGTERM, dagsters)
        for signo in (signal.SIGINT, signal.SIGTERM):
            with pytest.raises(Stopped), interrupting_operations(lambda *a: said.append(a[0] % a[1:])):
                assert signal.getsignal(signo) is not dagsters
                os.kill(os.getpid(), signo)
                time.sleep(5)  # the signal arrives here
            assert signal.getsignal(signo) is dagsters
        assert said == []  # nothing was in flight
    finally:
        for signo, handler in before.items():
            signal.signal(signo, handler)
