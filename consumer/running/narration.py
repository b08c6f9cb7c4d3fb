"""What a run did, as lines a person reads: a run report's parts (the plan read, tables resolved, parameters, each
step and root output, the outcome) for logs (the Airflow task log, Dagster's run log), and aligned text tables
(the CLI's summary of a batch and its printed results). Plain Python: front ends choose where the lines go."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .report import RootOutput, RunReport, RunStatus, Step

NULL = "NULL"


def rows_text(n: int | None) -> str:
    """`1 row`, `9096 rows`, `? rows` (not counted)."""
    return "? rows" if n is None else f"{n} row" if n == 1 else f"{n} rows"


def plan_line(report: RunReport) -> str:
    """The plan read: where from, which bytes (sha256, object version), which producer and spec version."""
    parts = [f"sha256 {report.plan_sha256[:12]}" if report.plan_sha256 else None]
    parts += [f"version {report.plan_version_id}" if report.plan_version_id else None]
    parts += [f"producer {report.producer}" if report.producer else None]
    parts += [f"spec {report.spec_version}" if report.spec_version else None]
    return f"Plan {report.plan_uri}: {', '.join(p for p in parts if p) or 'no identity recorded'}"


def table_lines(report: RunReport) -> list[str]:
    """One line per table the run read, as resolved (identity, format, the snapshot pinned)."""
    lines = []
    for t in report.tables_read:
        extra = [t.format or None, f"snapshot {t.snapshot_id}" if t.snapshot_id is not None else None]
        extra += [f"view version {t.view_version}" if t.view_version is not None else None]
        shown = ", ".join(e for e in extra if e)
        lines.append(f"Read table {t.name} = {t.identity}" + (f" ({shown})" if shown else ""))
    return lines


def parameter_lines(report: RunReport) -> list[str]:
    return [f"Parameter ${p.anchor} ({p.type}) = {p.value!r} from the {p.source.value}" for p in report.parameters]


def step_line(step: Step) -> str:
    """`Step 0 insert cat.ns.t: committed, 120 rows in 1.20 s (snapshot 1 -> 2)`, with why it was skipped or
    failed."""
    facts = [step.status.value]
    if step.rows is not None:
        facts.append(rows_text(step.rows))
    line = f"Step {step.index} {step.kind.value} {step.target}: {', '.join(facts)}"
    if step.duration_s is not None:
        line += f" in {step.duration_s:.2f} s"
    before, after = step.snapshot_before, step.snapshot_after
    if before is not None or after is not None:
        line += f" (snapshot {after})" if before is None else f" (snapshot {before} -> {after})"
    return line + (f": {step.reason}" if step.reason else "")


def output_line(out: RootOutput) -> str:
    where = f" -> {out.location}" + (f" ({out.format})" if out.format else "") if out.location else ""
    return f"Root {out.index}: {rows_text(out.rows)}, columns {', '.join(out.columns)}{where}"


def outcome_line(report: RunReport) -> str:
    """How the run ended, in how long, on which Spark application."""
    took = f" in {report.duration_s:.2f} s" if report.duration_s is not None else ""
    on = f" on {report.spark_application_id}" if report.spark_application_id else ""
    if report.status is RunStatus.FAILED and report.error is not None:
        return f"Run failed{took}{on}: {report.error.kind}: {report.error.message} (exit {report.error.exit_code})"
    changed = sum(1 for s in report.steps if s.changed)
    steps = f", {len(report.steps)} step(s), {changed} changed a table" if report.steps else ""
    rows = rows_text(total_rows(report))
    return f"Run {report.status.value}{took}{on}: {rows} from {len(report.outputs)} root(s){steps}"


def report_lines(report: RunReport) -> list[str]:
    """Every line of a run, in the order it happened: plan, tables, parameters, steps, outputs, notes, outcome."""
    return [
        plan_line(report),
        *table_lines(report),
        *parameter_lines(report),
        *map(step_line, report.steps),
        *map(output_line, report.outputs),
        *(f"Note: {n}" for n in report.notes),
        outcome_line(report),
    ]


def total_rows(report: RunReport) -> int | None:
    """The rows of the run's roots; a plan whose roots give none (writes with NO_OUTPUT): the rows its steps
    wrote. None when nothing was counted."""
    counted = [o.rows for o in report.outputs if o.rows is not None]
    if any(counted) or not report.steps:
        return sum(counted) if counted else None
    written = [s.rows for s in report.steps if s.rows is not None]
    return sum(written) if written else (sum(counted) if counted else None)


def where_text(report: RunReport, printed: bool = False) -> str:
    """Where a run's results went: files, `stdout`, the tables its steps changed."""
    places = [o.location for o in report.outputs if o.location]
    if printed and report.outputs and not places:
        places.append("stdout")
    places += [f"{s.kind.value} {s.target}" for s in report.steps if s.changed]
    return ", ".join(dict.fromkeys(p for p in places if p)) or "-"


