"""A real local Spark Connect server on 127.0.0.1, started from pyspark 4.x's own distribution.

pyspark 3.5 ships no Connect server; pyspark 4.x's wheel does (`jars/spark-connect_2.13-*.jar`), so the server
runs from the second environment's pyspark (`.venv-spark4`, made by `make venv-spark4`) whichever client talks
to it. The server is `spark-submit --class org.apache.spark.sql.connect.service.SparkConnectServer` in its own
process group on a free port; `connect_server()` waits until it accepts connections and stops it afterwards.

    .venv/bin/python tools/connect_server.py          # start one, print its sc:// URL, stop on Ctrl-C

With `ui=True` the server's Spark UI listens on a free 127.0.0.1 port and `sql_executions(ui_url)` /
`executions_tagged(ui_url, tag)` read its REST API: what the server really executed, for tests that count how
often a query ran (reattached rather than resubmitted, one execution per output).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import enum
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
SPARK4_VENV = REPO_ROOT / ".venv-spark4"
# Where the server's Spark comes from: this variable, else the pyspark package of `.venv-spark4`.
SPARK_HOME_ENV = "SUBSTRAIT_SPARK_CONNECT_HOME"
SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
STARTUP_TIMEOUT_S = 120
QUIET_LOG4J = REPO_ROOT / "hooks" / "log4j2-quiet.properties"

# The server owns the driver: what the tests' classic sessions set on theirs, set here once.
SERVER_CONF = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={QUIET_LOG4J}",
    # The setting docs/guides/spark-modes.md recommends for a server plans are translated against, as
    # hooks/spark.py sets it on classic sessions: a pyspark 4 client otherwise records the Python call site of
    # every Column call (the engine's own lines, in a translation), a third of a large plan's translation time.
    "spark.python.sql.dataFrameDebugging.enabled": "false",
}


class ConnectServerError(RuntimeError):
    """The server could not be found or started (the message says which, with the end of its log)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_spark_home() -> Path:
    """The pyspark 4.x distribution that holds the Connect server jar."""
    explicit = os.environ.get(SPARK_HOME_ENV)
    candidates = [Path(explicit)] if explicit else sorted(SPARK4_VENV.glob("lib/python3*/site-packages/pyspark"))
    for home in candidates:
        if any((home / "jars").glob("spark-connect_*.jar")):
            return home
    raise ConnectServerError(
        f"no Spark Connect server jar in {', '.join(map(str, candidates)) or SPARK4_VENV}: "
        f"run `make venv-spark4` (pyspark 4.x) or set {SPARK_HOME_ENV} to a Spark 4 home"
    )


def log_tail(path: Path, lines: int = 40) -> str:
    """The last `lines` lines of a daemon's log, for error messages."""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else "(no log)"


