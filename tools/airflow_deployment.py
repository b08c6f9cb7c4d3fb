"""A real Airflow deployment on 127.0.0.1 for the tests that kill workers: api-server, scheduler (LocalExecutor),
dag-processor and triggerer, each a process group of its own with its own log, metadata in PostgreSQL.

`airflow dags test` runs a DAG inside one process: no separate worker to kill, no triggerer, no slots. The durable,
deferrable and cancel tests need what a deployment has, so this starts one (`airflow db migrate`, then the four
components), waits until the api-server answers, the scheduler, triggerer and dag-processor report healthy and
every DAG file in the folder is parsed, and stops every process it started, by PID, at exit (SIGTERM to each group,
SIGKILL after a timeout; task processes, which Airflow puts in groups of their own, included).

Environment: `local_stack.AirflowStack.env` (connections as `AIRFLOW_CONN_*`, the S3 endpoint, the TPC-H tables),
plus the deployment's settings (`deployment_settings`): one `[api_auth] jwt_secret`, `[core]
execution_api_server_url` at the api-server, DAGs unpaused at creation, all users admins of the simple auth
manager (tokens from `GET /auth/token`), and heartbeats short enough that a killed task is noticed in seconds.

Processes of a running task under the LocalExecutor (seen in /proc/<pid>/cmdline, set by setproctitle):
- the executor's worker, which supervises the task: `airflow worker -- LocalExecutor: <ti id>` (between tasks
  `airflow worker -- LocalExecutor: <idle>`), a child of the scheduler;
- the task process it forks (in a process group of its own): `airflow worker -- <ti id>`.
The task instance id is new for every try. Measured here (2 shared cores): the deployment is ready 20-30 s after
start; a SIGKILLed task process has its retry running 2-3 s later (its supervisor reports the failure at once); a
SIGKILLed supervisor is noticed by the heartbeat timeout (`HEARTBEAT_TIMEOUT_S`), the retry running ~13 s later,
while the orphaned task process runs on until it ends (the deployment's stop sweeps it); a running task marked
failed gets SIGTERM (its `on_kill`) at its supervisor's next heartbeat, within ~1 s, and SIGKILL 5 s later if it
is still alive; a SIGKILLed triggerer's triggers are taken over by a new one (`restart_triggerer`, healthy in
3-9 s).

    with airflow_deployment(home, dags, parallelism=2, postgres_uri=uri, extra_env=connections) as deployment:
        run_id = deployment.client.trigger("my_dag", {"key": "value"})
        ti = deployment.client.wait_for_task("my_dag", run_id, "my_task", ["running"])
        deployment.kill_task(ti)                       # SIGKILL its task process
        assert deployment.client.wait_for_run("my_dag", run_id) == "success"
"""

from __future__ import annotations

import contextlib
import enum
import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from local_stack import ROOT, AirflowStack, free_port

STARTUP_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 20.0
AIRFLOW = Path(sys.executable).parent / "airflow"
TERMINAL_RUN_STATES = frozenset({"success", "failed"})
WORKER_TITLE = "airflow worker -- "
SUPERVISOR_TITLE = "airflow worker -- LocalExecutor: "

# How quickly the deployment notices things (seconds): a killed task's missing heartbeats, a dead triggerer, a new
# DAG file. The defaults (minutes) suit production, not a test that waits for the retry.
HEARTBEAT_TIMEOUT_S = 10
FAST_SETTINGS = {
    "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT": str(HEARTBEAT_TIMEOUT_S),
    "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_TIMEOUT_DETECTION_INTERVAL": "2",
    "AIRFLOW__SCHEDULER__TASK_INSTANCE_HEARTBEAT_SEC": "1",
    "AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL": "1",
    "AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC": "1",
    "AIRFLOW__SCHEDULER__JOB_HEARTBEAT_SEC": "1",
    "AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME": "0.5",
    "AIRFLOW__SCHEDULER__SCHEDULER_HEALTH_CHECK_THRESHOLD": "15",
    "AIRFLOW__SCHEDULER__TRIGGER_TIMEOUT_CHECK_INTERVAL": "2",
    "AIRFLOW__TRIGGERER__JOB_HEARTBEAT_SEC": "1",
    "AIRFLOW__TRIGGERER__TRIGGERER_HEALTH_CHECK_THRESHOLD": "5",
    "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
    "AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL": "5",
    "AIRFLOW__DAG_PROCESSOR__PARSING_PROCESSES": "1",
    "AIRFLOW__DAG_PROCESSOR__HEALTH_CHECK_THRESHOLD": "15",
}


