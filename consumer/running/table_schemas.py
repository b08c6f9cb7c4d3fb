"""A table's schema as a run would find it, looked up without Spark: what `validate` and the check before a run
compare a plan's base schemas with (`consumer/running/table_check.py`).

Each resolver that can answer without Spark has a `schema(names)` method next to its `resolve` (the same lookup,
so the same table): a table map's local parquet files (their footers), an Iceberg catalog's table (pyiceberg,
`hooks/iceberg.py`). What it cannot see without Spark it says so (`NotChecked`): other formats (Spark types them
when it reads), remote paths, partitioned folders, Spark's session catalog, views.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pyspark.sql import types as T

from .parquet_footer import MAX_FILES, footer_columns, local_path


@dataclass(frozen=True)
class TableColumn:
    """A column and the Spark types a read may give it (several: Spark's settings decide; none: not worked out
    without Spark, so only its name is checked)."""

    name: str
    types: tuple[T.DataType, ...]
    nullable: bool = True
    note: str = ""  # why there is not exactly one type


@dataclass(frozen=True)
class TableSchema:
    """A table found, with its columns. `strict`: a catalog table, whose declared schema the plan must match
    exactly (`ResolvedTable.strict_schema`)."""

    identity: str
    columns: tuple[TableColumn, ...]
    strict: bool = False


@dataclass(frozen=True)
class Missing:
    """The table is not where this source looks: the run's resolution error, word for word where it can be."""

    message: str


@dataclass(frozen=True)
class NotChecked:
    """The table may exist, but only Spark can tell or type it: left to the run (`reason` says why)."""

    reason: str


Lookup = TableSchema | Missing | NotChecked


@runtime_checkable
class SchemaSource(Protocol):
    """A resolver that can look a table up without Spark (`TableMapResolver`, `IcebergCatalogResolver`, ...)."""

    def schema(self, names: Sequence[str]) -> Lookup: ...


def file_schema(table: str, uri: str, fmt: str) -> Lookup:
    """The schema of table `table` bound to files at `uri` in format `fmt`: local parquet from its footers."""
    path = local_path(uri)
    if path is not None and not path.exists():
        return Missing(f"cannot read {uri} as {fmt}: no such file or folder")
    if fmt != "parquet":
        return NotChecked(f"table {table!r} ({uri}): {fmt} data is typed by Spark when it reads it")
    if path is None:
        return NotChecked(f"table {table!r} ({uri}): not a local path, Spark reads its footers")
    columns = footer_columns(uri)
    if columns is None:
        why = (
            f"partition folders, summary files, more than {MAX_FILES} files, files of different schemas or not parquet"
        )
        return NotChecked(f"table {table!r} ({uri}): Spark lists and reads these files ({why})")
    return TableSchema(uri, tuple(TableColumn(c.name, c.types, note=c.note) for c in columns))
