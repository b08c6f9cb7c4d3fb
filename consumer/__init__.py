"""The engine: load Substrait plans and translate them into PySpark DataFrames.

Its folders are the stages a plan goes through: `loading/` (bytes to a checked plan), `translation/` (relations,
expressions, types and functions to DataFrames), `analysis/` (validate, lineage, explain — visitors of the same walk,
`plan_visitor.py`, without Spark) and `running/` (table resolution, the Spark client, the plan's write/DDL/update
steps, result sinks, the run report). The modules directly here serve every stage (stage 0): `errors.py`,
`types.py`, `type_text.py`, `walk.py`, `plan_visitor.py`, the records every stage makes (`records.py`), the client
probes (`clients.py`) and the table-resolution port (`tables.py`). A module imports only its own or an earlier
stage's modules (`tools/stage_order.py`).

Imports are lazy so that `import substrait_spark.consumer` starts no JVM and loads no protobuf modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "load_plan": "substrait_spark.consumer.loading.loader",
    "parse_plan_bytes": "substrait_spark.consumer.loading.loader",
    "LoadedPlan": "substrait_spark.consumer.loading.loader",
    "to_dataframe": "substrait_spark.consumer.translation.translate",
    "SubstraitConsumer": "substrait_spark.consumer.translation.consumer",
    "TableResolver": "substrait_spark.consumer.running.resolver",
    "TableMapResolver": "substrait_spark.consumer.running.resolver",
    "engine_settings": "substrait_spark.consumer.clients",
    # The extension surface (docs/extending.md): stable names whatever folder the stage's module sits in.
    "Relation": "substrait_spark.consumer.translation.relation",
    "register_extension_relation": "substrait_spark.consumer.translation.registry",
    "unregister_extension_relation": "substrait_spark.consumer.translation.registry",
}

if TYPE_CHECKING:  # pragma: no cover
    from substrait_spark.consumer.clients import engine_settings
    from substrait_spark.consumer.loading.loader import LoadedPlan, load_plan, parse_plan_bytes
    from substrait_spark.consumer.running.resolver import TableMapResolver, TableResolver
    from substrait_spark.consumer.translation.consumer import SubstraitConsumer
    from substrait_spark.consumer.translation.registry import register_extension_relation, unregister_extension_relation
    from substrait_spark.consumer.translation.relation import Relation
    from substrait_spark.consumer.translation.translate import to_dataframe


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(name)


__all__ = [
    "LoadedPlan",
    "Relation",
    "SubstraitConsumer",
    "TableMapResolver",
    "TableResolver",
    "engine_settings",
    "load_plan",
    "parse_plan_bytes",
    "register_extension_relation",
    "to_dataframe",
    "unregister_extension_relation",
]
