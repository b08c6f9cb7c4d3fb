"""Asset checks from a plan, run without Spark: for each table the plan reads, its base schema (the columns and types
the plan declares for it) against the table's own — the Iceberg catalog's schema (pyiceberg) or the parquet
files' (a table map's binding), compared by the engine's own rules (`consumer/translation/relations/read.py`): a
catalog table must match exactly (names, types, required columns), files may differ by a cast that loses nothing
(or any cast with `cast_to_plan_types`). A failing check says what a run would refuse, before it runs. (Plan
validation is the other check: `plan_valid`, run by the asset itself and blocking its materialization, `assets.py`.)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from dagster import AssetCheckResult, AssetChecksDefinition, AssetCheckSeverity, AssetCheckSpec, multi_asset_check
from substrait import algebra_pb2 as alg
from substrait_spark.dagster.resources import SubstraitSparkResource
from substrait_spark.materializations import table_map

SCHEMA_CHECK = "schema_matches"  # the check name's suffix: `<plan>_schema_matches` (`schema_check_name`)


def schema_check_name(plan_name: str) -> str:
    """The schema check's name for the plan named `plan_name` (its op name): several plans may read one table, and
    Dagster keys a check by its asset and its name, so the name says whose base schema it compares."""
    return f"{plan_name}_{SCHEMA_CHECK}"


@dataclass(frozen=True)
class TableSchema:
    """A table's columns as Spark sees them (None: a type with no Spark counterpart here, compared by name only)."""

    where: str
    fields: list[Any]  # pyspark StructField | None, in table order
    names: list[str]
    strict: bool  # a catalog table (exact match) rather than files (lossless casts allowed)


def _spark_fields(arrow_schema: Any) -> list[Any]:
    import pyarrow as pa
    from pyspark.sql import types as T
    from pyspark.sql.pandas.types import from_arrow_type

    views = {pa.string_view(): pa.string(), pa.binary_view(): pa.binary()}
    fields = []
    for f in arrow_schema:
        try:
            fields.append(T.StructField(f.name, from_arrow_type(views.get(f.type, f.type)), f.nullable))
        except Exception:  # no Spark counterpart known here: compared by name only
            fields.append(None)
    return fields


def table_schema(names: Sequence[str], resource: SubstraitSparkResource) -> TableSchema:
    """The schema of the plan table `names`: a table map's files, else the catalogs' table."""
    bindings = table_map(resource.settings())
    found = bindings.get(".".join(names).lower()) or bindings.get(names[-1].lower())
    if found is not None:
        import pyarrow.dataset as ds

        schema = ds.dataset(found.uri, format=found.format).schema
        return TableSchema(found.uri, _spark_fields(schema), schema.names, strict=False)
    catalogs = resource.catalogs.catalogs()
    if catalogs is None:
        raise LookupError(f"table {'.'.join(names)!r} is in no table map and no catalog is configured")
    from substrait_spark.hooks.iceberg import find_table

    catalog_name, inner = catalogs.split(names)
    catalog = catalogs.load(catalog_name)
    ident = find_table(catalog, catalog_name, inner)
    schema = catalog.load_table(ident).schema().as_arrow()
    return TableSchema(".".join((catalog_name, *ident)), _spark_fields(schema), schema.names, strict=True)


def declared(read: alg.ReadRel) -> tuple[list[str], list[Any], list[bool]]:
    """The plan's base schema of a read: top-level names, Spark types, which columns it calls required."""
    from substrait_spark.consumer.types import nullable, schema_of

    names, types = schema_of(read.base_schema)
    return names, types, [not nullable(t) for t in read.base_schema.struct.types]


def schema_problems(read: alg.ReadRel, table: TableSchema, lossy_ok: bool) -> list[str]:
    """How the table differs from the plan's base schema, by the engine's rules."""
    from substrait_spark.consumer.translation.relations import read as engine

    names, types, required = declared(read)
    fields = engine.fields_by_lower([f for f in table.fields if f is not None])
    for name, f, t in zip(table.names, table.fields, types, strict=False):
        if f is None:  # a type not comparable here: as the plan declares it
            from pyspark.sql import types as T

            fields.setdefault(name.lower(), T.StructField(name, t, True))
    return engine.schema_problems(names, types, fields, required=required if table.strict else None, lossy_ok=lossy_ok)


def named_reads(loaded: Any) -> list[alg.ReadRel]:
    """Every NamedTable read of the plan, with its base schema."""
    from substrait_spark.consumer.walk import nodes

    return [
        m for m, _ in nodes(loaded.plan) if isinstance(m, alg.ReadRel) and m.WhichOneof("read_type") == "named_table"
    ]


def substrait_asset_checks(
    plan_uri: str,
    *,
    resource: SubstraitSparkResource | None = None,
    expected_sha256: str | None = None,
    name: str | None = None,
) -> list[AssetChecksDefinition]:
    """One check per table the plan reads (on that table's asset key, `keys.py`): its schema is the plan's. The
    check is named `<name>_schema_matches` (`name`: the plan's op name, by default its file name's stem), so the
    checks of two plans reading one table are two checks on it."""
    from substrait_spark.dagster.assets import PlanAssets, op_name_of

    resource = resource or SubstraitSparkResource()
    plan_name = name or op_name_of(plan_uri)
    check_name = schema_check_name(plan_name)
    plan = PlanAssets.of(plan_uri, resource, expected_sha256)
    reads: dict[Any, alg.ReadRel] = {}
    for read in named_reads(plan.planned.loaded):
        key = plan.keys.key(list(read.named_table.names))
        if key not in plan.written:  # a table the plan writes first is checked by the write
            reads.setdefault(key, read)
    if not reads:
        return []
    specs = [
        AssetCheckSpec(check_name, asset=k, description=f"the table has the base schema {plan_uri} declares for it")
        for k in reads
    ]

    @multi_asset_check(specs=specs, name=f"{plan_name}_schema_checks")
    def _schema_checks() -> Iterator[AssetCheckResult]:
        for key, read in reads.items():
            try:
                table = table_schema(list(read.named_table.names), resource)
            except Exception as exc:  # not found, not readable: the check fails and says why
                yield AssetCheckResult(
                    check_name=check_name,
                    asset_key=key,
                    passed=False,
                    severity=AssetCheckSeverity.ERROR,
                    metadata={"error": f"{type(exc).__name__}: {exc}"},
                )
                continue
            problems = schema_problems(read, table, lossy_ok=resource.cast_to_plan_types)
            yield AssetCheckResult(
                check_name=check_name,
                asset_key=key,
                passed=not problems,
                severity=AssetCheckSeverity.ERROR,
                metadata={"table": table.where, "plan_columns": declared(read)[0], "problems": problems},
            )

    return [_schema_checks]
