"""The embedded stack `make demo` and the end-to-end tests run on: a real S3-compatible server (moto's server
mode) on 127.0.0.1 holding the example plans, local Spark, and Airflow with SQLite metadata.

Airflow sees everything through environment variables only (`AIRFLOW_CONN_*`, `AIRFLOW_VAR_*`), as a
deployment would set them; DAGs come from `dags_examples/`. Runs are `airflow dags test` subprocesses, and
their outcome is read back from Airflow's metadata database: task states and XCom values.

A library for the demo and the tests, and a CLI for the S3-compatible server by hand (docs/guides/local-s3.md):

    .venv/bin/python tools/local_stack.py s3 start        # start it in the background; prints `export AWS_...`
    .venv/bin/python tools/local_stack.py s3 put FILE s3://BUCKET/KEY   # upload (a versioned bucket, made if missing)
    .venv/bin/python tools/local_stack.py s3 env | status | stop

The running server is recorded in `$SUBSTRAIT_SPARK_LOCAL_STACK_DIR` (default `.data/local-stack`): `s3.json`
(PID, endpoint) and `s3.log`; `stop` ends that PID's process group and nothing else.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DAGS = ROOT / "dags_examples"
EXAMPLE_PLANS = DAGS / "plans"
REGION = "us-east-1"
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}  # the local server's dummies
PLANS_BUCKET = "substrait-plans"
TPCH_TABLES = ("customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier")
START_TIMEOUT_S = 30.0

# Object key in the plans bucket -> plan file (relative to the corpus, or to dags_examples/plans).
CORPUS_PLANS = {
    "tpch/isthmus_q03_shipping_priority.json": "ibm-substrait-compliance-tpch/q03.json",
    "tpch/duckdb_q06_forecast_revenue.json": "consumer-testing-tpch-snapshots/q06-duckdb_plan.json",
    "tpch/ibis_q10_returned_items.json": "ibis-substrait-tpch/tpc_h10.json",
}


# --- S3-compatible server -----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _moto_command(port: int) -> list[str]:
    exe = Path(sys.executable).parent / "moto_server"
    head = [str(exe)] if exe.exists() else [sys.executable, "-m", "moto.server"]
    return [*head, "-H", "127.0.0.1", "-p", str(port)]


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status < 500
    except OSError:
        return False


def _start_moto(port: int, stderr: Any, recording: Path) -> subprocess.Popen:
    """moto's server on 127.0.0.1:`port` in a session of its own (no `AWS_*` of ours leaks into it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    # Where the server's request recorder writes when a test starts it (`/moto-api/recorder/`): not the cwd.
    env["MOTO_RECORDER_FILEPATH"] = str(recording)
    return subprocess.Popen(
        _moto_command(port), stdout=subprocess.DEVNULL, stderr=stderr, env=env, start_new_session=True
    )


def _await_moto(proc: subprocess.Popen, endpoint: str, log: Callable[[], str]) -> None:
    """Wait until the server answers HTTP; its exit or START_TIMEOUT_S first is a RuntimeError with its log."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while not _answers(f"{endpoint}/moto-api/"):
        if proc.poll() is not None:
            raise RuntimeError(f"moto_server exited with {proc.returncode}: {log().strip()[-2000:]}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"moto_server did not answer on {endpoint} within {START_TIMEOUT_S:.0f}s")
        time.sleep(0.1)


@contextmanager
def running_s3_server(port: int | None = None) -> Iterator[str]:
    """Start moto's server, wait until it answers HTTP, yield `http://127.0.0.1:PORT`, stop it afterwards."""
    port = port or free_port()
    endpoint = f"http://127.0.0.1:{port}"
    recording = Path(tempfile.gettempdir()) / f"moto-recording-{port}.jsonl"
    proc = _start_moto(port, subprocess.PIPE, recording)
    try:
        _await_moto(proc, endpoint, lambda: proc.stderr.read().decode(errors="replace") if proc.stderr else "")
        yield endpoint
    finally:
        stop(proc)
        if proc.stderr:
            proc.stderr.close()
        recording.unlink(missing_ok=True)


class ServerDidNotStart(RuntimeError):
    """A server process exited or did not answer in time; the message holds its log's tail."""


