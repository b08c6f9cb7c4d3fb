"""A materialization of `substrait_assets`: what the asset hands its resource (`SubstraitRun`) and what the
resource does with it (`execute`, behind `SubstraitSparkResource.run`).

The run reads the plan again (its pin checked again) and checks it before Spark (the blocking `plan_valid` check
of every asset), then runs it through the run sequence every front end shares (`hooks/run_sequence.PlanRun`, as
the CLI, `run_plan` and the Airflow operator do: the plan read and parsed once, the run, its audit record — of a
failed run too), with the report's lines and the audit record in the step's log (`DagsterObserver`). It reports a
`MaterializeResult` per table the run changed — keyed by the translator, with the column lineage of the plan this
run read and ran (not the definitions' copy: an unpinned object may have changed in between).

Durable (the resource's `durable`, the default): the run keeps its state in the Dagster instance under its run key
(`durable.py`), so a re-execution after the run's worker died reattaches to the Spark Connect operations it left
running; a terminated run interrupts them on the server.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    AssetKey,
    Failure,
    MaterializeResult,
    MetadataValue,
)
from substrait_spark.consumer.errors import SubstraitSparkError
from substrait_spark.consumer.running.narration import report_lines
from substrait_spark.consumer.running.report import RunReport
from substrait_spark.dagster import metadata
from substrait_spark.dagster.durable import interrupting_operations, step_state
from substrait_spark.dagster.translator import SubstraitTranslator
from substrait_spark.hooks.plan_run import NOT_RETRYABLE, PlanInput, PlanRunner
from substrait_spark.hooks.run_sequence import RunObserver
from substrait_spark.materializations import TableKeys

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from substrait_spark.dagster.resources import SubstraitSparkResource
    from substrait_spark.hooks.audit import AuditContext, AuditResult

PLAN_VALID_CHECK = "plan_valid"


@dataclass(frozen=True)
class SubstraitRun:
    """What an asset of `substrait_assets` runs: the plan (its URI and pin), its op, the assets whose `plan_valid`
    check it reports (`asset_keys`), the parameters (static, and the partition's key bound to
    `partition_parameter`), where root rows go (`results`, `Sink.parse`; `{partition_key}` replaced), the root
    result's asset, the translator keying the materializations, and a remote driver (`pipes.SparkSubmitPipes`)."""

    plan_uri: str
    op_name: str
    asset_keys: tuple[AssetKey, ...]
    expected_sha256: str | None = None
    parameters: Mapping[str, Any] = field(default_factory=dict)
    partition_parameter: int | str | None = None
    results: str | Mapping[str, Any] | None = None
    root_key: AssetKey | None = None
    translator: SubstraitTranslator | None = None
    remote: Any = None

    def bound(self, partition: str | None) -> dict[str | int, Any]:
        """The parameters' values: the static ones, and the partition's key."""
        bound: dict[str | int, Any] = dict(self.parameters)
        if partition is not None and self.partition_parameter is not None:
            bound[str(self.partition_parameter)] = partition
        return bound

    def sink_spec(self, partition: str | None) -> Any:
        """`results` with `{partition_key}` in its path replaced by the partition's key (for `Sink.parse`)."""
        if self.results is None:
            return None
        key = partition or ""
        if isinstance(self.results, Mapping):
            return {k: v.replace("{partition_key}", key) if isinstance(v, str) else v for k, v in self.results.items()}
        return self.results.replace("{partition_key}", key)


Result = AssetCheckResult | MaterializeResult


