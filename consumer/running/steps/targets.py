"""What a step writes to: the engine's small interface to a table catalog (pyiceberg lives behind it, in hooks).

A `WriteTargets` finds the table a Write/DDL/Update names — existing or not yet — and a `WriteTarget` answers what
the engine needs before and after a commit: does it exist, its current snapshot (re-read from the catalog, not
Spark's cache), its key columns, and whether a commit with a given idempotency key is already in its history.
Data changes themselves go through Spark's DataFrameWriterV2 on `spark_name`, so each step is one atomic commit;
DELETE and UPDATE go row by row through a `RowLevelWriter` when the target offers one (`row_level`): Spark SQL's
row-level commands on a staging copy of the table at the pinned snapshot, published as one commit.

The one implementation is `hooks/iceberg_writes.py` (pyiceberg catalogs); Spark's session catalog names no write
targets (its tables are read only), so a plan that writes needs an Iceberg catalog configuration.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol, runtime_checkable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T


@dataclass(frozen=True)
class KeyRecord:
    """A step key recorded on a target: the key, where (a snapshot, the table's properties, a view version), and
    the sha256 of the plan that committed it when recorded with it (None: not known)."""

    value: str
    where: str
    plan: str | None = None


@runtime_checkable
class WriteTarget(Protocol):
    identity: str  # "catalog.namespace.table", as the run report names tables read
    spark_name: str  # the quoted identifier Spark writes through (`lake`.`ns`.`t`)

    def exists(self) -> bool: ...

    def snapshot_id(self) -> int | None: ...

    def identifier_fields(self) -> list[str]: ...

    def layout_columns(self) -> dict[str, str]:
        """Columns the table's layout depends on (identifier fields, partition and sort sources), by lowercased
        name, with their role: ALTER never drops them."""
        ...

    def committed(self, prop: str, value: str) -> str | None:
        """Where an earlier commit with `prop = value` is recorded (a snapshot's summary, or the table's
        properties for DDL), if any."""
        ...

    def key_records(self, prop: str, plan_prop: str) -> list[KeyRecord]:
        """Every value of `prop` the table's commits recorded (published snapshots' summaries, with their
        `plan_prop`; then the DDL keys in its properties, without), oldest first."""
        ...

    def committed_snapshot(self, prop: str, value: str) -> tuple[int, int | None] | None:
        """The snapshot an earlier commit with `prop = value` made, and its parent's id (None: no parent)."""
        ...

    def create(self, schema: T.StructType, properties: Mapping[str, str]) -> None:
        """Create the table (nullability kept), recording `properties` as a DDL commit's `committed` finds."""
        ...

    def alter(self, change: SchemaChange, properties: Mapping[str, str]) -> None:
        """Apply `change` (already checked safe) and record `properties`, in one commit."""
        ...

    def drop(self, step_key: str | None = None) -> None:
        """Drop the table; with `step_key`, first record it outside the table (`dropped_by`), so that a retry of
        this DROP, finding no table, knows its own earlier commit."""
        ...

    def dropped_by(self) -> tuple[str, str | None] | None:
        """The step key the last recorded DROP of this name left (kept outside the table), with the UUID of the
        table it dropped."""
        ...

    def uuid(self) -> str | None:
        """The table's UUID (None when it does not exist): tells a re-created table from the dropped one."""
        ...

    def row_level(self, spark: SparkSession) -> RowLevelWriter:
        """How DELETE and UPDATE can change this table row by row in `spark` (see `RowLevelWriter`)."""
        ...


class RowLevelCommand(Enum):
    """The Spark SQL command a row-level step runs: the table's write mode and isolation level are per command."""

    DELETE = "delete"
    UPDATE = "update"
    MERGE = "merge"


class WriteMode(Enum):
    """How a table takes row-level changes (Iceberg's `write.<command>.mode`)."""

    COPY_ON_WRITE = "copy-on-write"  # the data files holding changed rows are rewritten
    MERGE_ON_READ = "merge-on-read"  # delete files mark the changed rows; readers merge them


@dataclass(frozen=True)
class RowLevelSettings:
    """What the table says a command does: its write mode and the isolation level of its commit."""

    mode: WriteMode
    isolation_level: str