def stop(proc: subprocess.Popen, timeout: float = 10) -> None:
    """SIGTERM to `proc`, SIGKILL when it is still there after `timeout` seconds; returns once it has exited."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _default_signals() -> None:
    """In the child: SIGINT/SIGTERM/SIGQUIT back to their defaults (children of a non-interactive shell ignore
    some; `dagster dev` then outlives its SIGTERM)."""
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT):
        signal.signal(s, signal.SIG_DFL)


@contextmanager
def serving(
    cmd: list[str],
    url: str,
    log_path: Path,
    *,
    env: Mapping[str, str],
    cwd: Path,
    timeout: float = 120,
    ready: Callable[[], bool] | None = None,
    stop_timeout: float = 60,
) -> Iterator[subprocess.Popen]:
    """Start `cmd` in a session of its own with default signal handling, its output in `log_path`; wait until
    `url` answers HTTP (or `ready()` is true: a server whose every unauthenticated answer is an error); stop it by
    its PID afterwards (SIGTERM, then SIGKILL after `stop_timeout` seconds)."""
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            cmd,
            env=dict(env),
            cwd=cwd,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_default_signals,
        )
        try:
            deadline = time.monotonic() + timeout
            while not (ready() if ready is not None else _answers(url)):
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    raise ServerDidNotStart(f"{cmd[0]} did not start:\n{log_path.read_text()[-4000:]}")
                time.sleep(0.5)
            yield proc
        finally:
            _signal_group(proc, signal.SIGTERM)
            try:
                proc.wait(timeout=stop_timeout)
            except subprocess.TimeoutExpired:
                _signal_group(proc, signal.SIGKILL)
                proc.wait()


def _signal_group(proc: subprocess.Popen, sig: signal.Signals) -> None:
    """`sig` to `proc`'s process group; a group already gone (a server that died while starting, and its
    children with it) has nothing left to stop."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)


def s3_client(endpoint: str, **config: Any) -> Any:
    """A boto3 S3 client for the local server (dummy credentials); `config` goes to botocore's Config."""
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3", endpoint_url=endpoint, region_name=REGION, config=Config(**config) if config else None, **CREDENTIALS
    )


def seed_plans(endpoint: str, corpus: Path, bucket: str = PLANS_BUCKET) -> dict[str, str]:
    """A versioned bucket holding the example plans; returns key -> VersionId."""
    client = s3_client(endpoint)
    existing = {b["Name"] for b in client.list_buckets().get("Buckets", [])}
    if bucket not in existing:
        client.create_bucket(Bucket=bucket)
        client.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    files = {f"tpch/{p.name}": p for p in sorted(EXAMPLE_PLANS.glob("*.json"))}
    files.update({key: corpus / rel for key, rel in CORPUS_PLANS.items()})
    versions = {}
    for key, path in files.items():
        versions[key] = client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes()).get("VersionId")
    return versions


# --- Airflow ------------------------------------------------------------------------------------------------