def finished_line(label: str, report: RunReport, seconds: float, printed: bool = False) -> str:
    """A batch's line for a plan that ran: `[2/10] q02.bin: success, 4 rows in 1.20 s -> stdout`."""
    rows = rows_text(total_rows(report))
    return f"{label}: {report.status.value}, {rows} in {seconds:.2f} s -> {where_text(report, printed)}"


def failed_status(exit_code: int) -> str:
    """A failed plan's status in a batch's lines and summary table."""
    return f"failed (exit {exit_code})"


def failed_line(label: str, kind: str, exit_code: int, seconds: float) -> str:
    """A batch's line for a plan that failed once it had started: `[2/10] q02.bin: failed (exit 1) after ...`."""
    return f"{label}: {failed_status(exit_code)} after {seconds:.2f} s: {kind}"


# --- aligned text tables ---------------------------------------------------------------------------------------


def cell_text(value: Any) -> str:
    """A cell as shown: NULL for a null, a string's line breaks and tabs escaped (one row, one line)."""
    if value is None:
        return NULL
    text = str(value)
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


def width(text: str) -> int:
    """Terminal columns of `text`: East Asian wide characters take two, combining marks none."""
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


_NUMBER = re.compile(r"-?\d+(\.\d*)?([eE][+-]?\d+)?")


def _numeric(value: Any) -> bool:
    """A number, or a decimal as the preview holds it (text)."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int | float) or (isinstance(value, str) and _NUMBER.fullmatch(value) is not None)


@dataclass(frozen=True)
class Column:
    """A column of a text table: its header and whether its values are right-aligned (numbers)."""

    name: str
    right: bool = False


def text_table(columns: Sequence[Column | str], rows: Iterable[Sequence[Any]]) -> list[str]:
    """psql's aligned format: ` a | b ` padded to each column's widest value, a `-+-` rule under the header,
    numbers right-aligned. Cells are `cell_text`."""
    cols = [c if isinstance(c, Column) else Column(c) for c in columns]
    cells = [[cell_text(v) for v in r] for r in rows]
    widths = [max([width(c.name)] + [width(r[i]) for r in cells]) for i, c in enumerate(cols)]

    def pad(text: str, w: int, right: bool) -> str:
        fill = " " * (w - width(text))
        return fill + text if right else text + fill

    def line(values: Sequence[str], right: Callable[[int], bool]) -> str:
        return " " + " | ".join(pad(v, widths[i], right(i)) for i, v in enumerate(values)) + " "

    header = line([c.name for c in cols], lambda i: False)
    rule = "-" + "-+-".join("-" * w for w in widths) + "-"
    return [header.rstrip(), rule, *(line(r, lambda i: cols[i].right).rstrip() for r in cells)]


def result_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    """A root's rows as an aligned table: a column whose shown values are all numbers (or NULL) right-aligned."""
    right = [bool(rows) and all(r[i] is None or _numeric(r[i]) for r in rows) for i in range(len(columns))]
    return text_table([Column(c, r) for c, r in zip(columns, right, strict=True)], rows)


SUMMARY_COLUMNS = (Column("plan"), Column("status"), Column("rows", True), Column("seconds", True), Column("output"))
