"""ReadRel: named tables (through the resolver), virtual tables, local files; the read's filter and projection."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from substrait import algebra_pb2 as alg

from ...errors import PlanInvalidError, ResolutionError, SchemaMismatchError, UnsupportedFeatureError, first_line
from ...plan_visitor import KindTable, register
from ...records import TableRead
from ...tables import CSV_OPTIONS
from ...types import cast, compatible, nullable, schema_of
from ..conversions import Conversion, conversion
from ..relation import Projection, Relation, column, quote, union_all
from ..scope import Scope, Typed

if TYPE_CHECKING:
    from ..consumer import SubstraitConsumer

ReadRel = alg.ReadRel


BYTE_RANGES = "byte-range slices of files (start/length): Spark splits files itself and reads them whole"
# Read source kind -> the consumer's method for it (overridable, like the relation kinds').
READ_METHODS = {
    "named_table": "read_named_table",
    "virtual_table": "read_virtual_table",
    "local_files": "read_local_files",
    "extension_table": "read_extension_table",
    "iceberg_table": "read_iceberg_table",
}
register(KindTable.of("translator", "read_type", READ_METHODS))


def translate_read(cx: SubstraitConsumer, rel: ReadRel, path: str, outer: Scope | None) -> Relation:
    kind = rel.WhichOneof("read_type")
    schema = rel.base_schema
    if cx.quirks.untyped_base_schema and kind == "named_table" and schema.names and not schema.struct.types:
        names, types = list(schema.names), None  # typed by the table the name resolves to
    else:
        names, types = schema_of(schema, f"{path}.base_schema")
    method = READ_METHODS.get(kind or "")
    if kind is None or method is None:
        raise PlanInvalidError("read with no source set", path)
    source = getattr(cx, method)
    if kind == "named_table" and types is not None:
        _check_catalog_schema(cx, rel, names, types, f"{path}.{kind}")
    out = source(getattr(rel, kind), names, types, f"{path}.{kind}", outer)
    return _filter_and_project(cx, rel, out, path, outer)


def _check_catalog_schema(cx: SubstraitConsumer, rel: ReadRel, names: list[str], types: list[T.DataType], path: str):
    """A catalog table (Iceberg) has a declared schema: the plan's base schema must match it exactly — names,
    types and nullability (a column the plan calls required must be required in the table). Lists every
    difference."""
    resolved = cx.resolve_table(list(rel.named_table.names), path)
    if not resolved.strict_schema:
        return
    required = [not nullable(t) for t in rel.base_schema.struct.types]
    table = ".".join(rel.named_table.names)
    error = catalog_schema_error(table, resolved.identity, names, types, required, resolved.fields, path)
    if error is not None:
        raise error


def catalog_schema_error(
    table: str,
    identity: str,
    names: list[str],
    types: list[T.DataType],
    required: list[bool],
    fields: list[T.StructField],
    path: str,
) -> SchemaMismatchError | None:
    """The error a read of catalog table `table` fails with, if its columns differ from the plan's base schema.
    Public: the table check before Spark (`running/table_check.py`) refuses by it too."""
    problems = schema_problems(names, types, fields_by_lower(fields), required=required)
    if not problems:
        return None
    return SchemaMismatchError(
        f"table {table!r} ({identity}) does not match the plan's schema: " + "; ".join(problems), path
    )


def file_schema_error(
    what: str, names: list[str], types: list[T.DataType], fields: list[T.StructField], lossy_ok: bool, path: str
) -> SchemaMismatchError | None:
    """The error `conform` fails a read with, if the columns do not convert to the plan's types (lossy casts only
    when `lossy_ok`). Public: the table check before Spark (`running/table_check.py`) refuses by it too."""
    problems = schema_problems(names, types, fields_by_lower(fields), lossy_ok=lossy_ok)
    return _mismatch(what, problems, path) if problems else None


def fields_by_lower(fields: list[T.StructField]) -> dict[str, T.StructField]:
    """Columns by lower-case name; the first of equal names wins. Public: the Dagster schema check
    (plugin/dagster/checks.py) builds the table side of `schema_problems` with it."""
    by_lower: dict[str, T.StructField] = {}
    for f in fields:
        by_lower.setdefault(f.name.lower(), f)
    return by_lower


LOSSY = "(a cast would lose information)"
LOSSY_HINT = "cast_to_plan_types (CLI: --cast-to-plan-types) casts anyway"


def schema_problems(
    names: list[str],
    types: list[T.DataType],
    by_lower: dict[str, T.StructField],
    required: list[bool] | None = None,
    lossy_ok: bool = False,
) -> list[str]:
    """Each way the table's columns differ from the plan's base schema. Without `required` (files, Spark's
    catalog) a type that converts without loss is accepted, a lossy one only when `lossy_ok`
    (`conversions.conversion`); with it (catalog tables), types must match and required columns be required.
    Public: the Dagster schema check (plugin/dagster/checks.py) applies the engine's rules through it."""
    problems = []
    for i, (name, declared) in enumerate(zip(names, types, strict=True)):
        f = by_lower.get(name.lower())
        if f is None:
            problems.append(f"column {name!r} missing")
            continue
        difference = f"column {name!r} is {f.dataType.simpleString()}, plan says {declared.simpleString()}"
        if required is not None:
            if not compatible(f.dataType, declared):
                problems.append(difference)
            elif required[i] and f.nullable:
                problems.append(f"column {name!r} is optional (nullable) in the table, plan says required")
            continue
        kind = conversion(f.dataType, declared)
        if kind is Conversion.NONE:
            problems.append(difference)
        elif kind is Conversion.LOSSY and not lossy_ok:
            problems.append(f"{difference} {LOSSY}")
    return problems


