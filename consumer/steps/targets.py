"""What a step writes to: the engine's small interface to a table catalog (pyiceberg lives behind it, in hooks).

A `WriteTargets` finds the table a Write/DDL/Update names — existing or not yet — and a `WriteTarget` answers what
the engine needs before and after a commit: does it exist, its current snapshot (re-read from the catalog, not
Spark's cache), its key columns, and whether a commit with a given idempotency key is already in its history.
Data changes themselves go through Spark's DataFrameWriterV2 on `spark_name`, so each step is one atomic commit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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

    def committed(self, prop: str, value: str) -> str | None:
        """Where an earlier commit with `prop = value` is recorded (a snapshot's summary, or the table's
        properties for DDL), if any."""
        ...

    def create(self, schema: T.StructType, properties: Mapping[str, str]) -> None:
        """Create the table (nullability kept), recording `properties` as a DDL commit's `committed` finds."""
        ...

    def alter(self, schema: T.StructType, properties: Mapping[str, str]) -> None:
        """Add columns and widen types to reach `schema` (already checked safe), in one commit."""
        ...

    def drop(self) -> None: ...


@runtime_checkable
class WriteTargets(Protocol):
    def write_target(self, spark: SparkSession, names: Sequence[str]) -> WriteTarget: ...


def targets_of(resolver: Any) -> WriteTargets | None:
    """The resolver itself when it can also name write targets, else the first member of a chain that can."""
    if isinstance(resolver, WriteTargets):
        return resolver
    for member in getattr(resolver, "resolvers", ()) or ():
        if isinstance(member, WriteTargets):
            return member
    return None
