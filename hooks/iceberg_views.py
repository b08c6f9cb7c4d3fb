"""Iceberg views holding a Substrait plan, in pyiceberg catalogs.

A view's definition is kept the way the Iceberg view spec keeps any definition: a version whose representation
is `{"type": "sql", "dialect": "substrait", "sql": <the Substrait plan as protobuf JSON>}`. Engines that do not
speak the dialect skip the representation (Iceberg allows several per version); every CREATE OR REPLACE / ALTER
adds a version, so the definition's history stays in the catalog. Each version's summary carries the step's
idempotency key, so a retried step finds its own commit.

pyiceberg 0.12's SQL catalog has no view API (its view methods raise NotImplementedError), so `SqlCatalogViews`
keeps views exactly as Iceberg's Java JdbcCatalog does on the same database — a catalog row with
`iceberg_type = 'VIEW'` pointing at a view-metadata JSON file — and Spark's Iceberg catalog sees them as views.
A version is committed by swapping the row's metadata location from the one it was built on (optimistic, as
Java does), so concurrent replaces never lose a version silently. Other catalogs use pyiceberg's own view API.
"""

from __future__ import annotations

import gzip
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import types as T
from substrait_spark.consumer.errors import ExecutionError, ResolutionError
from substrait_spark.consumer.running.steps.targets import KeyRecord
from substrait_spark.hooks.iceberg_writes import CatalogObject, _new_table, drop_record, record_drop

SUBSTRAIT_DIALECT = "substrait"
VIEW_TYPE = "VIEW"  # iceberg_tables.iceberg_type of a view, as Iceberg's JdbcCatalog writes it


@dataclass(frozen=True)
class StoredView:
    """A view's current version as a reader needs it."""

    ident: tuple[str, ...]
    version_id: int
    definition: str | None  # the Substrait representation's text; None when the view has none
    dialects: tuple[str, ...]
    metadata_location: str | None
    metadata: Any  # pyiceberg ViewMetadata


class SqlCatalogViews:
    """Views in a pyiceberg SQL catalog, laid out as Iceberg's JdbcCatalog lays them out (schema version V1)."""

    def __init__(self, catalog: Any):
        self.catalog = catalog

    def _row(self, session: Any, ident: tuple[str, ...]) -> Any:
        from pyiceberg.catalog.sql import IcebergTables
        from sqlalchemy import select

        ns, name = _split(ident)
        stmt = select(IcebergTables).where(
            IcebergTables.catalog_name == self.catalog.name,
            IcebergTables.table_namespace == ns,
            IcebergTables.table_name == name,
            IcebergTables.iceberg_type == VIEW_TYPE,
        )
        return session.execute(stmt).scalar_one_or_none()

    def list(self, namespace: tuple[str, ...]) -> list[tuple[str, ...]]:
        from pyiceberg.catalog.sql import IcebergTables
        from sqlalchemy import select
        from sqlalchemy.orm import Session

        ns = ".".join(namespace)
        stmt = select(IcebergTables.table_name).where(
            IcebergTables.catalog_name == self.catalog.name,
            IcebergTables.table_namespace == ns,
            IcebergTables.iceberg_type == VIEW_TYPE,
        )
        with Session(self.catalog.engine) as session:
            return [(*namespace, name) for name in session.execute(stmt).scalars()]

    def load(self, ident: tuple[str, ...]) -> StoredView | None:
        from sqlalchemy.orm import Session

        with Session(self.catalog.engine) as session:
            row = self._row(session, ident)
            location = row.metadata_location if row is not None else None
        if row is None:
            return None
        return _stored(ident, _read_metadata(self.catalog, location), location)

    def commit(self, ident: tuple[str, ...], definition: str, schema: T.StructType, summary: Mapping[str, str]) -> None:
        """Create the view, or add a version to it; the row swap is the atomic commit."""
        from pyiceberg.catalog.sql import IcebergTables
        from sqlalchemy import update
        from sqlalchemy.exc import IntegrityError
        from sqlalchemy.orm import Session

        ns, name = _split(ident)
        current = self.load(ident)
        base = current.metadata if current is not None else None
        location = base.location if base is not None else self.catalog._resolve_table_location(None, ns, name)
        metadata = _next_metadata(base, location, ident, self.catalog.name, definition, schema, summary)
        path = _write_metadata(self.catalog, metadata)
        with Session(self.catalog.engine) as session:
            if current is None:
                row = IcebergTables(
                    catalog_name=self.catalog.name,
                    table_namespace=ns,
                    table_name=name,
                    metadata_location=path,
                    previous_metadata_location=None,
                )
                row.iceberg_type = VIEW_TYPE
                session.add(row)
            else:
                res = session.execute(
                    update(IcebergTables)
                    .where(
                        IcebergTables.catalog_name == self.catalog.name,
                        IcebergTables.table_namespace == ns,
                        IcebergTables.table_name == name,
                        IcebergTables.iceberg_type == VIEW_TYPE,
                        IcebergTables.metadata_location == current.metadata_location,
                    )
                    .values(metadata_location=path, previous_metadata_location=current.metadata_location)
                )
                if res.rowcount != 1:
                    session.rollback()
                    raise ExecutionError(f"view {'.'.join(ident)} was changed concurrently; nothing committed")
            try:
                session.commit()
            except IntegrityError:  # a table or view of that name appeared meanwhile
                session.rollback()
                raise ExecutionError(f"{'.'.join(ident)} already exists; view not created") from None

    def drop(self, ident: tuple[str, ...]) -> None:
        from pyiceberg.catalog.sql import IcebergTables
        from sqlalchemy import delete
        from sqlalchemy.orm import Session

        ns, name = _split(ident)
        with Session(self.catalog.engine) as session:
            session.execute(
                delete(IcebergTables).where(
                    IcebergTables.catalog_name == self.catalog.name,
                    IcebergTables.table_namespace == ns,
                    IcebergTables.table_name == name,
                    IcebergTables.iceberg_type == VIEW_TYPE,
                )
            )
            session.commit()


