"""`SubstraitTranslator`: the one place a user changes how a plan's tables look as Dagster assets.

As `DagsterSlingTranslator` and `DagsterDbtTranslator` do for their streams and models: `get_asset_spec(table)` gets
a `SubstraitTable` (what the plan says of a table: its names, its identity, the outputs writing it, the tables
they read) and returns its `AssetSpec` (key, group, owners, kinds, tags, metadata, deps). Everything keyed by a
table uses it: the plan's assets and their deps, the schema checks of the tables it reads, the materializations
of a run and their column lineage.

    class LakeTranslator(SubstraitTranslator):
        def get_asset_spec(self, table: SubstraitTable) -> AssetSpec:
            return super().get_asset_spec(table).replace_attributes(key=AssetKey(["warehouse", *table.identity]))

A key should depend on the table alone (its names, its identity), not on whether this plan writes it: a table one
plan writes and another reads is then one asset.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dagster import AssetKey, AssetSpec
from substrait_spark.consumer.analysis.lineage import Output
from substrait_spark.materializations import PLAN_SHA256, PLAN_URI, TABLE_NAME

KINDS = frozenset({"substrait", "spark", "iceberg"})


@dataclass(frozen=True)
class SubstraitTable:
    """What a plan says of a table. `names`: as the plan spells them; `identity`: the default key's parts, the
    catalog identifier catalog first (`lake`, `demo`, `big_orders`) or the table map's name, lower case
    (`materializations.TableKeys`); `outputs`: the plan's outputs writing it (none: a table the plan only reads);
    `sources`: the tables those outputs derive from (directly or through filters and joins), as tables read;
    `plan_uri`/`plan_sha256`: the plan that says so."""

    names: tuple[str, ...]
    identity: tuple[str, ...]
    plan_uri: str
    plan_sha256: str
    outputs: tuple[Output, ...] = ()
    sources: tuple[SubstraitTable, ...] = field(default=(), compare=False)

    @property
    def written(self) -> bool:
        """Whether the plan writes it (else it only reads it)."""
        return bool(self.outputs)

    @property
    def operations(self) -> list[str]:
        """What the plan's outputs do to it (CTAS, INSERT, DELETE, …), in plan order."""
        return [o.operation or o.kind for o in self.outputs]


class SubstraitTranslator:
    """Plan tables → asset specs. The default keys a table by its identity (`TableKeys`), in no group (the
    factory's `group_name` applies), with the kinds substrait, spark and iceberg and the plan's URI and sha256 as
    metadata; a subclass overrides `get_asset_spec`."""

    def get_asset_spec(self, table: SubstraitTable) -> AssetSpec:
        key = AssetKey(list(table.identity))
        if not table.written:  # a table the plan reads: its key is what matters (deps, checks, lineage)
            return AssetSpec(key)
        return AssetSpec(
            key,
            deps=[self.get_asset_spec(s).key for s in table.sources],
            description=f"Written by the Substrait plan {table.plan_uri}: " + ", ".join(table.operations),
            metadata={PLAN_URI: table.plan_uri, PLAN_SHA256: table.plan_sha256, TABLE_NAME: ".".join(key.path)},
            kinds=set(KINDS),
        )
