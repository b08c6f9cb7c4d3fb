"""`substrait_assets`: a Substrait plan as a Dagster `multi_asset`, from the plan alone.

A plan that writes `lake.sales.daily_revenue` from `lake.sales.orders` already *is* an asset definition: the
tables it writes are its assets, the tables it reads their dependencies, its column lineage theirs. The factory
reads and parses the plan when the definitions load (no Spark), and a materialization runs it through the shared
run path (`hooks/plan_run.PlanRunner`, as the CLI and the Airflow operator do) and reports what the run changed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from dagster import AssetCheckSpec, AssetKey, AssetsDefinition, AssetSpec, PartitionsDefinition, multi_asset
from substrait_spark.dagster import metadata
from substrait_spark.dagster.plan_assets import PlanAssets, TranslatedKeys
from substrait_spark.dagster.resources import SubstraitSparkResource
from substrait_spark.dagster.run import PLAN_VALID_CHECK, SubstraitRun, run_key
from substrait_spark.dagster.translator import KINDS, SubstraitTranslator

__all__ = ["KINDS", "PLAN_VALID_CHECK", "PlanAssets", "run_key", "substrait_asset_specs", "substrait_assets"]


def plan_assets(
    plan: str | PlanAssets, resource: SubstraitSparkResource | None, expected_sha256: str | None = None
) -> PlanAssets:
    """`plan` loaded (one read, one parse), or as given when loaded already (under the same pin)."""
    if isinstance(plan, PlanAssets):
        if expected_sha256 is not None and expected_sha256 != plan.expected_sha256:
            raise ValueError(
                f"the plan {plan.uri} was loaded under the pin {plan.expected_sha256!r}, not {expected_sha256!r}"
            )
        return plan
    return PlanAssets.load(plan, resource, expected_sha256)


def substrait_asset_specs(
    plan: str | PlanAssets,
    resource: SubstraitSparkResource | None = None,
    *,
    translator: SubstraitTranslator | None = None,
    expected_sha256: str | None = None,
    root_asset: str | Sequence[str] | AssetKey | None = None,
    group_name: str | None = None,
) -> list[AssetSpec]:
    """The asset specs of the plan (its URI, or `PlanAssets` loaded already): one per table it writes, from the
    translator (`translator.py`; default: keyed by catalog identifier, depending on the tables it reads), then
    the root result's when `root_asset` names its key. `group_name`, when given, is every spec's group. No Spark.
    """
    loaded = plan_assets(plan, resource, expected_sha256)
    return _specs(loaded, loaded.translated(translator), root_asset, group_name)


def _specs(
    plan: PlanAssets,
    keys: TranslatedKeys,
    root_asset: str | Sequence[str] | AssetKey | None,
    group_name: str | None,
) -> list[AssetSpec]:
    specs = [keys.translator.get_asset_spec(table) for table in plan.tables.values()]
    if root_asset is not None:
        specs.append(
            AssetSpec(
                AssetKey.from_coercible(root_asset),
                deps=keys.deps(plan.lineage.roots[:1]),
                description=f"The result of the Substrait plan {plan.uri}",
                metadata={metadata.PLAN_URI: plan.uri, metadata.PLAN_SHA256: plan.sha256},
                kinds={"substrait", "spark"},
            )
        )
    if group_name is not None:
        specs = [s.replace_attributes(group_name=group_name) for s in specs]
    return specs


def substrait_assets(
    plan: str | PlanAssets,
    *,
    resource: SubstraitSparkResource | None = None,
    name: str | None = None,
    expected_sha256: str | None = None,
    parameters: Mapping[str, Any] | None = None,
    partitions_def: PartitionsDefinition | None = None,
    partition_parameter: int | str | None = None,
    results: str | Mapping[str, Any] | None = None,
    root_asset: str | Sequence[str] | AssetKey | None = None,
    group_name: str | None = None,
    resource_key: str = "substrait",
    remote: Any = None,
    translator: SubstraitTranslator | None = None,
) -> AssetsDefinition:
    """One `multi_asset` for the plan (its URI, or the `PlanAssets` its checks are built from too): the specs of
    `substrait_asset_specs`, each with the blocking `plan_valid` check; its body is the resource's `run`.

    :param resource: what the definitions are computed with (the plan store, the catalogs, the table maps); at run
        time the resource bound to `resource_key` runs the plan. Default: local paths, no catalogs.
    :param expected_sha256: refuse the plan unless its bytes have this sha256 (at load and at every run).
    :param parameters: values of the plan's dynamic parameters by anchor.
    :param partitions_def: partitions of the assets; with `partition_parameter` (an anchor) each partition's key is
        bound to that parameter (daily partitions → `$0` a date), as the Airflow operator binds `{{ ds }}`.
    :param results: where root rows go (`Sink.parse`: a path, `{"path": …, "format": …}`, `table:NAME`); a
        `{partition_key}` in a path is replaced by the partition's key.
    :param root_asset: an asset key for the plan's (first) root result.
    :param remote: run the plan in a Spark driver of its own through Dagster Pipes (`pipes.SparkSubmitPipes`)
        instead of in this process; validation (the blocking check) still runs here first, without Spark.
    :param translator: how the plan's tables look as assets (`SubstraitTranslator`): keys, groups, metadata.
    """
    resource = resource or SubstraitSparkResource()
    loaded = plan_assets(plan, resource, expected_sha256)
    keys = loaded.translated(translator)
    specs = _specs(loaded, keys, root_asset, group_name)
    if not specs:
        raise ValueError(f"plan {loaded.uri} writes no table: name a root_asset for its result")
    if remote is not None:
        _refuse_translated_remote(loaded, keys)
    op_name = name or op_name_of(loaded.uri)
    run = SubstraitRun(
        plan_uri=loaded.uri,
        op_name=op_name,
        asset_keys=tuple(s.key for s in specs),
        expected_sha256=loaded.expected_sha256,
        parameters=dict(parameters or {}),
        partition_parameter=partition_parameter if partitions_def is not None else None,
        results=results,
        root_key=AssetKey.from_coercible(root_asset) if root_asset is not None else None,
        translator=translator,
        remote=remote,
    )
    checks = [
        AssetCheckSpec(PLAN_VALID_CHECK, asset=s.key, blocking=True, description="the plan validates and binds")
        for s in specs
    ]

    @multi_asset(
        name=op_name,
        specs=specs,
        check_specs=checks,
        partitions_def=partitions_def,
        required_resource_keys={resource_key},
        can_subset=False,
    )
    def _run_plan(context):  # an AssetExecutionContext (a string annotation is refused by Dagster)
        substrait: SubstraitSparkResource = getattr(context.resources, resource_key)
        yield from substrait.run(context, run)

    return _run_plan


def _refuse_translated_remote(plan: PlanAssets, keys: TranslatedKeys) -> None:
    """A remote driver reports its materializations under the default keys (it has no Dagster to translate with)."""
    for identity, table in plan.tables.items():
        if keys.key(table.names).path != list(identity):
            raise ValueError(
                f"plan {plan.uri}: a remote run reports table {'.'.join(identity)} under its default key, "
                f"not the translator's {keys.key(table.names).to_user_string()}: run it in process or keep its key"
            )


def op_name_of(plan_uri: str) -> str:
    """The op (and default asset group) name of a plan: its file name without the extension, as an identifier."""
    stem = re.sub(r"\.(json|pb|bin|binpb)$", "", plan_uri.rsplit("/", 1)[-1].split("?", 1)[0])
    return re.sub(r"\W", "_", stem) or "substrait_plan"
