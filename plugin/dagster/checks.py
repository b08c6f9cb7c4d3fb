"""Asset checks from a plan, run without Spark: for each table the plan reads, its base schema (the columns the plan
declares for it) against the table's own — the Iceberg catalog's schema (pyiceberg) or the parquet files' (a table
map's binding). Names are compared case-insensitively, as the engine resolves them; a column the plan declares
that the table lacks fails the check before a run would. (Plan validation is the other check: `plan_valid`, run
by the asset itself and blocking its materialization, `assets.py`.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dagster import AssetCheckResult, AssetChecksDefinition, AssetCheckSeverity, AssetCheckSpec, multi_asset_check
from substrait_spark.dagster.resources import SubstraitSparkResource
from substrait_spark.materializations import table_map

SCHEMA_CHECK = "plan_schema_matches"


def table_columns(names: list[str], resource: SubstraitSparkResource) -> tuple[str, list[str]]:
    """(where the schema came from, its column names) for the plan table `names`."""
    binding = table_map(resource.settings())
    dotted = ".".join(names).lower()
    found = binding.get(dotted) or binding.get(names[-1].lower())
    if found is not None:
        import pyarrow.dataset as ds

        return found.uri, list(ds.dataset(found.uri, format=found.format).schema.names)
    catalogs = resource.catalogs.catalogs()
    if catalogs is None:
        raise LookupError(f"table {'.'.join(names)!r} is in no table map and no catalog is configured")
    from substrait_spark.hooks.iceberg import _find_table

    catalog_name, inner = catalogs.split(names)
    catalog = catalogs.load(catalog_name)
    ident = _find_table(catalog, catalog_name, inner)
    return ".".join((catalog_name, *ident)), [f.name for f in catalog.load_table(ident).schema().fields]


def substrait_asset_checks(
    plan_uri: str,
    *,
    resource: SubstraitSparkResource | None = None,
    expected_sha256: str | None = None,
    name: str | None = None,
) -> list[AssetChecksDefinition]:
    """One check per table the plan reads (on that table's asset key, `keys.py`): the plan's columns exist there."""
    from substrait_spark.dagster.assets import PlanAssets, _op_name

    resource = resource or SubstraitSparkResource()
    plan = PlanAssets.of(plan_uri, resource, expected_sha256)
    reads: dict[Any, Any] = {}
    for i in plan.lineage.inputs:
        if i.kind == "named_table":
            key = plan.keys.key(i.dataset.name.split("."))
            if key not in plan.written:
                reads.setdefault(key, i)
    if not reads:
        return []
    specs = [AssetCheckSpec(SCHEMA_CHECK, asset=k, description=f"{plan_uri}'s base schema") for k in reads]

    @multi_asset_check(specs=specs, name=f"{name or _op_name(plan_uri)}_schema_checks")
    def _schema_checks() -> Iterator[AssetCheckResult]:
        for key, read in reads.items():
            try:
                where, columns = table_columns(read.dataset.name.split("."), resource)
            except Exception as exc:  # not found, not readable: the check fails and says why
                yield AssetCheckResult(
                    check_name=SCHEMA_CHECK,
                    asset_key=key,
                    passed=False,
                    severity=AssetCheckSeverity.ERROR,
                    metadata={"error": f"{type(exc).__name__}: {exc}"},
                )
                continue
            have = {c.lower() for c in columns}
            missing = [c for c in read.fields if c.lower() not in have]
            yield AssetCheckResult(
                check_name=SCHEMA_CHECK,
                asset_key=key,
                passed=not missing,
                severity=AssetCheckSeverity.ERROR,
                metadata={"table": where, "plan_columns": read.fields, "missing": missing},
            )

    return [_schema_checks]
