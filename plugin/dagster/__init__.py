"""The Dagster front end: Substrait plans as Dagster assets.

    from substrait_spark.dagster import PlanAssets, SubstraitSparkResource, substrait_asset_checks, substrait_assets

    lake = SubstraitSparkResource(catalogs=IcebergCatalogsResource(config_path="catalogs.yaml"))
    plan = PlanAssets.load("s3://plans/big_orders.json", lake)  # one read, one parse: for assets and checks
    defs = Definitions(assets=[substrait_assets(plan, resource=lake)],
                       asset_checks=substrait_asset_checks(plan, resource=lake),
                       resources={"substrait": lake})

Resources (`resources.py`, whose `run` is an asset's materialization: `run.py`), the plan read once for its
definitions (`plan_assets.py`), the asset specs and factory (`assets.py`), how plan tables look as assets
(`translator.py`: `SubstraitTranslator`, the override point; default keys in `keys.py`), the materialization
metadata (`metadata.py`), asset checks (`checks.py`) and the `dg` component (`component.py`).
Importing `substrait_spark` does not import this package (nor Dagster).
"""

from substrait_spark.dagster.assets import substrait_asset_specs, substrait_assets
from substrait_spark.dagster.checks import substrait_asset_checks
from substrait_spark.dagster.component import SubstraitPlan, SubstraitPlansComponent
from substrait_spark.dagster.keys import TableKeys
from substrait_spark.dagster.pipes import SparkSubmitPipes
from substrait_spark.dagster.plan_assets import PlanAssets
from substrait_spark.dagster.resources import (
    IcebergCatalogsResource,
    PlanStoreResource,
    SparkResource,
    SubstraitSparkResource,
)
from substrait_spark.dagster.run import SubstraitRun
from substrait_spark.dagster.translator import SubstraitTable, SubstraitTranslator

__all__ = [
    "IcebergCatalogsResource",
    "PlanAssets",
    "PlanStoreResource",
    "SparkResource",
    "SparkSubmitPipes",
    "SubstraitPlan",
    "SubstraitPlansComponent",
    "SubstraitRun",
    "SubstraitSparkResource",
    "SubstraitTable",
    "SubstraitTranslator",
    "TableKeys",
    "substrait_asset_checks",
    "substrait_asset_specs",
    "substrait_assets",
]
