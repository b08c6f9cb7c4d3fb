"""Asset keys of the tables a plan reads and writes, from the plan alone (no Spark, no catalog lookup).

One scheme for every plan, so that assets built from other plans (or by other tools naming tables the same way)
link up: a table the catalogs hold is keyed by its catalog identifier, catalog first — `demo.big_orders` under the
default catalog `lake` is `["lake", "demo", "big_orders"]`; a table a static table map binds (a parquet folder) is
keyed by its name in the map, `["orders"]`. Catalog identifiers are compared case-insensitively (the engine's own
resolution), so keys are lower case.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from dagster import AssetKey

if TYPE_CHECKING:
    from substrait_spark.hooks.iceberg import Catalogs


class TableKeys:
    """Plan table names (a NamedTable's parts, a write target's) → asset keys (see the module docstring)."""

    def __init__(self, catalogs: Catalogs | None = None, table_map: Collection[str] = ()):
        self.catalogs = catalogs
        self.table_map = {n.lower() for n in table_map}

    def parts(self, names: Sequence[str]) -> list[str]:
        lowered = [n.lower() for n in names]
        if ".".join(lowered) in self.table_map or (lowered and lowered[-1] in self.table_map):
            return lowered
        if self.catalogs is None or not self.catalogs.catalogs:
            return lowered
        catalog, inner = self.catalogs.split(names)
        return [catalog.lower(), *(p.lower() for p in inner)]

    def key(self, names: Sequence[str]) -> AssetKey:
        return AssetKey(self.parts(names))

    def of_identity(self, identity: str) -> AssetKey:
        """The key of a resolved identity (`catalog.namespace.table` of a step's target or a table read)."""
        return self.key(identity.split("."))
