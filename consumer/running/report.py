"""The run report: typed records of what a run read, did and produced, and their one JSON form.

Every record is a dataclass (those every stage makes are `consumer/records.py`'s, re-exported here); `plain` is
the one serialiser (enums become their values, a field whose `metadata["omit_if"]` holds for the record is left
out — the JSON shape of earlier versions) and `record_of` the one reader (`RunReport.from_dict`: a report of this
version or an earlier one, from XCom, `summary.json` or an audit row). Readers (OpenLineage, the audit log, Asset
events, Dagster, the graph) take a `RunReport` (`RunReport.of` at their edge) and read attributes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..errors import RunReportError

# The records translation and errors make, and the one serialiser and reader, live in stage 0 (`records.py`).
from ..records import BoundParameter, ParameterSource, RunError, TableRead, described, plain, record_of


class RunStatus(StrEnum):
    """Where a run ended."""

    RUNNING = "running"
    SUCCESS = "success"
    FAILED = "failed"


class Durability(StrEnum):
    """Whether a later try of a run (after its worker died) resumes its Spark operations."""

    DURABLE = "durable"  # Spark Connect: each output's operation is reattached by a later try, never resubmitted
    CLASSIC = "not durable: classic Spark runs the driver in the task's process"
    NO_STATE = "not durable: no task state store (Airflow < 3.3, or durable=False)"


class StepStatus(StrEnum):
    """Where a step ended. `SKIPPED` steps say which kind of skip in `Step.skip`."""

    RUNNING = "running"
    COMMITTED = "committed"
    SKIPPED = "skipped"
    FAILED = "failed"


class StepKind(StrEnum):
    """What a step does: a WriteRel's op, or a DdlRel's op and object (`consumer/steps`)."""

    INSERT = "insert"
    DELETE = "delete"
    UPDATE = "update"
    CTAS = "ctas"
    CREATE_TABLE = "create_table"
    CREATE_OR_REPLACE_TABLE = "create_or_replace_table"
    ALTER_TABLE = "alter_table"
    DROP_TABLE = "drop_table"
    DROP_IF_EXIST_TABLE = "drop_if_exist_table"
    CREATE_VIEW = "create_view"
    CREATE_OR_REPLACE_VIEW = "create_or_replace_view"
    ALTER_VIEW = "alter_view"
    DROP_VIEW = "drop_view"
    DROP_IF_EXIST_VIEW = "drop_if_exist_view"

    @classmethod
    def of_op(cls, op: str, obj: str | None = None) -> StepKind:
        """The kind of a WriteRel op name (`INSERT`) or a DdlRel op and object (`DROP_IF_EXIST`, `table`)."""
        return cls(f"{op.lower()}_{obj}" if obj else op.lower())


class Skip(StrEnum):
    """The three reasons a step does nothing, which readers must tell apart: only `ALREADY_COMMITTED` means the
    table holds the step's change (an earlier try with the same run key made it); the other two changed nothing."""

    ALREADY_COMMITTED = "already_committed"
    TABLE_EXISTS = "table_exists"  # CTAS with CREATE_MODE_IGNORE_IF_EXISTS: the table was there, left alone
    ABSENT = "absent"  # DROP IF EXISTS of a table or view that was not there

    @classmethod
    def of_reason(cls, reason: str | None) -> Skip:
        """The kind of a skip recorded before `skip` existed (a report or audit record of an earlier version),
        from the reason text those versions wrote."""
        text = reason or ""
        if "exists (CREATE_MODE" in text:
            return cls.TABLE_EXISTS
        if "does not exist (DDL_OP_DROP_IF_EXIST)" in text:
            return cls.ABSENT
        return cls.ALREADY_COMMITTED


class Resume(StrEnum):
    """How a Spark Connect operation of a durable run came about (`connect_operations.py`)."""

    FRESH = "fresh"  # submitted by this try
    REATTACHED = "reattached"  # an earlier try's operation, still on the server: waited for, not submitted again
    RERUN = "rerun"  # an earlier try's operation was gone (server restarted, detached timeout passed): run again
    EARLIER = "earlier"  # finished by an earlier try: not run again


@dataclass
class Operation:
    """One Spark Connect operation (a write, a count into nothing) an output ran: its ids on the server, how it
    came about, and the time it took (the client's wall time from submission or reattachment to its end)."""

    operation_id: str
    session_id: str
    resumed: Resume = Resume.FRESH
    spark_ms: float | None = None


def _no_operations(out: RootOutput) -> bool:
    return not out.operations


@dataclass
class RootOutput:
    """A root's result: its columns and rows, and where the rows went (`sinks.py`). On Spark Connect, the
    operations that produced it and, in a durable run, how the output resumed (`Resume`)."""

    index: int
    columns: list[str]
    rows: int | None = None
    location: str | None = None
    format: str | None = None
    preview: list[list[Any]] | None = None
    resumed: Resume | None = field(default=None, metadata={"omit_if_none": True})
    operations: list[Operation] = field(default_factory=list, metadata={"omit_if": _no_operations})


