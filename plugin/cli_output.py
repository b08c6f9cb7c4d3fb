"""What `substrait-spark run` tells the user while it runs, and how it prints results.

Streams: results go to stdout (print mode), everything about the run to stderr — a progress line when each plan
starts and ends, stage progress of long Spark jobs (`hooks/spark_progress.py`), and a summary table of a batch —
so stdout stays the results alone (pipe it, redirect it). The same lines are written to a terminal and to a log
(no carriage-return animations): CI and scheduler logs are where a batch's progress is read most. `--quiet` leaves
only errors on stderr.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from substrait_spark.consumer.running.narration import (
    SUMMARY_COLUMNS,
    failed_line,
    failed_status,
    finished_line,
    result_table,
    rows_text,
    text_table,
    total_rows,
)
from substrait_spark.consumer.running.narration import where_text as _where

if TYPE_CHECKING:
    from substrait_spark.consumer.errors import SubstraitSparkError
    from substrait_spark.consumer.running.report import RootOutput, RunReport

DEFAULT_LIMIT = 20  # rows printed per result, as Spark's `show`
ALL = "-"  # a summary cell with nothing to show


@dataclass
class Progress:
    """Per-plan progress lines and the batch's summary (stderr unless `quiet`)."""

    plans: list[str]
    quiet: bool = False
    printed: bool = True  # print mode: results go to stdout
    stream: TextIO | None = None
    rows: dict[int, list[Any]] = field(default_factory=dict)  # by the plan's place in the batch

    @property
    def total(self) -> int:
        return len(self.plans)

    def say(self, line: str) -> None:
        if not self.quiet:
            out = self.stream or sys.stderr
            print(line, file=out, flush=True)

    def at(self, i: int) -> PlanProgress:
        return PlanProgress(self, i)

    def add(self, i: int, status: str, rows: int | None, seconds: float | None, where: str) -> None:
        shown_rows, shown_s = ALL if rows is None else rows, ALL if seconds is None else f"{seconds:.2f}"
        self.rows[i] = [self.plans[i], status, shown_rows, shown_s, where]

    def summary(self, output_dir: str | None) -> None:
        """The table of a batch (more than one plan), and where the files went."""
        if self.total > 1:
            for line in text_table(SUMMARY_COLUMNS, [self.rows[i] for i in sorted(self.rows)]):
                self.say(line)
        if output_dir:
            self.say(f"Results and summary.json in {output_dir}")


@dataclass
class PlanProgress:
    """The progress lines of the batch's plan `i`: `[2/10] plans/q02.bin: running`, then how it ended."""

    batch: Progress
    i: int

    @property
    def plan(self) -> str:
        return self.batch.plans[self.i]

    @property
    def label(self) -> str:
        return f"[{self.i + 1}/{self.batch.total}] {self.plan}"

    def say(self, line: str) -> None:
        self.batch.say(line)

    def started(self) -> None:
        self.say(f"{self.label}: running")

    def finished(self, report: RunReport, seconds: float) -> None:
        self.say(finished_line(self.label, report, seconds, self.batch.printed))
        self.batch.add(self.i, report.status.value, total_rows(report), seconds, _where(report, self.batch.printed))

    def failed(self, exc: SubstraitSparkError, seconds: float | None = None) -> None:
        """A plan that failed (its error line is on stderr already); a progress line too if it had started."""
        if seconds is not None:
            self.say(failed_line(self.label, exc.kind, exc.exit_code, seconds))
        self.batch.add(self.i, failed_status(exc.exit_code), None, seconds, ALL)


def print_result(plan: str, out: RootOutput, limit: int | None, stream: TextIO | None = None) -> None:
    """A root's rows as an aligned table (NULL shown), the rows there were in all above and below it; `limit` is
    the limit asked for (None: all)."""
    shown = out.preview or []
    cut = len(shown) < (out.rows or 0)
    why = (" (policy)" if limit is None or len(shown) < limit else ": --limit N or --limit 0 for all") if cut else ""
    more = f", the first {len(shown)} shown{why}" if cut else ""
    w = stream or sys.stdout
    print(f"== {plan} (root {out.index}, {rows_text(out.rows)}{more})", file=w)
    if not out.columns:  # a root of no columns (a write step's NO_OUTPUT result): no table to draw
        return
    for line in result_table(out.columns, shown):
        print(line, file=w)
    print(f"({rows_text(out.rows)}{more})", file=w)


def preview_rows(limit: int | None, policy_bound: int | None) -> int | None:
    """The rows a preview fetches: the limit asked for (0: all), never more than the policy lets a run return."""
    asked = limit or None
    bounds = [b for b in (asked, policy_bound) if b is not None]
    return min(bounds) if bounds else None
