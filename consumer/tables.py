"""The table-resolution port: what translation asks for a NamedTable (a `TableResolver`) and what it gets back (a
`ResolvedTable` or a `ResolvedView`). The one way out of translation to the tables; the resolvers themselves (table
maps, catalogs, chains) are the running stage's (`running/resolver.py`), and hooks provide catalog-backed ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol, runtime_checkable

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from .records import TableRead

CSV_OPTIONS = {"header": "true"}  # how csv files are read (a `csv` table binding, a LocalFiles csv read)


@dataclass(frozen=True)
class ResolvedTable:
    """A table found for a plan's NamedTable, with what the run report records about it."""

    df: DataFrame
    identity: str  # e.g. "file:///data/lineitem.parquet" or "catalog.db.table"
    format: str
    snapshot_id: int | None = None  # the snapshot every read of this table in the run reads
    catalog: str | None = None
    metadata_location: str | None = None
    # A catalog table with a declared schema: the plan's base schema must match it exactly (types and
    # nullability), where files are only checked for columns whose values convert without loss.
    strict_schema: bool = False
    view_version: int | None = None  # a view: the version of its definition this run read
    # Another read of the same data as a new relation (new attribute ids), or None when the source cannot give
    # one: a table the plan reads twice then needs no renaming Project (relations/read.py `conform`).
    reopen: Callable[[], DataFrame] | None = field(default=None, compare=False, repr=False)

    def report(self, name: str) -> TableRead:
        """What the run report records about this table."""
        return TableRead(
            name,
            self.identity,
            self.format,
            self.snapshot_id,
            catalog=self.catalog,
            metadata_location=self.metadata_location if self.catalog is not None else None,
            view_version=self.view_version,
        )

    @cached_property
    def fields(self) -> list[T.StructField]:
        """The table's columns (asked of Spark once per resolved table)."""
        return list(self.df.schema.fields)


@dataclass(frozen=True)
class ResolvedView:
    """A catalog view whose definition is a Substrait plan (JSON): the consumer translates it where it is read,
    with the run's resolver, so the tables under it are pinned and reported like any other read."""

    identity: str
    definition: str | None  # None: the view has no Substrait representation (only `dialects`)
    version_id: int
    dialects: tuple[str, ...] = ()
    catalog: str | None = None
    metadata_location: str | None = None


@runtime_checkable
class TableResolver(Protocol):
    """Finds the DataFrame (or the view definition) for a NamedTable's name parts (`["tpch", "lineitem"]`)."""

    def resolve(self, spark: SparkSession, names: Sequence[str]) -> ResolvedTable | ResolvedView: ...