@dataclass
class Step:
    """One Write/DDL/Update the plan made, in plan order (`consumer/running/steps`)."""

    index: int
    kind: StepKind
    target: str  # the table's identity (catalog.namespace.table)
    path: str  # where the relation sits in the plan
    status: StepStatus = StepStatus.RUNNING
    reason: str | None = None  # why skipped or failed
    rows: int | None = None  # rows inserted, deleted or updated
    snapshot_before: int | None = None
    snapshot_after: int | None = None
    idempotency_key: str | None = None  # stored in the commit's snapshot summary
    duration_s: float | None = None
    details: dict[str, Any] | None = None  # what the op decided: an UPDATE's key and its source, an ALTER's changes
    # How a DELETE/UPDATE committed: row-level (its statement, the table's write mode and isolation level) or a
    # rewrite of the table (and why), with the data and delete files the commit added and removed.
    commit: dict[str, Any] | None = None
    skip: Skip | None = None  # which kind of skip, when status is SKIPPED

    def skipped(self, skip: Skip, reason: str) -> None:
        self.status, self.skip, self.reason = StepStatus.SKIPPED, skip, reason

    @property
    def changed(self) -> bool:
        """The table holds this step's change: committed now or by an earlier try (Asset events, lineage)."""
        return self.status is StepStatus.COMMITTED or self.skip is Skip.ALREADY_COMMITTED

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Step:
        """A step of a report dict (XCom, `summary.json`, an audit row), of this version or an earlier one."""
        return record_of(cls, d)

    def __post_init__(self) -> None:
        """A skipped step always says which kind of skip (an earlier version's: from its reason); no other does."""
        if self.status is StepStatus.SKIPPED and self.skip is None:
            self.skip = Skip.of_reason(self.reason)
        elif self.status is not StepStatus.SKIPPED:
            self.skip = None


@dataclass
class RunReport:
    plan_uri: str | None
    plan_sha256: str | None
    producer: str | None
    spec_version: str | None
    status: RunStatus = RunStatus.RUNNING
    plan_version_id: str | None = None  # object-store version of the plan read (S3 VersionId)
    plan_etag: str | None = None
    error: RunError | None = None
    tables_read: list[TableRead] = field(default_factory=list)
    parameters: list[BoundParameter] = field(default_factory=list)  # the plan's dynamic parameters, bound
    steps: list[Step] = field(default_factory=list)
    outputs: list[RootOutput] = field(default_factory=list)
    started_at: str | None = None  # ISO 8601, UTC
    duration_s: float | None = None
    translate_ms: float | None = None
    spark_application_id: str | None = None
    # Spark Connect runs: session id, operation tags and the ids of the operations run (`clients.py`).
    spark_connect: dict[str, Any] | None = None
    # Whether a later try of this run resumes it (`Durability`); absent where the caller did not ask.
    durability: Durability | None = field(default=None, metadata={"omit_if_none": True})
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The JSON run report (DESIGN's contract): plain JSON values."""
        out: dict[str, Any] = plain(self)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RunReport:
        """A report of this version or an earlier one: `to_dict()`'s output (XCom, `summary.json` entries) or an
        audit row (`hooks/audit.py`: `Any` values as JSON text, timestamps as datetimes; fields the audit does not
        keep get their defaults). Keys of neither (a summary's `plan`, an audit row's `record_id`) are ignored."""
        try:
            return record_of(cls, d, json_text="record_version" in d)
        except (TypeError, ValueError, AttributeError) as exc:
            raise RunReportError(f"not a run report of this version or an earlier one: {exc}") from None

    @classmethod
    def of(cls, report: RunReport | Mapping[str, Any]) -> RunReport:
        """A reader's edge: the report itself, or the one a dict holds."""
        return report if isinstance(report, RunReport) else cls.from_dict(report)


@dataclass
class TableChange:
    """What a run changed in one table (steps whose change it holds, `Step.changed`): what an Airflow Asset event
    or a Dagster materialization carries."""

    target: str
    plan_sha256: str | None
    steps: list[Step] = field(default_factory=list)

    @property
    def rows_changed(self) -> int:
        """The rows the steps inserted, deleted or updated (0 for a step whose count is unknown): not the table's
        size, which the catalog knows (Dagster's `dagster/row_count`)."""
        return sum(s.rows or 0 for s in self.steps)

    @property
    def snapshot_id(self) -> int | None:
        return self.steps[-1].snapshot_after if self.steps else None

    def extra(self) -> dict[str, Any]:
        """As an Asset event's `extra` (JSON): `rows_changed` as Dagster's metadata names it
        (`substrait/rows_changed`), so it is not read as the table's row count; each step's `rows` as the run
        report's step has it."""
        return {
            "rows_changed": self.rows_changed,
            "snapshot_id": self.snapshot_id,
            "plan_sha256": self.plan_sha256,
            "steps": [{"kind": s.kind.value, "rows": s.rows, "snapshot_id": s.snapshot_after} for s in self.steps],
        }


def changed_tables(report: RunReport) -> dict[str, TableChange]:
    """Changed tables (`Step.changed`: committed by this try or an earlier one, whose task failed before its
    events went out), in the order their first change was made."""
    changed: dict[str, TableChange] = {}
    for step in report.steps:
        if step.changed and step.target:
            changed.setdefault(step.target, TableChange(step.target, report.plan_sha256)).steps.append(step)
    return changed


__all__ = [
    "BoundParameter",
    "Durability",
    "Operation",
    "ParameterSource",
    "Resume",
    "RootOutput",
    "RunError",
    "RunReport",
    "RunStatus",
    "Skip",
    "Step",
    "StepKind",
    "StepStatus",
    "TableChange",
    "TableRead",
    "changed_tables",
    "described",
    "plain",
    "record_of",
]
