"""A Spark Connect URL with no Spark Connect server behind it fails fast, in one line naming the endpoint (issue 28
item 3): before, pyspark's client retried for ten minutes, then an internal error, and the CLI never exited.

Checked with the CLI binary of each client (pyspark 3.5 in `.venv`, pyspark 4.x in `.venv-spark4`) against a port
nothing listens on, and against a plain TCP server (something listens, but not gRPC); the token in the URL is never
printed. The hook (an Airflow connection's `connect_timeout` extra) and the Dagster resource raise the same typed
error. No JVM starts: the probe comes before any session.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from plan_builder import PlanBuilder, i32, virtual

# Each test carries its tier: `unit` (pure Python) or `spark` (pyspark's Connect client; no JVM starts).

REPO = Path(__file__).resolve().parent.parent
CLIENTS = {"pyspark-3.5": REPO / ".venv" / "bin", "pyspark-4": REPO / ".venv-spark4" / "bin"}
TOKEN = "canary-token-5f2c9e"
BOUND_S = 30  # the bound; the default timeout (20 s) is below it


@pytest.fixture(scope="module")
def plan_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A plan that checks (no tables): the run gets as far as asking for the session."""
    b = PlanBuilder()
    path = tmp_path_factory.mktemp("plan") / "two_rows.bin"
    path.write_bytes(b.plan(virtual(["a"], [i32()], [(1,), (2,)]), ["a"]).SerializeToString())
    return path


def _closed_port() -> int:
    """A port on 127.0.0.1 that refuses connections (bound once, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A plain TCP server that accepts connections and never says a word: not HTTP/2, not Spark Connect."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(server.getsockname()[1])
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        server.close()


def _run_cli(client: str, plan: Path, url: str, *extra: str) -> tuple[subprocess.CompletedProcess[str], float]:
    cli = CLIENTS[client] / "substrait-spark"
    if not cli.exists():
        pytest.skip(f"{cli} not installed")
    started = time.monotonic()
    done = subprocess.run(
        [str(cli), "run", str(plan), "--master", url, *extra],
        capture_output=True,
        text=True,
        timeout=BOUND_S * 3,  # a hang fails the test instead of the suite
    )
    return done, time.monotonic() - started


def _assert_one_line_naming(done: subprocess.CompletedProcess[str], endpoint: str) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1, done.stderr[-2000:]
    assert len(lines) == 1, done.stderr[-2000:]
    assert "spark unavailable" in lines[0] and endpoint in lines[0], lines[0]
    assert TOKEN not in done.stderr + done.stdout
    return lines[0]


@pytest.mark.spark
@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_a_refusing_endpoint_fails_fast_in_one_line_without_the_token(client, plan_file):
    port = _closed_port()
    done, elapsed = _run_cli(client, plan_file, f"sc://127.0.0.1:{port}/;token={TOKEN}")
    line = _assert_one_line_naming(done, f"sc://127.0.0.1:{port}")
    assert "refused" in line
    assert elapsed < BOUND_S


@pytest.mark.spark
@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_a_server_that_is_not_spark_connect_fails_within_the_timeout(client, plan_file, silent_server):
    done, elapsed = _run_cli(client, plan_file, f"sc://127.0.0.1:{silent_server}", "--connect-timeout", "3")
    line = _assert_one_line_naming(done, f"sc://127.0.0.1:{silent_server}")
    assert "within 3 s" in line
    assert 3 <= elapsed < BOUND_S


@pytest.mark.spark
def test_the_default_timeout_bounds_a_silent_server(plan_file, silent_server):
    """No option given: the default (20 s) applies, well under the issue's bound."""
    done, elapsed = _run_cli("pyspark-3.5", plan_file, f"sc://127.0.0.1:{silent_server}")
    assert "within 20 s" in _assert_one_line_naming(done, f"sc://127.0.0.1:{silent_server}")
    assert elapsed < BOUND_S


@pytest.mark.unit
def test_a_timeout_that_is_not_positive_is_a_usage_error(plan_file):
    done, _ = _run_cli("pyspark-3.5", plan_file, "sc://127.0.0.1:1", "--connect-timeout", "0")
    assert done.returncode == 2 and "--connect-timeout" in done.stderr


@pytest.mark.spark
@pytest.mark.airflow
def test_the_connection_extra_sets_the_timeout_and_the_hook_raises_the_typed_error(monkeypatch, silent_server):
    from substrait_spark.consumer.errors import SparkUnavailableError
    from substrait_spark.hooks.spark import SparkTarget
    from substrait_spark.hooks.spark_hook import SubstraitSparkHook

    assert SparkTarget.parse("sc://h:15002").connect_timeout == 20
    conn = {
        "conn_type": "spark_connect",
        "host": "127.0.0.1",
        "port": silent_server,
        "password": TOKEN,
        "extra": {"connect_timeout": "2"},
    }
    monkeypatch.setenv("AIRFLOW_CONN_SC_SILENT", json.dumps(conn))
    hook = SubstraitSparkHook("sc_silent")
    assert hook.target.connect_timeout == 2
    started = time.monotonic()
    with pytest.raises(SparkUnavailableError, match=f"127.0.0.1:{silent_server}") as info:
        hook.get_session()
    assert time.monotonic() - started < 10
    assert info.value.exit_code == 1 and TOKEN not in str(info.value)


@pytest.mark.spark
@pytest.mark.airflow
def test_a_connection_with_a_bad_timeout_is_a_configuration_error(monkeypatch):
    from substrait_spark.consumer.errors import ConfigurationError
    from substrait_spark.hooks.spark_hook import SubstraitSparkHook

    conn = {"conn_type": "spark_connect", "host": "h", "extra": {"connect_timeout": "soon"}}
    monkeypatch.setenv("AIRFLOW_CONN_SC_BAD", json.dumps(conn))
    with pytest.raises(ConfigurationError, match="connection 'sc_bad': connect_timeout"):
        _ = SubstraitSparkHook("sc_bad").target


@pytest.mark.spark
@pytest.mark.dagster
def test_the_dagster_spark_resource_raises_the_typed_error():
    from substrait_spark.consumer.errors import SparkUnavailableError
    from substrait_spark.dagster import SparkResource

    port = _closed_port()
    with pytest.raises(SparkUnavailableError, match=f"sc://127.0.0.1:{port}"):
        SparkResource(master=f"sc://127.0.0.1:{port}", connect_timeout=2).session()


@pytest.mark.spark
def test_run_settings_carry_the_timeout_to_the_session(silent_server):
    from substrait_spark.consumer.errors import SparkUnavailableError
    from substrait_spark.hooks.plan_run import PlanRunner, RunSettings

    runner = PlanRunner(RunSettings(master=f"sc://127.0.0.1:{silent_server}", connect_timeout=1.5))
    started = time.monotonic()
    with pytest.raises(SparkUnavailableError, match=r"within 1\.5 s"):
        _ = runner.spark
    assert time.monotonic() - started < 10


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
