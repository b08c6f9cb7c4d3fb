"""Durable runs on Spark Connect, killed for real: a run whose process is SIGKILLed while the server runs one of
its outputs is rerun with the same state (`substrait-spark run --state FILE`, the Airflow operator's task state
store), and the server's own record of SQL executions (its UI's REST API) shows the killed output's query ran once.

The server is a real local Spark Connect server (pyspark 4.x, tools/connect_server.py) with its UI on 127.0.0.1; the
runs are the CLI in a subprocess, on the 3.5 and the 4.x Connect clients. The heavy output is native Spark (a cross
join counted, tens of seconds at sf 0.01: no sleeps, no UDFs).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from connect_server import running_connect_server
from durable_plans import HEAVY, csv_rows, executions_of, root_executions

pytestmark = [pytest.mark.spark]

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = {
    "client-3.5": ROOT / ".venv" / "bin" / "substrait-spark",
    "client-4": ROOT / ".venv-spark4" / "bin" / "substrait-spark",
}


def cli(client: str, url: str, plan: Path, out: Path, state: Path, tpch_dir: Path) -> list[str]:
    return [
        str(CLIENTS[client]),
        "run",
        "--master",
        url,
        "--tables-dir",
        str(tpch_dir),
        "--output-dir",
        str(out),
        "--state",
        str(state),
        "-q",
        str(plan),
    ]


def env() -> dict[str, str]:
    return {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}


def started_operation(state: Path, output: int, timeout_s: float = 120) -> dict:
    """The state file's record of output `output`'s first command once the run started it on the server."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if state.exists():
            values = json.loads(state.read_text())
            found = [v for k, v in values.items() if k.endswith(f".output.{output}.0")]
            if found:
                return found[0]
        time.sleep(0.2)
    pytest.fail(f"output {output} never started within {timeout_s} s: {state.read_text() if state.exists() else ''}")


def read_rows(out: Path, index: int) -> list[list[str]]:
    return csv_rows(out / f"outputs.{index}.csv")


def report(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())["plans"][0]


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_a_rerun_after_the_client_was_killed_reattaches_to_the_running_output(
    client, connect_with_ui, outputs_plan_file, outputs_expected, tpch_dir, tmp_path
):
    plan_file, expected = outputs_plan_file, outputs_expected
    url, ui = connect_with_ui
    if not CLIENTS[client].exists():
        pytest.fail(f"{CLIENTS[client]} missing: `make venv-spark4` makes the 4.x environment")
    out, state = tmp_path / "out", tmp_path / "state.json"
    first = subprocess.Popen(cli(client, url, plan_file, out, state, tpch_dir), env=env(), start_new_session=True)
    try:
        heavy = started_operation(state, HEAVY)
        time.sleep(3)  # the server is running the heavy query
        assert first.poll() is None, "the first run ended before it could be killed"
        os.killpg(first.pid, signal.SIGKILL)
    finally:
        first.wait(30)
    assert not (out / "outputs.1.csv").exists()
    done = subprocess.run(cli(client, url, plan_file, out, state, tpch_dir), env=env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rep = report(out)
    assert rep["durability"] == "durable"
    resumed = [o["resumed"] for o in rep["outputs"]]
    assert resumed == ["earlier", "reattached", "fresh"], rep["outputs"]
    assert rep["outputs"][1]["operations"][0]["operation_id"] == heavy["operation_id"]
    assert rep["outputs"][1]["operations"][0]["session_id"] == heavy["session_id"]
    for i in range(3):  # every output complete, with DuckDB's rows
        assert read_rows(out, i) == expected[i], i
    assert [o["rows"] for o in rep["outputs"]] == [len(expected[i]) for i in range(3)]
    # the server ran the killed output's query once: reattached, not submitted again
    assert executions_of(ui, heavy["operation_id"]) == 1
    # and the output the first run finished was not run again
    first_output = rep["outputs"][0]["operations"][0]["operation_id"]
    assert executions_of(ui, first_output) == 1
    assert not list(out.glob(".substrait-*")), "a staging folder was left behind"


def test_a_finished_run_with_the_same_state_is_reported_not_run_again(
    connect_with_ui, outputs_plan_file, outputs_expected, tpch_dir, tmp_path
):
    plan_file, expected = outputs_plan_file, outputs_expected
    url, ui = connect_with_ui
    out, state = tmp_path / "out", tmp_path / "state.json"
    args = cli("client-3.5", url, plan_file, out, state, tpch_dir)
    first = subprocess.run(args, env=env(), capture_output=True, text=True)
    assert first.returncode == 0, first.stderr[-3000:]
    ops = [o["operations"][0]["operation_id"] for o in report(out)["outputs"]]
    session = report(out)["spark_connect"]["session_id"]
    # one execution per output, on the 3.5 client too (its row counts come from the write's own stream)
    assert len([e for e in root_executions(ui) if any(session in t for t in e.job_tags)]) == 3
    again = subprocess.run(args, env=env(), capture_output=True, text=True)
    assert again.returncode == 0, again.stderr[-3000:]
    rep = report(out)
    assert [o["resumed"] for o in rep["outputs"]] == ["earlier"] * 3
    assert [executions_of(ui, op) for op in ops] == [1, 1, 1]
    assert read_rows(out, 1) == expected[1]


def test_an_output_the_server_no_longer_holds_is_run_again(
    connect_with_ui, outputs_plan_file, outputs_expected, tpch_dir, tmp_path
):
    """The server restarted while the run was away: it holds neither the session nor the operation, so the later
    try runs the output again (once), on the server now at the endpoint."""
    plan_file, expected = outputs_plan_file, outputs_expected
    url, ui = connect_with_ui
    out, state = tmp_path / "out", tmp_path / "state.json"
    with running_connect_server(tmp_path / "restarted-server") as old:
        args = cli("client-3.5", old.url, plan_file, out, state, tpch_dir)
        first = subprocess.Popen(args, env=env(), start_new_session=True)
        try:
            heavy = started_operation(state, HEAVY)
            time.sleep(2)
            os.killpg(first.pid, signal.SIGKILL)
        finally:
            first.wait(30)
    done = subprocess.run(
        cli("client-3.5", url, plan_file, out, state, tpch_dir), env=env(), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rep = report(out)
    assert [o["resumed"] for o in rep["outputs"]] == ["earlier", "rerun", "fresh"], rep["outputs"]
    rerun = rep["outputs"][1]["operations"][0]["operation_id"]
    assert rerun != heavy["operation_id"]
    assert executions_of(ui, rerun) == 1
    assert read_rows(out, 1) == expected[1]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
