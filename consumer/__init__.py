"""The engine: load Substrait plans and translate them into PySpark DataFrames.

Imports are lazy so that `import substrait_spark.consumer` starts no JVM and loads no protobuf modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "load_plan": "substrait_spark.consumer.loader",
    "parse_plan_bytes": "substrait_spark.consumer.loader",
    "LoadedPlan": "substrait_spark.consumer.loader",
    "to_dataframe": "substrait_spark.consumer.translate",
    "SubstraitConsumer": "substrait_spark.consumer.consumer",
    "TableResolver": "substrait_spark.consumer.resolver",
    "TableMapResolver": "substrait_spark.consumer.resolver",
}

if TYPE_CHECKING:  # pragma: no cover
    from substrait_spark.consumer.consumer import SubstraitConsumer
    from substrait_spark.consumer.loader import LoadedPlan, load_plan, parse_plan_bytes
    from substrait_spark.consumer.resolver import TableMapResolver, TableResolver
    from substrait_spark.consumer.translate import to_dataframe


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(name)


__all__ = [
    "LoadedPlan",
    "SubstraitConsumer",
    "TableMapResolver",
    "TableResolver",
    "load_plan",
    "parse_plan_bytes",
    "to_dataframe",
]
