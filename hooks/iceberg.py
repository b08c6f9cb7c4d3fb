"""Iceberg catalogs through pyiceberg: configuration, NamedTable resolution with a pinned snapshot, and the
matching Spark catalog settings.

A plan names `[catalog.]namespace….table`; the catalog's current snapshot at resolution is pinned and read by
Spark (`snapshot-id`), so a writer committing during the run changes nothing the run sees, and the run report
says exactly which snapshot it read. pyiceberg finds the table and its snapshot; Spark reads it through an
Iceberg catalog of the same name, configured on the session here.

Configuration (the CLI's `--catalog-config FILE`, YAML or JSON; the operator's Iceberg connections)::

    default: lake
    catalogs:
      lake: {type: sql, uri: "sqlite:////data/catalog.db", warehouse: "file:///data/warehouse"}
      prod: {type: rest, uri: "https://catalog.example.com", credential: "id:secret", warehouse: "prod"}

Each catalog's properties are pyiceberg's (`load_catalog(name, **properties)`); a `spark:` mapping inside a
catalog adds or overrides Spark catalog properties (`spark.sql.catalog.<name>.<key>`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import types as T
from substrait_spark.consumer.errors import CatalogUnavailableError, ResolutionError, first_line
from substrait_spark.consumer.redact import redact
from substrait_spark.consumer.running.resolver import read_mapping_file
from substrait_spark.consumer.running.table_schemas import Lookup, Missing, NotChecked, TableColumn, TableSchema
from substrait_spark.consumer.tables import ResolvedTable, ResolvedView
from substrait_spark.consumer.translation.relation import quote
from substrait_spark.hooks.iceberg_spark import (
    ICEBERG_EXTENSIONS,
    KEEP_QUERY_NULLABILITY,
    SPARK_CATALOG_CLASS,
    IcebergSetupError,
    spark_catalog_conf,
    spark_session_conf,
)


@dataclass(frozen=True)
class CatalogConfig:
    """One Iceberg catalog: its name (the same in pyiceberg and Spark) and its properties."""

    name: str
    properties: Mapping[str, str]
    spark: Mapping[str, str] = field(default_factory=dict)

    def redacted(self) -> dict[str, str]:
        """Properties fit for logs and reports: secrets masked."""
        return redact(dict(self.properties))

    def spark_conf(self) -> dict[str, str]:
        """The Spark catalog of the same name (`spark.sql.catalog.<name>*`); a SQL catalog becomes Iceberg's
        JDBC catalog on the same database."""
        kind = str(self.properties.get("type", "rest")).lower()
        if kind == "sql":
            if "uri" not in self.properties:
                raise ResolutionError(f"catalog {self.name!r}: a SQL catalog needs a 'uri'")
            conf = spark_catalog_conf(
                self.name, uri=self.properties["uri"], warehouse=self.properties.get("warehouse", ""), extra=self.spark
            )
            return {k: v for k, v in conf.items() if k.startswith("spark.sql.catalog.")}
        keys = _PASSTHROUGH.get(kind)
        if keys is None:
            raise ResolutionError(f"catalog {self.name!r}: type {kind!r} has no Spark equivalent here")
        prefix = f"spark.sql.catalog.{self.name}"
        # The table cache off, as for a SQL catalog: pyiceberg commits to the same tables (staging branches, audit
        # rows), and a cached table would hide its snapshots from Spark for up to 30 s (`spark:` may turn it on).
        conf = {prefix: SPARK_CATALOG_CLASS, f"{prefix}.type": kind, f"{prefix}.cache-enabled": "false"}
        conf.update({f"{prefix}.{k}": v for k, v in KEEP_QUERY_NULLABILITY.items()})
        conf.update({f"{prefix}.{k}": str(self.properties[k]) for k in keys if k in self.properties})
        conf.update({k if k.startswith("spark.") else f"{prefix}.{k}": str(v) for k, v in self.spark.items()})
        return conf


# Catalog types whose pyiceberg properties carry over to Iceberg's Spark catalog under the same keys.
_PASSTHROUGH: dict[str, tuple[str, ...]] = {
    "rest": ("uri", "warehouse", "credential", "token", "scope", "oauth2-server-uri", "prefix"),
    "glue": ("warehouse", "glue.id", "glue.region"),
    "hive": ("uri", "warehouse"),
}


@dataclass
class Catalogs:
    """Several Iceberg catalogs, one of them the default for names without a catalog part."""

    catalogs: dict[str, CatalogConfig]
    default: str | None = None
    _loaded: dict[str, Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if self.default is None and self.catalogs:
            self.default = next(iter(self.catalogs))
        if self.default is not None and self.default not in self.catalogs:
            raise ResolutionError(f"default catalog {self.default!r} is not configured ({self._known()})")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "catalog config") -> Catalogs:
        raw = data.get("catalogs")
        if not isinstance(raw, Mapping) or not raw:
            raise ResolutionError(f"{source}: expected 'catalogs: {{name: {{type: ..., ...}}}}'")
        catalogs = {}
        for name, props in raw.items():
            if not isinstance(props, Mapping):
                raise ResolutionError(f"{source}: catalog {name!r} needs a mapping of properties")
            spark = props.get("spark") or {}
            plain = {k: str(v) for k, v in props.items() if k != "spark"}
            if plain.get("type") == "sql":
                plain.setdefault("schema_version", "v1")  # the catalog-table layout Spark's JDBC catalog uses
            catalogs[str(name)] = CatalogConfig(str(name), plain, dict(spark))
        return cls(catalogs, data.get("default"))

    @classmethod
    def from_file(cls, path: str | Path) -> Catalogs:
        return cls.from_mapping(read_mapping_file(path, "catalog config"), f"catalog config {path}")

    def _known(self) -> str:
        return "configured: " + (", ".join(sorted(self.catalogs)) or "none")

    def find(self, name: str) -> CatalogConfig | None:
        """A configured catalog by name, case-insensitively."""
        return self.catalogs.get(name) or next((c for n, c in self.catalogs.items() if n.lower() == name.lower()), None)

    def split(self, names: Sequence[str]) -> tuple[str, list[str]]:
        """A plan's table name as (catalog, the name inside it): a leading configured catalog, else the default."""
        first = self.find(names[0]) if len(names) > 1 else None
        if first is not None:
            return first.name, list(names[1:])
        if self.default is None:
            raise ResolutionError(f"table {'.'.join(names)!r}: no catalog configured")
        return self.default, list(names)

    def load(self, name: str) -> Any:
        """The pyiceberg catalog (loaded once per process)."""
        config = self.find(name)
        if config is None:
            raise ResolutionError(f"catalog {name!r} is not configured ({self._known()})")
        with self._lock:
            if config.name not in self._loaded:
                from pyiceberg.catalog import load_catalog

                try:
                    self._loaded[config.name] = load_catalog(config.name, **config.properties)
                except Exception as exc:  # pyiceberg raises many kinds: name the catalog, hide secrets
                    raise ResolutionError(
                        f"catalog {config.name!r} cannot be opened ({type(exc).__name__}): {config.redacted()}"
                    ) from None
            return self._loaded[config.name]

    def spark_conf(self) -> dict[str, str]:
        """Every catalog's Spark settings, plus Iceberg's SQL extensions (for a session not started yet)."""
        conf = {"spark.sql.extensions": ICEBERG_EXTENSIONS}
        for c in self.catalogs.values():
            conf.update(c.spark_conf())
        return conf

    def check_session(self, spark: SparkSession) -> None:
        """Every catalog registered on `spark` (runtime settings: Spark loads catalog plugins lazily, by name) and
        loadable there, before a run uses it: a session started without Iceberg's classes — by an earlier run of
        the same process that had no catalogs — is refused here with the reason and the fix, not by Spark two
        layers down in the run."""
        for name in self.catalogs:
            self.configure(spark, name)
            try:
                spark.sql(f"SHOW NAMESPACES IN {quote(name)}")  # a command: runs at once, loading the plugin
            except Exception as exc:
                raise _unavailable(name, exc) from None

    def configure(self, spark: SparkSession, name: str) -> None:
        """Register catalog `name` on a running session (Spark loads catalog plugins lazily, by name)."""
        config = self.find(name)
        assert config is not None
        for k, v in config.spark_conf().items():
            if spark.conf.get(k, None) != v:
                spark.conf.set(k, v)