class CatalogViews:
    """Views through pyiceberg's own view API (REST catalogs): create, load, drop. A new version of an existing
    view has no pyiceberg call, so CREATE OR REPLACE / ALTER of one is refused rather than done as drop + create."""

    def __init__(self, catalog: Any):
        self.catalog = catalog

    def list(self, namespace: tuple[str, ...]) -> list[tuple[str, ...]]:
        return [tuple(v) for v in self.catalog.list_views(namespace)]

    def load(self, ident: tuple[str, ...]) -> StoredView | None:
        from pyiceberg.exceptions import NoSuchViewError

        try:
            view = self.catalog.load_view(ident)
        except NoSuchViewError:
            return None
        return _stored(ident, view.metadata, None)

    def commit(self, ident: tuple[str, ...], definition: str, schema: T.StructType, summary: Mapping[str, str]) -> None:
        from pyiceberg.view.metadata import ViewVersion

        if self.load(ident) is not None:
            raise ExecutionError(f"view {'.'.join(ident)}: this catalog has no way to add a view version")
        version = ViewVersion(
            schema_id=0,
            summary=dict(summary),
            representations=[_representation(definition)],
            default_namespace=list(ident[:-1]),
        )
        self.catalog.create_view(ident, _iceberg_schema(schema), version)

    def drop(self, ident: tuple[str, ...]) -> None:
        self.catalog.drop_view(ident)


def views_of(catalog: Any) -> SqlCatalogViews | CatalogViews:
    from pyiceberg.catalog.sql import SqlCatalog

    return SqlCatalogViews(catalog) if isinstance(catalog, SqlCatalog) else CatalogViews(catalog)


def find_view(catalog: Any, catalog_name: str, parts: Sequence[str]) -> tuple[str, ...] | None:
    """A view's identifier as the catalog spells it (case-insensitive; a bare name searched in every namespace)."""
    views = views_of(catalog)
    wanted_ns = tuple(p.lower() for p in parts[:-1])
    namespaces = [tuple(ns) for ns in catalog.list_namespaces()]
    if wanted_ns:
        namespaces = [n for n in namespaces if tuple(p.lower() for p in n) == wanted_ns]
    try:
        matches = [v for n in namespaces for v in views.list(n) if v[-1].lower() == parts[-1].lower()]
    except NotImplementedError:
        return None
    if len(matches) > 1:
        found = ", ".join(".".join(m) for m in matches)
        raise ResolutionError(f"view {'.'.join(parts)!r} is ambiguous in catalog {catalog_name!r}: {found}")
    return matches[0] if matches else None


# --- view metadata ------------------------------------------------------------------------------------------


def _split(ident: tuple[str, ...]) -> tuple[str, str]:
    return ".".join(ident[:-1]), ident[-1]


def _stored(ident: tuple[str, ...], metadata: Any, location: str | None) -> StoredView:
    version = next(v for v in metadata.versions if v.version_id == metadata.current_version_id)
    reps = [r.root for r in version.representations]
    text = next((r.sql for r in reps if r.dialect.lower() == SUBSTRAIT_DIALECT), None)
    return StoredView(ident, version.version_id, text, tuple(r.dialect for r in reps), location, metadata)


def _representation(definition: str) -> Any:
    from pyiceberg.view.metadata import SQLViewRepresentation, ViewRepresentation

    return ViewRepresentation(SQLViewRepresentation(type="sql", sql=definition, dialect=SUBSTRAIT_DIALECT))


def _iceberg_schema(schema: T.StructType, schema_id: int = 0) -> Any:
    from pyiceberg.catalog import Catalog
    from pyiceberg.schema import Schema, assign_fresh_schema_ids
    from pyspark.sql.pandas.types import to_arrow_schema

    fresh = assign_fresh_schema_ids(Catalog._convert_schema_if_needed(to_arrow_schema(schema)))
    return Schema(*fresh.fields, schema_id=schema_id)


