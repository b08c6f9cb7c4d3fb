"""Asset checks from a plan, run without Spark: for each table the plan reads, its base schema (the columns and types
the plan declares for it) against the table's own, found where the run would find it — the resolver chain's
lookup without Spark (`consumer/running/table_schemas.py`: a table map's parquet footers, the Iceberg catalog's
schema) — and compared as the check before a run compares them (`consumer/running/table_check.compared`) by the
engine's rules (`consumer/translation/relations/read.schema_problems`): a catalog table must match exactly (names,
types, required columns), files may differ by a cast that loses nothing (or any cast with `cast_to_plan_types`).
A failing check says what a run would refuse, before it runs; a table only Spark can see (another format, a
remote path, Spark's session catalog) fails with a warning saying so. (Plan validation is the other check:
`plan_valid`, run by the asset itself and blocking its materialization, `assets.py`.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dagster import (
    AssetCheckResult,
    AssetChecksDefinition,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetKey,
    multi_asset_check,
)
from substrait import algebra_pb2 as alg
from substrait_spark.dagster.plan_assets import PlanAssets
from substrait_spark.dagster.resources import SubstraitSparkResource
from substrait_spark.dagster.translator import SubstraitTranslator

SCHEMA_CHECK = "schema_matches"  # the check name's suffix: `<plan>_schema_matches` (`schema_check_name`)


def schema_check_name(plan_name: str) -> str:
    """The schema check's name for the plan named `plan_name` (its op name): several plans may read one table, and
    Dagster keys a check by its asset and its name, so the name says whose base schema it compares."""
    return f"{plan_name}_{SCHEMA_CHECK}"


def named_reads(loaded: Any) -> list[alg.ReadRel]:
    """Every NamedTable read of the plan, with its base schema."""
    from substrait_spark.consumer.walk import nodes

    return [
        m for m, _ in nodes(loaded.plan) if isinstance(m, alg.ReadRel) and m.WhichOneof("read_type") == "named_table"
    ]


def schema_result(
    read: alg.ReadRel, resource: SubstraitSparkResource, resolver: Any, check_name: str, key: AssetKey
) -> AssetCheckResult:
    """The check of one table read: looked up where the run would find it, compared as the run would compare."""
    from substrait_spark.consumer.running.table_check import compared
    from substrait_spark.consumer.running.table_schemas import Missing, NotChecked, SchemaSource
    from substrait_spark.consumer.translation.relations.read import fields_by_lower, schema_problems

    names = list(read.named_table.names)
    lossy_ok = resource.cast_to_plan_types

    def failed(severity: AssetCheckSeverity, **meta: Any) -> AssetCheckResult:
        return AssetCheckResult(check_name=check_name, asset_key=key, passed=False, severity=severity, metadata=meta)

    if not isinstance(resolver, SchemaSource):
        return failed(
            AssetCheckSeverity.WARN, not_checked=f"{type(resolver).__name__} resolves tables when a plan runs"
        )
    try:
        lookup = resolver.schema(names)
    except Exception as exc:  # not readable: the check fails and says why
        return failed(AssetCheckSeverity.ERROR, error=f"{type(exc).__name__}: {exc}")
    if isinstance(lookup, Missing):
        return failed(AssetCheckSeverity.ERROR, error=lookup.message)
    if isinstance(lookup, NotChecked):
        return failed(AssetCheckSeverity.WARN, not_checked=lookup.reason)
    found = compared(read, names, lookup, lossy_ok)
    if found is None:
        return failed(AssetCheckSeverity.ERROR, error="the plan declares a type Spark cannot hold (see validate)")
    required = found.required if lookup.strict else None
    problems = schema_problems(
        found.names, found.types, fields_by_lower(found.fields), required=required, lossy_ok=lossy_ok
    )
    return AssetCheckResult(
        check_name=check_name,
        asset_key=key,
        passed=not problems,
        severity=AssetCheckSeverity.ERROR,
        metadata={"table": lookup.identity, "plan_columns": found.names, "problems": problems},
    )


def substrait_asset_checks(
    plan: str | PlanAssets,
    *,
    resource: SubstraitSparkResource | None = None,
    expected_sha256: str | None = None,
    name: str | None = None,
    translator: SubstraitTranslator | None = None,
) -> list[AssetChecksDefinition]:
    """One check per table the plan reads (on that table's asset key, the translator's: `translator.py`): its
    schema is the plan's. The check is named `<name>_schema_matches` (`name`: the plan's op name, by default its
    file name's stem), so the checks of two plans reading one table are two checks on it. `plan`: its URI, or the
    `PlanAssets` the assets were built from (no second read)."""
    from substrait_spark.dagster.assets import op_name_of, plan_assets

    resource = resource or SubstraitSparkResource()
    assets = plan_assets(plan, resource, expected_sha256)
    plan_name = name or op_name_of(assets.uri)
    check_name = schema_check_name(plan_name)
    keys = assets.translated(translator)
    reads: dict[AssetKey, alg.ReadRel] = {}
    for read in named_reads(assets.planned.loaded):
        names = list(read.named_table.names)
        if tuple(assets.keys.parts(names)) not in assets.tables:  # a table the plan writes first: the write checks it
            reads.setdefault(keys.key(names), read)
    if not reads:
        return []
    specs = [
        AssetCheckSpec(check_name, asset=k, description=f"the table has the base schema {assets.uri} declares for it")
        for k in reads
    ]

    @multi_asset_check(specs=specs, name=f"{plan_name}_schema_checks")
    def _schema_checks() -> Iterator[AssetCheckResult]:
        resolver = resource.runner().resolver  # the run's chain: table maps, catalogs, Spark's session catalog
        for key, read in reads.items():
            yield schema_result(read, resource, resolver, check_name, key)

    return [_schema_checks]