class Component(enum.StrEnum):
    """A long-running Airflow process of the deployment; the value is its `airflow` subcommand."""

    API_SERVER = "api-server"
    SCHEDULER = "scheduler"
    DAG_PROCESSOR = "dag-processor"
    TRIGGERER = "triggerer"


class WhichProcess(enum.StrEnum):
    """Which process of a running task `kill_task` kills."""

    TASK = "task"  # the forked task process: its supervisor reports the failure at once
    # The executor worker supervising it: the retry waits for the heartbeat timeout, and the task process, now an
    # orphan, goes on running until it finishes or its next heartbeat is refused.
    SUPERVISOR = "supervisor"
    WORKER = "worker"  # both, supervisor first (a lost worker machine): the retry waits for the heartbeat timeout


class DeploymentError(RuntimeError):
    """The deployment did not start, or a request to it failed or timed out (the message says which, with logs)."""


# --- metadata database ----------------------------------------------------------------------------------------


def create_database(server_uri: str, name: str) -> str:
    """A fresh database `name` on the PostgreSQL server of `server_uri` (any database of it); its URI."""
    import psycopg2  # type: ignore[import-untyped]

    parts = urllib.parse.urlsplit(server_uri)
    connection = psycopg2.connect(server_uri)
    try:
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')
            cursor.execute(f'CREATE DATABASE "{name}"')
    finally:
        connection.close()
    return urllib.parse.urlunsplit(parts._replace(path=f"/{name}"))


def metadata_settings(home: Path, postgres_uri: str | None) -> dict[str, str]:
    """`[database]` settings: a database of its own on the PostgreSQL server (psycopg2 sync, asyncpg async), or
    SQLite in `home` when no server is given."""
    if postgres_uri is None:
        return {"AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}"}
    database = create_database(postgres_uri, f"airflow_{secrets.token_hex(4)}")
    rest = database.split("://", 1)[1]
    return {
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"postgresql+psycopg2://{rest}",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC": f"postgresql+asyncpg://{rest}",
    }


def deployment_settings(home: Path, port: int, parallelism: int, jwt_secret: str) -> dict[str, str]:
    """What the components must agree on, and what makes them quick (see the module docstring)."""
    base = f"http://127.0.0.1:{port}"
    return {
        "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
        "AIRFLOW__CORE__PARALLELISM": str(parallelism),
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{base}/execution/",
        "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
        "AIRFLOW__API_AUTH__JWT_SECRET": jwt_secret,
        "AIRFLOW__API__BASE_URL": base,
        "AIRFLOW__API__WORKERS": "1",
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(port),
        "AIRFLOW__LOGGING__BASE_LOG_FOLDER": str(home / "logs"),
        **FAST_SETTINGS,
    }


# --- processes ----------------------------------------------------------------------------------------------------


