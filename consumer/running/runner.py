"""Run a loaded plan: translate each root, send its rows to a sink, and record a RunReport."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession

from ..analysis.analyze import Finding, validate_plan
from ..errors import SubstraitSparkError, UnsupportedFeatureError
from ..loading.loader import LoadedPlan
from ..translation.consumer import SubstraitConsumer
from ..translation.conversions import exactly_as
from ..translation.nullability import with_nullability
from ..translation.parameters import Parameters
from ..translation.steps import NO_WRITE_CATALOG
from .clients import connect_identity, engine_settings, recorded_operations
from .connect_operations import CommandRunner, Ledger, MemoryLedger
from .report import Resume, RootOutput, RunReport, RunStatus, plain, record_of
from .resolver import TableResolver
from .sinks import TYPED_SINKS, Sink, deliver
from .spark_errors import spark_error
from .steps.execute import execute_steps
from .steps.log import StepLog
from .steps.targets import WriteTargets, targets_of
from .steps.update_key import caller_keys


def new_report(loaded: LoadedPlan) -> RunReport:
    """The report of a run of `loaded`, started now."""
    return RunReport(
        plan_uri=loaded.uri,
        plan_sha256=loaded.sha256,
        producer=loaded.producer,
        spec_version=loaded.spec_version,
        started_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        notes=list(loaded.notes),
    )


def fail(report: RunReport, exc: SubstraitSparkError) -> None:
    """Record the typed error in the report, and the report on the error (`exc.report`) for the caller."""
    report.status = RunStatus.FAILED
    report.error = exc.record()
    exc.report = report  # type: ignore[attr-defined]


def unsupported(findings: list[Finding]) -> UnsupportedFeatureError:
    """The error a run stops with when `validate` finds unsupported features: the first, and how many more."""
    first, more = findings[0], len(findings) - 1
    extra = f" (and {more} more unsupported feature(s); `validate` lists them)" if more else ""
    return UnsupportedFeatureError(first.feature + extra, first.path)


def preflight(
    loaded: LoadedPlan,
    *,
    parameters: Mapping[str | int, Any] | None = None,
    consumer_class: type[SubstraitConsumer] = SubstraitConsumer,
    before: Callable[[LoadedPlan], None] | None = None,
    tables: Callable[[LoadedPlan], None] | None = None,
) -> None:
    """Refuse, before any Spark session starts, what a run would refuse anyway: what `before` refuses (the run's
    policy: exit 5), a feature the consumer class does not translate (what `validate` reports: exit 3; a malformed
    plan: exit 2), what `tables` refuses (a table missing or of other types than the plan declares, as far as
    it can be seen without Spark: exit 4, `running/table_check.py`) and parameter values that do not fit the plan
    (exit 2). Raises the typed error with a failed RunReport on it (`exc.report`)."""
    start = time.perf_counter()
    try:
        if before is not None:
            before(loaded)
        findings = validate_plan(loaded, consumer_class)
        if findings:
            raise unsupported(findings)
        if tables is not None:
            tables(loaded)
        Parameters.bind(loaded.plan, parameters).bound(loaded.plan)
    except SubstraitSparkError as exc:
        report = new_report(loaded)
        report.duration_s = round(time.perf_counter() - start, 3)
        fail(report, exc)
        raise


def _translated(consumer: SubstraitConsumer, n: int, report: RunReport) -> DataFrame:
    """Root `n` translated (nothing runs), the time added to the report's `translate_ms`."""
    t0 = time.perf_counter()
    df = consumer.root(n)
    report.translate_ms = round((report.translate_ms or 0) + (time.perf_counter() - t0) * 1000, 2)
    return df


def _root_and_steps(consumer: SubstraitConsumer, log: StepLog, n: int, report: RunReport) -> DataFrame:
    """Translate root `n`, then run the steps it holds, in plan order (each timed in its own record): before the
    next root is translated, which may read what they wrote. Where a step outputs the rows it modified, the root
    is built again around them (its steps ran: none is recorded twice)."""
    try:
        df = _translated(consumer, n, report)
    except Exception:
        # The steps translated before the failure run, as when translating a step committed it; a step whose
        # input failed to translate is recorded failed, with this error.
        execute_steps(consumer, log, consumer.take_steps())
        raise
    if consumer.steps_ran(execute_steps(consumer, log, consumer.take_steps())):
        df = _translated(consumer, n, report)
    return df


def _output_key(n: int) -> str:
    return f"output.{n}"


def _earlier_output(ledger: Ledger | None, n: int) -> RootOutput | None:
    """Output `n` as an earlier try of this durable run delivered it (not delivered again), else None."""
    found = ledger.get(_output_key(n)) if ledger is not None else None
    if found is None:
        return None
    out = record_of(RootOutput, found)
    out.resumed = Resume.EARLIER
    return out


# How an output came about, from its operations': the first of these kinds any of them has.
_OUTPUT_RESUME = (Resume.REATTACHED, Resume.RERUN, Resume.FRESH)


def _deliver(
    df: DataFrame,
    sink: Sink,
    out: RootOutput,
    commands: CommandRunner | None,
    *,
    durable: bool,
    n: int,
    roots: int,
    empty: bool,
) -> None:
    """`deliver`, on Spark Connect with the output's commands run (and recorded) by `commands`."""
    if commands is None:
        deliver(df, sink, out, index=n, roots=roots, empty=empty)
        return
    with commands.output(_output_key(n)) as operations:
        deliver(df, sink, out, index=n, roots=roots, empty=empty)
    out.operations = list(operations)
    if durable:
        kinds = {op.resumed for op in operations}
        out.resumed = next((k for k in _OUTPUT_RESUME if k in kinds), Resume.EARLIER if kinds else Resume.FRESH)


