"""pytest plugin (registered by conftest.py): the suite's time per test module, at the end of the run.

`make test` has a budget (45 minutes on 2 cores, README); pytest's `--durations` names single calls, which hides a
module of many short tests. This names the modules (setup, call and teardown of every test in it, module fixtures
included), the slowest first, and writes them all to test-artifacts/durations.json to compare runs."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

SHOWN = 25
ARTIFACT = Path(__file__).resolve().parent.parent / "test-artifacts" / "durations.json"


class ModuleDurations:
    def __init__(self) -> None:
        self.seconds: Counter[str] = Counter()
        self.tests: Counter[str] = Counter()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        module = report.nodeid.split("::", 1)[0]
        self.seconds[module] += report.duration
        self.tests[module] += report.when == "call"

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.seconds:
            return
        total = sum(self.seconds.values())
        terminalreporter.write_sep("=", f"time per test module (slowest {SHOWN} of {len(self.seconds)})")
        for module, seconds in self.seconds.most_common(SHOWN):
            share = 100 * seconds / total if total else 0.0
            terminalreporter.write_line(f"{seconds:8.1f}s {share:5.1f}%  {self.tests[module]:5d} tests  {module}")
        terminalreporter.write_line(f"{total:8.1f}s in all")
        rows = [{"module": m, "seconds": round(s, 2), "tests": self.tests[m]} for m, s in self.seconds.most_common()]
        try:
            ARTIFACT.parent.mkdir(exist_ok=True)
            ARTIFACT.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
        except OSError as exc:  # a read-only checkout still gets the table above
            terminalreporter.write_line(f"(not written: {ARTIFACT}: {exc})")


def register(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the table is the whole run's
        config.pluginmanager.register(ModuleDurations(), "module_durations")
