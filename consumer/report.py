"""The run report: a plain JSON-serialisable record of what a run read, did and produced."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


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
    """One Write/DDL/Update the plan made, in plan order (`consumer/steps`)."""

    index: int
    kind: str  # insert | delete | update | ctas | create_table | alter_table | drop_table | ...
    target: str  # the table's identity (catalog.namespace.table)
    path: str  # where the relation sits in the plan
    status: str = "running"  # committed | skipped | failed
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
        return asdict(self)