def run_loaded(
    loaded: LoadedPlan,
    spark: SparkSession,
    resolver: TableResolver,
    *,
    sink: Sink | None = None,
    parameters: Mapping[str | int, Any] | None = None,
    consumer_class: type[SubstraitConsumer] = SubstraitConsumer,
    run_key: str | None = None,
    slot: int = 0,
    targets: WriteTargets | None = None,
    update_keys: Mapping[str, Sequence[str] | str] | None = None,
    cast_to_plan_types: bool = False,
    ledger: Ledger | None = None,
) -> RunReport:
    """Execute every root of the plan into `sink` (default: run and count). Errors are recorded in the report
    and re-raised typed; the report rides on the error as `exc.report`. Callers that start Spark for the run
    call `preflight` first, so that a plan that cannot run never waits for a session.

    Write/DDL/update relations run as steps, in plan order, into `targets` (default: the resolver, if it can
    name write targets): translating a root records its steps, which run once it is translated, before the next
    root is translated (`translate_ms` is translation alone; each step's time is in its own record). `run_key`
    (e.g. `dag/run/task`, not the try number) makes them retry-safe: a step an earlier run of this plan with the
    same key committed is skipped. `slot` is the plan's place in the caller's
    batch of plans sharing `run_key` (the CLI's position on the command line; see `steps.log` for the key).
    `update_keys` (table name → key columns) says which columns UPDATE writes match rows by, before the plan's
    own key and the table's identifier fields (`steps.update_key`). `cast_to_plan_types` casts read columns to the
    plan's declared types even where the cast can lose information (else a schema mismatch, exit 4); the report's
    notes list each such cast.

    On Spark Connect each output's commands run as reattachable executions whose ids are kept in `ledger`
    (`connect_operations.py`): a later try given the same ledger (the caller's task state) takes an output an
    earlier try finished as it was, reattaches to one still running and runs one the server lost again; each
    output says so (`RootOutput.resumed`). Without a ledger the run keeps its own, for this process only."""
    sink = sink or Sink()
    report = new_report(loaded)
    report.spark_application_id = spark.conf.get("spark.app.id", None)
    report.spark_connect = connect_identity(spark)
    commands = CommandRunner(spark, ledger or MemoryLedger()) if report.spark_connect is not None else None
    with engine_settings(spark), recorded_operations(spark) as operations:
        if report.spark_connect is not None:
            report.spark_connect["operation_ids"] = operations  # filled as the run's operations finish
        start = time.perf_counter()
        consumer = None
        log: StepLog | None = None
        try:
            consumer = consumer_class(spark, loaded.plan, resolver, parameters, cast_to_plan_types=cast_to_plan_types)
            report.parameters = consumer.parameters.bound(loaded.plan)
            log = StepLog(
                targets if targets is not None else targets_of(resolver),
                run_key or f"adhoc-{consumer.run_id}",
                loaded.sha256,
                slot=slot,
                update_keys=caller_keys(update_keys),
            )
            if log.targets is None:  # refused where translation meets them, as nothing could run them
                consumer.steps_refused = NO_WRITE_CATALOG
            report.notes.extend([*consumer.quirks.notes(), *consumer.extensions.notes()])
            roots = [i for i, r in enumerate(loaded.plan.relations) if r.WhichOneof("rel_type") == "root"]
            for n in range(len(roots)):
                df = _root_and_steps(consumer, log, n, report)
                try:
                    # The names the consumer attached: no analysis round trip on Spark Connect, where the server
                    # analyzes the plan once, when `deliver` runs it (a rejection is named below).
                    out = RootOutput(index=n, columns=consumer.root_columns[n])
                    if sink.kind in TYPED_SINKS:  # the table it creates has the root's declared types
                        df = exactly_as(df, consumer.root_types[n], f"root {n}")
                        # and optional columns (a root declares no nullability): not what Spark infers
                        df = with_nullability(df, [True] * len(consumer.root_types[n]), f"root {n}")
                    earlier = _earlier_output(ledger, n)
                    if earlier is not None:
                        report.outputs.append(earlier)
                        continue
                    _deliver(
                        df,
                        sink,
                        out,
                        commands,
                        durable=ledger is not None,
                        n=n,
                        roots=len(roots),
                        empty=n in consumer.empty_roots,
                    )
                except SubstraitSparkError:
                    raise
                except AnalysisException as exc:
                    if not consumer.lazy:
                        raise spark_error(exc) from exc
                    # Spark Connect analyzes the plan here, with its first use: name the relation it rejects.
                    raise consumer.rejection(exc, f"relations[{roots[n]}].root") from exc
                except Exception as exc:
                    raise spark_error(exc) from exc
                report.outputs.append(out)
                if ledger is not None:
                    ledger.put(_output_key(n), plain(out))
            report.status = RunStatus.SUCCESS
            return report
        except SubstraitSparkError as exc:
            fail(report, exc)
            raise
        finally:
            report.duration_s = round(time.perf_counter() - start, 3)
            if consumer is not None:
                report.tables_read = consumer.tables_read
                report.steps = list(log.steps) if log is not None else []
                report.notes.extend(c.note() for c in consumer.lossy_casts)
                consumer.close()