def _next_metadata(
    base: Any,
    location: str,
    ident: tuple[str, ...],
    catalog_name: str,
    definition: str,
    struct: T.StructType,
    summary: Mapping[str, str],
) -> Any:
    """The metadata after adding a version (or a new view's first)."""
    from pyiceberg.view.metadata import ViewHistoryEntry, ViewMetadata, ViewVersion

    schemas = list(base.schemas) if base is not None else []
    schema = _iceberg_schema(struct, max((s.schema_id for s in schemas), default=-1) + 1)
    same = next((s for s in schemas if s.as_struct() == schema.as_struct()), None)
    if same is None:
        schemas.append(schema)
    versions = list(base.versions) if base is not None else []
    version = ViewVersion(
        version_id=max((v.version_id for v in versions), default=0) + 1,
        schema_id=(same or schema).schema_id,
        summary={"engine-name": "substrait-spark", **summary},
        representations=[_representation(definition)],
        default_catalog=catalog_name,
        default_namespace=list(ident[:-1]),
    )
    log = list(base.version_log) if base is not None else []
    log.append(ViewHistoryEntry(timestamp_ms=version.timestamp_ms, version_id=version.version_id))
    return ViewMetadata(
        view_uuid=base.view_uuid if base is not None else str(uuid.uuid4()),
        format_version=1,
        location=location,
        schemas=schemas,
        current_version_id=version.version_id,
        versions=[*versions, version],
        version_log=log,
        properties=dict(base.properties) if base is not None else {},
    )


def _write_metadata(catalog: Any, metadata: Any) -> str:
    path = f"{metadata.location}/metadata/{metadata.current_version_id:05d}-{uuid.uuid4()}.metadata.json"
    io = catalog._load_file_io(location=path)
    with io.new_output(path).create(overwrite=False) as out:
        out.write(metadata.model_dump_json().encode())
    return path


def _read_metadata(catalog: Any, path: str) -> Any:
    from pyiceberg.view.metadata import ViewMetadata

    io = catalog._load_file_io(location=path)
    try:
        with io.new_input(path).open() as f:
            data = f.read()
        if data[:2] == b"\x1f\x8b":  # Iceberg's Java writers gzip metadata files (`.gz.metadata.json`)
            data = gzip.decompress(data)
        return ViewMetadata.model_validate_json(data)
    except Exception as exc:  # a missing or unreadable file: the catalog points at something that is not a view
        raise ResolutionError(f"view metadata {path} cannot be read: {type(exc).__name__}: {exc}") from None


# --- the engine's ViewTarget (consumer/running/steps/targets.py) ---------------------------------------------------


@dataclass
class IcebergViewTarget(CatalogObject):
    """One view, existing or about to be created."""

    def _current(self) -> StoredView | None:
        return views_of(self.catalog).load(self.ident)

    def exists(self) -> bool:
        return self._current() is not None

    def snapshot_id(self) -> int | None:
        current = self._current()
        return current.version_id if current is not None else None

    def table_exists(self) -> bool:
        return bool(self.catalog.table_exists(self.ident))

    def committed(self, prop: str, value: str) -> str | None:
        current = self._current()
        versions = current.metadata.versions if current is not None else []
        return next((f"view version {v.version_id}" for v in versions if v.summary.get(prop) == value), None)

    def key_records(self, prop: str, plan_prop: str) -> list[KeyRecord]:
        current = self._current()
        versions = current.metadata.versions if current is not None else []
        return [
            KeyRecord(v.summary[prop], f"view version {v.version_id}", v.summary.get(plan_prop))
            for v in versions
            if prop in v.summary
        ]

    def commit(self, definition: str, schema: T.StructType, summary: Mapping[str, str]) -> None:
        views_of(self.catalog).commit(self.ident, definition, schema, summary)

    def uuid(self) -> str | None:
        current = self._current()
        return current.metadata.view_uuid if current is not None else None

    def drop(self, step_key: str | None = None) -> None:
        """As a table's DROP: the key and the view's UUID recorded in the namespace first (`record_drop`)."""
        if step_key is not None:
            record_drop(self.catalog, self.ident, step_key, self.uuid())
        views_of(self.catalog).drop(self.ident)

    def dropped_by(self) -> tuple[str, str | None] | None:
        return drop_record(self.catalog, self.ident)


def view_target(catalogs: Any, names: Sequence[str]) -> IcebergViewTarget:
    """Names in a view DDL → the view (or the table of that name, which the step then refuses to touch)."""
    from substrait_spark.hooks.iceberg import IcebergCatalogResolver, find_table

    catalog_name, parts = IcebergCatalogResolver(catalogs)._split(names)
    catalog = catalogs.load(catalog_name)
    ident = find_view(catalog, catalog_name, parts)
    if ident is None:
        try:
            ident = find_table(catalog, catalog_name, parts)
        except ResolutionError:
            ident = _new_table(catalog, catalog_name, parts)
    return IcebergViewTarget(catalog, catalog_name, ident)
