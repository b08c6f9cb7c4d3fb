"""pytest plugin (registered by conftest.py): the suite's time per test module, at the end of the run.

`make test` has a budget (45 minutes on 2 cores, README); pytest's `--durations` names single calls, which hides a
module of many short tests. This names the modules (setup, call and teardown of every test in it, module fixtures
included), the slowest first, with how many of the machine's cores were busy meanwhile (from /proc/stat: a module
near 2.0 on 2 cores gains nothing from running beside another; one near 1.0 waits or runs on one thread), and
writes them all to test-artifacts/durations.json to compare runs — rewritten as each module ends, so a long run
can be read while it goes."""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

SHOWN = 25
ARTIFACT = Path(__file__).resolve().parent.parent / "test-artifacts" / "durations.json"
TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def busy_cpu_seconds() -> float:
    """CPU seconds every core of the machine has spent busy since boot (0 where /proc/stat is not Linux's)."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
    except (OSError, ValueError, IndexError):
        return 0.0
    idle, iowait = fields[3], fields[4] if len(fields) > 4 else 0
    return (sum(fields[:8]) - idle - iowait) / TICKS_PER_S


class ModuleDurations:
    def __init__(self) -> None:
        self.seconds: Counter[str] = Counter()
        self.tests: Counter[str] = Counter()
        self.busy: Counter[str] = Counter()  # busy CPU seconds of the machine while the module ran
        self.started = time.monotonic()
        self.busy_started = self.busy_at = busy_cpu_seconds()
        self.module = ""

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.busy_at = busy_cpu_seconds()  # collecting is no module's

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        module = report.nodeid.split("::", 1)[0]
        if module != self.module:
            if self.module:
                self.write()
            self.module = module
        self.seconds[module] += report.duration
        self.tests[module] += report.when == "call"
        busy_now = busy_cpu_seconds()
        self.busy[module] += busy_now - self.busy_at
        self.busy_at = busy_now

    def cores(self, module: str) -> float:
        seconds = self.seconds[module]
        return self.busy[module] / seconds if seconds else 0.0

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.seconds:
            return
        total = sum(self.seconds.values())
        terminalreporter.write_sep("=", f"time per test module (slowest {SHOWN} of {len(self.seconds)})")
        for module, seconds in self.seconds.most_common(SHOWN):
            share = 100 * seconds / total if total else 0.0
            terminalreporter.write_line(
                f"{seconds:8.1f}s {share:5.1f}% {self.cores(module):4.1f} cores {self.tests[module]:5d} tests  {module}"
            )
        wall = time.monotonic() - self.started
        busy = (busy_cpu_seconds() - self.busy_started) / wall if wall else 0.0
        terminalreporter.write_line(f"{total:8.1f}s of tests in {wall:.1f}s, {busy:.1f} cores busy on average")
        if error := self.write():
            terminalreporter.write_line(f"(not written: {ARTIFACT}: {error})")

    def write(self) -> OSError | None:
        """The artifact, the slowest module first (None once written; a read-only checkout still gets the table)."""
        rows = [
            {"module": m, "seconds": round(s, 2), "tests": self.tests[m], "cores": round(self.cores(m), 2)}
            for m, s in self.seconds.most_common()
        ]
        try:
            ARTIFACT.parent.mkdir(exist_ok=True)
            ARTIFACT.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
        except OSError as exc:
            return exc
        return None


def register(config: pytest.Config) -> None:
    config.pluginmanager.register(ModuleDurations(), "module_durations")
