"""What a plan says about its assets, from one read and one parse: the tables it writes and reads as
`SubstraitTable` records, and their keys through a translator.

`PlanAssets.load` reads, pins and parses a plan once (the shared run sequence's first stages, no Spark); the
asset specs, the assets and the schema checks of one definitions load are all built from that one object
(`substrait_asset_specs`, `substrait_assets`, `substrait_asset_checks` take it in place of a URI). A run builds
its own from the plan it read and ran (`PlanAssets.of`), so a materialization's lineage is the run's plan's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dagster import AssetKey
from substrait_spark.consumer.analysis.lineage import Lineage, Output, column_lineage
from substrait_spark.dagster.translator import SubstraitTable, SubstraitTranslator
from substrait_spark.hooks.plan_run import PlanInput
from substrait_spark.materializations import TableKeys, table_map

if TYPE_CHECKING:
    from substrait_spark.dagster.resources import SubstraitSparkResource

VIRTUAL = "values"  # the lineage's dataset of a virtual table (VALUES): no asset


@dataclass(frozen=True)
class PlanAssets:
    """A plan read and parsed once, with what it says about its tables: `tables`, the ones it writes (identity →
    record, in plan order); `lineage`, its column lineage; `keys`, the default key scheme (`TableKeys`, from the
    resource's catalogs and table maps); `expected_sha256`, the pin it was read under (runs check it again)."""

    uri: str
    planned: PlanInput
    lineage: Lineage
    keys: TableKeys
    expected_sha256: str | None = None
    tables: dict[tuple[str, ...], SubstraitTable] = field(default_factory=dict)

    @classmethod
    def load(
        cls, plan_uri: str, resource: SubstraitSparkResource | None = None, expected_sha256: str | None = None
    ) -> PlanAssets:
        """The plan at `plan_uri` read through `resource`'s plan store (refused unless it has `expected_sha256`)
        and parsed: one read, one parse, no Spark."""
        from substrait_spark.dagster.resources import SubstraitSparkResource
        from substrait_spark.hooks.run_sequence import PlanRun

        resource = resource or SubstraitSparkResource()
        planned = PlanRun(resource.runner(expected_sha256), plan_uri).load()  # the run sequence's first stages
        return cls.of(plan_uri, planned, resource, expected_sha256)

    @classmethod
    def of(
        cls,
        plan_uri: str,
        planned: PlanInput,
        resource: SubstraitSparkResource,
        expected_sha256: str | None = None,
        keys: TableKeys | None = None,
    ) -> PlanAssets:
        """The assets of a plan loaded already (a run's)."""
        lineage = column_lineage(planned.loaded)
        keys = keys or TableKeys(resource.catalogs.catalogs(), table_map(resource.settings()))
        plan = cls(plan_uri, planned, lineage, keys, expected_sha256)
        written: dict[tuple[str, ...], list[Output]] = {}
        names: dict[tuple[str, ...], tuple[str, ...]] = {}
        for out in lineage.written:
            if out.dataset is not None:
                parts = tuple(out.dataset.name.split("."))
                identity = tuple(keys.parts(parts))
                written.setdefault(identity, []).append(out)
                names.setdefault(identity, parts)
        for identity, outputs in written.items():
            sources = tuple(plan.read(n) for n in plan.source_names(outputs))
            plan.tables[identity] = SubstraitTable(
                names[identity], identity, plan_uri, plan.sha256, tuple(outputs), sources
            )
        return plan

    @property
    def sha256(self) -> str:
        return self.planned.loaded.sha256

    def read(self, names: Sequence[str]) -> SubstraitTable:
        """The record of a table the plan reads (by the name it reads it by)."""
        return SubstraitTable(tuple(names), tuple(self.keys.parts(names)), self.uri, self.sha256)

    def table(self, names: Sequence[str]) -> SubstraitTable:
        """The plan's record of the table `names`: the written one's, else a table read."""
        return self.tables.get(tuple(self.keys.parts(names))) or self.read(names)

    def source_names(self, outputs: Sequence[Output]) -> list[tuple[str, ...]]:
        """The tables `outputs` derive from (directly or through filters and joins), but not themselves."""
        own = {tuple(self.keys.parts(o.dataset.name.split("."))) for o in outputs if o.dataset is not None}
        found: dict[tuple[str, ...], tuple[str, ...]] = {}
        for out in outputs:
            for sources in [*(s for _, s in out.columns), out.indirect]:
                for f in sources:
                    if f.dataset.name == VIRTUAL:
                        continue
                    parts = tuple(f.dataset.name.split("."))
                    identity = tuple(self.keys.parts(parts))
                    if identity not in own:
                        found.setdefault(identity, parts)
        return list(found.values())

    def translated(self, translator: SubstraitTranslator | None = None) -> TranslatedKeys:
        return TranslatedKeys(self, translator or SubstraitTranslator())


class TranslatedKeys(TableKeys):
    """`TableKeys` answering with a translator's keys: the keys of the specs, of the checks, and of a run's
    materializations and their column lineage (`materializations.materializations` takes it as its `keys`)."""

    def __init__(self, plan: PlanAssets, translator: SubstraitTranslator):
        super().__init__(plan.keys.catalogs, plan.keys.table_map)
        self.plan = plan
        self.translator = translator
        self._keys: dict[tuple[str, ...], list[str]] = {}

    def parts(self, names: Sequence[str]) -> list[str]:
        identity = tuple(self.plan.keys.parts(names))
        if identity not in self._keys:
            self._keys[identity] = list(self.translator.get_asset_spec(self.plan.table(names)).key.path)
        return self._keys[identity]

    def key(self, names: Sequence[str]) -> AssetKey:
        return AssetKey(self.parts(names))

    def of_identity(self, identity: str) -> AssetKey:
        return AssetKey(self.of_name(identity))

    def deps(self, outputs: Sequence[Output]) -> list[AssetKey]:
        """The keys of the tables `outputs` derive from (a root's sources)."""
        return [self.key(n) for n in self.plan.source_names(outputs)]
