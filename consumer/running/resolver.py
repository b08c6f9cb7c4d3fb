"""Where NamedTable reads come from: the resolvers. The consumer asks a `TableResolver` (the port,
`consumer/tables.py`, re-exported here with what it returns); hooks provide catalog-backed ones."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from ..errors import ResolutionError, first_line
from ..tables import CSV_OPTIONS, ResolvedTable, ResolvedView, TableResolver
from .clients import is_connect
from .parquet_footer import footer_schema
from .paths import absolute
from .table_schemas import Lookup, Missing, NotChecked, SchemaSource, file_schema

FORMATS = ("parquet", "orc", "csv", "json", "delta", "iceberg", "table")


def read_mapping_file(path: str | Path, what: str) -> Mapping[str, Any]:
    """A JSON or YAML configuration file holding a mapping (table maps, catalog configurations)."""
    import yaml  # YAML is a superset of JSON: one parser for both

    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ResolutionError(f"cannot read {what} {path}: {exc}") from None
    if not isinstance(data, Mapping):
        raise ResolutionError(f"{what} {path}: expected a mapping")
    return data


@dataclass(frozen=True)
class TableBinding:
    """A table name bound to files (or, as format `table`, to a Spark table); `source` says which binding it is
    (a tables directory, a table map), for a policy's refusal to name it. A relative path is made absolute here,
    on the client (`paths.py`): a server resolves paths against its own working directory."""

    uri: str
    format: str = "parquet"
    source: str = field(default="table map", compare=False)

    def __post_init__(self) -> None:
        if self.format != "table":  # a table name, not a path
            object.__setattr__(self, "uri", absolute(self.uri))

    @classmethod
    def parse(cls, spec: str, source: str = "table map") -> TableBinding:
        """`URI[:FORMAT]`, the CLI's `--table NAME=URI[:FORMAT]` value."""
        uri, sep, fmt = spec.rpartition(":")
        if sep and fmt.lower() in FORMATS:
            return cls(uri, fmt.lower(), source)
        return cls(spec, _guess_format(spec), source)

    @property
    def files(self) -> bool:
        """Whether the binding reads files (every format but a Spark `table`)."""
        return self.format != "table"


def _guess_format(uri: str) -> str:
    suffix = Path(uri.rstrip("/")).suffix.lower().lstrip(".")
    return suffix if suffix in FORMATS else "parquet"


@dataclass
class TableMapResolver:
    """A static name -> location map; names match case-insensitively, on the last name part or all parts."""

    tables: dict[str, TableBinding] = field(default_factory=dict)
    # DataFrames already opened, per session and binding: reading a parquet footer costs ~50 ms, and a
    # batch of plans reads the same tables again and again.
    _opened: dict[tuple[int, TableBinding], ResolvedTable] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.tables = {k.lower(): v for k, v in self.tables.items()}

    @classmethod
    def from_tables_dir(cls, directory: str | Path, extra: Mapping[str, TableBinding] | None = None):
        """Bind `DIR/<name>.parquet` (a file or a folder) to table `<name>`."""
        root = Path(directory)
        if not root.is_dir():
            raise ResolutionError(f"tables directory not found: {root}")
        source = f"tables directory {root}"
        tables = {
            p.name[: -len(".parquet")]: TableBinding(str(p.resolve()), "parquet", source)
            for p in root.glob("*.parquet")
        }
        tables.update(extra or {})
        return cls(tables)

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, str | Mapping[str, str]], source: str = "table map"):
        """`{name: "URI[:FORMAT]"}` or `{name: {"uri": ..., "format": ...}}` (connection extras, table-map files)."""
        tables = {}
        for name, spec in mapping.items():
            if isinstance(spec, str):
                tables[name] = TableBinding.parse(spec, source)
            elif isinstance(spec, Mapping) and isinstance(spec.get("uri"), str):
                fmt = str(spec.get("format") or _guess_format(spec["uri"])).lower()
                if fmt not in FORMATS:
                    raise ResolutionError(f"{source}: table {name!r} has format {fmt!r} (one of {', '.join(FORMATS)})")
                tables[name] = TableBinding(spec["uri"], fmt, source)
            else:
                raise ResolutionError(f"{source}: table {name!r} needs a URI string or {{'uri': ..., 'format': ...}}")
        return cls(tables)

    @classmethod
    def from_file(cls, path: str | Path):
        """A JSON or YAML file holding a table map (see `from_mapping`)."""
        return cls.from_mapping(read_mapping_file(path, "table map"), f"table map {path}")

    def add(self, name: str, binding: TableBinding) -> None:
        self.tables[name.lower()] = binding

    def binding(self, names: Sequence[str]) -> TableBinding | None:
        """What `names` is bound to: all its parts, else its last one (case-insensitively); None when unbound."""
        return self.tables.get(".".join(names).lower()) or (self.tables.get(names[-1].lower()) if names else None)

    def bound(self, names: Sequence[str]) -> TableBinding:
        """The binding of the plan's table name, else a resolution error naming the tables that are bound."""
        binding = self.binding(names)
        if binding is None:
            known = ", ".join(sorted(self.tables)) or "none"
            raise ResolutionError(f"table {'.'.join(names)!r} not found (known tables: {known})")
        return binding

    def schema(self, names: Sequence[str]) -> Lookup:
        """The bound table's schema without Spark (`table_schemas.file_schema`)."""
        try:
            binding = self.bound(names)
        except ResolutionError as exc:
            return Missing(exc.message)
        return file_schema(".".join(names), binding.uri, binding.format)

    def resolve(self, spark: SparkSession, names: Sequence[str]) -> ResolvedTable:
        binding = self.bound(names)
        key = (id(spark), binding)
        if key not in self._opened:
            df = _open(spark, binding)
            # Files read again with the schema the first read found: no inference, the same data.
            reopen = None if binding.format in ("table", "csv") else _reopener(spark, binding, df)
            self._opened[key] = ResolvedTable(df, binding.uri, binding.format, reopen=reopen)
        return self._opened[key]