class RowLevelUnavailable(Exception):
    """The session or table cannot take a staged row-level commit (the step rewrites the table instead); the
    message says why. Not an error of the plan."""


@runtime_checkable
class RowLevelStage(Protocol):
    """A staging copy of the table at the snapshot the run pinned, open for one row-level statement.

    Statements write to `spark_name` and carry the step's snapshot properties. Leaving the block publishes the
    staged commit as the table's next snapshot — only if the table is still at the pinned snapshot, else
    `ConcurrentCommitError` and nothing changes; an error inside the block discards the staging copy."""

    spark_name: str  # quoted identifier a statement names as its target
    snapshot_id: int | None  # after the block: the published commit (None: the statement changed nothing)

    def read(self) -> DataFrame:
        """The staging copy's rows (the pinned snapshot's): `delete_where` takes a filter over this."""
        ...

    def sql(self, statement: str) -> None:
        """Run one row-level statement (quoted identifiers only) against `spark_name`."""
        ...

    def delete_where(self, rows: DataFrame) -> None:
        """`DELETE FROM spark_name WHERE <rows' condition>`: `rows` is `read().filter(condition)` with a condition
        `is_plain_filter` accepted; Spark gets the condition itself, so it prunes files as for its own DELETE."""
        ...


@runtime_checkable
class RowLevelWriter(Protocol):
    """Row-level DELETE and UPDATE on one table through Spark SQL's row-level commands."""

    unavailable: str | None  # why `stage` cannot be used here (None: it can)

    def settings(self, command: RowLevelCommand) -> RowLevelSettings: ...

    def summary(self, snapshot_id: int) -> Mapping[str, str]:
        """A snapshot's summary (`added-data-files`, `total-delete-files`, ...)."""
        ...

    def is_plain_filter(self, rows: DataFrame) -> bool:
        """`rows` is a deterministic filter without subqueries directly over a read of a table: a DELETE can take
        its condition as it is."""
        ...

    def stage(self, pinned: int, properties: Mapping[str, str]) -> AbstractContextManager[RowLevelStage]:
        """Stage at snapshot `pinned`; the commit carries `properties` in its summary."""
        ...


@dataclass
class SchemaChange:
    """What an ALTER does to reach its after-image, found before anything changes; names are the table's."""

    add: list[T.StructField] = field(default_factory=list)  # new optional columns, at the end
    drop: list[str] = field(default_factory=list)
    rename: dict[str, str] = field(default_factory=dict)  # table's name → after-image's name
    widen: dict[str, T.DataType] = field(default_factory=dict)  # table's name → the wider type
    relax: list[str] = field(default_factory=list)  # required columns made optional
    refused: list[str] = field(default_factory=list)  # why the after-image cannot be reached safely


@runtime_checkable
class WriteTargets(Protocol):
    def write_target(self, spark: SparkSession, names: Sequence[str]) -> WriteTarget: ...


@runtime_checkable
class ViewTarget(Protocol):
    """A view, existing or about to be created, whose definition (a Substrait plan) the catalog keeps."""

    identity: str

    def exists(self) -> bool:
        """A view of that name exists."""
        ...

    def snapshot_id(self) -> int | None:
        """The view's current version (what a step reports before and after)."""
        ...

    def table_exists(self) -> bool:
        """A table has that name (a view step never replaces or drops a table)."""
        ...

    def committed(self, prop: str, value: str) -> str | None:
        """The view version whose summary has `prop = value`, if any."""
        ...

    def key_records(self, prop: str, plan_prop: str) -> list[KeyRecord]:
        """Every value of `prop` the view's versions recorded, with their `plan_prop`."""
        ...

    def commit(self, definition: str, schema: T.StructType, summary: Mapping[str, str]) -> None:
        """Create the view, or add a version with this definition: one atomic catalog commit."""
        ...

    def drop(self, step_key: str | None = None) -> None: ...

    def dropped_by(self) -> tuple[str, str | None] | None: ...

    def uuid(self) -> str | None: ...


def targets_of(resolver: Any) -> WriteTargets | None:
    """The resolver itself when it can also name write targets, else the first member of a chain that can."""
    if isinstance(resolver, WriteTargets):
        return resolver
    for member in getattr(resolver, "resolvers", ()) or ():
        if isinstance(member, WriteTargets):
            return member
    return None
