"""`SubstraitSparkOperator`: run one Substrait plan on Spark as an Airflow task.

Thin by design: the plan store hook reads the plan, the Spark hook gives the session, the consumer translates
and runs, and the run report comes back as the task's XCom value. The task fails if and only if the plan
failed, with the consumer's typed error as the message; errors a retry cannot fix (an invalid or unsupported
plan, a refused plan) fail without retrying.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from airflow.configuration import conf
from airflow.providers.common.compat.sdk import (
    AirflowException,
    AirflowFailException,
    BaseOperator,
    ResumableJobMixin,
)
from substrait_spark.consumer.errors import SubstraitSparkError
from substrait_spark.consumer.running.narration import report_lines
from substrait_spark.consumer.running.report import Durability, RunReport, RunStatus, changed_tables
from substrait_spark.hooks.audit import AuditContext, AuditResult
from substrait_spark.hooks.durable import HEADER_KEY, AirflowStore, Generation, RunPhase, RunState
from substrait_spark.hooks.iceberg import Catalogs
from substrait_spark.hooks.plan_run import NOT_RETRYABLE, PlanInput, PlanRunner, RunSettings
from substrait_spark.hooks.plan_store import PlanObject
from substrait_spark.hooks.plan_store_hook import PlanStoreHook
from substrait_spark.hooks.run_sequence import PlanRun, RunObserver, RunResult
from substrait_spark.hooks.spark_hook import SubstraitSparkHook
from substrait_spark.hooks.spark_progress import StageProgress
from substrait_spark.operators.connect_trigger import ConnectOperationTrigger
from substrait_spark.operators.links import PLAN_LINK_XCOM_KEY, SubstraitGraphLink, SubstraitPlanLink, plan_link

REPORT_XCOM_KEY = "substrait_run_report"
# How a DAG author gives a dynamic parameter's value (what an `UnboundParameterError` says).
BIND_HINT = 'the operator\'s parameters={{"{anchor}": VALUE}}'


class SubstraitSparkOperator(ResumableJobMixin, BaseOperator):
    """Run the Substrait plan at `plan_uri` on Spark and return its run report.

    :param plan_uri: where the plan is: a path, `file://` or `s3://bucket/key[?versionId=…]` (templated).
    :param parameters: values of the plan's dynamic parameters by anchor, e.g. `{"0": "{{ ds }}"}`; each is
        typed as the plan declares it (templated). (`params` is Airflow's own DAG-params argument.)
    :param results: where root rows go (templated): None (run and count), `"preview"` / `"preview:N"` (the
        first N rows in the report, default 20), `"table:NAME"`, a path Spark can write, or a dict
        `{"path"|"table": …, "format": …, "mode": …}`. (`output` is Airflow's own XComArg property.)
    :param expected_sha256: refuse the plan unless its bytes have this sha256 (templated).
    :param tables: a static table map, name → `URI[:FORMAT]` or `{uri, format}` (templated); added to the
        Spark connection's `tables` extra. Tables not in any map come from Spark's session catalog.
    :param tables_file: a JSON/YAML file holding such a table map (templated).
    :param catalog_config: an Iceberg catalog configuration file, the same the CLI's `--catalog-config` reads
        (templated).
    :param catalog_conn_ids: Iceberg catalogs from Airflow connections (the Iceberg provider's `iceberg` type, or
        any connection whose extras hold pyiceberg properties); the first is the default unless the file names one.
    :param spark_conn_id: a `substrait_spark`, `spark` or `spark_connect` connection; None means `local[*]`.
    :param aws_conn_id: the AWS connection for `s3://` plans (S3-compatible stores via its `endpoint_url`).
    :param plan_conn_id: the connection for `gs://`, `az://` and `abfs://` plans, through Airflow's `ObjectStoragePath`
        (a Google Cloud or Azure connection; needs that store's provider). None or "" (templated, so a Variable can
        choose per deployment): the store client's environment (`GOOGLE_APPLICATION_CREDENTIALS`,
        `AZURE_STORAGE_CONNECTION_STRING`, instance credentials...).
    :param spark_conf: Spark settings on top of the connection's.
    :param update_keys: the columns UPDATE writes match rows by, per table: `{"ns.orders": ["order_id"]}` or
        `{"ns.orders": "order_id,line"}` (templated); before the plan's own key and the table's identifier fields.
    :param audit_log: where each task try's audit record goes (templated): None (the default) is the Iceberg
        table `<namespace>.audit_log` of the default catalog when catalogs are configured, else none;
        `"iceberg:NS.TABLE"`, `"jsonl:/path"`, a mapping, or `"off"` (see `hooks/audit.py`).
    :param audit_strict: fail the task when its audit record cannot be written (default: a warning and a note).
    :param policy: what the plan may read, write and run (templated): a policy file's path or its rules as a
        mapping (`consumer/analysis/policy.py`; docs/reference/policy.md). The Spark connection's `policy` extra
        applies as well. A refused plan fails the task with exit code 5 before Spark starts, not retried.
    :param cast_to_plan_types: cast read columns to the plan's declared types even where that can lose
        information (e.g. `decimal(10,2)` data the plan declares `decimal(5,2)`); without it such a column is a
        schema mismatch that fails the task. The run report's notes list each such cast.

    :param deferrable: (Spark Connect, Airflow >= 3.3) free the worker slot while Spark works: each output's
        operation is submitted, then the task defers to a `ConnectOperationTrigger` that waits for it in the
        triggerer; the task resumes to collect it and start the next. Marking the deferred task failed, clearing
        or killing it interrupts the operation on the server. Default: `[operators] default_deferrable`.
    :param durable: (Airflow >= 3.3, default True) keep what a later try needs in the task state store: a try
        after the worker died reattaches to the Spark Connect operations the earlier try left running, instead of
        submitting them again, and takes the outputs it finished as they were (`hooks/durable.py`). Classic Spark
        cannot be durable (its driver dies with the worker): the report says so. Below Airflow 3.3 every try
        starts afresh (committed write steps are still skipped by their idempotency keys).

    A plan that cannot run (invalid, unsupported, parameter values that do not fit it) fails the task before a
    Spark session is asked for.
    """

    # Where the run's state header lives in the task state store (renaming it breaks in-flight retries).
    external_id_key = HEADER_KEY

    template_fields: Sequence[str] = (
        "plan_uri",
        "parameters",
        "results",
        "expected_sha256",
        "tables",
        "tables_file",
        "catalog_config",
        "update_keys",
        "audit_log",
        "policy",
        "plan_conn_id",
    )
    template_fields_renderers = {
        "parameters": "json",
        "results": "json",
        "tables": "json",
        "update_keys": "json",
        "policy": "json",
    }
    ui_color = "#e3effc"
    operator_extra_links = (SubstraitPlanLink(), SubstraitGraphLink())

    def __init__(
        self,
        *,
        plan_uri: str,
        parameters: Mapping[str, Any] | None = None,
        results: str | Mapping[str, Any] | None = None,
        expected_sha256: str | None = None,
        tables: Mapping[str, Any] | None = None,
        tables_file: str | None = None,
        catalog_config: str | None = None,
        catalog_conn_ids: Sequence[str] = (),
        spark_conn_id: str | None = None,
        aws_conn_id: str | None = "aws_default",
        plan_conn_id: str | None = None,
        spark_conf: Mapping[str, Any] | None = None,
        update_keys: Mapping[str, Sequence[str] | str] | None = None,
        audit_log: str | Mapping[str, Any] | None = None,
        audit_strict: bool = False,
        cast_to_plan_types: bool = False,
        policy: str | Mapping[str, Any] | None = None,
        deferrable: bool = conf.getboolean("operators", "default_deferrable", fallback=False),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.deferrable = deferrable
        self.plan_uri = plan_uri
        self.parameters = parameters
        self.results = results
        self.expected_sha256 = expected_sha256
        self.tables = tables
        self.tables_file = tables_file
        self.catalog_config = catalog_config
        self.catalog_conn_ids = list(catalog_conn_ids)
        self.spark_conn_id = spark_conn_id
        self.aws_conn_id = aws_conn_id
        self.plan_conn_id = plan_conn_id
        self.spark_conf = spark_conf
        self.update_keys = update_keys
        self.audit_log = audit_log
        self.audit_strict = audit_strict
        self.cast_to_plan_types = cast_to_plan_types
        self.policy = policy
        self._spark_hook: SubstraitSparkHook | None = None
        self._job_group: str | None = None
        self._killed = False
        # This task try's run (`hooks/run_sequence.py`): the plan read and parsed once, whether OpenLineage's start
        # event (operators/openlineage.py) asks for it first or `execute` does; its result for the complete and
        # failure events.
        self._plan_run: PlanRun | None = None
        self._result: RunResult | None = None
        self._returned: dict[str, Any] | None = None

    def execute(self, context: Any) -> dict[str, Any]:
        """The task's arguments → the run sequence → what the task publishes: the report (XCom), one Asset event
        per table changed; a failed run fails the task with its typed error (without retries when no try can fix
        it), its failed report still the task's XCom. Durable (the default, with a task state store): through
        `ResumableJobMixin.execute_resumable`, which resumes an earlier try's unfinished run."""
        if (self.durable or self.deferrable) and context.get("task_state_store") is not None:
            return self.execute_resumable(context)
        if self.deferrable:
            self.log.warning("deferrable=True needs the task state store (Airflow 3.3+): the run waits in the task")
        return self._execute_run(context, None)

    def execute_complete(self, context: Any, event: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Back from the trigger: the run goes on where it was (the operation the trigger waited for is collected,
        or run again when the server lost it; the next output starts, and may defer again)."""
        if event:
            self.log.info(
                "Spark Connect operation %s: %s %s",
                event.get("operation_id"),
                event.get("end"),
                event.get("message") or "",
            )
        return self.execute(context)

    def _defer_to_trigger(self, record: dict[str, Any]) -> None:
        """`RunState.detach`: wait for the operation `record` names in the triggerer, not in a worker slot."""
        self.log.info("Deferring: Spark Connect operation %s runs on the server", record["operation_id"])
        self.defer(
            trigger=ConnectOperationTrigger(
                self.spark_conn_id, record["session_id"], record["operation_id"], record.get("user_id") or ""
            ),
            method_name="execute_complete",
        )

    def _state(self, context: Any) -> RunState:
        detach = self._defer_to_trigger if self.deferrable else None
        return RunState(AirflowStore(context["task_state_store"]), detach=detach)

    # --- ResumableJobMixin: the "job" is the run's state header (`hooks/durable.py`) --------------------------

    def submit_job(self, context: Any) -> None:
        """Nothing to submit up front: the run writes its state header itself once the plan's sha256 is known
        (`RunState.resume_or_start`), then records each Spark operation before it starts."""
        return None

    def get_job_status(self, external_id: Any, context: Any) -> str:
        generation = Generation.of(external_id)
        return generation.phase.value if generation is not None else RunPhase.FAILED.value

    def is_job_active(self, status: str) -> bool:
        return status == RunPhase.RUNNING.value

    def is_job_succeeded(self, status: str) -> bool:
        return status == RunPhase.SUCCESS.value

    # The mixin returns this method's value as the task's on a resumed try (the report): hence not None.
    def poll_until_complete(self, external_id: Any, context: Any) -> dict[str, Any]:  # type: ignore[override]
        """Run the plan, resuming what an earlier try left (an unfinished run of the same plan bytes)."""
        self._returned = self._execute_run(context, self._state(context))
        return self._returned

    def get_job_result(self, external_id: Any, context: Any) -> dict[str, Any]:
        """This try's report, or — the run finished in an earlier try whose worker died before the task ended —
        that try's report, published now."""
        if self._returned is not None:
            return self._returned
        stored = RunState(AirflowStore(context["task_state_store"])).finished_report()
        if stored is None:  # the header says finished but the report is not there: run it again, durably
            return self.poll_until_complete(external_id, context)
        report = RunReport.from_dict(stored)
        self.log.info("The run finished in an earlier try of this task: publishing its report")
        self._asset_events(context, report)
        return stored

    def _execute_run(self, context: Any, state: RunState | None) -> dict[str, Any]:
        try:
            run = self._run()
        except SubstraitSparkError as exc:  # the task's configuration (a connection, a catalog) before any plan
            raise _task_error(exc) from exc
        key = run_key(context)
        result = run.execute(
            parameters=self._parameters(),
            run_key=key,
            sink=self._results(),
            audit_context=AuditContext.from_airflow(context, key),
            observer=_TaskObserver(self, context, durable_asked=self.durable),
            state=state,
        )
        self._result = result
        if result.error is not None:
            if result.report is not None:
                context["ti"].xcom_push(key=REPORT_XCOM_KEY, value=result.report.to_dict())
            raise _task_error(result.error) from result.error
        report = result.raise_error()
        self._asset_events(context, report)
        return report.to_dict()

    def _run(self) -> PlanRun:
        """This task try's run of `plan_uri` (one per try: built by whichever comes first, OpenLineage's start
        event or `execute`)."""
        if self._plan_run is None or self._plan_run.plan != self.plan_uri:
            self._plan_run = PlanRun(self._runner(), self.plan_uri)
        return self._plan_run

    def _log_report(self, report: RunReport) -> None:
        """What the run did, a line per part (`narration.report_lines`): the plan read, tables resolved,
        parameters, each step and root output with its rows and seconds, the outcome."""
        for line in report_lines(report):
            self.log.info("%s", line)

    def _parameters(self) -> dict[str | int, Any]:
        """The rendered `parameters`, by anchor."""
        return {anchor: value for anchor, value in (self.parameters or {}).items()}

    def _results(self) -> str | dict[str, Any] | None:
        """The rendered `results`: a string, or a mapping as `Sink.parse` takes it."""
        return dict(self.results) if isinstance(self.results, Mapping) else self.results

    def _runner(self) -> PlanRunner:
        """This task's run (`hooks/plan_run.py`): the operator's arguments, the plan store of `aws_conn_id` and
        `plan_conn_id`, the catalogs of the file and `catalog_conn_ids`, the Spark connection's table map and
        session."""
        settings = RunSettings(
            tables=self.tables or {},
            tables_file=self.tables_file,
            catalog_config=self.catalog_config,
            expected_sha256=self.expected_sha256,
            audit_log=self.audit_log,
            audit_strict=self.audit_strict,
            update_keys=self.update_keys or {},
            cast_to_plan_types=self.cast_to_plan_types,
            policy=self.policy,
        )
        self._spark_hook = SubstraitSparkHook(self.spark_conn_id, conf=self.spark_conf)
        return PlanRunner(
            settings,
            store=PlanStoreHook(aws_conn_id=self.aws_conn_id, plan_conn_id=self.plan_conn_id or None),
            catalogs=self._catalogs(),
            base_tables=lambda: self._spark_hook.table_map,  # type: ignore[union-attr]
            session=self._session,
            base_policy=lambda: self._spark_hook.policy,  # type: ignore[union-attr]
            bind_hint=BIND_HINT,
        )

    def _session(self, catalog_conf: Callable[[Sequence[str]], dict[str, str]]) -> Any:
        """The connection's session, with the catalogs' settings (`catalog_conf`: none without catalogs; Iceberg's
        jars unless the connection brings Iceberg from spark.jars.packages)."""
        hook = self._spark_hook
        assert hook is not None
        target = hook.target
        packages = [*target.packages, *target.conf.get("spark.jars.packages", "").split(",")]
        conf = catalog_conf(packages)
        if conf:
            hook.add_conf(conf)
        return hook.get_session()

    def _asset_events(self, context: Any, report: RunReport) -> None:
        """One Asset event per table the plan's steps changed: on the declared outlet Asset of that table (by
        name = the table's identity, or by its `iceberg://` URI), else added to the first declared AssetAlias.
        Extra: `rows_changed` (the rows the steps changed, not the table's size), snapshot id, plan sha256 and the
        steps' figures."""
        changed = changed_tables(report)
        if not changed:
            return
        from airflow.sdk import Asset, AssetAlias

        declared = {k: a for a in self.outlets if isinstance(a, Asset) for k in (a.name, a.uri)}
        aliases = [a for a in self.outlets if isinstance(a, AssetAlias)]
        events = context["outlet_events"]
        for target, change in changed.items():
            extra = change.extra()
            asset = declared.get(target) or declared.get(asset_uri(target))
            if asset is not None:
                events[asset].extra = extra
            elif aliases:
                events[aliases[0]].add(Asset(uri=asset_uri(target), name=target), extra=extra)
            else:
                self.log.info("Table %s changed; declare an outlet Asset or AssetAlias for an Asset event", target)

    # --- OpenLineage (operators/openlineage.py; never fails nor slows the task) ---------------------------------

    def get_openlineage_facets_on_start(self) -> Any:
        """Lineage from the plan alone: its tables as it names them, its writes, column lineage, the plan. The plan
        read and parsed here is the one the task runs (`_run`)."""
        from substrait_spark.operators import openlineage as ol

        def build() -> Any:
            planned = self._run().load()
            obj = planned.source
            return ol.on_start(planned.loaded, obj.uri if obj else self.plan_uri, obj.version_id if obj else None)

        return ol.guarded("start", build)

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        """Resolved tables read (schema, snapshot), tables written (rows, lifecycle, column lineage), the plan."""
        return self._ol_from_report("complete", complete=True)

    def get_openlineage_facets_on_failure(self, task_instance: Any) -> Any:
        """Whatever the failed run's report holds (the plan facet at least, once the plan was read)."""
        return self._ol_from_report("failure", complete=False)

    def _ol_from_report(self, what: str, complete: bool) -> Any:
        from substrait_spark.operators import openlineage as ol

        def build() -> Any:
            run, result = self._plan_run, self._result
            planned = run.planned if run is not None else None
            if result is None or result.report is None:
                if planned is None:
                    return ol.on_start_empty()
                return ol.on_start(planned.loaded, self.plan_uri, run.source.version_id if run and run.source else None)
            catalogs = run.runner.catalogs if run is not None else None
            return ol.build(result.report, planned.loaded if planned else None, catalogs, complete=complete)

        return ol.guarded(what, build)

    def _catalogs(self) -> Catalogs | None:
        """The Iceberg catalogs: the configuration file's, then the connections'."""
        base = Catalogs.from_file(self.catalog_config) if self.catalog_config else None
        if self.catalog_conn_ids:
            from substrait_spark.hooks.iceberg_hook import catalogs_from_connections

            return catalogs_from_connections(self.catalog_conn_ids, base)
        return base

    def on_kill(self) -> None:
        """Cancel exactly this task's Spark jobs (its job group) and the Connect operations it waits for (one it
        reattached to carries an earlier try's tags); other tasks sharing the session go on."""
        self._killed = True
        from substrait_spark.consumer.running.connect_operations import interrupt_in_flight

        stopped = interrupt_in_flight()
        if stopped:
            self.log.info("Interrupted Spark Connect operation(s) %s", ", ".join(stopped))
        if self._spark_hook is not None and self._job_group is not None:
            self._spark_hook.cancel(self._job_group)


class _TaskObserver(RunObserver):
    """The operator's part of a task try's run (`hooks/run_sequence.RunObserver`): the plan link (XCom) and the
    plan's line in the task log once it is read; the try's Spark job group and stage progress around the run;
    the report's lines and the audit record's line in the task log."""

    def __init__(self, operator: SubstraitSparkOperator, context: Any, *, durable_asked: bool = False):
        self.operator, self.context = operator, context
        self.durable_asked = durable_asked

    def on_read(self, obj: PlanObject) -> None:
        op = self.operator
        store = op._run().runner.store
        self.context["ti"].xcom_push(key=PLAN_LINK_XCOM_KEY, value=plan_link(obj.uri, obj.version_id, _endpoint(store)))
        op.log.info("Plan %s: %d bytes, sha256 %s, version %s", obj.uri, obj.size, obj.sha256, obj.version_id)

    @contextlib.contextmanager
    def running(self, spark: Any, planned: PlanInput) -> Iterator[None]:
        op = self.operator
        op._job_group = job_group_id(self.context)
        if op._killed:  # on_kill came while the session was starting: no job to cancel yet, so none may start
            raise AirflowException("the task was killed before its plan started")
        uri = planned.source.uri if planned.source is not None else op.plan_uri
        description = f"{op.dag_id}.{op.task_id}: {uri}"
        op.log.info("Running the plan in Spark job group %s", op._job_group)
        assert op._spark_hook is not None and spark is not None
        # Long Spark stages of this task's job group: a line at most every 5 s (`hooks/spark_progress.py`).
        progress = StageProgress(spark, f"Plan {uri}", op.log.info, job_group=op._job_group)
        with op._spark_hook.job_group(op._job_group, description), progress:
            yield

    def on_report(self, report: RunReport, error: SubstraitSparkError | None) -> None:
        op = self.operator
        if self.durable_asked and report.durability is None and report.status is not RunStatus.RUNNING:
            report.durability = Durability.NO_STATE
        if error is None:
            assert op._spark_hook is not None
            report.spark_application_id = op._spark_hook.application_id()
        op._log_report(report)

    def on_audit(self, result: AuditResult | None) -> None:
        """One audit record per task try (hooks/audit.py); never fails the task unless `audit_strict`."""
        if result is not None:
            self.operator.log.info("Audit record %s: %s (%s)", result.record_id, result.status, result.location)


def _task_error(exc: SubstraitSparkError) -> AirflowException:
    """The typed error as the task's failure: errors another try cannot fix fail it without retrying."""
    message = exc.describe()
    return AirflowFailException(message) if exc.exit_code in NOT_RETRYABLE else AirflowException(message)


def asset_uri(target: str) -> str:
    """`catalog.namespace.table` as an Asset URI: `iceberg://catalog/namespace/table`."""
    return "iceberg://" + "/".join(target.split("."))


def run_key(context: Any) -> str:
    """What makes write steps retry-safe: the same for every try of this task in this DAG run."""
    ti = context["ti"]
    return f"{ti.dag_id}/{ti.run_id}/{ti.task_id}/{getattr(ti, 'map_index', -1)}"


def job_group_id(context: Any) -> str:
    """One job group per task try: dag, task, run, try (Connect tags take no commas)."""
    ti = context["ti"]
    raw = f"substrait:{ti.dag_id}:{ti.task_id}:{ti.run_id}:{getattr(ti, 'map_index', -1)}:{ti.try_number}"
    return re.sub(r"[,\s]", "_", raw)


def _endpoint(store: PlanStoreHook) -> str | None:
    """The S3-compatible endpoint of the AWS connection, for links; None for AWS itself or no connection."""
    if not store.aws_conn_id:
        return None
    try:
        from airflow.providers.amazon.aws.hooks.s3 import S3Hook

        return S3Hook(aws_conn_id=store.aws_conn_id).conn_config.endpoint_url
    except Exception:  # a missing connection only costs the link its endpoint
        return None