def _open(spark: SparkSession, binding: TableBinding) -> DataFrame:
    if binding.format == "table":
        return spark.table(binding.uri)
    if binding.format == "csv":  # typed by inference here; a read parses it as the plan declares (relations/read)
        return spark.read.options(**CSV_OPTIONS, inferSchema="true").csv(binding.uri)
    schema = footer_schema(binding.uri) if binding.format == "parquet" and not is_connect(spark) else None
    # With the footer's schema, as Spark would infer it, without the job inference runs.
    return _load(spark, binding, schema)


def _reopener(spark: SparkSession, binding: TableBinding, first: DataFrame) -> Callable[[], DataFrame]:
    """The table read again with the schema its first read found, read from Spark once (a pyspark 3.5 Connect
    client asks the server for a DataFrame's schema each time)."""
    schema: list[T.StructType] = []

    def reopen() -> DataFrame:
        if not schema:
            schema.append(first.schema)
        return _load(spark, binding, schema[0])

    return reopen


def _load(spark: SparkSession, binding: TableBinding, schema: T.StructType | None) -> DataFrame:
    reader = spark.read.format(binding.format)
    if schema is not None:
        reader = reader.schema(schema)
    try:
        return reader.load(binding.uri)
    except Exception as exc:  # Spark's AnalysisException: path missing, unreadable format
        raise ResolutionError(f"cannot read {binding.uri} as {binding.format}: {first_line(exc)}") from exc


@dataclass
class SessionCatalogResolver:
    """Tables from Spark's own catalog (`spark.table`), e.g. temp views or Hive tables. `known_empty`: the
    session the run gets starts with an empty catalog (the CLI's own local one), so a table found nowhere
    before it is missing, which the check before Spark can say."""

    known_empty: bool = False

    def schema(self, names: Sequence[str]) -> Lookup:
        table = ".".join(names)
        if self.known_empty:
            return Missing(f"table {table!r} not found in the Spark catalog")
        return NotChecked(f"table {table!r} is in no table map or catalog: Spark's session catalog may hold it")

    def resolve(self, spark: SparkSession, names: Sequence[str]) -> ResolvedTable:
        ident = ".".join(f"`{n.replace('`', '``')}`" for n in names)
        try:
            return ResolvedTable(spark.table(ident), ".".join(names), "table")
        except Exception as exc:  # AnalysisException: pyspark's class differs between classic and Connect
            raise ResolutionError(f"table {'.'.join(names)!r} not found in the Spark catalog") from exc


@dataclass
class ChainResolver:
    """Try resolvers in order; the first that finds the table wins."""

    resolvers: list[TableResolver]

    def resolve(self, spark: SparkSession, names: Sequence[str]) -> ResolvedTable | ResolvedView:
        errors = []
        for r in self.resolvers:
            try:
                return r.resolve(spark, names)
            except ResolutionError as exc:
                errors.append(exc.message)
        raise ResolutionError("; ".join(errors) or f"table {'.'.join(names)!r} not found")

    def schema(self, names: Sequence[str]) -> Lookup:
        """As `resolve`, without Spark: the first source that has the table answers; a resolver that cannot
        look without Spark leaves the table to the run."""
        errors = []
        for r in self.resolvers:
            if not isinstance(r, SchemaSource):
                return NotChecked(f"table {'.'.join(names)!r}: {type(r).__name__} resolves it when the plan runs")
            found = r.schema(names)
            if not isinstance(found, Missing):
                return found
            errors.append(found.message)
        return Missing("; ".join(errors) or f"table {'.'.join(names)!r} not found")