def _mismatch(what: str, problems: list[str], path: str) -> SchemaMismatchError:
    hint = f" — {LOSSY_HINT}" if any(p.endswith(LOSSY) for p in problems) else ""
    return SchemaMismatchError(f"{what} does not match the plan's schema: " + "; ".join(problems) + hint, path)


def _filter_and_project(cx: SubstraitConsumer, rel: ReadRel, out: Relation, path: str, outer: Scope | None) -> Relation:
    # Both filters are exact predicates over the base schema; applying best_effort_filter is always correct
    # and lets Spark push it into the scan.
    for field in ("filter", "best_effort_filter"):
        if rel.HasField(field):
            cond = cx.expression(getattr(rel, field), Scope(out, outer), f"{path}.{field}")
            out = out.over(out.frame.filter(cond.col))
    if rel.HasField("projection"):
        mask = rel.projection
        # maintain_singular_struct only matters when a mask picks one field out of a nested struct; masks
        # over the record's top-level columns (all we accept) mean the same with or without it.
        positions = []
        for i, item in enumerate(mask.select.struct_items):
            if item.HasField("child"):
                raise UnsupportedFeatureError(NESTED_MASKS, f"{path}.projection.select.struct_items[{i}]")
            if not 0 <= item.field < len(out.names):
                raise PlanInvalidError(f"projection field {item.field} out of range", f"{path}.projection")
            positions.append(item.field)
        out = out.select_positions(positions, cx.names)
    return out


def conform(
    cx: SubstraitConsumer,
    df: DataFrame,
    names: list[str],
    types: list[T.DataType],
    path: str,
    what: str,
    fields: list[T.StructField] | None = None,
    reopen: Callable[[], DataFrame] | None = None,
) -> Relation:
    """Bind the plan's base-schema columns to the DataFrame's columns (case-insensitively), fresh names each,
    cast to the declared types where they differ (lossy casts only with `cx.cast_to_plan_types`, each recorded).
    A table read again (its own names taken) is read through `reopen` when given: a new relation whose columns
    the fresh names refer to by attribute (`Projection.bound`), so no renaming Project is needed to join it with
    the first read — the plan Spark SQL makes for a self-join."""
    fields = fields if fields is not None else df.schema.fields
    error = file_schema_error(what, names, types, fields, cx.cast_to_plan_types, path)
    if error is not None:
        raise error
    by_lower = fields_by_lower(fields)
    found = [by_lower[name.lower()] for name in names]
    kinds = [conversion(f.dataType, t) for f, t in zip(found, types, strict=True)]
    own = [f.name for f in found]
    if all(k is Conversion.SAME for k in kinds) and [f.name for f in fields] == own and cx.names.claim(own):
        # The table's own names are still unique in this translation: no rename.
        return Relation(df, own, list(types))
    # Fresh names (and casts to the declared types), pending until an operation needs them (see Relation).
    fresh = [cx.names.fresh() for _ in names]
    bound: frozenset[str] = frozenset()
    ref = column
    if reopen is not None:
        df = again = reopen()
        bound = frozenset(f.name.lower() for f in fields)

        def ref(name: str) -> Column:
            return again[quote(name)]

    exprs, renames = {}, {}
    for name, f, declared, new, kind in zip(names, found, types, fresh, kinds, strict=True):
        exprs[new] = ref(f.name) if kind is Conversion.SAME else cast(ref(f.name), declared)
        if kind is Conversion.SAME:
            renames[new] = f.name
        if kind is Conversion.LOSSY:
            cx.record_lossy_cast(what, name, f.dataType, declared, path)
    projection = Projection(exprs, tuple(f.name for f in fields), bound, renames)
    return Relation(df, fresh, list(types), projection=projection)


