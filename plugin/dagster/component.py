"""The `dg` component: Substrait plans as assets from a `defs.yaml`, no Python to write.

    type: substrait_spark.dagster.SubstraitPlansComponent
    attributes:
      catalog_config: lake/catalogs.yaml          # the CLI's --catalog-config file
      tables_dir: ../../.data/tpch/sf0.01         # DIR/<name>.parquet bound to <name>
      spark_master: local[2]
      spark_conf: {spark.sql.shuffle.partitions: "4"}
      plans:
        - uri: plans/big_orders_pipeline.json
        - uri: s3://substrait-plans/tpch/daily_pricing_summary.json
          daily_partitions_start: "1992-01-01"   # the partition key bound to partition_parameter ($0)
          root_asset: [reports, pricing_summary]
          results: {path: "reports/ds={partition_key}", format: parquet}

Relative paths are taken from the folder of the `defs.yaml`. Each plan is read and parsed once
(`PlanAssets.load`) and becomes `substrait_assets(...)` and its schema checks; the resource the plans run with is
bound as `resource_key` (default `substrait`). How the tables look as assets: a subclass's `translator()`
(a `SubstraitTranslator`; default: keys by catalog identifier). Registered for
`dg list components` through the `dagster_dg_cli.registry_modules` entry point (setup.cfg).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
from pydantic import Field
from substrait_spark.dagster.assets import substrait_assets
from substrait_spark.dagster.checks import substrait_asset_checks
from substrait_spark.dagster.plan_assets import PlanAssets
from substrait_spark.dagster.resources import (
    IcebergCatalogsResource,
    PlanStoreResource,
    SparkResource,
    SubstraitSparkResource,
)
from substrait_spark.dagster.translator import SubstraitTranslator
from substrait_spark.hooks.spark import conf_str


class SubstraitPlan(dg.Model):
    """One plan: where it is and how its assets look."""

    uri: str = Field(description="a path (relative to defs.yaml), file:// or s3://bucket/key[?versionId=…]")
    name: str | None = Field(default=None, description="the asset op's name (default: the file's stem)")
    expected_sha256: str | None = Field(default=None, description="refuse the plan unless its bytes hash so")
    parameters: dict[str, Any] = Field(default_factory=dict, description="dynamic parameter values by anchor")
    daily_partitions_start: str | None = Field(default=None, description="daily partitions from this date")
    partition_parameter: int | None = Field(default=None, description="the anchor bound to the partition key")
    results: str | dict[str, Any] | None = Field(default=None, description="where root rows go (Sink)")
    root_asset: list[str] | None = Field(default=None, description="an asset key for the plan's root result")
    group_name: str | None = None


class SubstraitPlansComponent(dg.Component, dg.Resolvable, dg.Model):
    """Substrait plans run on Spark as Dagster assets: one multi-asset per plan, keyed by the tables it writes."""

    plans: list[SubstraitPlan] = Field(description="the plans")
    catalog_config: str | None = Field(default=None, description="the Iceberg catalog configuration file")
    tables_dir: str | None = Field(default=None, description="DIR/<name>.parquet bound to table <name>")
    tables: dict[str, Any] = Field(default_factory=dict, description="table name → URI[:FORMAT]")
    spark_master: str | None = Field(default=None, description="local[*] (default), spark://… or sc://…")
    spark_conf: dict[str, Any] = Field(default_factory=dict, description="Spark settings")
    audit_log: str | None = None
    resource_key: str = "substrait"

    def resource(self, base: Path) -> SubstraitSparkResource:
        return SubstraitSparkResource(
            spark=SparkResource(master=self.spark_master, conf={k: conf_str(v) for k, v in self.spark_conf.items()}),
            plan_store=PlanStoreResource(),
            catalogs=IcebergCatalogsResource(config_path=_path(base, self.catalog_config)),
            tables_dir=_path(base, self.tables_dir),
            tables={k: _path(base, v) if isinstance(v, str) else v for k, v in self.tables.items()},
            audit_log=self.audit_log,
        )

    def translator(self) -> SubstraitTranslator:
        """How the plans' tables look as assets: override in a subclass (as dagster-dbt's component's)."""
        return SubstraitTranslator()

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        base = Path(context.path)
        base = base if base.is_dir() else base.parent
        resource = self.resource(base)
        translator = self.translator()
        assets, checks = [], []
        for plan in self.plans:
            uri = _path(base, plan.uri)
            assert uri is not None
            partitions = (
                dg.DailyPartitionsDefinition(start_date=plan.daily_partitions_start)
                if plan.daily_partitions_start
                else None
            )
            results = plan.results
            if isinstance(results, dict) and "path" in results:
                results = {**results, "path": _path(base, results["path"])}
            loaded = PlanAssets.load(uri, resource, plan.expected_sha256)  # one read, one parse: assets and checks
            assets.append(
                substrait_assets(
                    loaded,
                    resource=resource,
                    name=plan.name,
                    parameters=plan.parameters,
                    partitions_def=partitions,
                    partition_parameter=plan.partition_parameter,
                    results=results,
                    root_asset=plan.root_asset,
                    group_name=plan.group_name,
                    resource_key=self.resource_key,
                    translator=translator,
                )
            )
            checks.extend(substrait_asset_checks(loaded, resource=resource, name=plan.name, translator=translator))
        return dg.Definitions(assets=assets, asset_checks=checks, resources={self.resource_key: resource})


def _path(base: Path, value: str | None) -> str | None:
    """A relative local path from the defs.yaml's folder; URIs (`s3://`, `file://`) and absolute paths as given."""
    if value is None or "://" in value or Path(value).is_absolute():
        return value
    return str((base / value).resolve())
