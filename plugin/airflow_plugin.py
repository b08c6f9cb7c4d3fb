"""The Airflow plugin (`airflow.plugins` entry point): the operator's extra links, and the plan graph page.

The page (`graph_app.py`, a FastAPI app mounted by Airflow 3's API server under `/substrait-spark`) is reached from a
task instance through the "Substrait graph" tab (an `external_views` entry, destination `task_instance`) and the
"Substrait graph" extra link.
"""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin
from substrait_spark.graph_app import URL_PREFIX, create_app
from substrait_spark.operators.links import SubstraitGraphLink, SubstraitPlanLink


class SubstraitSparkPlugin(AirflowPlugin):
    name = "substrait_spark"
    operator_extra_links = [SubstraitPlanLink(), SubstraitGraphLink()]
    fastapi_apps = [{"app": create_app(), "url_prefix": URL_PREFIX, "name": "Substrait plan graph"}]
    external_views = [
        {
            "name": "Substrait graph",
            "href": URL_PREFIX + "/runs/{DAG_ID}/{RUN_ID}/{TASK_ID}?map_index={MAP_INDEX}",
            "destination": "task_instance",
            "url_route": "substrait-graph",
        }
    ]