# What Spark says when a catalog's plugin class is not on the session's classpath.
_MISSING_CLASSES = ("CATALOG_PLUGIN_CLASS_NOT_FOUND", "Cannot find catalog plugin class", "ClassNotFound", "NoClassDef")
_JARS_FIX = (
    "a session's jars are fixed when it starts, and this one started without Iceberg's (an earlier run in this "
    "process, without catalogs, may have started it). Fix: start every session with Iceberg — the Iceberg runtime "
    "in the Spark connection's `jars` or `packages` extra (spark.jars / spark.jars.packages), or on the Spark "
    "Connect server — or run this in a process of its own"
)


def _unavailable(name: str, exc: Exception) -> CatalogUnavailableError:
    reason = first_line(exc)
    if any(mark in str(exc) for mark in _MISSING_CLASSES):
        return CatalogUnavailableError(
            f"catalog {name!r}: this Spark session lacks Iceberg's classes ({reason}); {_JARS_FIX}"
        )
    return CatalogUnavailableError(f"catalog {name!r}: Spark cannot open it: {reason}")


@dataclass
class IcebergCatalogResolver:
    """NamedTable → an Iceberg table: `[catalog.]namespace….table`, case-insensitive, current snapshot pinned."""

    catalogs: Catalogs

    def resolve(self, spark: SparkSession, names: Sequence[str]) -> ResolvedTable | ResolvedView:
        if not names:
            raise ResolutionError("table with no name")
        catalog_name, parts = self._split(names)
        catalog = self.catalogs.load(catalog_name)
        try:
            ident = find_table(catalog, catalog_name, parts)
        except ResolutionError:
            view = stored_view(catalog, catalog_name, parts)
            if view is None:
                raise
            return view
        table = catalog.load_table(ident)
        snapshot = table.current_snapshot()
        snapshot_id = snapshot.snapshot_id if snapshot is not None else None
        self.catalogs.configure(spark, catalog_name)
        reader = spark.read.format("iceberg")
        if snapshot_id is not None:
            reader = reader.option("snapshot-id", str(snapshot_id))
        df = reader.load(".".join(quote(p) for p in (catalog_name, *ident)))
        return ResolvedTable(
            df,
            identity=".".join((catalog_name, *ident)),
            format="iceberg",
            snapshot_id=snapshot_id,
            catalog=catalog_name,
            metadata_location=table.metadata_location,
            strict_schema=True,
        )

    def _split(self, names: Sequence[str]) -> tuple[str, list[str]]:
        return self.catalogs.split(names)

    def schema(self, names: Sequence[str]) -> Lookup:
        """The table's schema from the catalog (pyiceberg, no Spark), as Spark's Iceberg reader types it; the
        same lookup as `resolve`. A view is left to the run (its tables are read through its definition)."""
        table = ".".join(names)
        try:
            catalog_name, parts = self._split(names)
            catalog = self.catalogs.load(catalog_name)
            try:
                ident = find_table(catalog, catalog_name, parts)
            except ResolutionError:
                if stored_view(catalog, catalog_name, parts) is None:
                    raise
                return NotChecked(f"table {table!r} is a view of catalog {catalog_name!r}: checked when it runs")
            fields = catalog.load_table(ident).schema().fields
        except ResolutionError as exc:
            return Missing(exc.message)
        except Exception as exc:  # a catalog that does not answer: the run meets it again and says so
            return NotChecked(f"table {table!r}: catalog lookup failed ({type(exc).__name__})")
        columns = [TableColumn(f.name, _spark_types(f.field_type), not f.required) for f in fields]
        return TableSchema(".".join((catalog_name, *ident)), tuple(columns), strict=True)


