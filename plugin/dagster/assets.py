"""`substrait_assets`: a Substrait plan as a Dagster `multi_asset`, from the plan alone.

A plan that writes `lake.sales.daily_revenue` from `lake.sales.orders` already *is* an asset definition: the
tables it writes are its assets, the tables it reads their dependencies, its column lineage theirs. The factory
reads and parses the plan when the definitions load (no Spark), and a materialization runs it through the shared
run path (`hooks/plan_run.PlanRunner`, as the CLI and the Airflow operator do) and reports what the run changed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetKey,
    AssetsDefinition,
    AssetSpec,
    Failure,
    MetadataValue,
    PartitionsDefinition,
    multi_asset,
)
from substrait_spark.consumer.analysis.lineage import Lineage, Output, column_lineage
from substrait_spark.consumer.errors import SubstraitSparkError
from substrait_spark.consumer.running.narration import report_lines
from substrait_spark.consumer.running.report import RunReport
from substrait_spark.consumer.running.sinks import Sink
from substrait_spark.dagster import metadata
from substrait_spark.dagster.keys import TableKeys
from substrait_spark.dagster.resources import SubstraitSparkResource
from substrait_spark.hooks.plan_run import NOT_RETRYABLE, PlanInput
from substrait_spark.hooks.spark_progress import StageProgress
from substrait_spark.materializations import table_map

PLAN_VALID_CHECK = "plan_valid"
KINDS = {"substrait", "spark", "iceberg"}


@dataclass(frozen=True)
class PlanAssets:
    """What the plan says about its assets: the tables it writes (key → the plan's outputs writing it), the keys
    each depends on, the plan read and its lineage."""

    planned: PlanInput
    lineage: Lineage
    keys: TableKeys
    written: dict[AssetKey, list[Output]]

    @classmethod
    def of(cls, plan_uri: str, resource: SubstraitSparkResource, expected_sha256: str | None) -> PlanAssets:
        planned = resource.runner(expected_sha256).load(plan_uri)  # read, sha256 pin, parse: no Spark
        lineage = column_lineage(planned.loaded)
        keys = TableKeys(resource.catalogs.catalogs(), table_map(resource.settings()))
        written: dict[AssetKey, list[Output]] = {}
        for out in lineage.written:
            if out.dataset is not None:
                written.setdefault(keys.key(out.dataset.name.split(".")), []).append(out)
        return cls(planned, lineage, keys, written)

    def deps(self, outputs: Sequence[Output]) -> list[AssetKey]:
        """The tables `outputs` derive from (directly or through filters and joins), but not themselves."""
        found: dict[AssetKey, None] = {}
        own = {self.keys.key(o.dataset.name.split(".")) for o in outputs if o.dataset is not None}
        for out in outputs:
            for sources in [*(s for _, s in out.columns), out.indirect]:
                for f in sources:
                    if f.dataset.name == "values":  # a virtual table is no asset
                        continue
                    key = self.keys.key(f.dataset.name.split("."))
                    if key not in own:
                        found[key] = None
        return list(found)


def substrait_assets(
    plan_uri: str,
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
) -> AssetsDefinition:
    """One `multi_asset` for the plan at `plan_uri`: an asset per table it writes (keyed by catalog identifier, see
    `keys.py`), depending on the tables it reads; `root_asset` names an asset for its (first) root result.

    :param resource: what the definitions are computed with (the plan store, the catalogs, the table maps); at run
        time the resource bound to `resource_key` runs the plan. Default: local paths, no catalogs.
    :param expected_sha256: refuse the plan unless its bytes have this sha256 (at load and at every run).
    :param parameters: values of the plan's dynamic parameters by anchor.
    :param partitions_def: partitions of the assets; with `partition_parameter` (an anchor) each partition's key is
        bound to that parameter (daily partitions → `$0` a date), as the Airflow operator binds `{{ ds }}`.
    :param results: where root rows go (`Sink.parse`: a path, `{"path": …, "format": …}`, `table:NAME`); a
        `{partition_key}` in a path is replaced by the partition's key.
    :param remote: run the plan in a Spark driver of its own through Dagster Pipes (`pipes.SparkSubmitPipes`)
        instead of in this process; validation (the blocking check) still runs here first, without Spark.
    """
    resource = resource or SubstraitSparkResource()
    plan = PlanAssets.of(plan_uri, resource, expected_sha256)
    op_name = name or op_name_of(plan_uri)
    root_key = AssetKey.from_coercible(root_asset) if root_asset is not None else None
    identity = {metadata.PLAN_URI: plan_uri, metadata.PLAN_SHA256: plan.planned.loaded.sha256}
    specs = [
        AssetSpec(
            key,
            deps=plan.deps(outputs),
            description=f"Written by the Substrait plan {plan_uri}: "
            + ", ".join(o.operation or o.kind for o in outputs),
            metadata={**identity, metadata.TABLE_NAME: ".".join(key.path)},
            kinds=KINDS,
            group_name=group_name,
        )
        for key, outputs in plan.written.items()
    ]
    if root_key is not None:
        specs.append(
            AssetSpec(
                root_key,
                deps=plan.deps(plan.lineage.roots[:1]),
                description=f"The result of the Substrait plan {plan_uri}",
                metadata=identity,
                kinds={"substrait", "spark"},
                group_name=group_name,
            )
        )
    if not specs:
        raise ValueError(f"plan {plan_uri} writes no table: name a root_asset for its result")
    checks = [
        AssetCheckSpec(PLAN_VALID_CHECK, asset=s.key, blocking=True, description="the plan validates and binds")
        for s in specs
    ]
    static_parameters = dict(parameters or {})

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
        runner = substrait.runner(expected_sha256)
        bound = dict(static_parameters)
        partition = context.partition_key if partitions_def is not None else None
        if partition is not None and partition_parameter is not None:
            bound[str(partition_parameter)] = partition
        key = run_key(context, op_name, partition)
        try:
            checked = runner.check(runner.load(plan_uri), bound)
        except SubstraitSparkError as exc:
            for spec in specs:
                yield AssetCheckResult(
                    check_name=PLAN_VALID_CHECK,
                    asset_key=spec.key,
                    passed=False,
                    severity=AssetCheckSeverity.ERROR,
                    metadata={"error": exc.describe(), "exit_code": exc.exit_code},
                )
            raise _failure(exc) from exc
        for spec in specs:
            yield AssetCheckResult(
                check_name=PLAN_VALID_CHECK,
                asset_key=spec.key,
                passed=True,
                metadata={"parameters": MetadataValue.json({str(k): v for k, v in bound.items()})},
            )
        sink = _sink_spec(results, partition)
        if remote is not None:
            yield from remote.run(context, substrait, runner, plan_uri, bound, key, sink, root_key)
            return
        sink = Sink.parse(sink)
        context.log.info("Running %s (run key %s)", plan_uri, key)
        try:
            with StageProgress(runner.spark, f"Plan {plan_uri}", context.log.info):
                report = runner.run(checked, parameters=bound, run_key=key, sink=sink)
        except SubstraitSparkError as exc:
            _log_report(context, getattr(exc, "report", None))
            _audit(runner, getattr(exc, "report", None), context, key)
            raise _failure(exc) from exc
        _log_report(context, report)
        _audit(runner, report, context, key)
        yield from metadata.results(report, plan.lineage, plan.keys, runner.catalogs, key, root_key)

    return _run_plan


def run_key(context: AssetExecutionContext, op_name: str, partition: str | None = None) -> str:
    """What makes write steps retry-safe: the root run (a re-execution keeps its parent's root, a step retry its
    run), the asset op and its partition — never the retry number, so no committed step is applied twice."""
    run = context.run
    root = run.root_run_id or run.run_id
    return "/".join(p for p in ("dagster", root, op_name, partition) if p)


def op_name_of(plan_uri: str) -> str:
    """The op (and default asset group) name of a plan: its file name without the extension, as an identifier."""
    stem = re.sub(r"\.(json|pb|bin|binpb)$", "", plan_uri.rsplit("/", 1)[-1].split("?", 1)[0])
    return re.sub(r"\W", "_", stem) or "substrait_plan"


def _sink_spec(results: str | Mapping[str, Any] | None, partition: str | None) -> Any:
    """`results` with `{partition_key}` in its path replaced by the partition's key (for `Sink.parse`)."""
    if results is None:
        return None
    key = partition or ""
    if isinstance(results, Mapping):
        return {k: v.replace("{partition_key}", key) if isinstance(v, str) else v for k, v in results.items()}
    return results.replace("{partition_key}", key)


def _failure(exc: SubstraitSparkError) -> Failure:
    """The engine's typed error as a Dagster failure; errors another try cannot fix are not retried."""
    return Failure(
        description=exc.describe(),
        metadata={"exit_code": exc.exit_code},
        allow_retries=exc.exit_code not in NOT_RETRYABLE,
    )


def _log_report(context: AssetExecutionContext, report: RunReport | None) -> None:
    """What the run did, a line per part, in the run's log (as the Airflow operator's task log has it)."""
    for line in report_lines(report) if report is not None else []:
        context.log.info(line)


def _audit(runner: Any, report: Any, context: AssetExecutionContext, key: str) -> None:
    """The run's audit record (none unless configured; never fails the step unless the log is strict)."""
    if report is None:
        return
    from substrait_spark.hooks.audit import AuditContext

    audit = AuditContext(
        run_key=key,
        dag_id=context.job_name,
        run_id=context.run.run_id,
        task_id=context.op_def.name,
        try_number=context.retry_number + 1,
    )
    result = runner.record(report, audit)
    if result is not None:
        context.log.info("Audit record %s: %s (%s)", result.record_id, result.status, result.location)
