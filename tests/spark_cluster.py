"""A real Spark standalone cluster on 127.0.0.1 for tests: one master, one worker (1 core, 1 GiB).

Started from pyspark's own `bin/spark-class` (SPARK_HOME = the pyspark package), so no Spark install is needed.
The drivers that use it must run in a subprocess: the test session already holds a local SparkContext.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from connect_server import free_port, log_tail, stop_process_group

STARTUP_TIMEOUT_S = 60


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def cluster_env() -> dict[str, str]:
    """Environment for daemons and drivers: loopback only, the venv's Python for executors, small daemon heaps."""
    env = dict(os.environ)
    env.update(
        SPARK_HOME=str(spark_home()),
        SPARK_LOCAL_IP="127.0.0.1",
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
        SPARK_DAEMON_MEMORY="512m",
        SPARK_NO_DAEMONIZE="1",
    )
    return env


def _start(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen:
    with log.open("wb") as out:
        return subprocess.Popen(
            [str(spark_home() / "bin" / "spark-class"), *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # own process group: teardown kills the JVM and the launcher scripts
        )


# The master's web UI of each cluster running (its master URL -> `http://127.0.0.1:<port>`): what it ran.
MASTER_UI: dict[str, str] = {}


def applications(master_url: str) -> dict[str, str]:
    """The applications the standalone master at `master_url` runs or ran: id -> name (its UI's `/json/`)."""
    with urllib.request.urlopen(f"{MASTER_UI[master_url]}/json/", timeout=5) as resp:
        state = json.load(resp)
    return {app["id"]: app["name"] for app in state.get("activeapps", []) + state.get("completedapps", [])}


def _alive_workers(webui_port: int) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{webui_port}/json/", timeout=2) as resp:
        state = json.load(resp)
    return int(state.get("aliveworkers", sum(w.get("state") == "ALIVE" for w in state.get("workers", []))))


@contextlib.contextmanager
def standalone_cluster(work_dir: Path, timeout_s: float = STARTUP_TIMEOUT_S) -> Iterator[str]:
    """Start master and worker, wait until the worker registered, yield `spark://127.0.0.1:<port>`, stop both."""
    env = cluster_env()
    port, master_ui, worker_ui = free_port(), free_port(), free_port()
    master_url = f"spark://127.0.0.1:{port}"
    master_log, worker_log = work_dir / "master.log", work_dir / "worker.log"
    (work_dir / "worker").mkdir(parents=True, exist_ok=True)
    procs = [
        _start(
            [
                "org.apache.spark.deploy.master.Master",
                *("--host", "127.0.0.1", "--port", str(port), "--webui-port", str(master_ui)),
            ],
            master_log,
            env,
        )
    ]
    try:
        procs.append(
            _start(
                [
                    "org.apache.spark.deploy.worker.Worker",
                    master_url,
                    *("--host", "127.0.0.1", "--cores", "1", "--memory", "1g"),
                    *("--webui-port", str(worker_ui), "--work-dir", str(work_dir / "worker")),
                ],
                worker_log,
                env,
            )
        )
        deadline = time.monotonic() + timeout_s
        while True:
            dead = [p for p in procs if p.poll() is not None]
            if dead:
                raise RuntimeError(
                    f"Spark daemon exited ({dead[0].returncode}).\nmaster:\n{log_tail(master_log)}\n"
                    f"worker:\n{log_tail(worker_log)}"
                )
            with contextlib.suppress(OSError, ValueError):
                if _alive_workers(master_ui) >= 1:
                    break
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"no worker registered with {master_url} within {timeout_s}s.\nmaster:\n{log_tail(master_log)}\n"
                    f"worker:\n{log_tail(worker_log)}"
                )
            time.sleep(0.3)
        MASTER_UI[master_url] = f"http://127.0.0.1:{master_ui}"
        yield master_url
    finally:
        MASTER_UI.pop(master_url, None)
        for proc in reversed(procs):
            stop_process_group(proc)


@pytest.fixture(scope="session")
def spark_master_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`spark://127.0.0.1:<port>` of a standalone cluster with one worker, for drivers run in subprocesses."""
    with standalone_cluster(tmp_path_factory.mktemp("spark-cluster")) as url:
        yield url