@dataclass
class AirflowStack:
    """An Airflow home (SQLite metadata) with connections and variables given as environment variables."""

    home: Path
    s3_endpoint: str
    tables_dir: Path
    reports_dir: Path
    spark_master: str = "local[2]"
    dags: Path = DAGS
    extra_env: Mapping[str, str] | None = None

    @property
    def catalog_config(self) -> Path:
        return self.home / "catalogs.yaml"

    def ensure_lake(self) -> Path:
        """The Iceberg catalog `lake` (SQLite, in the Airflow home) with namespace `demo`, and its config file."""
        import yaml
        from substrait_spark.hooks.iceberg_spark import pyiceberg_catalog, pyiceberg_catalog_properties

        settings = {"uri": self.home / "lake" / "catalog.db", "warehouse": self.home / "lake" / "warehouse"}
        settings["uri"].parent.mkdir(parents=True, exist_ok=True)
        catalog = pyiceberg_catalog("lake", **settings)
        catalog.create_namespace_if_not_exists("demo")
        catalog.engine.dispose()
        config = {"default": "lake", "catalogs": {"lake": pyiceberg_catalog_properties("lake", **settings)}}
        self.catalog_config.write_text(yaml.safe_dump(config))
        return self.catalog_config

    def env(self, **overrides: str) -> dict[str, str]:
        tables = {t: str((self.tables_dir / f"{t}.parquet").resolve()) for t in TPCH_TABLES}
        aws = {
            "conn_type": "aws",
            "login": CREDENTIALS["aws_access_key_id"],
            "password": CREDENTIALS["aws_secret_access_key"],
            "extra": {"endpoint_url": self.s3_endpoint, "region_name": REGION},
        }
        spark = {
            "conn_type": "substrait_spark",
            "host": self.spark_master,
            "extra": {"tables": tables, "conf": {"spark.sql.shuffle.partitions": "4"}},
        }
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "AIRFLOW"))}
        env.update(
            {
                "AIRFLOW_HOME": str(self.home),
                "AIRFLOW__CORE__DAGS_FOLDER": str(self.dags),
                "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                "AIRFLOW__LOGGING__LOGGING_LEVEL": "INFO",
                "AIRFLOW_CONN_AWS_DEFAULT": json.dumps(aws),
                "AIRFLOW_CONN_SUBSTRAIT_SPARK_DEFAULT": json.dumps(spark),
                "AIRFLOW_VAR_SUBSTRAIT_PLANS": f"s3://{PLANS_BUCKET}",
                "AIRFLOW_VAR_SUBSTRAIT_REPORTS_DIR": str(self.reports_dir.resolve()),
                "AIRFLOW_VAR_SUBSTRAIT_CATALOG_CONFIG": str(self.catalog_config.resolve()),
                "SPARK_LOCAL_IP": "127.0.0.1",
                "PYSPARK_PYTHON": sys.executable,
                "PYTHONUNBUFFERED": "1",
            }
        )
        env.update(self.extra_env or {})
        env.update(overrides)
        return env

    def airflow(self, *args: str, timeout: float = 600, **env: str) -> subprocess.CompletedProcess[str]:
        exe = Path(sys.executable).parent / "airflow"
        return subprocess.run(
            [str(exe), *args], env=self.env(**env), capture_output=True, text=True, timeout=timeout, cwd=ROOT
        )

    def migrate(self) -> None:
        """Create the metadata database once per home (a stamp keeps reruns quick). The home's default SQLite
        database is a copy of the one `airflow db migrate` made first in this process (`_MIGRATED`); a database
        named in `extra_env` is migrated in place."""
        global _MIGRATED
        stamp = self.home / ".migrated"
        self.home.mkdir(parents=True, exist_ok=True)
        if stamp.exists():
            return
        database = self.home / "airflow.db"
        default_database = _DATABASE_ENV not in (self.extra_env or {})
        if default_database and _MIGRATED is not None and _MIGRATED.exists():
            _copy_database(_MIGRATED, database)
        else:
            done = self.airflow("db", "migrate")
            if done.returncode:
                raise RuntimeError(f"airflow db migrate failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
            if default_database and _MIGRATED is None:
                _MIGRATED = _keep_migrated(database)
        stamp.touch()

    def dags_test(self, dag_id: str, logical_date: str, timeout: float = 900, **env: str) -> DagRun:
        done = self.airflow("dags", "test", dag_id, logical_date, timeout=timeout, **env)
        return self.last_run(dag_id, done)

    def last_run(self, dag_id: str, done: subprocess.CompletedProcess[str] | None = None) -> DagRun:
        with sqlite3.connect(self.home / "airflow.db") as db:
            row = db.execute(
                "SELECT run_id, state FROM dag_run WHERE dag_id = ? ORDER BY id DESC LIMIT 1", (dag_id,)
            ).fetchone()
            if row is None:
                output = f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}" if done else ""
                raise RuntimeError(f"no run of {dag_id} in {self.home}:\n{output}")
            run_id, state = row
            tasks = db.execute(
                "SELECT task_id, map_index, state FROM task_instance WHERE dag_id = ? AND run_id = ?",
                (dag_id, run_id),
            ).fetchall()
            xcoms = db.execute(
                "SELECT task_id, map_index, key, value FROM xcom WHERE dag_id = ? AND run_id = ?", (dag_id, run_id)
            ).fetchall()
            assets = db.execute(
                "SELECT a.name, a.uri, e.extra FROM asset_event e JOIN asset a ON a.id = e.asset_id"
                " WHERE e.source_dag_id = ? AND e.source_run_id = ? ORDER BY e.id",
                (dag_id, run_id),
            ).fetchall()
        return DagRun(
            dag_id=dag_id,
            run_id=run_id,
            state=state,
            task_states={(t, m): s for t, m, s in tasks},
            xcom={(t, m, k): _json(v) for t, m, k, v in xcoms},
            asset_events=[(name, uri, _json(extra)) for name, uri, extra in assets],
            stdout=done.stdout if done else "",
            stderr=done.stderr if done else "",
        )


