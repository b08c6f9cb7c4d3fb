"""A real local Spark Connect server on 127.0.0.1, started from pyspark 4.x's own distribution.

pyspark 3.5 ships no Connect server; pyspark 4.x's wheel does (`jars/spark-connect_2.13-*.jar`), so the server
runs from the second environment's pyspark (`.venv-spark4`, made by `make venv-spark4`) whichever client talks
to it. The server is `spark-submit --class org.apache.spark.sql.connect.service.SparkConnectServer` in its own
process group on a free port; `connect_server()` waits until it accepts connections and stops it afterwards.

    .venv/bin/python tools/connect_server.py          # start one, print its sc:// URL, stop on Ctrl-C
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

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


@contextlib.contextmanager
def connect_server(
    work_dir: Path,
    conf: Mapping[str, str] | None = None,
    *,
    master: str = "local[2]",
    timeout_s: float = STARTUP_TIMEOUT_S,
    env: Mapping[str, str] | None = None,
) -> Iterator[str]:
    """Start a Spark Connect server, yield its `sc://127.0.0.1:<port>` URL once it listens, stop it after.

    `env`: more environment for the server, e.g. `SPARK_CONNECT_AUTHENTICATE_TOKEN` (a token every client must
    send; given so, it stays off the server's command line, which any local user can read)."""
    home = server_spark_home()
    port = free_port()
    work_dir.mkdir(parents=True, exist_ok=True)
    log = work_dir / "connect-server.log"
    settings = {
        **SERVER_CONF,
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        "spark.sql.warehouse.dir": str(work_dir / "warehouse"),
        **(conf or {}),
    }
    args = [str(home / "bin" / "spark-submit"), "--class", SERVER_CLASS, "--master", master]
    for key, value in settings.items():
        args += ["--conf", f"{key}={value}"]
    server_env = {**os.environ, **(env or {}), "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1"}
    server_env.pop("SPARK_CONNECT_MODE_ENABLED", None)
    with log.open("wb") as out:
        proc = subprocess.Popen(
            args, stdout=out, stderr=subprocess.STDOUT, env=server_env, cwd=work_dir, start_new_session=True
        )
    try:
        deadline = time.monotonic() + timeout_s
        while not _accepts(port):
            if proc.poll() is not None:
                raise ConnectServerError(f"Spark Connect server exited ({proc.returncode}):\n{log_tail(log)}")
            if time.monotonic() > deadline:
                raise ConnectServerError(f"Spark Connect server not listening within {timeout_s}s:\n{log_tail(log)}")
            time.sleep(0.3)
        yield f"sc://127.0.0.1:{port}"
    finally:
        stop_process_group(proc)


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
