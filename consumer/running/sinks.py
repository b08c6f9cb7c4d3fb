"""Where a root's rows go: discarded (counted), previewed, one file, a Spark folder, or a table.

A sink runs the root's DataFrame once (a preview with a row limit runs it twice: count, then the first rows)
and fills the RootOutput with what happened. Rows are counted on the same execution
(`observe.py`), not by reading the result back.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..errors import ExecutionError, PlanInvalidError
from .clients import is_connect
from .connect_operations import CommandRunner, active_runner
from .observe import Metrics, observed
from .paths import absolute
from .report import RootOutput
from .sink_kinds import FILE_FORMATS, FOLDER_FORMATS, OutputFormat, SinkKind

_PATH_KINDS = frozenset({SinkKind.FILE, SinkKind.FOLDER})
WRITE_MODES = ("overwrite", "append", "error", "ignore")
_E = TypeVar("_E", SinkKind, OutputFormat)


@dataclass(frozen=True, init=False, repr=False)
class Sink:
    """What to do with a root's rows.

    kind: `discard` (run, count, keep nothing) · `preview` (the first `max_rows` rows, all if None) ·
    `file` (one local file in `format`, the CLI's `--output-dir`) · `folder` (a Spark folder write at a path or
    URI Spark can write) · `table` (a table in Spark's catalog).
    """

    kind: SinkKind
    target: str | None
    format: OutputFormat
    mode: str
    max_rows: int | None

    def __init__(
        self,
        kind: SinkKind | str = SinkKind.DISCARD,
        target: str | None = None,
        format: OutputFormat | str = OutputFormat.PARQUET,
        mode: str = "overwrite",
        max_rows: int | None = 20,
    ) -> None:
        """`kind` and `format` may be given as their strings (`Sink("file", ...)`, a mapping's "format"): they are
        made enums here, so a sink holds only known ones; an unknown one is invalid output (exit 2)."""
        sink_kind = _member(SinkKind, kind, "sink kind")
        if sink_kind in _PATH_KINDS and target:  # the client's path, not one relative to a Connect server
            target = absolute(target)
        object.__setattr__(self, "kind", sink_kind)
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "format", _member(OutputFormat, format, "output format"))
        object.__setattr__(self, "mode", mode)
        object.__setattr__(self, "max_rows", max_rows)

    def __repr__(self) -> str:  # the strings, as before the enums: error messages name the sink unchanged
        return (
            f"Sink(kind={self.kind.value!r}, target={self.target!r}, format={self.format.value!r}, "
            f"mode={self.mode!r}, max_rows={self.max_rows!r})"
        )

    @classmethod
    def parse(cls, spec: Sink | str | dict[str, Any] | None) -> Sink:
        """`None`/"none" · "preview" or "preview:N" · "table:NAME" · {"path": ..., "format": ...} · a path/URI."""
        if isinstance(spec, Sink):
            return spec.checked()
        if spec is None or spec == "none":
            return cls()
        if isinstance(spec, dict):
            return cls._from_dict(spec).checked()
        head, _, rest = str(spec).partition(":")
        if head == SinkKind.PREVIEW:
            return cls(SinkKind.PREVIEW, max_rows=int(rest) if rest else 20).checked()
        if head == SinkKind.TABLE:
            return cls(SinkKind.TABLE, rest).checked()
        return cls(SinkKind.FOLDER, str(spec)).checked()

    @classmethod
    def _from_dict(cls, d: dict[str, Any]) -> Sink:
        common = {k: d[k] for k in ("format", "mode") if k in d}
        if "path" in d:
            return cls(SinkKind.FOLDER, str(d["path"]), **common)
        if "table" in d:
            return cls(SinkKind.TABLE, str(d["table"]), **common)
        if "preview" in d or "max_rows" in d:
            return cls(SinkKind.PREVIEW, max_rows=d.get("max_rows", d.get("preview")))
        raise PlanInvalidError(f"output {d!r}: expected a 'path', 'table' or 'preview' key")

    def checked(self) -> Sink:
        rules = {
            SinkKind.DISCARD: True,
            SinkKind.PREVIEW: self.max_rows is None or self.max_rows >= 0,
            SinkKind.FILE: bool(self.target) and self.format in FILE_FORMATS,
            SinkKind.FOLDER: bool(self.target) and self.format in FOLDER_FORMATS and self.mode in WRITE_MODES,
            SinkKind.TABLE: bool(self.target) and self.mode in WRITE_MODES,
        }
        if not rules[self.kind]:
            raise PlanInvalidError(f"output: invalid {self.kind} sink {self!r}")
        return self


def _member(enum: type[_E], value: _E | str, what: str) -> _E:
    """`value` as a member of `enum`; a string that names none is invalid output (exit 2), not a ValueError."""
    try:
        return enum(value)
    except ValueError:
        raise PlanInvalidError(f"output: unknown {what} {value!r} (one of {', '.join(enum)})") from None


def deliver(df: DataFrame, sink: Sink, out: RootOutput, *, index: int = 0, roots: int = 1, empty: bool = False) -> None:
    """Run `df` into `sink`, recording rows, location and preview in `out`. A root known to be `empty` (a write
    step's NO_OUTPUT result) is not run for a sink that only reports: no Spark job to count no rows."""
    if empty and sink.kind in _WRITES_NOTHING:
        out.rows = 0
        if sink.kind is SinkKind.PREVIEW:
            out.preview = []
        return
    _DELIVER[sink.kind](df, sink, out, _target(sink.target, index, roots))


def _target(target: str | None, index: int, roots: int) -> str | None:
    """Several roots write next to each other: `x.csv` → `x.0.csv`, `x.1.csv`; tables get `_0`, `_1`."""
    if target is None or roots == 1:
        return target
    p = Path(target)
    return str(p.with_name(f"{p.stem}.{index}{p.suffix}")) if p.suffix else f"{target}_{index}"


def _observed(df: DataFrame) -> tuple[DataFrame, Metrics]:
    return observed(df, rows=F.count(F.lit(1)))


def _rows(obs: Metrics) -> int:
    return int(obs.get["rows"])


def _discard(df: DataFrame, sink: Sink, out: RootOutput, target: str | None) -> None:
    counted, obs = _observed(df)
    counted.write.format("noop").mode("overwrite").save()
    out.rows = _rows(obs)


def _preview(df: DataFrame, sink: Sink, out: RootOutput, target: str | None) -> None:
    if sink.max_rows is None:
        rows = df.collect()
        out.rows = len(rows)
    else:
        _discard(df, sink, out, target)
        rows = df.limit(sink.max_rows).collect() if sink.max_rows else []
    out.preview = [[plain(v) for v in r] for r in rows]


def _file(df: DataFrame, sink: Sink, out: RootOutput, target: str | None) -> None:
    """One file (not a Spark folder), in the DataFrame's order: one partition, then moved into place."""
    assert target is not None
    dest = Path(target)
    runner = active_runner() if is_connect(df) else None
    tmp = _staging(dest, runner)
    try:
        counted, obs = _observed(df.coalesce(1))
        written = tmp / "out"
        _FILE_WRITERS[sink.format](counted.write.mode("overwrite"), str(written))
        parts = sorted(p for p in written.iterdir() if p.name.startswith("part-")) if written.exists() else []
        if not parts and runner is not None and runner.finished_earlier() and dest.exists():
            pass  # an earlier try of this durable run wrote the file and moved it into place
        elif len(parts) != 1:
            raise ExecutionError(f"expected one output file, Spark wrote {len(parts)}")
        else:
            parts[0].replace(dest)
        out.rows = _rows(obs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out.location, out.format = str(dest), sink.format.value


def _staging(dest: Path, runner: CommandRunner | None) -> Path:
    """The folder a file is written into before it is moved into place: a fresh one, or in a durable run the
    same one on every try (a later try reattached to the write finds what it wrote there)."""
    if runner is None:
        return Path(tempfile.mkdtemp(prefix=".substrait-", dir=dest.parent))
    tmp = dest.parent / runner.scratch(".substrait")
    tmp.mkdir(exist_ok=True)
    return tmp


def _folder(df: DataFrame, sink: Sink, out: RootOutput, target: str | None) -> None:
    counted, obs = _observed(df)
    fmt = OutputFormat.JSON if sink.format is OutputFormat.JSONL else sink.format
    writer = counted.write.mode(sink.mode).format(fmt.value)
    if fmt is OutputFormat.CSV:
        writer = writer.option("header", "true")
    writer.save(target)
    out.rows = _rows(obs)
    out.location, out.format = target, sink.format.value


def _table(df: DataFrame, sink: Sink, out: RootOutput, target: str | None) -> None:
    assert target is not None, "a table sink has a target (Sink.kind)"
    counted, obs = _observed(df)
    counted.write.mode(sink.mode).saveAsTable(target)
    out.rows = _rows(obs)
    out.location, out.format = target, "table"


_FILE_WRITERS: dict[OutputFormat, Callable[[Any, str], None]] = {
    OutputFormat.CSV: lambda w, p: w.option("header", "true").csv(p),
    OutputFormat.PARQUET: lambda w, p: w.parquet(p),
    OutputFormat.JSONL: lambda w, p: w.json(p),
}

# Sinks that create tables: the root's rows are cast to its declared types first (`runner`), so the table has them,
# and every column is made optional (a root declares no nullability; Spark's inference is not the plan's).
TYPED_SINKS = frozenset({SinkKind.TABLE})

# Sinks that only report (rows, a preview): an empty root needs no job for them. Files and tables are still written.
_WRITES_NOTHING = frozenset({SinkKind.DISCARD, SinkKind.PREVIEW})

_DELIVER: dict[SinkKind, Callable[[DataFrame, Sink, RootOutput, str | None], None]] = {
    SinkKind.DISCARD: _discard,
    SinkKind.PREVIEW: _preview,
    SinkKind.FILE: _file,
    SinkKind.FOLDER: _folder,
    SinkKind.TABLE: _table,
}


def plain(v: Any) -> Any:
    """JSON-friendly cell values for previews."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)
