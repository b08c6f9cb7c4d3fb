"""Asset keys of the tables a plan reads and writes, from the plan alone (no Spark, no catalog lookup): the scheme
is `substrait_spark.materializations.TableKeys` (shared with the Pipes remote side); here as Dagster `AssetKey`s."""

from __future__ import annotations

from collections.abc import Sequence

from dagster import AssetKey
from substrait_spark.materializations import TableKeys as PlainTableKeys


class TableKeys(PlainTableKeys):
    """`TableKeys` answering with `AssetKey`s."""

    def key(self, names: Sequence[str]) -> AssetKey:
        return AssetKey(self.parts(names))

    def of_identity(self, identity: str) -> AssetKey:
        """The key of a resolved identity (`catalog.namespace.table` of a step's target or a table read)."""
        return AssetKey(self.of_name(identity))