def execute(resource: SubstraitSparkResource, context: AssetExecutionContext, plan: SubstraitRun) -> Iterator[Result]:
    """Check, run, log, audit and report the plan through the run sequence every front end shares
    (`hooks/run_sequence.PlanRun`; see the module docstring)."""
    from substrait_spark.dagster.plan_assets import PlanAssets
    from substrait_spark.hooks.run_sequence import PlanRun

    runner = resource.runner(plan.expected_sha256)
    partition = context.partition_key if context.has_partition_key else None
    bound = plan.bound(partition)
    key = run_key(context, plan.op_name, partition)
    sequence = PlanRun(runner, plan.plan_uri)
    observer = DagsterObserver(context, plan.plan_uri)
    try:
        sequence.check(bound)  # read, pin, parse, check: before Spark, memoized for `execute`
    except SubstraitSparkError as exc:
        yield from plan_valid(plan, passed=False, metadata={"error": exc.describe(), "exit_code": exc.exit_code})
        sequence.failed(exc, audit_context(context, key), observer)
        raise failure(exc) from exc
    parameters = MetadataValue.json({str(k): v for k, v in bound.items()})
    yield from plan_valid(plan, passed=True, metadata={"parameters": parameters})
    sink = plan.sink_spec(partition)
    if plan.remote is not None:
        yield from plan.remote.run(context, resource, runner, plan.plan_uri, bound, key, sink, plan.root_key)
        return
    context.log.info("Running %s (run key %s)", plan.plan_uri, key)
    state = step_state(context, key) if resource.durable else None
    with interrupting_operations(context.log.info):
        result = sequence.execute(
            parameters=bound,
            run_key=key,
            sink=sink,
            audit_context=audit_context(context, key),
            observer=observer,
            state=state,
        )
    if result.error is not None:
        raise failure(result.error) from result.error
    assert result.report is not None and result.planned is not None
    ran = PlanAssets.of(plan.plan_uri, result.planned, resource, plan.expected_sha256, keys=default_keys(runner))
    keys = ran.translated(plan.translator)
    yield from metadata.results(result.report, ran.lineage, keys, runner.catalogs, key, plan.root_key)


class DagsterObserver(RunObserver):
    """What the run sequence tells a Dagster step: Spark's stage progress around the run, the report's lines and
    the audit record in the step's log (as the Airflow operator's task log has them)."""

    def __init__(self, context: AssetExecutionContext, plan_uri: str):
        self.context = context
        self.plan_uri = plan_uri

    @contextlib.contextmanager
    def running(self, spark: SparkSession, planned: PlanInput) -> Iterator[None]:
        from substrait_spark.hooks.spark_progress import StageProgress

        with StageProgress(spark, f"Plan {self.plan_uri}", self.context.log.info):
            yield

    def on_report(self, report: RunReport, error: SubstraitSparkError | None) -> None:
        for line in report_lines(report):
            self.context.log.info(line)

    def on_audit(self, result: AuditResult | None) -> None:
        if result is not None:
            self.context.log.info("Audit record %s: %s (%s)", result.record_id, result.status, result.location)


def audit_context(context: AssetExecutionContext, key: str) -> AuditContext:
    """Who ran: the run key, the job, the Dagster run, the op and the try."""
    from substrait_spark.hooks.audit import AuditContext

    return AuditContext(
        run_key=key,
        dag_id=context.job_name,
        run_id=context.run.run_id,
        task_id=context.op_def.name,
        try_number=context.retry_number + 1,
    )


def default_keys(runner: PlanRunner) -> TableKeys:
    """The default key scheme of a run's tables: its catalogs and its table maps' names."""
    return TableKeys(runner.catalogs, [n for m in runner.table_maps for n in m.tables])


def plan_valid(plan: SubstraitRun, passed: bool, metadata: dict[str, Any]) -> Iterator[AssetCheckResult]:
    """The blocking check of every asset of the plan."""
    for key in plan.asset_keys:
        yield AssetCheckResult(
            check_name=PLAN_VALID_CHECK,
            asset_key=key,
            passed=passed,
            severity=AssetCheckSeverity.ERROR,
            metadata=metadata,
        )


def run_key(context: AssetExecutionContext, op_name: str, partition: str | None = None) -> str:
    """What makes write steps retry-safe: the root run (a re-execution keeps its parent's root, a step retry its
    run), the asset op and its partition — never the retry number, so no committed step is applied twice."""
    run = context.run
    root = run.root_run_id or run.run_id
    return "/".join(p for p in ("dagster", root, op_name, partition) if p)


def failure(exc: SubstraitSparkError) -> Failure:
    """The engine's typed error as a Dagster failure; errors another try cannot fix are not retried."""
    return Failure(
        description=exc.describe(),
        metadata={"exit_code": exc.exit_code},
        allow_retries=exc.exit_code not in NOT_RETRYABLE,
    )
