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
    steps: list[dict[str, Any]] = field(default_factory=list)
    outputs: list[RootOutput] = field(default_factory=list)
    started_at: str | None = None
    duration_s: float | None = None
    translate_ms: float | None = None
    spark_application_id: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