def _spark_types(t: Any) -> tuple[T.DataType, ...]:
    """The Spark type Iceberg's Spark reader gives an Iceberg type (`TypeToSparkType`); () if not one mapped here."""
    spark = _spark_type(t)
    return (spark,) if spark is not None else ()


def _spark_type(t: Any) -> T.DataType | None:
    from pyiceberg import types as ice

    plain: dict[type, T.DataType] = {
        ice.BooleanType: T.BooleanType(),
        ice.IntegerType: T.IntegerType(),
        ice.LongType: T.LongType(),
        ice.FloatType: T.FloatType(),
        ice.DoubleType: T.DoubleType(),
        ice.DateType: T.DateType(),
        ice.TimestampType: T.TimestampNTZType(),
        ice.TimestamptzType: T.TimestampType(),
        ice.StringType: T.StringType(),
        ice.UUIDType: T.StringType(),
        ice.BinaryType: T.BinaryType(),
        ice.FixedType: T.BinaryType(),
    }
    if type(t) in plain:
        return plain[type(t)]
    if isinstance(t, ice.DecimalType):
        return T.DecimalType(t.precision, t.scale)
    if isinstance(t, ice.StructType):
        inner = [(f, _spark_type(f.field_type)) for f in t.fields]
        if any(s is None for _, s in inner):
            return None
        return T.StructType([T.StructField(f.name, s, not f.required) for f, s in inner])  # type: ignore[arg-type]
    if isinstance(t, ice.ListType):
        element = _spark_type(t.element_type)
        return T.ArrayType(element, not t.element_required) if element is not None else None
    if isinstance(t, ice.MapType):
        key, value = _spark_type(t.key_type), _spark_type(t.value_type)
        return T.MapType(key, value, not t.value_required) if key is not None and value is not None else None
    return None


