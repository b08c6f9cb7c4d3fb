"""Airflow provider metadata (`apache_airflow_provider` entry point): connection types, hooks, operators, links.

Kept free of Airflow imports so that `airflow providers list` can read it cheaply.
"""

from __future__ import annotations

from typing import Any

from substrait_spark import __version__
from substrait_spark.hooks.connection_form import provider_connection_form


def get_provider_info() -> dict[str, Any]:
    return {
        "package-name": "substrait-spark",
        "name": "Substrait on Spark",
        "description": "Run Substrait query plans on Apache Spark: load, resolve, translate, execute, report.",
        "versions": [__version__],
        "integrations": [
            {
                "integration-name": "Substrait on Spark",
                "external-doc-url": "https://substrait.io/",
                "tags": ["software"],
            }
        ],
        "hooks": [
            {
                "integration-name": "Substrait on Spark",
                "python-modules": [
                    "substrait_spark.hooks.spark_hook",
                    "substrait_spark.hooks.plan_store_hook",
                ],
            }
        ],
        "operators": [
            {
                "integration-name": "Substrait on Spark",
                "python-modules": ["substrait_spark.operators.substrait_spark"],
            }
        ],
        "connection-types": [
            {
                "connection-type": "substrait_spark",
                "hook-class-name": "substrait_spark.hooks.spark_hook.SubstraitSparkHook",
                "hook-name": "Substrait on Spark",
                **provider_connection_form(),
            }
        ],
        "extra-links": [
            "substrait_spark.operators.links.SubstraitPlanLink",
            "substrait_spark.operators.links.SubstraitGraphLink",
        ],
    }