# A freshly migrated metadata database (SQLite), made once per process. A migrated database holds no path,
# connection or secret of its home (the schema, the default pool, the log templates), and `airflow db migrate`
# costs seconds each time (ten homes in a test run): a new home starts from a copy.
_MIGRATED: Path | None = None
_DATABASE_ENV = "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"


def _keep_migrated(database: Path) -> Path:
    """A copy of a just-migrated `database` in a temporary folder of this process (removed at exit)."""
    import atexit
    import shutil

    folder = Path(tempfile.mkdtemp(prefix="airflow-migrated-"))
    atexit.register(shutil.rmtree, folder, True)
    template = folder / "airflow.db"
    _copy_database(database, template)
    return template


def _copy_database(source: Path, target: Path) -> None:
    """SQLite's online backup: a consistent copy whatever journal (WAL) state the source is in."""
    with contextlib.closing(sqlite3.connect(source)) as src, contextlib.closing(sqlite3.connect(target)) as dst:
        src.backup(dst)


def _json(value: Any) -> Any:
    if isinstance(value, bytes):
        value = value.decode()
    try:
        return json.loads(value) if isinstance(value, str) else value
    except json.JSONDecodeError:
        return value


@dataclass
class DagRun:
    """What one `airflow dags test` left in the metadata database."""

    dag_id: str
    run_id: str
    state: str
    task_states: dict[tuple[str, int], str]
    xcom: dict[tuple[str, int, str], Any]
    asset_events: list[tuple[str, str, Any]]  # (asset name, uri, extra) of the events this run emitted
    stdout: str
    stderr: str

    def state_of(self, task_id: str, map_index: int = -1) -> str | None:
        return self.task_states.get((task_id, map_index))

    def value(self, task_id: str, key: str = "return_value", map_index: int = -1) -> Any:
        return self.xcom.get((task_id, map_index, key))

    @property
    def log(self) -> str:
        return self.stdout + self.stderr


# --- CLI: the S3-compatible server by hand ---------------------------------------------------------------------

STATE_DIR_ENV = "SUBSTRAIT_SPARK_LOCAL_STACK_DIR"
STOP_TIMEOUT_S = 10.0


class StackError(RuntimeError):
    """A CLI request that cannot be done (no server recorded, one already running, a bad S3 URI): exit 2."""


@dataclass(frozen=True)
class S3State:
    """The server `s3 start` left running: its PID and endpoint, kept in `<state dir>/s3.json`."""

    pid: int
    endpoint: str

    @staticmethod
    def folder() -> Path:
        return Path(os.environ.get(STATE_DIR_ENV) or ROOT / ".data" / "local-stack")

    @classmethod
    def file(cls) -> Path:
        return cls.folder() / "s3.json"

    @classmethod
    def read(cls) -> S3State | None:
        try:
            data = json.loads(cls.file().read_text())
        except (OSError, ValueError):
            return None
        return cls(int(data["pid"]), str(data["endpoint"]))

    def write(self) -> None:
        self.file().parent.mkdir(parents=True, exist_ok=True)
        self.file().write_text(json.dumps({"pid": self.pid, "endpoint": self.endpoint}))

    def alive(self) -> bool:
        """The recorded PID is still a moto server (a PID reused by another program is not ours to stop)."""
        try:
            cmdline = Path(f"/proc/{self.pid}/cmdline").read_bytes()
        except OSError:
            return False
        return b"moto" in cmdline


def s3_exports(endpoint: str) -> dict[str, str]:
    """What boto3 (and `substrait-spark run s3://...`) needs to reach the local server: dummy credentials."""
    return {
        "AWS_ENDPOINT_URL_S3": endpoint,
        "AWS_ACCESS_KEY_ID": CREDENTIALS["aws_access_key_id"],
        "AWS_SECRET_ACCESS_KEY": CREDENTIALS["aws_secret_access_key"],
        "AWS_DEFAULT_REGION": REGION,
    }


def _print_exports(endpoint: str) -> None:
    for name, value in s3_exports(endpoint).items():
        print(f"export {name}={value}")


def _running() -> S3State:
    state = S3State.read()
    if state is None or not state.alive():
        raise StackError(f"no local S3 server running (none recorded in {S3State.file()}): run `s3 start`")
    return state


