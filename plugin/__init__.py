"""substrait-spark: run Substrait plans on Apache Spark, from Airflow, Dagster or the command line.

Importing this package is cheap: names are resolved lazily, so no Spark, Airflow or protobuf import happens
until a name is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "run_plan": "substrait_spark.api",
    "RunReport": "substrait_spark.consumer.running.report",
    "load_plan": "substrait_spark.consumer.loading.loader",
    "to_dataframe": "substrait_spark.consumer.translation.translate",
    "SubstraitConsumer": "substrait_spark.consumer.translation.consumer",
    "TableMapResolver": "substrait_spark.consumer.running.resolver",
    "SubstraitSparkError": "substrait_spark.consumer.errors",
    "SUBMIT_APPLICATION": "substrait_spark.submit_app",
}

if TYPE_CHECKING:  # pragma: no cover
    from substrait_spark.api import run_plan
    from substrait_spark.consumer.errors import SubstraitSparkError
    from substrait_spark.consumer.loading.loader import load_plan
    from substrait_spark.consumer.running.report import RunReport
    from substrait_spark.consumer.running.resolver import TableMapResolver
    from substrait_spark.consumer.translation.consumer import SubstraitConsumer
    from substrait_spark.consumer.translation.translate import to_dataframe
    from substrait_spark.submit_app import SUBMIT_APPLICATION

__all__ = [
    "SUBMIT_APPLICATION",
    "RunReport",
    "SubstraitConsumer",
    "SubstraitSparkError",
    "TableMapResolver",
    "load_plan",
    "run_plan",
    "to_dataframe",
]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'substrait_spark' has no attribute {name!r}")