def _default_signals() -> None:
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT):
        signal.signal(s, signal.SIG_DFL)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def _parent(pid: int) -> int | None:
    """The parent PID from /proc/<pid>/stat (field 4, after the parenthesised command name)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def _pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


def descendants(pid: int) -> list[int]:
    """Every living descendant of `pid` (children first found, then theirs)."""
    children: dict[int, list[int]] = {}
    for p in _pids():
        parent = _parent(p)
        if parent is not None:
            children.setdefault(parent, []).append(p)
    found, queue = [], [pid]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _signal(pids: Iterable[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def stop_trees(procs: Iterable[subprocess.Popen], timeout: float = STOP_TIMEOUT_S) -> None:
    """SIGTERM each process group of `procs` (each started with `start_new_session`) and every descendant (task
    processes have groups of their own), all at once; SIGKILL what lingers after `timeout`; reap `procs`."""
    procs = list(procs)
    trees = {proc.pid: descendants(proc.pid) for proc in procs}
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        _signal(trees[proc.pid], signal.SIGTERM)
    deadline = time.monotonic() + timeout
    everything = [p for tree in trees.values() for p in tree]
    while time.monotonic() < deadline and (
        any(proc.poll() is None for proc in procs) or any(_alive(p) for p in everything)
    ):
        time.sleep(0.2)
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    _signal([p for p in everything if _alive(p)], signal.SIGKILL)
    for proc in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)


def airflow_processes(home: Path) -> list[int]:
    """The living Airflow processes working in `home`: every component of a deployment runs in its home, and their
    children (task processes included) inherit that working directory. (Not the environment: setproctitle
    overwrites /proc/<pid>/environ of the api-server and of the executor's workers and tasks.) Other programs
    working there (a Spark Connect server whose work dir is in the home) are not Airflow's: left out."""
    own = []
    for pid in _pids():
        try:
            cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:
            continue
        if cwd.is_relative_to(home) and pid != os.getpid() and "airflow" in _cmdline(pid) and _alive(pid):
            own.append(pid)
    return own


@dataclass
class TaskProcesses:
    """The processes running one task instance try: the forked task process and its supervisor."""

    task: int
    supervisor: int | None


def task_process_pids(ti_id: str) -> TaskProcesses | None:
    """The PIDs running the task instance try with id `ti_id` (see the module docstring), or None when none runs."""
    title = f"{WORKER_TITLE}{ti_id}"
    for pid in _pids():
        if _cmdline(pid) == title:
            parent = _parent(pid)
            supervisor = parent if parent and _cmdline(parent).startswith(SUPERVISOR_TITLE) else None
            return TaskProcesses(task=pid, supervisor=supervisor)
    return None


# --- REST API v2 ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskInstance:
    """One task instance of a DAG run as the API lists it (its current try)."""

    dag_id: str
    run_id: str
    task_id: str
    map_index: int
    state: str | None
    try_number: int
    id: str

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> TaskInstance:
        return cls(
            dag_id=data["dag_id"],
            run_id=data["dag_run_id"],
            task_id=data["task_id"],
            map_index=data.get("map_index", -1),
            state=data.get("state"),
            try_number=data.get("try_number", 0),
            id=data["id"],
        )


@dataclass
class AirflowClient:
    """The api-server's REST API v2 as an admin of the simple auth manager (a JWT from `GET /auth/token`)."""

    base_url: str
    timeout: float = 30.0
    _token: str | None = field(default=None, repr=False)

    def token(self) -> str:
        if self._token is None:
            with urllib.request.urlopen(f"{self.base_url}/auth/token", timeout=self.timeout) as answer:
                self._token = json.load(answer)["access_token"]
        return self._token

    def request(self, method: str, path: str, body: Any = None, *, accept: str = "application/json") -> Any:
        """`method` on `/api/v2{path}`; the decoded JSON answer (text when `accept` is not JSON)."""
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Authorization": f"Bearer {self.token()}", "Accept": accept}
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(f"{self.base_url}/api/v2{path}", data, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as answer:
                raw = answer.read().decode()
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:2000]
            raise DeploymentError(f"{method} {path}: HTTP {exc.code}: {detail}") from None
        return json.loads(raw) if accept == "application/json" and raw else raw

    @staticmethod
    def _q(value: str) -> str:
        return urllib.parse.quote(value, safe="")

    def _ti_path(self, dag_id: str, run_id: str, task_id: str) -> str:
        return f"/dags/{self._q(dag_id)}/dagRuns/{self._q(run_id)}/taskInstances/{self._q(task_id)}"

    def dag_ids(self) -> dict[str, str]:
        """DAG id -> the file it was parsed from, for every DAG the deployment knows."""
        answer = self.request("GET", "/dags?limit=1000")
        return {d["dag_id"]: d.get("fileloc", "") for d in answer["dags"]}

    def import_errors(self) -> dict[str, str]:
        """File -> the error parsing it."""
        answer = self.request("GET", "/importErrors?limit=1000")
        return {e["filename"]: e["stack_trace"] for e in answer["import_errors"]}

    def health(self) -> dict[str, Any]:
        return self.request("GET", "/monitor/health")

    def trigger(self, dag_id: str, conf: Mapping[str, Any] | None = None, run_id: str | None = None) -> str:
        """Start a DAG run now; its run id."""
        body: dict[str, Any] = {"logical_date": None, "conf": dict(conf or {})}
        if run_id:
            body["dag_run_id"] = run_id
        return self.request("POST", f"/dags/{self._q(dag_id)}/dagRuns", body)["dag_run_id"]

    def run_state(self, dag_id: str, run_id: str) -> str:
        return self.request("GET", f"/dags/{self._q(dag_id)}/dagRuns/{self._q(run_id)}")["state"]

    def wait_for_run(self, dag_id: str, run_id: str, timeout: float = 120.0, poll: float = 0.5) -> str:
        """The run's terminal state (success/failed); DeploymentError when it has none within `timeout`."""
        deadline = time.monotonic() + timeout
        while (state := self.run_state(dag_id, run_id)) not in TERMINAL_RUN_STATES:
            if time.monotonic() > deadline:
                tis = [(t.task_id, t.state, t.try_number) for t in self.task_instances(dag_id, run_id)]
                raise DeploymentError(f"{dag_id}/{run_id} still {state} after {timeout:.0f}s; tasks: {tis}")
            time.sleep(poll)
        return state

    def task_instances(self, dag_id: str, run_id: str) -> list[TaskInstance]:
        path = f"/dags/{self._q(dag_id)}/dagRuns/{self._q(run_id)}/taskInstances?limit=1000"
        return [TaskInstance.from_api(t) for t in self.request("GET", path)["task_instances"]]

    def task_instance(self, dag_id: str, run_id: str, task_id: str, map_index: int = -1) -> TaskInstance:
        path = self._ti_path(dag_id, run_id, task_id)
        if map_index >= 0:
            path += f"/{map_index}"
        return TaskInstance.from_api(self.request("GET", path))

    def wait_for_task(
        self,
        dag_id: str,
        run_id: str,
        task_id: str,
        states: Iterable[str],
        *,
        try_number: int | None = None,
        timeout: float = 120.0,
        poll: float = 0.2,
    ) -> TaskInstance:
        """The task instance once its state is one of `states` (and its try is `try_number`, when given)."""
        wanted = set(states)
        deadline = time.monotonic() + timeout
        while True:
            ti = self.task_instance(dag_id, run_id, task_id)
            if ti.state in wanted and (try_number is None or ti.try_number == try_number):
                return ti
            if time.monotonic() > deadline:
                raise DeploymentError(
                    f"{task_id} of {dag_id}/{run_id} is {ti.state} (try {ti.try_number}), not {wanted}"
                )
            time.sleep(poll)

    def mark_failed(self, dag_id: str, run_id: str, task_id: str, map_index: int = -1) -> Any:
        """PATCH the task instance to `failed`, as the UI's "mark failed" does."""
        path = self._ti_path(dag_id, run_id, task_id)
        if map_index >= 0:
            path += f"/{map_index}"
        return self.request("PATCH", path, {"new_state": "failed"})

    def clear(self, dag_id: str, run_id: str, task_ids: Iterable[str]) -> Any:
        """Clear task instances of a run (they run again; the run goes back to queued/running)."""
        body = {
            "dag_run_id": run_id,
            "task_ids": list(task_ids),
            "dry_run": False,
            "only_failed": False,
            "reset_dag_runs": True,
        }
        return self.request("POST", f"/dags/{self._q(dag_id)}/clearTaskInstances", body)

    def xcom(self, dag_id: str, run_id: str, task_id: str, key: str = "return_value", map_index: int = -1) -> Any:
        """A task's XCom value, deserialised by the api-server."""
        path = f"{self._ti_path(dag_id, run_id, task_id)}/xcomEntries/{self._q(key)}?deserialize=true"
        if map_index >= 0:
            path += f"&map_index={map_index}"
        return self.request("GET", path)["value"]

    def log(self, dag_id: str, run_id: str, task_id: str, try_number: int, map_index: int = -1) -> str:
        """The text of one try's log: its lines' events, one a line."""
        path = f"{self._ti_path(dag_id, run_id, task_id)}/logs/{try_number}?full_content=true"
        if map_index >= 0:
            path += f"&map_index={map_index}"
        answer = self.request("GET", path)
        content = answer.get("content", [])
        if isinstance(content, str):
            return content
        return "\n".join(_log_line(line) for line in content)


# Keys every structured log line of a task carries: left out of `AirflowClient.log`'s text.
_LOG_CONTEXT = frozenset(
    {"event", "timestamp", "level", "logger", "filename", "lineno", "dag_id", "run_id", "task_id", "map_index"}
    | {"ti_id", "try_number", "logger_name", "chan", "sources"}
)


def _log_line(line: Any) -> str:
    if not isinstance(line, Mapping):
        return str(line)
    extra = {k: v for k, v in line.items() if k not in _LOG_CONTEXT}
    text = str(line.get("event", ""))
    return f"{text} {json.dumps(extra, default=str)}" if extra else text


# --- the deployment -----------------------------------------------------------------------------------------------


@dataclass
class Deployment:
    """A running deployment: its components' processes, environment, logs and API client."""

    home: Path
    dags_folder: Path
    env: dict[str, str]
    client: AirflowClient
    processes: dict[Component, subprocess.Popen] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return self.client.base_url

    def log_path(self, component: Component) -> Path:
        return self.home / f"{component.value}.log"

    def component_log(self, component: Component) -> str:
        return self.log_path(component).read_text(errors="replace") if self.log_path(component).exists() else ""

    def logs_tail(self, chars: int = 3000) -> str:
        """The end of every component's log, for a failing test's message."""
        return "\n".join(f"--- {c.value} ---\n{self.component_log(c)[-chars:]}" for c in Component)

    def airflow(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """An `airflow` CLI command against this deployment."""
        return subprocess.run(
            [str(AIRFLOW), *args], env=self.env, capture_output=True, text=True, timeout=timeout, cwd=self.home
        )

    def start(self, component: Component) -> subprocess.Popen:
        """Start `component` in a process group of its own, appending to its log."""
        port = urllib.parse.urlsplit(self.base_url).port
        args = {
            Component.API_SERVER: ["-H", "127.0.0.1", "-p", str(port), "--workers", "1"],
            Component.SCHEDULER: ["--skip-serve-logs"],
            Component.DAG_PROCESSOR: [],
            Component.TRIGGERER: ["--skip-serve-logs"],
        }[component]
        with self.log_path(component).open("a") as log:
            proc = subprocess.Popen(
                [str(AIRFLOW), component.value, *args],
                env=self.env,
                cwd=self.home,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_default_signals,
            )
        self.processes[component] = proc
        return proc

    def stop(self, component: Component) -> None:
        """Stop one component (SIGTERM, SIGKILL after a timeout), e.g. to start it again."""
        proc = self.processes.pop(component, None)
        if proc is not None:
            stop_trees([proc])

    def stop_all(self) -> None:
        """Stop every component at once, then SIGKILL whatever else of this deployment still runs."""
        stop_trees(self.processes.values())
        self.processes.clear()
        # Task processes orphaned by a killed supervisor (reparented to init, no longer in any tree of ours).
        _signal(self.own_processes(), signal.SIGKILL)

    def own_processes(self) -> list[int]:
        """The living Airflow processes of this deployment (`airflow_processes`)."""
        return airflow_processes(self.home)

    def running(self, component: Component) -> bool:
        proc = self.processes.get(component)
        return proc is not None and proc.poll() is None

    # --- chaos ---

    def task_process_pids(self, ti: TaskInstance) -> TaskProcesses | None:
        """The processes running `ti`'s current try (a TaskInstance read while it runs)."""
        return task_process_pids(ti.id)

    def kill_task(self, ti: TaskInstance, which: WhichProcess = WhichProcess.TASK, timeout: float = 30.0) -> list[int]:
        """SIGKILL the task process, its supervisor or both (`which`) of `ti`'s current try once they exist; the
        PIDs killed."""
        deadline = time.monotonic() + timeout
        while (found := task_process_pids(ti.id)) is None or (which is not WhichProcess.TASK and not found.supervisor):
            if time.monotonic() > deadline:
                raise DeploymentError(f"no {which.value} process for {ti.task_id} try {ti.try_number} ({ti.id})")
            time.sleep(0.1)
        choices: dict[WhichProcess, list[int | None]] = {
            WhichProcess.TASK: [found.task],
            WhichProcess.SUPERVISOR: [found.supervisor],
            WhichProcess.WORKER: [found.supervisor, found.task],
        }
        pids = choices[which]
        killed = [pid for pid in pids if pid is not None]
        _signal(killed, signal.SIGKILL)
        return killed

    def kill_triggerer(self) -> int:
        """SIGKILL the triggerer's whole process group (no clean shutdown: its triggers are orphaned); its PID."""
        proc = self.processes.pop(Component.TRIGGERER)
        tree = descendants(proc.pid)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        _signal(tree, signal.SIGKILL)
        proc.wait(timeout=10)
        return proc.pid

    def restart_triggerer(self) -> subprocess.Popen:
        """A new triggerer with the same settings; returns once it reports healthy."""
        proc = self.start(Component.TRIGGERER)
        self.wait_healthy([Component.TRIGGERER], since=time.time())
        return proc

    # --- readiness ---

    def _check_alive(self) -> None:
        for component, proc in self.processes.items():
            if proc.poll() is not None:
                raise DeploymentError(
                    f"{component.value} exited with {proc.returncode}:\n{self.component_log(component)[-4000:]}"
                )

    def wait_api(self, timeout: float = STARTUP_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout
        while True:
            self._check_alive()
            with contextlib.suppress(OSError, DeploymentError, ValueError):
                self.client.health()
                return
            if time.monotonic() > deadline:
                raise DeploymentError(f"api-server did not answer within {timeout:.0f}s:\n{self.logs_tail()}")
            time.sleep(0.5)

    def wait_healthy(
        self, components: Iterable[Component], since: float | None = None, timeout: float = STARTUP_TIMEOUT_S
    ) -> None:
        """Wait until the health endpoint reports each of `components` healthy (with a heartbeat after `since`)."""
        keys = {
            Component.SCHEDULER: "scheduler",
            Component.TRIGGERER: "triggerer",
            Component.DAG_PROCESSOR: "dag_processor",
        }
        wanted = [keys[c] for c in components if c in keys]
        deadline = time.monotonic() + timeout
        while True:
            self._check_alive()
            health = self.client.health()
            if all(_healthy(health.get(key, {}), since) for key in wanted):
                return
            if time.monotonic() > deadline:
                raise DeploymentError(f"not healthy within {timeout:.0f}s: {health}\n{self.logs_tail()}")
            time.sleep(0.5)

    def wait_parsed(self, timeout: float = STARTUP_TIMEOUT_S) -> dict[str, str]:
        """Wait until every .py file of the DAGs folder holds a parsed DAG (helper modules there: name them `_*.py`);
        an import error raises with its trace. Returns DAG id -> file."""
        files = {str(p.resolve()) for p in self.dags_folder.glob("*.py") if not p.name.startswith("_")}
        deadline = time.monotonic() + timeout
        while True:
            self._check_alive()
            errors = self.client.import_errors()
            for name, trace in errors.items():
                if any(name.endswith(Path(f).name) for f in files):
                    raise DeploymentError(f"DAG file {name} does not import:\n{trace}")
            dags = self.client.dag_ids()
            parsed = {str(Path(f).resolve()) for f in dags.values() if f}
            if files <= parsed:
                return dags
            if time.monotonic() > deadline:
                raise DeploymentError(
                    f"DAG files not parsed within {timeout:.0f}s: {sorted(files - parsed)}\n{self.logs_tail()}"
                )
            time.sleep(0.5)


def _healthy(status: Mapping[str, Any], since: float | None) -> bool:
    if status.get("status") != "healthy":
        return False
    if since is None:
        return True
    beat = status.get("latest_triggerer_heartbeat") or status.get("latest_scheduler_heartbeat") or ""
    beat = beat or status.get("latest_dag_processor_heartbeat") or ""
    if not beat:
        return False
    from datetime import datetime

    return datetime.fromisoformat(beat.replace("Z", "+00:00")).timestamp() >= since


@contextmanager
def airflow_deployment(
    home: Path,
    dags_folder: Path,
    *,
    parallelism: int = 4,
    postgres_uri: str | None = None,
    extra_env: Mapping[str, str] | None = None,
    s3_endpoint: str | None = None,
    tables_dir: Path | None = None,
    reports_dir: Path | None = None,
    startup_timeout: float = STARTUP_TIMEOUT_S,
) -> Iterator[Deployment]:
    """Migrate a metadata database, start the four components, wait until they are healthy and every DAG file is
    parsed, yield the Deployment; stop every process afterwards (also when the body raises).

    `postgres_uri` is a PostgreSQL server (any database on it, e.g. the tests' `postgres_uri`): the deployment
    gets a fresh database of its own there; None means SQLite in `home` (slower, one writer). `parallelism` is the
    LocalExecutor's worker slots. `extra_env` goes over everything (connections, settings)."""
    home = home.resolve()
    home.mkdir(parents=True, exist_ok=True)
    port = free_port()
    stack = AirflowStack(
        home,
        s3_endpoint or "",
        tables_dir or ROOT / ".data" / "tpch" / "sf0.01",
        reports_dir or home / "reports",
        dags=dags_folder.resolve(),
    )
    settings = {
        **metadata_settings(home, postgres_uri),
        **deployment_settings(home, port, parallelism, secrets.token_urlsafe(32)),
    }
    env = stack.env(**settings)
    if s3_endpoint is None:
        env.pop("AIRFLOW_CONN_AWS_DEFAULT", None)
    env.update(extra_env or {})
    deployment = Deployment(home, dags_folder.resolve(), env, AirflowClient(f"http://127.0.0.1:{port}"))
    migrated = deployment.airflow("db", "migrate", timeout=startup_timeout)
    if migrated.returncode:
        raise DeploymentError(f"airflow db migrate failed:\n{migrated.stdout[-3000:]}\n{migrated.stderr[-3000:]}")
    try:
        for component in Component:
            deployment.start(component)
        deployment.wait_api(startup_timeout)
        deployment.wait_healthy(list(Component), timeout=startup_timeout)
        deployment.wait_parsed(startup_timeout)
        yield deployment
    finally:
        deployment.stop_all()
