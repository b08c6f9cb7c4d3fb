"""The run report: a plain JSON-serialisable record of what a run read, did and produced."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from enum import Enum, StrEnum
from typing import Any


class StepStatus(StrEnum):
    """Where a step ended. `SKIPPED` steps say which kind of skip in `Step.skip`."""

    RUNNING = "running"
    COMMITTED = "committed"
    SKIPPED = "skipped"
    FAILED = "failed"


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


@dataclass
class RootOutput:
    index: int
    columns: list[str]
    rows: int | None = None
    location: str | None = None
    format: str | None = None
    preview: list[list[Any]] | None = None


@dataclass
class Step:
    """One Write/DDL/Update the plan made, in plan order (`consumer/running/steps`)."""

    index: int
    kind: str  # insert | delete | update | ctas | create_table | alter_table | drop_table | ...
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
    def from_dict(cls, d: dict[str, Any]) -> Step:
        """A step of a report dict (XCom, `summary.json`), of this version or an earlier one (no `skip`)."""
        known = {f.name for f in fields(cls)}
        step = cls(**{"index": 0, "kind": "", "target": "", "path": "", **{k: v for k, v in d.items() if k in known}})
        step.status = StepStatus(step.status or StepStatus.RUNNING)
        if step.status is StepStatus.SKIPPED:
            step.skip = Skip(step.skip) if step.skip else Skip.of_reason(step.reason)
        else:
            step.skip = None
        return step


@dataclass
class RunReport:
    plan_uri: str | None
    plan_sha256: str
    producer: str | None
    spec_version: str | None
    status: str = "running"  # running | success | failed
    plan_version_id: str | None = None  # object-store version of the plan read (S3 VersionId)
    plan_etag: str | None = None
    error: dict[str, Any] | None = None
    tables_read: list[dict[str, Any]] = field(default_factory=list)
    # The plan's dynamic parameters and their values: {anchor, type (Substrait notation), value (JSON),
    # source ("caller" | "plan")} (`parameters.Parameters.bound`).
    parameters: list[dict[str, Any]] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    outputs: list[RootOutput] = field(default_factory=list)
    started_at: str | None = None
    duration_s: float | None = None
    translate_ms: float | None = None
    spark_application_id: str | None = None
    # Spark Connect runs: session id, operation tags and the ids of the operations run (`clients.py`).
    spark_connect: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values: enums become their values."""
        return asdict(self, dict_factory=_plain)


def _plain(items: list[tuple[str, Any]]) -> dict[str, Any]:
    return {k: v.value if isinstance(v, Enum) else v for k, v in items}


def changed_tables(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Changed tables (`Step.changed`: committed by this try or an earlier one, whose task failed before its
    events went out) with the figures an Airflow Asset event or a Dagster materialization carries."""
    changed: dict[str, dict[str, Any]] = {}
    for step in map(Step.from_dict, report.get("steps") or []):
        if not step.changed or not step.target:
            continue
        entry = changed.setdefault(
            step.target, {"rows": 0, "snapshot_id": None, "plan_sha256": report["plan_sha256"], "steps": []}
        )
        entry["rows"] += step.rows or 0
        entry["snapshot_id"] = step.snapshot_after
        entry["steps"].append({"kind": step.kind, "rows": step.rows, "snapshot_id": step.snapshot_after})
    return changed