def table_label(parts: list[str]) -> str:
    """How a read's errors name a NamedTable."""
    return f"table {'.'.join(parts)!r}"


def read_named_table(
    cx: SubstraitConsumer, table: ReadRel.NamedTable, names: list[str], types: list[T.DataType] | None, path: str
) -> Relation:
    parts = list(table.names)
    if not parts:
        raise PlanInvalidError("named table with no name", path)
    resolved = cx.resolve_table(parts, path)
    if types is None:  # a producer that names the columns without typing them (see producers.Quirks)
        by_lower = {f.name.lower(): f.dataType for f in reversed(resolved.fields)}
        types = [by_lower.get(n.lower(), T.NullType()) for n in names]
    what = table_label(parts)
    if resolved.format == "csv":  # text: parsed as the plan declares each column, not as Spark guessed
        declared = {n.lower(): t for n, t in zip(names, types, strict=True)}
        fields = [T.StructField(f.name, declared.get(f.name.lower(), T.StringType())) for f in resolved.fields]
        options = {**CSV_OPTIONS, "mode": _text_mode(cx, what, names, types, path)}
        df = cx.spark.read.options(**options).schema(T.StructType(fields)).csv(resolved.identity)
        return conform(cx, df, names, types, path, what, fields)
    return conform(cx, resolved.df, names, types, path, what, resolved.fields, resolved.reopen)


def _text_mode(cx: SubstraitConsumer, what: str, names: list[str], types: list[T.DataType], path: str) -> str:
    """How Spark parses delimited text as the declared types. Its default turns a value that does not fit (1234.56
    for a decimal(5,2), 'abc' for a number) into NULL silently: here the run fails (exit 1) instead, unless the
    caller opted in to lossy casts — then every non-string column parsed from text is noted as one."""
    if not cx.cast_to_plan_types:
        return "FAILFAST"
    for name, t in zip(names, types, strict=True):
        if not isinstance(t, T.StringType):
            cx.record_lossy_cast(what, name, T.StringType(), t, path)
    return "PERMISSIVE"


def read_virtual_table(
    cx: SubstraitConsumer, table: ReadRel.VirtualTable, names: list[str], types: list[T.DataType], path: str
) -> Relation:
    """VALUES rows as one-row selects, unioned (constants fold; no data leaves the driver)."""
    rows: list[tuple[list[Typed], str]] = []
    if len(table.expressions):
        no_input = Scope(Relation(cx.spark.range(1).select(), [], []))
        for r, rec in enumerate(table.expressions):
            p = f"{path}.expressions[{r}]"
            rows.append(([cx.expression(f, no_input, f"{p}.fields[{i}]") for i, f in enumerate(rec.fields)], p))
    if not types and rows:
        # No base schema (DuckDB 1.1 writes VALUES this way): the first row's literals give the types.
        types = [f.type for f in rows[0][0]]
    fresh = [cx.names.fresh() for _ in types]
    if not rows:
        schema = T.StructType([T.StructField(n, t) for n, t in zip(fresh, types, strict=True)])
        return Relation(cx.spark.createDataFrame([], schema), fresh, list(types))
    structs = []
    for fields, p in rows:
        if len(fields) != len(types):
            raise PlanInvalidError(f"row of {len(fields)} values for {len(types)} columns", p)
        structs.append(F.struct(*[cast(f.col, t).alias(n) for f, t, n in zip(fields, types, fresh, strict=True)]))
    if not fresh:  # rows without columns: one empty row each
        df = functools.reduce(union_all, [cx.spark.range(1).select() for _ in structs])
        return Relation(df, [], [])
    # One generator over an array of row structs: a single DataFrame operation however many rows.
    df = cx.spark.range(1).select(F.inline(F.array(*structs)))
    return Relation(df, fresh, list(types))


# Local file formats -> the Spark reader that reads them (None: none does).
SPARK_FORMATS = {"parquet": "parquet", "orc": "orc", "dwrf": None, "arrow": None, "text": "csv", "extension": None}
NESTED_MASKS = "nested projection masks"


def refusals(rel: ReadRel, path: str) -> Iterator[tuple[str, str]]:
    """What the read translator refuses from the plan alone, as (feature, path) (`analyze` reads it too); the
    local files a consumer class reads itself are `local_files_refusals`."""
    if rel.HasField("projection"):
        for i, item in enumerate(rel.projection.select.struct_items):
            if item.HasField("child"):
                yield NESTED_MASKS, f"{path}.projection.select.struct_items[{i}]"


