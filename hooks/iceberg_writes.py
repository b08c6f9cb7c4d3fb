"""Write targets in Iceberg catalogs through pyiceberg: the engine's `WriteTargets` interface
(`consumer/running/steps/targets.py`).

pyiceberg answers what Spark's session cache may not: whether a table exists now, its current snapshot
(reloaded after each commit), its identifier fields and layout, and which snapshot carries a step's idempotency
key. DDL commits (create, alter) keep their key in the table's properties; a DROP keeps it in the namespace's
properties (`DROPPED_PROPERTY_PREFIX` + table name), the table being gone. The data itself is written by Spark
through the Iceberg catalog of the same name.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import types as T
from substrait_spark.consumer.errors import ResolutionError, TargetRefusedError
from substrait_spark.consumer.running.steps.targets import KeyRecord, SchemaChange
from substrait_spark.consumer.translation.relation import quote
from substrait_spark.hooks.iceberg import Catalogs, IcebergCatalogResolver, find_table
from substrait_spark.hooks.iceberg_stage import STAGED_PROPERTY, IcebergRowLevel


@dataclass
class CatalogObject:
    """A table or view, existing or about to be created, named in a pyiceberg catalog."""

    catalog: Any
    catalog_name: str
    ident: tuple[str, ...]

    @property
    def identity(self) -> str:
        return ".".join((self.catalog_name, *self.ident))


@dataclass
class IcebergTarget(CatalogObject):
    """One table, existing or about to be created."""

    @property
    def spark_name(self) -> str:
        return ".".join(quote(p) for p in (self.catalog_name, *self.ident))

    def _table(self) -> Any:
        return self.catalog.load_table(self.ident)

    def exists(self) -> bool:
        return bool(self.catalog.table_exists(self.ident))

    def snapshot_id(self) -> int | None:
        snapshot = self._table().current_snapshot()
        return snapshot.snapshot_id if snapshot is not None else None

    def identifier_fields(self) -> list[str]:
        schema = self._table().schema()
        return [schema.find_column_name(i) for i in schema.identifier_field_ids]

    def layout_columns(self) -> dict[str, str]:
        """Identifier fields and the sources of every partition spec and sort order the table has had (old data
        files are still read through old specs)."""
        table = self._table()
        schema = table.schema()
        roles = {i: "an identifier field" for i in schema.identifier_field_ids}
        for spec in table.specs().values():
            for f in spec.fields:
                roles.setdefault(f.source_id, f"the source of partition field {f.name!r} ({f.transform})")
        for order in table.sort_orders().values():
            for f in order.fields:
                roles.setdefault(f.source_id, f"a sort order column ({f.transform})")
        names = {i: schema.find_column_name(i) for i in roles}
        return {names[i].lower(): role for i, role in roles.items() if names[i] is not None}

    def committed(self, prop: str, value: str) -> str | None:
        table = self._table()
        snapshot = _snapshot_with(table, prop, value)
        if snapshot is not None:
            return f"snapshot {snapshot.snapshot_id}"
        if value in table.properties.get(prop, "").split("\n"):
            return "table properties"
        return None

    def key_records(self, prop: str, plan_prop: str) -> list[KeyRecord]:
        table = self._table()
        records = []
        for snapshot in _published(table):
            found = snapshot.summary.additional_properties if snapshot.summary is not None else {}
            if prop in found:
                records.append(KeyRecord(found[prop], f"snapshot {snapshot.snapshot_id}", found.get(plan_prop)))
        kept = [v for v in table.properties.get(prop, "").split("\n") if v]
        return records + [KeyRecord(v, "table properties") for v in kept]

    def committed_snapshot(self, prop: str, value: str) -> tuple[int, int | None] | None:
        """The snapshot whose summary has `prop = value`, and its parent's id."""
        snapshot = _snapshot_with(self._table(), prop, value)
        return (snapshot.snapshot_id, snapshot.parent_snapshot_id) if snapshot is not None else None

    def create(self, schema: T.StructType, properties: Mapping[str, str]) -> None:
        self.catalog.create_table(self.ident, schema=_arrow(schema), properties=_merged({}, properties))

    def alter(self, change: SchemaChange, properties: Mapping[str, str]) -> None:
        """One transaction, so one catalog commit: the schema update (renames, widenings, relaxed columns, drops
        and adds, all by the table's own names) and the DDL's key in the table properties."""
        table = self._table()
        if table.format_version > 2:
            raise TargetRefusedError(
                f"ALTER of {self.identity}: pyiceberg 0.12 cannot commit to a format v{table.format_version} table"
            )
        types = _iceberg_types([*change.add, *(T.StructField(n, t) for n, t in change.widen.items())])
        with table.transaction() as tx:
            with tx.update_schema() as update:
                for name in change.widen:
                    update.update_column(name, field_type=types[name])
                for name in change.relax:
                    update.make_column_optional(name)
                for old, new in change.rename.items():
                    update.rename_column(old, new)
                for name in change.drop:
                    update.delete_column(name)
                for f in change.add:
                    update.add_column(f.name, types[f.name], required=False)
            tx.set_properties(_merged(table.properties, properties))

    def uuid(self) -> str | None:
        return str(self._table().metadata.table_uuid) if self.exists() else None

    def drop(self, step_key: str | None = None) -> None:
        """The key goes into the namespace's properties first (`record_drop`); a crash between the two leaves the
        table, which the retry then drops."""
        if step_key is not None:
            record_drop(self.catalog, self.ident, step_key, self.uuid())
        self.catalog.drop_table(self.ident)

    def dropped_by(self) -> tuple[str, str | None] | None:
        return drop_record(self.catalog, self.ident)

    def row_level(self, spark: SparkSession) -> IcebergRowLevel:
        return IcebergRowLevel(self, spark)


