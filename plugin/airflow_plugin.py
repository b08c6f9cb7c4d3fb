"""The Airflow plugin (`airflow.plugins` entry point): registers the operator's extra links with the webserver."""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin
from substrait_spark.operators.links import SubstraitPlanLink


class SubstraitSparkPlugin(AirflowPlugin):
    name = "substrait_spark"
    operator_extra_links = [SubstraitPlanLink()]
