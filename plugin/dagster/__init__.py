"""The Dagster front end: Substrait plans as Dagster assets.

    from substrait_spark.dagster import SubstraitSparkResource, substrait_assets

    lake = SubstraitSparkResource(catalogs=IcebergCatalogsResource(config_path="catalogs.yaml"))
    defs = Definitions(assets=[substrait_assets("s3://plans/big_orders.json", resource=lake)],
                       resources={"substrait": lake})

Resources (`resources.py`), the asset factory (`assets.py`), the asset keys of plan tables (`keys.py`), the
materialization metadata (`metadata.py`), asset checks (`checks.py`) and the `dg` component (`component.py`).
Importing `substrait_spark` does not import this package (nor Dagster).
"""

from substrait_spark.dagster.assets import substrait_assets
from substrait_spark.dagster.checks import substrait_asset_checks
from substrait_spark.dagster.component import SubstraitPlan, SubstraitPlansComponent
from substrait_spark.dagster.keys import TableKeys
from substrait_spark.dagster.pipes import SparkSubmitPipes
from substrait_spark.dagster.resources import (
    IcebergCatalogsResource,
    PlanStoreResource,
    SparkResource,
    SubstraitSparkResource,
)

__all__ = [
    "IcebergCatalogsResource",
    "PlanStoreResource",
    "SparkResource",
    "SparkSubmitPipes",
    "SubstraitPlan",
    "SubstraitPlansComponent",
    "SubstraitSparkResource",
    "TableKeys",
    "substrait_asset_checks",
    "substrait_assets",
]