def _snapshot_with(table: Any, prop: str, value: str) -> Any:
    """The table's published snapshot whose summary has `prop = value`, if any."""
    return next((s for s in _published(table) if s.summary.additional_properties.get(prop) == value), None)


def _published(table: Any) -> Iterator[Any]:
    """The table's snapshots with a summary, oldest first; a commit staged on a branch (`iceberg_stage`) only once
    it is in `main`'s history (published)."""
    from pyiceberg.table.snapshots import ancestors_of

    published: set[int] | None = None
    for snapshot in table.snapshots():
        summary = snapshot.summary
        if summary is None:
            continue
        if STAGED_PROPERTY not in summary.additional_properties:
            yield snapshot
            continue
        if published is None:
            current = table.current_snapshot()
            published = {s.snapshot_id for s in ancestors_of(current, table.metadata)} if current else set()
        if snapshot.snapshot_id in published:
            yield snapshot


def record_drop(catalog: Any, ident: tuple[str, ...], step_key: str, uuid: str | None) -> None:
    """Keep a DROP's step key and the dropped object's UUID in the namespace (one property per name, overwritten
    by the next DROP of that name: bounded), before the drop."""
    value = f"{step_key}\n{uuid or ''}"
    catalog.update_namespace_properties(ident[:-1], updates={_drop_property(ident): value})


def drop_record(catalog: Any, ident: tuple[str, ...]) -> tuple[str, str | None] | None:
    """(step key, UUID of what it dropped) of the last recorded DROP of this name."""
    value = catalog.load_namespace_properties(ident[:-1]).get(_drop_property(ident))
    if value is None:
        return None
    key, _, uuid = value.partition("\n")
    return key, uuid or None


def _drop_property(ident: tuple[str, ...]) -> str:
    return f"{DROPPED_PROPERTY_PREFIX}{ident[-1].lower()}"


# DDL commits have no snapshot: their keys are kept in a table property, the most recent ones.
_KEPT_KEYS = 50
# A dropped table keeps nothing: its DROP's key is kept in the namespace, under this prefix + the table's name.
DROPPED_PROPERTY_PREFIX = "substrait-spark.dropped."


def _merged(current: Mapping[str, str], new: Mapping[str, str]) -> dict[str, str]:
    """Each property's values as a newline-separated list, newest last."""
    out = {}
    for k, v in new.items():
        values = [x for x in current.get(k, "").split("\n") if x and x != v]
        out[k] = "\n".join([*values, v][-_KEPT_KEYS:])
    return out


def _arrow(schema: T.StructType) -> Any:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(schema)


def _iceberg_types(fields: Sequence[T.StructField]) -> dict[str, Any]:
    """Spark types as Iceberg's, by column name (through Arrow, as pyiceberg converts schemas)."""
    from pyiceberg.catalog import Catalog

    schema = Catalog._convert_schema_if_needed(_arrow(T.StructType(list(fields))))
    return {f.name: f.field_type for f in schema.fields}


@dataclass
class IcebergWriteTargets:
    """Names in a plan's Write/DDL/Update → tables of the configured catalogs (as reads resolve them)."""

    catalogs: Catalogs

    def write_target(self, spark: SparkSession, names: Sequence[str]) -> IcebergTarget:
        catalog_name, parts = IcebergCatalogResolver(self.catalogs)._split(names)
        catalog = self.catalogs.load(catalog_name)
        self.catalogs.configure(spark, catalog_name)
        try:
            ident = find_table(catalog, catalog_name, parts)
        except ResolutionError:
            ident = _new_table(catalog, catalog_name, parts)
        return IcebergTarget(catalog, catalog_name, ident)

    def view_target(self, spark: SparkSession, names: Sequence[str]) -> Any:
        from substrait_spark.hooks.iceberg_views import view_target

        return view_target(self.catalogs, names)


def _new_table(catalog: Any, catalog_name: str, parts: list[str]) -> tuple[str, ...]:
    """A table not there yet: its namespace must exist (matched case-insensitively)."""
    if len(parts) < 2:
        raise ResolutionError(f"new table {parts[-1]!r} needs a namespace (catalog {catalog_name!r})")
    wanted = tuple(p.lower() for p in parts[:-1])
    for ns in catalog.list_namespaces():
        if tuple(str(p).lower() for p in ns) == wanted:
            return (*tuple(ns), parts[-1])
    raise ResolutionError(f"namespace {'.'.join(parts[:-1])!r} not found in catalog {catalog_name!r}")


@dataclass
class WritableIcebergResolver(IcebergCatalogResolver):
    """The Iceberg resolver that also names write targets: pass it where plans write."""

    def write_target(self, spark: SparkSession, names: Sequence[str]) -> IcebergTarget:
        return IcebergWriteTargets(self.catalogs).write_target(spark, names)

    def view_target(self, spark: SparkSession, names: Sequence[str]) -> Any:
        return IcebergWriteTargets(self.catalogs).view_target(spark, names)
