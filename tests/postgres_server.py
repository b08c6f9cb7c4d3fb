"""A real PostgreSQL server for tests: Debian's server binaries, a fresh cluster in a temp dir, on 127.0.0.1.

PostgreSQL refuses to run as root; when the tests run as root the cluster belongs to the `postgres` user the
Debian package creates. Trust authentication on loopback only — or, with `password`, SCRAM password authentication
for every TCP connection (a test that must show a password is really used); the cluster is stopped and removed
afterwards.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from local_stack import free_port

DATABASE = "iceberg"


def _bin(name: str) -> str:
    found = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
    if not found:
        raise RuntimeError(f"PostgreSQL's {name} not found under /usr/lib/postgresql (Debian package postgresql)")
    return str(found[-1])


def _as_owner(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


@contextmanager
def running_postgres(password: str | None = None) -> Iterator[str]:
    """Start a throwaway cluster; yield `postgresql://postgres@127.0.0.1:PORT/iceberg` (without the password: TCP
    connections need it when one is given)."""
    root = Path(tempfile.mkdtemp(prefix="substrait-pg-"))
    data = root / "data"
    port = free_port()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    run: dict[str, Any] = {"capture_output": True, "text": True, "check": True}
    auth = ["-A", "trust"]
    if password is not None:
        pwfile = root / "pwfile"
        pwfile.write_text(password + "\n")
        if os.geteuid() == 0:
            shutil.chown(pwfile, "postgres", "postgres")
        auth = ["--auth-local=trust", "--auth-host=scram-sha-256", f"--pwfile={pwfile}"]
        run["env"] = {**os.environ, "PGPASSWORD": password}
    subprocess.run(_as_owner([_bin("initdb"), "-D", str(data), "-U", "postgres", *auth, "-E", "UTF8"]), **run)
    options = f"-h 127.0.0.1 -p {port} -k {root}"
    subprocess.run(
        _as_owner([_bin("pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "start"]), **run
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            ready = subprocess.run(
                [_bin("pg_isready"), "-h", "127.0.0.1", "-p", str(port)],
                capture_output=True,
                check=False,
                env=run.get("env"),
            )
            if ready.returncode == 0:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL did not start: {(root / 'log').read_text()[-2000:]}")
            time.sleep(0.2)
        subprocess.run([_bin("createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", DATABASE], **run)
        yield f"postgresql://postgres@127.0.0.1:{port}/{DATABASE}"
    finally:
        subprocess.run(
            _as_owner([_bin("pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]), capture_output=True, check=False
        )
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_uri() -> Iterator[str]:
    """A PostgreSQL database on 127.0.0.1 for the whole session."""
    with running_postgres() as uri:
        yield uri
