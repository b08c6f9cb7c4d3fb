"""One plan's run, the same for every front end (the CLI, `run_plan`, the Airflow operator, Dagster, Pipes):
read → sha256 pin → parse → check → session → run → audit record → report, and the failed path — a plan that
fails to load, check, run or be audited still gets its failed report (the error's, or one naming the plan) and its
audit record.

    run = PlanRun(runner, "s3://plans/q06.bin")           # runner: hooks/plan_run.PlanRunner
    result = run.execute(parameters={0: "2024-01-31"}, run_key=key, sink=sink, observer=my_observer)
    result.report, result.planned, result.audit, result.error, result.exit_code

What is a front end's own comes in through a `RunObserver` (every method a no-op by default): the operator's
plan-link XCom and log lines, its Spark job group, a CLI's progress lines. What it publishes (files, XComs, Asset
events, Pipes materializations, the RunReport) it does with the `RunResult`, after `execute` returns.

`execute` does not raise the engine's typed errors: they are the result's `error` (`RunResult.raise_error()`
raises it). Any other exception (a bug, an orchestrator's own, an observer's) propagates.

The stages are memoized, failures too: `read()`, `load()` and `check(parameters)` may be called before `execute`
(the CLI loads and checks a batch of plans before it starts Spark; OpenLineage's start event parses the plan before
the Airflow task runs it) and `execute` then reuses them — a plan is read once and parsed once per `PlanRun`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from substrait_spark.consumer.errors import ExitCode, SubstraitSparkError
from substrait_spark.hooks.durable import RunPhase, RunState
from substrait_spark.hooks.plan_run import NOT_RETRYABLE, PlanInput, PlanRunner, PlanSource
from substrait_spark.hooks.plan_store import PlanObject

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from substrait_spark.consumer.loading.loader import LoadedPlan
    from substrait_spark.consumer.running.report import RunReport
    from substrait_spark.consumer.running.sinks import Sink
    from substrait_spark.hooks.audit import AuditContext, AuditResult


class RunObserver(Protocol):
    """What a front end does at each point of a run. A class deriving from this one does nothing at a point it does
    not override; one that does not derive from it (to keep the plan loader out of a module's imports, as the CLI's
    `_PlanObserver`) has them all. Called in this order: `on_read` (the bytes read, before the sha256 pin),
    `on_loaded` (pinned and parsed), `running` (a context around the run, once the session is there), `on_report`
    (the run's report, before its audit record), `on_audit`. On the failed path: `on_error` first, then `on_report`
    (if the error carries a report), then `on_audit`."""

    def on_read(self, obj: PlanObject) -> None:
        """The plan's bytes were read (not yet checked against the pin)."""
        return None

    def on_loaded(self, planned: PlanInput) -> None:
        """The plan is pinned and parsed (not yet checked)."""
        return None

    @contextlib.contextmanager
    def running(self, spark: SparkSession, planned: PlanInput) -> Iterator[None]:
        """Around the run itself (a job group, stage progress); may raise to stop the run before it starts."""
        yield

    def on_report(self, report: RunReport, error: SubstraitSparkError | None) -> None:
        """The run's report (`error`: the typed error it failed with, None when it ran), before its audit record."""
        return None

    def on_audit(self, result: AuditResult | None) -> None:
        """The audit record written (None: no audit log)."""
        return None

    def on_error(self, error: SubstraitSparkError) -> None:
        """The run failed (loading, checking, running or a strict audit log): the first thing on the failed path."""
        return None


class _NoObserver(RunObserver):
    """A front end with nothing of its own to do (`run_plan`, Pipes)."""


NO_OBSERVER = _NoObserver()


@dataclass
class RunResult:
    """What a run gave: its report (None when it failed before the plan was loaded, or by its strict audit log),
    the plan read and parsed (None when that failed), its audit record (None: no audit log) and its typed error."""

    report: RunReport | None
    planned: PlanInput | None
    audit: AuditResult | None = None
    error: SubstraitSparkError | None = None

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode(self.error.exit_code) if self.error is not None else ExitCode.OK

    def raise_error(self) -> RunReport:
        """The report of a run that ran, else its typed error raised."""
        if self.error is not None:
            raise self.error
        assert self.report is not None
        return self.report


class _Memo:
    """A stage's outcome: its value, or the typed error it failed with (raised again on every call)."""

    def __init__(self) -> None:
        self.done = False
        self.value: Any = None
        self.error: SubstraitSparkError | None = None

    def get(self, compute: Any) -> Any:
        if not self.done:
            try:
                self.value = compute()
            except SubstraitSparkError as exc:
                self.error = exc
            self.done = True
        if self.error is not None:
            raise self.error
        return self.value


class PlanRun:
    """The run of one plan (a path or URI, bytes, a `PlanObject` read already, a LoadedPlan or a `PlanInput`) with
    a `PlanRunner` (which holds the settings, the plan store, the catalogs, the session and the audit log)."""

    def __init__(self, runner: PlanRunner, plan: PlanSource | LoadedPlan | PlanInput):
        self.runner = runner
        self.plan = plan
        self._read, self._load, self._check = _Memo(), _Memo(), _Memo()

    @property
    def plan_uri(self) -> str | None:
        """What the plan is called in a failed report before it is read: its path or URI."""
        plan = self.plan
        if isinstance(plan, str | os.PathLike):
            return str(plan)
        if isinstance(plan, PlanObject):
            return plan.uri
        if isinstance(plan, PlanInput):
            return plan.loaded.uri
        return getattr(plan, "uri", None)

    @property
    def source(self) -> PlanObject | None:
        """The object read (None until read, or for a plan given as bytes or parsed already)."""
        if isinstance(self.plan, PlanObject):
            return self.plan
        if isinstance(self.plan, PlanInput):
            return self.plan.source
        return self._read.value

    @property
    def planned(self) -> PlanInput | None:
        """The plan pinned and parsed, once `load()` succeeded."""
        return self.plan if isinstance(self.plan, PlanInput) else self._load.value

    # --- the stages (memoized) --------------------------------------------------------------------------------

    def read(self) -> PlanObject | None:
        """The plan's bytes from the plan store (refused unread when larger than the bounds), not yet pinned; None
        for a plan given as bytes, a `PlanObject`, a LoadedPlan or a `PlanInput` (nothing to read)."""
        plan, runner = self.plan, self.runner
        if not isinstance(plan, str | os.PathLike):
            return None
        return self._read.get(lambda: runner.bounded(lambda: runner.store.read(plan, limits=runner.limits)))  # type: ignore[no-any-return]

    def load(self) -> PlanInput:
        """Read, pinned (`expected_sha256`) and parsed (within the engine's and the policy's bounds)."""
        if isinstance(self.plan, PlanInput):
            return self.plan

        def load() -> PlanInput:
            obj = self.read()
            return self.runner.load(obj if obj is not None else self.plan)  # type: ignore[arg-type]

        return self._load.get(load)  # type: ignore[no-any-return]

    def check(self, parameters: Mapping[str | int, Any] | None = None) -> PlanInput:
        """Loaded and checked with `parameters` (the first call's: a plan is checked once): everything the run
        would refuse is refused here, before Spark, with a failed report on the error."""
        return self._check.get(lambda: self.runner.check(self.load(), parameters))  # type: ignore[no-any-return]

    # --- the sequence -----------------------------------------------------------------------------------------

    def execute(
        self,
        *,
        parameters: Mapping[str | int, Any] | None = None,
        run_key: str | None = None,
        sink: Sink | str | Mapping[str, Any] | None = None,
        slot: int = 0,
        audit_context: AuditContext | None = None,
        observer: RunObserver = NO_OBSERVER,
        state: RunState | None = None,
    ) -> RunResult:
        """read → pin → parse → check → session → run → audit record → report (the stages already done are not
        done again). `parameters` bind the plan's dynamic parameters; `run_key` and `slot` make its write steps
        retry-safe (`PlanRunner.run`); `sink`: where root rows go, a `Sink` or what `Sink.parse` takes (read once the
        plan is checked; None: run and count); `audit_context`: who ran
        (default: the run key alone, a fresh record id); `state`: where a durable run keeps what a later try
        resumes from (`hooks/durable.py`: an earlier try's unfinished run of the same plan bytes is resumed)."""
        from substrait_spark.consumer.running.sinks import Sink  # PySpark's: once a plan runs

        context = audit_context or _audit_context(run_key)
        try:
            obj = self.read()
            if obj is not None:
                observer.on_read(obj)
            observer.on_loaded(self.load())
            checked = self.check(parameters)
            into = Sink.parse(dict(sink) if isinstance(sink, Mapping) else sink)
            spark = self.runner.spark
            ledger = None
            if state is not None:
                finished = state.finished_report(checked.loaded.sha256)
                if finished is not None:  # an earlier try ran it to the end: its report, nothing run again
                    return self._finished_earlier(finished, checked, context, observer)
                state.resume_or_start(checked.loaded.sha256, obj.version_id if obj is not None else None)
                ledger = state.ledger()
            with observer.running(spark, checked):
                report = self.runner.run(
                    checked, parameters=parameters, run_key=run_key, sink=into, slot=slot, ledger=ledger
                )
        except SubstraitSparkError as exc:
            if state is not None and exc.exit_code in NOT_RETRYABLE:
                state.finish(RunPhase.FAILED)  # no try can fix it: a later one (after a fix) starts afresh
            return self.failed(exc, context, observer)
        if state is not None:
            state.finish(RunPhase.SUCCESS, report.to_dict())
        observer.on_report(report, None)
        try:
            audit = self._record(report, context, observer)
        except SubstraitSparkError as exc:  # a strict audit log that could not be written
            return self.failed(exc, context, observer)
        return RunResult(report, checked, audit)

    def _finished_earlier(
        self, stored: Mapping[str, Any], checked: PlanInput, context: AuditContext, observer: RunObserver
    ) -> RunResult:
        from substrait_spark.consumer.running.report import Resume, RunReport

        report = RunReport.from_dict(stored)
        for out in report.outputs:
            out.resumed = Resume.EARLIER
        report.notes.append("the run finished in an earlier try with this state: its outputs were not run again")
        observer.on_report(report, None)
        return RunResult(report, checked, self._record(report, context, observer))

    def failed(
        self,
        error: SubstraitSparkError,
        audit_context: AuditContext | None = None,
        observer: RunObserver = NO_OBSERVER,
    ) -> RunResult:
        """The failed path: the observer told, the error's report (the object version read on it) shown, the audit
        record of that report — or of a failed report naming the plan when it failed before it was loaded — written
        (not for a strict audit log's own error; a strict log's error here leaves the run's error the one
        reported)."""
        from substrait_spark.hooks.audit import AuditError

        observer.on_error(error)
        report: RunReport | None = getattr(error, "report", None)
        source = self.source
        if report is not None:
            if source is not None and not report.plan_version_id:
                report.plan_version_id = source.version_id
            observer.on_report(report, error)
        audit = None
        if not isinstance(error, AuditError):
            context = audit_context or _audit_context(None)
            with contextlib.suppress(SubstraitSparkError):
                audit = self._record(report or failed_report(self.plan_uri, error), context, observer)
        return RunResult(report, self.planned, audit, error)

    def _record(self, report: RunReport, context: AuditContext, observer: RunObserver) -> AuditResult | None:
        result = self.runner.record(report, context)
        observer.on_audit(result)
        return result


def failed_report(plan_uri: str | None, error: SubstraitSparkError) -> RunReport:
    """What the audit records of a plan that failed before it was loaded (its error carries no report)."""
    from substrait_spark.consumer.running.report import RunReport, RunStatus

    return RunReport(
        plan_uri=plan_uri,
        plan_sha256=None,
        producer=None,
        spec_version=None,
        status=RunStatus.FAILED,
        started_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        error=error.record(),
    )


def _audit_context(run_key: str | None) -> AuditContext:
    from substrait_spark.hooks.audit import AuditContext

    return AuditContext(run_key=run_key)
