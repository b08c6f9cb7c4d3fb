"""The CLI as a user runs it, in its own process: timed, with a stub `java` that records whether Spark was started."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

CLI = str(Path(sys.executable).with_name("substrait-spark"))


def stub_java(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose JAVA_HOME holds a `java` that records each start in a file and fails: PySpark starts
    Spark's JVM through `$JAVA_HOME/bin/java`, so the file exists iff the process tried to start Spark."""
    home, marker = tmp_path / "jdk", tmp_path / "java-started"
    (home / "bin").mkdir(parents=True, exist_ok=True)
    java = home / "bin" / "java"
    java.write_text(f'#!/bin/sh\necho "$@" >> {marker}\nexit 1\n')
    java.chmod(0o755)
    return {**os.environ, "JAVA_HOME": str(home)}, marker


def timed(argv: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """Run a command: its result, wall-clock seconds and CPU seconds (user + system, it and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
