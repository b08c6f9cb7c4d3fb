"""The audit trail: one record per run (per Airflow task try) in an audit log the user chooses.

Where (`AuditLog.from_spec`):

- `"iceberg"` / `"iceberg:NS.TABLE"` / `"iceberg:CATALOG.NS.TABLE"`: an Iceberg table in a configured catalog (the
  default catalog unless the first part names one). Default table: `<default namespace>.audit_log`, the default
  namespace being the catalog's `default-namespace` property, else `substrait_spark`. Namespace and table are
  created when missing (racing creators tolerated); each record is one atomic append (one snapshot).
- `"jsonl:/path/audit.jsonl"` (or a `file://` URI, or a bare path ending in `.jsonl`): one JSON line per record,
  appended with a single `write` on an `O_APPEND` descriptor under an exclusive lock, then fsync'd.
- a mapping: `{"type": "iceberg", "catalog": ..., "table": "ns.t", "strict": false}` or
  `{"type": "jsonl", "path": ..., "strict": false}`.
- `None` / `""`: the default — the Iceberg table when catalogs are configured, else no audit log.
- `"none"` / `"off"`: no audit log.

Exactly one record per try: the record id is `<run key>/try-<n>` (the CLI: `<run key or 'adhoc'>/<uuid>` per
invocation) and a record whose id is already in the log is not written again. In Iceberg the check and the
append are one optimistic commit: a concurrent commit makes the append fail, and it is retried after checking
again. Writing a record never fails the run: a failure is logged as a warning and added to the report's notes,
unless the log is strict (`strict=True`), when `AuditError` is raised.

No credentials are recorded: every string field goes through `consumer/redact.redact` (URIs lose their user info
and secret-looking query parameters, `key=value` text whose key looks secret is masked).

Each record holds the values bound to the plan's dynamic parameters (`parameters`: anchor, Substrait type, the value
as JSON text, source `caller` or `plan`). An audit table created by an earlier version gains the columns added
since (`ADDED_COLUMNS`) on its next write, in one schema commit.

Query with Spark SQL, e.g.::

    SELECT a.record_id, a.status, s.kind, s.target, s.rows, s.snapshot_after
    FROM lake.substrait_spark.audit_log a LATERAL VIEW explode(a.steps) t AS s
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import os
import random
import time
import types
import typing
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from substrait_spark.consumer.errors import ExitCode, SubstraitSparkError
from substrait_spark.consumer.redact import redact
from substrait_spark.consumer.running.report import RunReport, plain

log = logging.getLogger(__name__)

DEFAULT_NAMESPACE = "substrait_spark"
DEFAULT_TABLE = "audit_log"
NAMESPACE_PROPERTY = "default-namespace"
RECORD_PROPERTY = "substrait-spark.audit-record"  # the record id, in the snapshot summary of its append
# 2: the plan's bound parameters; 3: the kind of a skipped step (`steps.skip`); 4: a durable run's resumption (the
# run's `durability`, each output's `resumed` and its Spark Connect operations)
RECORD_VERSION = 4
# Columns added to the audit table since its first version (full names, nested ones too): a table created earlier
# gains them on its next write.
ADDED_COLUMNS = (
    "parameters",
    "steps.element.skip",
    "durability",
    "outputs.element.resumed",
    "outputs.element.operations",
)
COMMIT_ATTEMPTS = 8
# pyiceberg re-applies a failed append on the new snapshot by itself; the audit log must look for its record
# again first, so its appends are not retried by pyiceberg (a table property; also applied in memory to audit
# tables created without it).
NO_RETRY = {"commit.retry.num-retries": "0"}


class AuditError(SubstraitSparkError):
    """The audit record could not be written and the audit log is strict (exit 1)."""

    exit_code = ExitCode.EXECUTION_FAILED.value
    kind = "audit failed"


# --------------------------------------------------------------------------------------------------
# What a record says
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditContext:
    """Who ran: Airflow's task instance fields (None for CLI runs) and the run key. `record_id` defaults to
    `<run key>/try-<try number>`, or, without a try number, to a fresh id per context (each CLI invocation is
    its own run)."""

    run_key: str | None = None
    dag_id: str | None = None
    run_id: str | None = None
    task_id: str | None = None
    map_index: int | None = None
    try_number: int | None = None
    record_id: str = ""
    _fresh: str = field(default_factory=lambda: uuid.uuid4().hex, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.record_id:
            key = self.run_key or "adhoc"
            rid = f"{key}/try-{self.try_number}" if self.try_number is not None else f"{key}/{self._fresh}"
            object.__setattr__(self, "record_id", rid)

    @classmethod
    def from_airflow(cls, context: Mapping[str, Any], run_key: str | None = None) -> AuditContext:
        """From an Airflow task context: `ti`'s dag/run/task/map index/try; the run key as the operator's."""
        ti = context["ti"]
        map_index = getattr(ti, "map_index", -1)
        map_index = -1 if map_index is None else int(map_index)
        key = run_key or f"{ti.dag_id}/{ti.run_id}/{ti.task_id}/{map_index}"
        try_number = getattr(ti, "try_number", None)
        return cls(
            run_key=key,
            dag_id=ti.dag_id,
            run_id=ti.run_id,
            task_id=ti.task_id,
            map_index=map_index,
            try_number=None if try_number is None else int(try_number),
        )


def _int(v: Any) -> int | None:
    try:
        return None if v is None else int(v)
    except (TypeError, ValueError):
        return None


def _float(v: Any) -> float | None:
    try:
        return None if v is None else float(v)
    except (TypeError, ValueError):
        return None


def _ts(v: Any) -> dt.datetime | None:
    if v is None:
        return None
    if isinstance(v, dt.datetime):
        return v if v.tzinfo else v.replace(tzinfo=dt.UTC)
    try:
        parsed = dt.datetime.fromisoformat(str(v))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def build_record(
    report: RunReport | Mapping[str, Any], context: AuditContext, finished_at: dt.datetime | None = None
) -> dict[str, Any]:
    """The audit record of a run report (a `RunReport` or its dict): `audit_columns()`'s fields, strings scrubbed,
    timestamps timezone-aware datetimes. `RunReport.from_dict` reads it back (`audited` says what it holds)."""
    r = RunReport.of(report)
    values = {
        "record_id": context.record_id,
        "record_version": RECORD_VERSION,
        **{c.name: getattr(context, c.name) for c in _context_columns()},
        **{c.name: getattr(r, c.name) for c in _columns(RunReport)},
        "finished_at": finished_at or dt.datetime.now(dt.UTC),
    }
    return {c.name: c.stored(values[c.name]) for c in audit_columns()}


def audited(report: RunReport) -> RunReport:
    """The report as its audit record holds it: the fields of `NOT_AUDITED` at their defaults."""
    return RunReport.from_dict(_kept(report, RunReport, ""))


def _kept(record: Any, cls: type, prefix: str) -> dict[str, Any]:
    """`record` as a plain dict without the fields of `NOT_AUDITED` under `prefix`."""
    hints = typing.get_type_hints(cls)
    kept: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        path = f"{prefix}{f.name}"
        if path in NOT_AUDITED:
            continue
        value, inner = getattr(record, f.name), _record_class(hints[f.name])
        if inner is not None and isinstance(value, list):
            kept[f.name] = [_kept(v, inner, f"{path}.") for v in value]
        elif inner is not None and value is not None:
            kept[f.name] = _kept(value, inner, f"{path}.")
        else:
            kept[f.name] = plain(value)
    return kept


# --------------------------------------------------------------------------------------------------
# The audit table's columns, derived from the records (`consumer/report.py`) and `AuditContext`
# --------------------------------------------------------------------------------------------------

# Fields of the run report the audit does not keep (dotted paths in `RunReport`): the plan object's ETag, the
# time travel of a direct Iceberg read (its snapshot id is kept), translation time and the Spark Connect identity;
# a root's column names and preview rows; what a step decided (`details`) and how a DELETE/UPDATE committed
# (`commit`) stay in the run report.
NOT_AUDITED = frozenset(
    {
        "plan_etag",
        "tables_read.as_of_timestamp_ms",
        "translate_ms",
        "spark_connect",
        "outputs.columns",
        "outputs.preview",
        "steps.details",
        "steps.commit",
    }
)
# Integer columns of 32 bits (the first audit tables were created so); every other integer is 64-bit.
INT32 = frozenset(
    {
        "record_version",
        "map_index",
        "try_number",
        "error.exit_code",
        "outputs.index",
        "parameters.anchor",
        "steps.index",
    }
)
TIMESTAMPS = frozenset({"started_at", "finished_at"})  # ISO text in the report, timestamptz in the audit


@dataclass(frozen=True)
class Column:
    """One audit column (or struct field): its dotted path and kind — `int32`, `int64`, `float`, `str`,
    `timestamp`, `json` (a value of any JSON type, held as its JSON text), `list` of `item`, or `struct` of
    `fields`."""

    name: str
    path: str
    kind: str
    item: Column | None = None
    fields: tuple[Column, ...] = ()

    def stored(self, value: Any) -> Any:
        """`value` (a typed report's) as this column holds it."""
        if value is None:
            return None
        if self.kind == "list":
            assert self.item is not None
            return [self.item.stored(v) for v in value]
        if self.kind == "struct":
            return {f.name: f.stored(getattr(value, f.name)) for f in self.fields}
        return _STORED[self.kind](value)


_STORED: dict[str, Callable[[Any], Any]] = {
    "int32": lambda v: _int(v),
    "int64": lambda v: _int(v),
    "float": lambda v: _float(v),
    "str": lambda v: redact(v.value if isinstance(v, Enum) else str(v)),
    "timestamp": lambda v: _ts(v),
    "json": lambda v: redact(json.dumps(v)),  # JSON text: the value as the run report holds it
}


def _column(name: str, hint: Any, path: str) -> Column:
    """The column of a record field annotated `hint`."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        [hint] = [a for a in typing.get_args(hint) if a is not type(None)]
    if path in TIMESTAMPS:
        return Column(name, path, "timestamp")
    if typing.get_origin(hint) is list:
        return Column(name, path, "list", item=_column("element", typing.get_args(hint)[0], path))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return Column(name, path, "struct", fields=tuple(_columns(hint, f"{path}.")))
    if hint is int:
        return Column(name, path, "int32" if path in INT32 else "int64")
    if hint is float:
        return Column(name, path, "float")
    if isinstance(hint, type) and issubclass(hint, str):  # str, and the report's str enums
        return Column(name, path, "str")
    return Column(name, path, "json")  # Any, dict


def _record_class(hint: Any) -> type | None:
    """The record class a field holds (alone, optional, or as list items), if any."""
    for h in (hint, *typing.get_args(hint)):
        for inner in (h, *typing.get_args(h)):
            if isinstance(inner, type) and dataclasses.is_dataclass(inner):
                return inner
    return None


def _columns(cls: type, prefix: str = "") -> list[Column]:
    hints = typing.get_type_hints(cls)
    return [
        _column(f.name, hints[f.name], f"{prefix}{f.name}")
        for f in dataclasses.fields(cls)
        if f"{prefix}{f.name}" not in NOT_AUDITED
    ]


def _context_columns() -> list[Column]:
    return [c for c in _columns(AuditContext) if c.name not in ("record_id", "_fresh")]


def audit_columns() -> list[Column]:
    """Every column of the audit table, in order: the record's id and version, who ran (`AuditContext`), then the
    run report's audited fields (`RunReport`, recursively) with `finished_at` after `started_at`."""
    top = [Column("record_id", "record_id", "str"), Column("record_version", "record_version", "int32")]
    top += _context_columns()
    for c in _columns(RunReport):
        top.append(c)
        if c.name == "started_at":
            top.append(Column("finished_at", "finished_at", "timestamp"))
    return top


def _schema() -> Any:
    """The Iceberg schema of the audit table, from `audit_columns()` (every field optional but the record id)."""
    from pyiceberg.schema import Schema
    from pyiceberg.types import (
        DoubleType,
        IntegerType,
        ListType,
        LongType,
        NestedField,
        StringType,
        StructType,
        TimestamptzType,
    )

    ids = iter(range(1, 1000))
    scalars = {
        "int32": IntegerType(),
        "int64": LongType(),
        "float": DoubleType(),
        "str": StringType(),
        "json": StringType(),
        "timestamp": TimestamptzType(),
    }

    def typ(c: Column) -> Any:
        if c.kind == "list":
            assert c.item is not None
            return ListType(next(ids), typ(c.item), element_required=False)
        if c.kind == "struct":
            return StructType(*(nested(f) for f in c.fields))
        return scalars[c.kind]

    def nested(c: Column) -> NestedField:
        field_id = next(ids)  # a field's id before its type's
        return NestedField(field_id, c.name, typ(c), required=c.name == "record_id")

    return Schema(*(nested(c) for c in audit_columns()))


def audit_schema() -> Any:
    """The audit table's pyiceberg `Schema` (built on first use: importing this module stays cheap)."""
    global _SCHEMA
    if _SCHEMA is None:
        _SCHEMA = _schema()
    return _SCHEMA


_SCHEMA: Any = None


def _json_default(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        return v.isoformat()
    return str(v)


# --------------------------------------------------------------------------------------------------
# Where records go
# --------------------------------------------------------------------------------------------------


@dataclass
class AuditResult:
    """What `AuditLog.write` did: `written`, `exists` (a record with this id was there already) or `failed`."""

    status: str
    record_id: str
    location: str
    error: str | None = None


class AuditLog:
    """Base of the audit log kinds; `from_spec` picks one."""

    strict: bool = False

    @property
    def location(self) -> str:
        raise NotImplementedError

    @classmethod
    def from_spec(
        cls, spec: str | Mapping[str, Any] | None, catalogs: Any | None = None, *, strict: bool | None = None
    ) -> AuditLog | None:
        """An audit log from `spec` (module docstring); None when there is to be none."""
        if isinstance(spec, AuditLog):
            if strict is not None:
                spec.strict = strict
            return spec
        if isinstance(spec, Mapping):
            kind = str(spec.get("type") or ("jsonl" if spec.get("path") else "iceberg")).lower()
            is_strict = bool(spec.get("strict", False)) if strict is None else strict
            if kind == "jsonl":
                if not spec.get("path"):
                    raise AuditError("audit log: a 'jsonl' audit log needs a 'path'")
                return JsonLinesAuditLog(spec["path"], strict=is_strict)
            if kind == "iceberg":
                table = spec.get("table")
                if spec.get("namespace") and table:
                    table = f"{spec['namespace']}.{table}"
                return IcebergAuditLog.create(catalogs, spec.get("catalog"), table, strict=is_strict)
            raise AuditError(f"audit log: unknown type {kind!r} (iceberg or jsonl)")
        if cls.off(spec):
            return None
        text = (spec or "").strip()
        if not text:
            if catalogs is None or not getattr(catalogs, "catalogs", None):
                return None
            return IcebergAuditLog.create(catalogs, None, None, strict=bool(strict))
        kind, sep, rest = text.partition(":")
        if sep and kind.lower() == "jsonl":
            return JsonLinesAuditLog(rest, strict=bool(strict))
        if kind.lower() == "iceberg":
            parts = [p for p in rest.split(".") if p] if sep else []
            catalog = None
            if len(parts) >= 3 and catalogs is not None and catalogs.find(parts[0]) is not None:
                catalog, parts = parts[0], parts[1:]
            return IcebergAuditLog.create(catalogs, catalog, ".".join(parts) or None, strict=bool(strict))
        if text.startswith("file://") or text.endswith((".jsonl", ".json", ".ndjson")) or "/" in text:
            return JsonLinesAuditLog(text, strict=bool(strict))
        raise AuditError(f"audit log: expected 'iceberg[:NS.TABLE]', 'jsonl:PATH' or a path, got {text!r}")

    @staticmethod
    def off(spec: Any) -> bool:
        """Whether `spec` turns the audit log off (`off`, `none`, `false`, `no`)."""
        return isinstance(spec, str) and spec.strip().lower() in ("none", "off", "false", "no")

    def write(self, report: Any, context: AuditContext) -> AuditResult:
        """Write the run's record unless one with the same id is there. Never raises unless strict: a failure is
        logged as a warning and noted in the report (`report.notes`)."""
        try:
            record = build_record(report, context)
            status = self._write(record)
            return AuditResult(status, context.record_id, self.location)
        except Exception as exc:  # the audit never fails a run, unless asked to
            message = redact(f"{type(exc).__name__}: {exc}")[:500]
            note = f"audit record {context.record_id} not written to {self.location}: {message}"
            if self.strict:
                raise AuditError(note) from exc
            log.warning("%s", note)
            notes = getattr(report, "notes", None)
            if notes is None and isinstance(report, dict):
                notes = report.setdefault("notes", [])
            if isinstance(notes, list):
                notes.append(note)
            return AuditResult("failed", context.record_id, self.location, message)

    def _write(self, record: dict[str, Any]) -> str:
        raise NotImplementedError


class JsonLinesAuditLog(AuditLog):
    """One JSON object per line in a local file."""

    def __init__(self, path: str | Path, strict: bool = False):
        text = str(path)
        if text.startswith("file://"):
            text = urlsplit(text).path
        if not text:
            raise AuditError("audit log: 'jsonl:' needs a path")
        self.path = Path(text)
        self.strict = strict

    @property
    def location(self) -> str:
        return str(self.path)

    def _write(self, record: dict[str, Any]) -> str:
        import fcntl

        line = (json.dumps(record, default=_json_default, sort_keys=False) + "\n").encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # the id check and the append, one writer at a time
            if self._has(record["record_id"]):
                return "exists"
            written = os.write(fd, line)  # one write on an O_APPEND descriptor: never interleaved
            if written != len(line):
                raise OSError(f"short write to {self.path} ({written} of {len(line)} bytes)")
            os.fsync(fd)
            return "written"
        finally:
            os.close(fd)  # releases the lock

    def _has(self, record_id: str) -> bool:
        needle = json.dumps(record_id)
        with open(self.path, "rb") as fh:
            for raw in fh:
                if needle.encode() not in raw:
                    continue
                try:
                    if json.loads(raw).get("record_id") == record_id:
                        return True
                except (ValueError, AttributeError):
                    continue  # a torn line from a crashed writer: not ours
        return False

    def read(self) -> list[dict[str, Any]]:
        """Every record in the file (for tests and tools)."""
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]


class IcebergAuditLog(AuditLog):
    """An Iceberg table of `audit_schema()`, created on first use; one append (one snapshot) per record."""

    def __init__(self, catalogs: Any, catalog: str, identifier: str, strict: bool = False):
        self.catalogs = catalogs
        self.catalog = catalog
        self.identifier = identifier
        self.strict = strict

    @classmethod
    def create(cls, catalogs: Any, catalog: str | None, table: str | None, strict: bool = False) -> IcebergAuditLog:
        if catalogs is None or not getattr(catalogs, "catalogs", None):
            raise AuditError("audit log: an Iceberg audit log needs a catalog configuration (--catalog-config)")
        name = catalog or catalogs.default
        config = catalogs.find(name)
        if config is None:
            raise AuditError(f"audit log: catalog {name!r} is not configured")
        if not table:
            namespace = config.properties.get(NAMESPACE_PROPERTY) or DEFAULT_NAMESPACE
            table = f"{namespace}.{DEFAULT_TABLE}"
        elif "." not in table:
            table = f"{config.properties.get(NAMESPACE_PROPERTY) or DEFAULT_NAMESPACE}.{table}"
        return cls(catalogs, config.name, table, strict=strict)

    @property
    def location(self) -> str:
        return f"{self.catalog}.{self.identifier}"

    def table(self) -> Any:
        """The audit table, created (with its namespace) when missing; concurrent creators both succeed."""
        from pyiceberg.exceptions import NoSuchTableError

        catalog = self.catalogs.load(self.catalog)
        try:
            return catalog.load_table(self.identifier)
        except NoSuchTableError:
            pass
        namespace = tuple(self.identifier.split(".")[:-1])
        try:
            catalog.create_namespace_if_not_exists(namespace)
        except Exception:  # pyiceberg's SQL catalog checks, then inserts: a concurrent creator's insert may win
            if not catalog.namespace_exists(namespace):
                raise
        return catalog.create_table_if_not_exists(self.identifier, schema=audit_schema(), properties=NO_RETRY)

    def _has(self, table: Any, record_id: str) -> bool:
        if table.current_snapshot() is None:
            return False
        from pyiceberg.expressions import EqualTo

        match = EqualTo("record_id", record_id)  # type: ignore[call-arg, arg-type]  # pyiceberg's own signature
        found = table.scan(row_filter=match, selected_fields=("record_id",)).to_arrow()
        return found.num_rows > 0

    def _write(self, record: dict[str, Any]) -> str:
        import pyarrow as pa
        from pyiceberg.exceptions import CommitFailedException

        table = self._upgraded(self.table())
        data = pa.Table.from_pylist([record], schema=table.schema().as_arrow())  # the catalog's own field ids
        for attempt in range(COMMIT_ATTEMPTS):
            if self._has(table, record["record_id"]):
                return "exists"
            _no_retry(table)
            try:
                # Validated against the snapshot just checked: a concurrent commit fails this one, which then
                # looks again, so a record is never appended twice.
                table.append(data, snapshot_properties={RECORD_PROPERTY: record["record_id"]})
                return "written"
            except CommitFailedException:
                if attempt == COMMIT_ATTEMPTS - 1:
                    raise
                time.sleep(random.uniform(0.02, 0.1) * (attempt + 1))
                table = table.refresh()
        return "failed"  # not reached

    def _upgraded(self, table: Any) -> Any:
        """The audit table with every column of `audit_schema()`: one written by an earlier version gains the
        columns added since (`ADDED_COLUMNS`) in one schema commit; a concurrent writer's upgrade is kept.
        Any other missing column means the table is not an audit table."""
        from pyiceberg.exceptions import CommitFailedException
        from pyiceberg.schema import index_name_by_id

        for _ in range(COMMIT_ATTEMPTS):
            have = set(index_name_by_id(table.schema()).values())
            missing = [n for n in index_name_by_id(audit_schema()).values() if n not in have]
            if not missing:
                return table
            foreign = [m for m in missing if not any(m == a or m.startswith(f"{a}.") for a in ADDED_COLUMNS)]
            if foreign:
                raise AuditError(f"table {self.location} is not an audit table (no columns {', '.join(foreign)})")
            try:
                with table.update_schema() as update:  # adds the missing columns (fresh ids), nothing else
                    update.union_by_name(audit_schema())
                log.info("audit table %s: added columns %s", self.location, ", ".join(missing))
            except CommitFailedException:  # another writer changed the table first: look again
                pass
            table = table.refresh()
        raise AuditError(f"audit table {self.location}: could not add columns {', '.join(missing)}")


def _no_retry(table: Any) -> None:
    """No automatic re-application of a failed append on this (in-memory) table: see NO_RETRY."""
    props = table.metadata.properties
    if any(props.get(k) != v for k, v in NO_RETRY.items()):
        table.metadata = table.metadata.model_copy(update={"properties": {**props, **NO_RETRY}})


def record_run(
    report: Any,
    context: AuditContext,
    build: Callable[[], AuditLog | None],
    spec: str | Mapping[str, Any] | None,
    *,
    strict: bool | None = None,
) -> AuditResult | None:
    """The run's audit record in the log `build()` sets up (`spec` says which; None: there is none, logged why).
    Never raises unless the log is strict (`AuditError`): a log that cannot be set up is a warning and a note in
    the report, as a record that cannot be written is (`AuditLog.write`)."""
    try:
        audit = build()
    except Exception as exc:
        if strict or (isinstance(spec, Mapping) and spec.get("strict")):
            raise
        note = f"audit log not usable: {redact(str(exc))}"
        log.warning("%s", note)
        notes = getattr(report, "notes", None) if not isinstance(report, dict) else report.setdefault("notes", [])
        if isinstance(notes, list):
            notes.append(note)
        return None
    if audit is None:
        log.info("%s", no_audit_reason(spec))
        return None
    return audit.write(report, context)


def no_audit_reason(spec: str | Mapping[str, Any] | None) -> str:
    """Why a run has no audit record (logged: where the record went, or that there is none, is never a guess)."""
    if spec:
        return f"audit log off (audit_log={spec!r}): no audit record written"
    return (
        "no audit record written: no audit_log given and no Iceberg catalog configured to hold the default table "
        f"{DEFAULT_NAMESPACE}.{DEFAULT_TABLE} (audit_log='jsonl:/path' writes JSON lines)"
    )
