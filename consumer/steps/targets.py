"""What a step writes to: the engine's small interface to a table catalog (pyiceberg lives behind it, in hooks).

A `WriteTargets` finds the table a Write/DDL/Update names — existing or not yet — and a `WriteTarget` answers what
the engine needs before and after a commit: does it exist, its current snapshot (re-read from the catalog, not
Spark's cache), its key columns, and whether a commit with a given idempotency key is already in its history.
Data changes themselves go through Spark's DataFrameWriterV2 on `spark_name`, so each step is one atomic commit.

The one implementation is `hooks/iceberg_writes.py` (pyiceberg catalogs); Spark's session catalog names no write
targets (its tables are read only), so a plan that writes needs an Iceberg catalog configuration.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pyspark.sql import SparkSession
from pyspark.sql import types as T


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