def _accepts(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def stop_process_group(proc: subprocess.Popen) -> None:
    """SIGTERM to the process group `proc` leads (started with `start_new_session`), SIGKILL if it lingers."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


@dataclasses.dataclass(frozen=True)
class ConnectServer:
    """A running server: its `sc://` URL, its Spark UI's base URL (None when the UI is off) and its log."""

    url: str
    ui_url: str | None
    log: Path


def _ui_answers(ui_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{ui_url}/api/v1/applications", timeout=2) as answer:
            return answer.status == 200
    except OSError:
        return False


@contextlib.contextmanager
def running_connect_server(
    work_dir: Path,
    conf: Mapping[str, str] | None = None,
    *,
    master: str = "local[2]",
    timeout_s: float = STARTUP_TIMEOUT_S,
    ui: bool = False,
    env: Mapping[str, str] | None = None,
) -> Iterator[ConnectServer]:
    """Start a Spark Connect server; yield it once it listens (and, with `ui`, once its Spark UI answers on a free
    127.0.0.1 port); stop it after. `conf` is more server conf (e.g. `spark.connect.execute.manager.
    detachedTimeout`), `env` more environment (e.g. `SPARK_CONNECT_AUTHENTICATE_TOKEN`)."""
    home = server_spark_home()
    port = free_port()
    work_dir.mkdir(parents=True, exist_ok=True)
    log = work_dir / "connect-server.log"
    ui_port = free_port() if ui else None
    ui_conf = (
        {"spark.ui.enabled": "true", "spark.ui.port": str(ui_port), "spark.driver.bindAddress": "127.0.0.1"}
        if ui_port
        else {}
    )
    settings = {
        **SERVER_CONF,
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        "spark.sql.warehouse.dir": str(work_dir / "warehouse"),
        **ui_conf,
        **(conf or {}),
    }
    args = [str(home / "bin" / "spark-submit"), "--class", SERVER_CLASS, "--master", master]
    for key, value in settings.items():
        args += ["--conf", f"{key}={value}"]
    server_env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", **(env or {})}
    server_env.pop("SPARK_CONNECT_MODE_ENABLED", None)
    ui_url = f"http://127.0.0.1:{ui_port}" if ui_port else None
    with log.open("wb") as out:
        proc = subprocess.Popen(
            args, stdout=out, stderr=subprocess.STDOUT, env=server_env, cwd=work_dir, start_new_session=True
        )
    try:
        deadline = time.monotonic() + timeout_s
        while not (_accepts(port) and (ui_url is None or _ui_answers(ui_url))):
            if proc.poll() is not None:
                raise ConnectServerError(f"Spark Connect server exited ({proc.returncode}):\n{log_tail(log)}")
            if time.monotonic() > deadline:
                raise ConnectServerError(f"Spark Connect server not listening within {timeout_s}s:\n{log_tail(log)}")
            time.sleep(0.3)
        yield ConnectServer(f"sc://127.0.0.1:{port}", ui_url, log)
    finally:
        stop_process_group(proc)


@contextlib.contextmanager
def connect_server(work_dir: Path, conf: Mapping[str, str] | None = None, **options: Any) -> Iterator[str]:
    """`running_connect_server` (the same options), yielding its `sc://127.0.0.1:<port>` URL alone."""
    with running_connect_server(work_dir, conf, **options) as server:
        yield server.url


# --- what the server executed: its Spark UI's REST API ----------------------------------------------------------


class ExecutionStatus(enum.StrEnum):
    """A SQL execution's status as the UI's REST API gives it."""

    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"


OPERATION_TAG = "_Operation_"  # in `SparkConnect_OperationTag_User_<user>_Session_<session>_Operation_<operation id>`
CLIENT_TAG = "_Tag_"  # in `SparkConnect_SessionTag_User_<user>_Session_<session>_Tag_<the client's addTag tag>`


@dataclasses.dataclass(frozen=True)
class SqlExecution:
    """One SQL execution the server ran: from `/sql`, with the tags of its jobs (from `/jobs`). A Connect server
    tags each job of an operation with `SparkConnect_OperationTag_…_Operation_<operation id>` and, for each tag
    the client added (`spark.addTag`), `SparkConnect_SessionTag_…_Tag_<tag>`. `root_id` is the execution this
    one is nested in (itself for a top-level one)."""

    id: int
    root_id: int
    status: str
    description: str
    job_ids: tuple[int, ...]
    job_tags: frozenset[str]

    @property
    def is_root(self) -> bool:
        return self.id == self.root_id

    @property
    def client_tags(self) -> frozenset[str]:
        """The tags the client added (`addTag`) to the operation that ran this."""
        return frozenset(t.rsplit(CLIENT_TAG, 1)[1] for t in self.job_tags if CLIENT_TAG in t)

    @property
    def operation_ids(self) -> frozenset[str]:
        """The Connect operation id(s) whose jobs ran this (none for an execution that ran no job)."""
        return frozenset(t.rsplit(OPERATION_TAG, 1)[1] for t in self.job_tags if OPERATION_TAG in t)

    def has_tag(self, tag: str) -> bool:
        """The client tag `tag`, or a job tag equal to `tag`."""
        return tag in self.client_tags or tag in self.job_tags


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return json.load(answer)


def application_id(ui_url: str) -> str:
    """The id of the (one) application the UI serves: the server's."""
    applications = _get_json(f"{ui_url}/api/v1/applications")
    if not applications:
        raise ConnectServerError(f"no application at {ui_url}")
    return applications[0]["id"]


def jobs(ui_url: str) -> list[dict[str, Any]]:
    """The server's Spark jobs as the UI lists them (each with `jobId`, `status`, `jobTags`, `description`)."""
    return _get_json(f"{ui_url}/api/v1/applications/{application_id(ui_url)}/jobs")


def _job_ids(execution: Mapping[str, Any]) -> tuple[int, ...]:
    keys = ("runningJobIds", "successJobIds", "failedJobIds")
    return tuple(sorted({j for key in keys for j in execution.get(key, ())}))


def sql_executions(ui_url: str) -> list[SqlExecution]:
    """Every SQL execution the server ran, nested ones included (oldest first), with its jobs' tags. The UI keeps
    the last `spark.sql.ui.retainedExecutions` (1000) executions and `spark.ui.retainedJobs` (1000) jobs."""
    app = application_id(ui_url)
    tags_of = {job["jobId"]: frozenset(job.get("jobTags") or ()) for job in jobs(ui_url)}
    found = []
    for execution in _get_json(f"{ui_url}/api/v1/applications/{app}/sql?details=false&length=10000"):
        job_ids = _job_ids(execution)
        found.append(
            SqlExecution(
                id=execution["id"],
                root_id=execution.get("rootExecutionId", execution["id"]),
                status=execution["status"],
                description=execution.get("description", ""),
                job_ids=job_ids,
                job_tags=frozenset().union(*(tags_of.get(j, frozenset()) for j in job_ids)),
            )
        )
    return sorted(found, key=lambda e: e.id)


def executions_tagged(ui_url: str, tag: str) -> list[SqlExecution]:
    """The top-level SQL executions that ran jobs carrying `tag` (theirs or a nested execution's; see
    `SqlExecution.has_tag`): how often a tagged query ran on the server. Each is returned with its group's tags."""
    executions = sql_executions(ui_url)
    tags_by_root: dict[int, frozenset[str]] = {}
    for execution in executions:
        tags_by_root[execution.root_id] = tags_by_root.get(execution.root_id, frozenset()) | execution.job_tags
    roots = [dataclasses.replace(e, job_tags=tags_by_root[e.id]) for e in executions if e.is_root]
    return [e for e in roots if e.has_tag(tag)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work-dir", type=Path, default=None, help="logs and warehouse (default: a temp dir)")
    args = parser.parse_args(argv)
    work_dir = args.work_dir or Path(tempfile.mkdtemp(prefix="substrait-connect-"))
    try:
        with connect_server(work_dir) as url:
            print(url, flush=True)
            signals = {signal.SIGINT, signal.SIGTERM}
            signal.pthread_sigmask(signal.SIG_BLOCK, signals)  # after the server started: it keeps its own
            signal.sigwait(signals)
    except ConnectServerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
