"""Chaos on a real Airflow deployment: plan runs on Spark Connect whose worker or triggerer is SIGKILLed at seeded
random moments, then counted — every DAG run succeeds, every output is complete with DuckDB's rows, and the
server executed each output's query once (reattached, not resubmitted: the run report's `resumed` fields and the
server's own record of SQL executions agree).

The deployment (tools/airflow_deployment.py): api-server, scheduler with LocalExecutor (2 slots), dag-processor,
triggerer, metadata in the tests' PostgreSQL. The server: a Spark Connect server from `.venv-spark4` with its UI on.
The DAGs: tests/airflow_deployment_dags/substrait_chaos.py. The plan: tests/durable_plans.py (three outputs, one a
native query of tens of seconds), outputs written as CSV folders.

`make test` runs one seeded run per victim (each killed into the heavy output); `make chaos` runs seeded runs
until `CHAOS_WORKER_KILLS` (10) kills landed per worker victim (the task process; the task and its supervisor) and
`CHAOS_TRIGGERER_KILLS` (10) of the triggerer — a run that ends before its seeded moment is checked all the same
but is no kill — and prints the figures (reattached vs rerun outputs).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import pytest
from airflow_deployment import Deployment, WhichProcess
from durable_plans import (
    HEAVY,
    OUTPUTS,
    csv_rows,
    execution_statuses,
    executions_of,
    expected_outputs,
    heavy_plan,
    root_executions,
    running_jobs_of,
    wait_until_ended,
)

pytestmark = [pytest.mark.spark, pytest.mark.airflow]

DAGS = Path(__file__).resolve().parent / "airflow_deployment_dags"
SLOTS = 2
TASKS = 5  # substrait_chaos.TASKS
SEED = int(os.environ.get("CHAOS_SEED", "30"))
WORKER_KILLS = int(os.environ.get("CHAOS_WORKER_KILLS", "1"))
TRIGGERER_KILLS = int(os.environ.get("CHAOS_TRIGGERER_KILLS", "1"))
RUN_TIMEOUT_S = 600
FIGURES = Path(os.environ.get("CHAOS_FIGURES", "test-artifacts/chaos.json"))


@dataclass
class ChaosRun:
    """One seeded DAG run and what became of it."""

    seed: int
    dag_id: str
    victim: str
    delay_s: float
    run_id: str = ""
    killed: bool = False
    state: str = ""
    tries: int = 0
    resumed: list[str] = field(default_factory=list)
    executions: int = 0
    heavy_executions: int = 0
    seconds: float = 0.0


def _wait_for_state(deployment: Deployment, dag_id: str, run_id: str, states: set[str], timeout: float = 180):
    deadline = time.monotonic() + timeout
    while True:
        ti = deployment.client.task_instance(dag_id, run_id, "plan")
        if ti.state in states:
            return ti
        if ti.state in ("success", "failed") or time.monotonic() > deadline:
            return None
        time.sleep(0.2)


def run_with_kill(
    deployment: Deployment,
    connect_with_ui: tuple[str, str],
    plan: Path,
    out: Path,
    seed: int,
    dag_id: str,
    victim: str,
    *,
    in_heavy: bool = False,
) -> ChaosRun:
    """Trigger a run of `dag_id`, SIGKILL `victim` (the task process, the whole worker, or the triggerer) after a
    seeded delay once the task runs (is deferred) — or, `in_heavy`, a seeded moment into its heavy output's
    operation —, wait for the DAG run to end, and count what the server ran."""
    rng = random.Random(seed)
    # An undisturbed run takes 15-40 s here: moments drawn over its first 20 s fall into operations, between
    # outputs and into the writes.
    chaos = ChaosRun(seed, dag_id, victim, round(rng.uniform(0.5, 3.0) if in_heavy else rng.uniform(1.0, 20.0), 1))
    started = time.monotonic()
    chaos.run_id = deployment.client.trigger(dag_id, {"plan": str(plan), "out": str(out)})
    if in_heavy:
        _heavy_operation(deployment, connect_with_ui[1], dag_id, chaos.run_id)
    if victim == "triggerer":
        ti = _wait_for_state(deployment, dag_id, chaos.run_id, {"deferred"})
        if ti is not None:
            time.sleep(min(chaos.delay_s, 15.0))
            deployment.kill_triggerer()
            chaos.killed = True
            time.sleep(rng.uniform(0.5, 3.0))
            deployment.restart_triggerer()
    else:
        ti = _wait_for_state(deployment, dag_id, chaos.run_id, {"running"})
        if ti is not None:
            time.sleep(chaos.delay_s)
            ti = deployment.client.task_instance(dag_id, chaos.run_id, "plan")
            if ti.state == "running" and ti.try_number == 1:
                which = WhichProcess.TASK if victim == "task" else WhichProcess.WORKER
                chaos.killed = bool(deployment.kill_task(ti, which))
    chaos.state = deployment.client.wait_for_run(dag_id, chaos.run_id, timeout=RUN_TIMEOUT_S)
    chaos.seconds = round(time.monotonic() - started, 1)
    ti = deployment.client.task_instance(dag_id, chaos.run_id, "plan")
    chaos.tries = ti.try_number
    report = deployment.client.xcom(dag_id, chaos.run_id, "plan")
    if isinstance(report, str):
        report = json.loads(report)
    # how each output's (last) operation came about, in the try that ran it (an output an earlier try finished
    # keeps its operations' record)
    outputs = (report or {}).get("outputs", [])
    chaos.resumed = [(o.get("operations") or [{}])[-1].get("resumed", o.get("resumed")) for o in outputs]
    _, ui = connect_with_ui
    ours = [e for e in root_executions(ui) if any(f":{chaos.run_id}:" in t for t in e.client_tags)]
    chaos.executions = len(ours)
    heavy_ops = {
        op["operation_id"] for op in (report or {}).get("outputs", [{}] * OUTPUTS)[HEAVY].get("operations", [])
    }
    chaos.heavy_executions = sum(executions_of(ui, op) for op in heavy_ops)
    return chaos


def check(chaos: ChaosRun, out: Path, expected: dict[int, list[list[str]]], deployment: Deployment) -> None:
    assert chaos.state == "success", f"{chaos}\n{deployment.logs_tail()}"
    for i in range(OUTPUTS):  # complete, with DuckDB's rows (a multi-root folder sink writes `<out>_<i>`)
        assert csv_rows(Path(f"{out}_{i}")) == expected[i], (i, chaos)
    # Each output's query executed once in all the tries: reattached to, or run again only where the server never
    # had it (the worker died between recording the operation id and the server receiving it).
    assert chaos.executions == OUTPUTS, chaos
    assert chaos.heavy_executions == 1, chaos


def _record(runs: list[ChaosRun]) -> None:
    FIGURES.parent.mkdir(parents=True, exist_ok=True)
    resumed = Counter(r for run in runs for r in run.resumed)
    figures = {
        "runs": len(runs),
        "killed": sum(r.killed for r in runs),
        "failed_runs": sum(r.state != "success" for r in runs),
        "outputs_resumed": dict(resumed),
        "runs_detail": [vars(r) for r in runs],
    }
    existing = json.loads(FIGURES.read_text()) if FIGURES.exists() else {}
    existing[runs[0].victim if runs else "none"] = figures
    FIGURES.write_text(json.dumps(existing, indent=2))
    print(json.dumps({k: v for k, v in figures.items() if k != "runs_detail"}))


def _until_killed(runs: list[ChaosRun], kills: int):
    """Run numbers 0, 1, … until `kills` of the runs were killed (at most 3 * kills runs)."""
    n = 0
    while sum(r.killed for r in runs) < kills and n < 3 * kills:
        yield n
        n += 1


@pytest.mark.parametrize("victim", ["task", "worker"])
def test_killed_workers_leave_every_output_written_once(
    deployment, connect_with_ui, outputs_plan_file, outputs_expected, tmp_path, victim
):
    """The task process (or its supervisor too) SIGKILLed: the first run of each set while the heavy output runs
    on the server (it must be reattached to), the others at random moments of the task."""
    plan, expected = outputs_plan_file, outputs_expected
    runs: list[ChaosRun] = []
    for n in _until_killed(runs, WORKER_KILLS):
        seed = SEED * 1000 + n + (500 if victim == "worker" else 0)
        out = tmp_path / f"run-{n}"
        chaos = run_with_kill(
            deployment, connect_with_ui, plan, out, seed, "substrait_chaos_durable", victim, in_heavy=n == 0
        )
        runs.append(chaos)
        check(chaos, out, expected, deployment)
        if n == 0:
            assert chaos.killed and chaos.resumed[HEAVY] == "reattached", chaos
    _record(runs)
    assert sum(r.killed for r in runs) >= WORKER_KILLS, [vars(r) for r in runs]


def test_a_killed_triggerer_leaves_every_output_written_once(
    deployment, connect_with_ui, outputs_plan_file, outputs_expected, tmp_path
):
    plan, expected = outputs_plan_file, outputs_expected
    runs: list[ChaosRun] = []
    for n in _until_killed(runs, TRIGGERER_KILLS):
        out = tmp_path / f"run-{n}"
        seed = SEED * 1000 + 900 + n
        dag = "substrait_chaos_deferrable"
        chaos = run_with_kill(deployment, connect_with_ui, plan, out, seed, dag, "triggerer", in_heavy=n == 0)
        runs.append(chaos)
        check(chaos, out, expected, deployment)
        if n == 0:
            assert chaos.killed and chaos.resumed[HEAVY] == "reattached", chaos
    _record(runs)
    assert sum(r.killed for r in runs) >= TRIGGERER_KILLS, [vars(r) for r in runs]


def test_deferred_plan_tasks_hold_no_worker_slot(deployment, connect_with_ui, tmp_path, tpch_dir):
    """5 deferrable plan tasks on 2 worker slots all finish with their rows; at most 2 run in a worker at once,
    while more than 2 are between deferring and resuming at once — their operations run on the server and the
    triggerer waits for them, without a slot (each span from the task log's deferral to its resumption)."""
    plan = tmp_path / "heavy.json"
    plan.write_text(json.dumps(heavy_plan()))
    run_id = deployment.client.trigger("substrait_chaos_slots", {"plan": str(plan), "out": str(tmp_path)})
    most_running = 0
    stop = threading.Event()

    def watch() -> None:
        nonlocal most_running
        while not stop.is_set():
            with contextlib.suppress(Exception):  # an API hiccup: look again
                states = Counter(
                    str(ti.state) for ti in deployment.client.task_instances("substrait_chaos_slots", run_id)
                )
                most_running = max(most_running, states["running"])
            time.sleep(0.3)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        state = deployment.client.wait_for_run("substrait_chaos_slots", run_id, timeout=RUN_TIMEOUT_S * 2)
    finally:
        stop.set()
        watcher.join(5)
    assert state == "success", deployment.logs_tail()
    spans = [_deferred_span(deployment, "substrait_chaos_slots", run_id, f"plan_{i}") for i in range(TASKS)]
    at_once = max(sum(1 for begin, end in spans if begin <= t < end) for t, _ in spans)
    print(f"slots: {SLOTS}, tasks deferred at once: {at_once}, running at once: {most_running}")
    assert most_running <= SLOTS
    assert at_once > SLOTS, spans
    for i in range(TASKS):
        assert csv_rows(tmp_path / f"task_{i}") == expected_outputs(tpch_dir)[HEAVY]


def _deferred_span(deployment: Deployment, dag_id: str, run_id: str, task_id: str) -> tuple[datetime, datetime]:
    """When the task's first try deferred and when it resumed on a worker, from its log (JSON lines)."""
    log = deployment.home / "logs" / f"dag_id={dag_id}" / f"run_id={run_id}" / f"task_id={task_id}" / "attempt=1.log"
    deferred = resumed = None
    for line in log.read_text().splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        at = datetime.fromisoformat(str(event.get("timestamp", "")).replace("Z", "+00:00"))
        text = str(event.get("event", ""))
        if deferred is None and text.startswith("Pausing task as DEFERRED"):
            deferred = at
        elif deferred is not None and resumed is None and "Pre Execute" in text:
            resumed = at
    assert deferred is not None and resumed is not None, f"{task_id} did not defer and resume: {log}"
    return deferred, resumed


@pytest.mark.parametrize(
    "dag_id,state", [("substrait_chaos_durable", "running"), ("substrait_chaos_deferrable", "deferred")]
)
def test_marking_the_task_failed_interrupts_its_operation_only(
    deployment, connect_with_ui, outputs_plan_file, tmp_path, dag_id, state
):
    """Mark a running (deferred) plan task failed while its heavy output runs: the server shows the operation
    ended within 5 s, interrupted (its SQL execution failed, not completed); another DAG run's operation on the
    same server goes on to complete, and that run succeeds."""
    plan = outputs_plan_file
    _, ui = connect_with_ui
    bystander = deployment.client.trigger("substrait_chaos_durable", {"plan": str(plan), "out": str(tmp_path / "b")})
    victim = deployment.client.trigger(dag_id, {"plan": str(plan), "out": str(tmp_path / "v")})
    victim_op = _heavy_operation(deployment, ui, dag_id, victim)
    bystander_op = _heavy_operation(deployment, ui, "substrait_chaos_durable", bystander)
    ti = _wait_for_state(deployment, dag_id, victim, {state}, timeout=30)
    assert ti is not None and ti.state == state, deployment.client.task_instance(dag_id, victim, "plan")
    if state == "deferred":  # its trigger waits for the operation in the triggerer (not merely scheduled)
        _wait_for_log(deployment, f"Waiting for Spark Connect operation {victim_op}")
    deployment.client.mark_failed(dag_id, victim, "plan")
    ended_after = wait_until_ended(ui, victim_op, timeout_s=30)
    assert ended_after < 5, f"the operation ran on for {ended_after:.1f} s after the task was marked failed"
    assert execution_statuses(ui, victim_op) == ["FAILED"], "the operation was not interrupted"
    assert deployment.client.wait_for_run("substrait_chaos_durable", bystander, timeout=RUN_TIMEOUT_S) == "success"
    assert execution_statuses(ui, bystander_op) == ["COMPLETED"], "the other run's operation was interrupted too"


def _wait_for_log(deployment: Deployment, text: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for f in (deployment.home / "logs").rglob("*.log*"):
            if text in f.read_text(errors="replace"):
                return
        time.sleep(0.3)
    raise AssertionError(f"no log line {text!r} within {timeout} s")


def _heavy_operation(deployment: Deployment, ui: str, dag_id: str, run_id: str, timeout: float = 180) -> str:
    """The operation id of the heavy output of `run_id` once it runs on the server: the run's second operation
    (outputs run in order, one operation each)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ours = [e for e in root_executions(ui) if any(f":{dag_id}:plan:{run_id}:" in t for t in e.client_tags)]
        ops: list[str] = []
        for e in ours:  # in the order the server started them
            ops += [op for op in sorted(e.operation_ids) if op not in ops]
        if len(ops) > HEAVY and running_jobs_of(ui, ops[HEAVY]):
            return ops[HEAVY]
        time.sleep(0.2)
    raise AssertionError(f"no running heavy operation of {dag_id} {run_id} within {timeout} s")