def find_table(catalog: Any, catalog_name: str, parts: list[str]) -> tuple[str, ...]:
    """The table's identifier as the catalog spells it; a bare table name is searched in every namespace."""
    wanted = ".".join(parts)
    namespaces = [tuple(ns) for ns in catalog.list_namespaces()]
    if len(parts) == 1:
        candidates = namespaces
    else:
        ns = tuple(p.lower() for p in parts[:-1])
        candidates = [n for n in namespaces if tuple(p.lower() for p in n) == ns]
        if not candidates:
            known = ", ".join(".".join(n) for n in namespaces) or "none"
            raise ResolutionError(
                f"table {wanted!r} not found in catalog {catalog_name!r}: no namespace "
                f"{'.'.join(parts[:-1])!r} (namespaces: {known})"
            )
    matches = [
        tuple(t) for n in candidates for t in catalog.list_tables(n) if str(tuple(t)[-1]).lower() == parts[-1].lower()
    ]
    if not matches:
        raise ResolutionError(f"table {wanted!r} not found in catalog {catalog_name!r}")
    if len(matches) > 1:
        found = ", ".join(".".join(m) for m in matches)
        raise ResolutionError(f"table {wanted!r} is ambiguous in catalog {catalog_name!r}: {found}")
    return matches[0]


def stored_view(catalog: Any, catalog_name: str, parts: Sequence[str]) -> ResolvedView | None:
    """A view of that name, with its current definition (see `iceberg_views`)."""
    from substrait_spark.hooks.iceberg_views import find_view, views_of

    ident = find_view(catalog, catalog_name, parts)
    stored = views_of(catalog).load(ident) if ident is not None else None
    if stored is None:
        return None
    return ResolvedView(
        identity=".".join((catalog_name, *stored.ident)),
        definition=stored.definition,
        version_id=stored.version_id,
        dialects=stored.dialects,
        catalog=catalog_name,
        metadata_location=stored.metadata_location,
    )


def session_conf(
    catalogs: Catalogs, jars_dir: str | Path | None = None, packages: Sequence[str] = ()
) -> dict[str, str]:
    """Everything a new Spark session needs for these catalogs: Iceberg's SQL extensions, each catalog, and the
    provisioned Iceberg jars — unless the session gets Iceberg from `spark.jars.packages` (`packages`), as on a
    cluster."""
    if any("iceberg-spark-runtime" in p for p in packages):
        return catalogs.spark_conf()
    try:
        base = spark_session_conf(jars_dir)
    except IcebergSetupError as exc:
        raise ResolutionError(str(exc)) from None
    return {**base, **catalogs.spark_conf()}