def s3_start(args: argparse.Namespace) -> int:
    """Start moto's server in the background (it outlives this command), record it, print the exports."""
    state = S3State.read()
    if state is not None and state.alive():
        raise StackError(f"a local S3 server already runs at {state.endpoint} (PID {state.pid}): `s3 stop` first")
    port = args.port or free_port()
    endpoint = f"http://127.0.0.1:{port}"
    S3State.folder().mkdir(parents=True, exist_ok=True)
    log_path = S3State.folder() / "s3.log"
    with open(log_path, "wb") as log:
        proc = _start_moto(port, log, S3State.folder() / "s3-recording.jsonl")
    try:
        _await_moto(proc, endpoint, lambda: log_path.read_text(errors="replace"))
    except RuntimeError:
        _stop_group(proc.pid)
        raise
    S3State(proc.pid, endpoint).write()
    print(
        f"local S3 server at {endpoint}, PID {proc.pid}, log {log_path}; stop: tools/local_stack.py s3 stop",
        file=sys.stderr,
    )
    _print_exports(endpoint)
    return 0


def s3_env(args: argparse.Namespace) -> int:
    _print_exports(_running().endpoint)
    return 0


def s3_status(args: argparse.Namespace) -> int:
    """Exit 0 and print the endpoint when the recorded server runs and answers; else exit 1."""
    state = S3State.read()
    if state is None or not state.alive():
        print("no local S3 server running")
        return 1
    answering = "answering" if _answers(f"{state.endpoint}/moto-api/") else "not answering"
    print(f"local S3 server at {state.endpoint}, PID {state.pid}, {answering}")
    return 0 if answering == "answering" else 1


def _stop_group(pid: int) -> None:
    """SIGTERM the server's process group (it runs in a session of its own), SIGKILL if it stays."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        if not Path(f"/proc/{pid}").exists():
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def s3_stop(args: argparse.Namespace) -> int:
    state = _running()
    _stop_group(state.pid)
    S3State.file().unlink(missing_ok=True)
    print(f"stopped the local S3 server (PID {state.pid})", file=sys.stderr)
    return 0


def s3_put(args: argparse.Namespace) -> int:
    """Upload FILE to s3://BUCKET/KEY on the local server (bucket made, versioned, if missing); print its URI
    with the version id, the form a run can pin."""
    from urllib.parse import urlsplit

    url = urlsplit(args.uri)
    if url.scheme != "s3" or not url.netloc or not url.path.strip("/"):
        raise StackError(f"expected s3://BUCKET/KEY, got {args.uri!r}")
    source = Path(args.file)
    if not source.is_file():
        raise StackError(f"no such file: {source}")
    bucket, key = url.netloc, url.path.lstrip("/")
    client = s3_client(_running().endpoint)
    if bucket not in {b["Name"] for b in client.list_buckets().get("Buckets", [])}:
        client.create_bucket(Bucket=bucket)
        client.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    version = client.put_object(Bucket=bucket, Key=key, Body=source.read_bytes()).get("VersionId")
    print(f"s3://{bucket}/{key}" + (f"?versionId={version}" if version else ""))
    return 0


S3_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "start": s3_start,
    "stop": s3_stop,
    "status": s3_status,
    "env": s3_env,
    "put": s3_put,
}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="local_stack.py", description="The embedded stack's S3-compatible server by hand.")
    stack = p.add_subparsers(dest="part", required=True)
    s3 = stack.add_parser("s3", help="the S3-compatible server (moto) on 127.0.0.1")
    cmd = s3.add_subparsers(dest="command", required=True)
    start = cmd.add_parser("start", help="start it in the background and print the `export AWS_...` lines")
    start.add_argument("--port", type=int, default=None, help="port on 127.0.0.1 (default: a free one)")
    cmd.add_parser("stop", help="stop the server `start` started (by its PID)")
    cmd.add_parser("status", help="exit 0 iff it runs and answers")
    cmd.add_parser("env", help="print the `export AWS_...` lines for the running server")
    put = cmd.add_parser("put", help="upload a file (a plan) to s3://BUCKET/KEY")
    put.add_argument("file", metavar="FILE")
    put.add_argument("uri", metavar="s3://BUCKET/KEY")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return S3_COMMANDS[args.command](args)
    except (StackError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