def local_files_refusals(files: ReadRel.LocalFiles, path: str) -> Iterator[tuple[str, str]]:
    """What `read_local_files` refuses: formats Spark cannot read, a mix of formats, byte ranges, more than one
    header line."""
    formats: set[str] = set()
    for i, item in enumerate(files.items):
        p = f"{path}.items[{i}]"
        kind = item.WhichOneof("file_format")
        spark_fmt = SPARK_FORMATS.get(kind or "")
        if spark_fmt is None:
            yield f"local files in {kind or 'unspecified'} format", p
        else:  # only readable formats count towards a mix
            if formats and spark_fmt not in formats:
                yield "local files of mixed formats in one read", p
            formats.add(spark_fmt)
        if item.start or item.length:
            yield BYTE_RANGES, p
        if kind == "text" and item.text.header_lines_to_skip > 1:
            yield f"skipping {item.text.header_lines_to_skip} header lines (Spark skips at most one)", p


def read_local_files(
    cx: SubstraitConsumer, files: ReadRel.LocalFiles, names: list[str], types: list[T.DataType], path: str
) -> Relation:
    if not files.items:
        raise PlanInvalidError("local files read with no items", path)
    for feature, at in local_files_refusals(files, path):
        raise UnsupportedFeatureError(feature, at)
    fmt: str | None = None
    options: dict[str, str] = {}
    uris: list[str] = []
    for i, item in enumerate(files.items):
        p = f"{path}.items[{i}]"
        kind = item.WhichOneof("file_format")
        fmt = SPARK_FORMATS[kind or ""]  # (readable, one format: `local_files_refusals`)
        uri = getattr(item, item.WhichOneof("path_type") or "uri_file", "")
        if not uri:
            raise PlanInvalidError("local file item with no path", p)
        uris.append(uri)
        if kind == "text":
            options.update(_text_options(item.text, p))
    assert fmt is not None, "set by the first item"
    more = f" (and {len(uris) - 1} more)" if len(uris) > 1 else ""
    what = f"local files {uris[0]!r}{more}"
    if fmt == "csv":  # text, parsed as the declared types
        options["mode"] = _text_mode(cx, what, names, types, path)
        schema = T.StructType([T.StructField(n, t) for n, t in zip(names, types, strict=True)])
        return conform(
            cx, cx.spark.read.format(fmt).options(**options).schema(schema).load(uris), names, types, path, what
        )
    return conform(cx, cx.spark.read.format(fmt).options(**options).load(uris), names, types, path, what)


def _text_options(text: ReadRel.LocalFiles.FileOrFiles.DelimiterSeparatedTextReadOptions, path: str) -> dict:
    opts = {
        "sep": text.field_delimiter or ",",
        "header": "true" if text.header_lines_to_skip == 1 else "false",
        "quote": text.quote or "\u0000",
        "escape": text.escape or "\\",
    }
    if text.HasField("value_treated_as_null"):
        opts["nullValue"] = text.value_treated_as_null
    if text.max_line_size:
        opts["maxCharsPerColumn"] = str(text.max_line_size)
    return opts


def read_iceberg_table(
    cx: SubstraitConsumer, table: ReadRel.IcebergTable, names: list[str], types: list[T.DataType], path: str
) -> Relation:
    """An Iceberg table by its metadata file, no catalog: `snapshot_id` or `snapshot_timestamp` (milliseconds
    since the epoch, Iceberg's `as-of-timestamp`) travel in time; neither reads the metadata's current snapshot."""
    if table.WhichOneof("table_type") != "direct":
        raise PlanInvalidError("Iceberg table read with no metadata file", path)
    d = table.direct
    if not d.metadata_uri:
        raise PlanInvalidError("Iceberg table read without metadata_uri", f"{path}.direct")
    reader = cx.spark.read.format("iceberg")
    version = d.WhichOneof("snapshot")
    if version == "snapshot_timestamp":
        reader = reader.option("as-of-timestamp", str(d.snapshot_timestamp))
    elif version == "snapshot_id":
        if not d.snapshot_id.lstrip("-").isdigit():
            raise PlanInvalidError(f"Iceberg snapshot id {d.snapshot_id!r} is not a number", f"{path}.direct")
        reader = reader.option("snapshot-id", d.snapshot_id)
    try:
        df = reader.load(d.metadata_uri)
        fields = list(df.schema.fields)
    except Exception as exc:  # Spark's errors: missing file, unknown snapshot, no Iceberg runtime
        raise ResolutionError(f"cannot read Iceberg table {d.metadata_uri}: {first_line(exc)}", path) from exc
    cx.tables_read.append(
        TableRead(
            d.metadata_uri,
            d.metadata_uri,
            "iceberg",
            int(d.snapshot_id) if version == "snapshot_id" else None,
            as_of_timestamp_ms=d.snapshot_timestamp if version == "snapshot_timestamp" else None,
            metadata_location=d.metadata_uri,
        )
    )
    return conform(cx, df, names, types, path, f"Iceberg table {d.metadata_uri!r}", fields)
