"""`substrait-spark`: run, validate and explain Substrait plans on Spark, and give their lineage, from the command line.

Exit codes: 0 ok · 1 execution failed · 2 invalid input · 3 unsupported feature · 4 resolution failed ·
5 refused by policy. Errors are one line on stderr; `--debug` adds the traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from substrait_spark.cli_output import DEFAULT_LIMIT, PlanProgress, Progress, preview_rows, print_result
from substrait_spark.consumer.errors import ExitCode, RunReportError, SubstraitSparkError
from substrait_spark.consumer.records import described
from substrait_spark.consumer.running.report import RunReport
from substrait_spark.consumer.running.sink_kinds import FILE_FORMATS

PROG = "substrait-spark"
BIND_HINT = "--param {anchor}=VALUE"  # how a CLI user gives a dynamic parameter's value (`UnboundParameterError`)
SUMMARY_PLANS = "plans"  # summary.json (`run --output-dir`): {"plans": [the entry of each plan, in order]}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Run Substrait query plans on Apache Spark.")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks")
    sub = p.add_subparsers(dest="command", required=True)

    def tables(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--tables-dir", help="bind DIR/<name>.parquet (file or folder) to table <name>")
        sp.add_argument(
            "--table",
            action="append",
            default=[],
            type=_name_value("NAME=URI[:FORMAT]"),
            metavar="NAME=URI[:FORMAT]",
            help="bind one table",
        )
        sp.add_argument(
            "--tables-file",
            metavar="FILE",
            help="a table map (YAML/JSON: {name: URI[:FORMAT] or {uri, format}}); it wins a name over --tables-dir "
            "and --table",
        )
        sp.add_argument("--catalog-config", metavar="FILE", help="Iceberg catalogs (YAML/JSON) to resolve tables in")
        sp.add_argument("--master", help="Spark master URL (default local[*]; spark://host:port, sc://host:port)")
        sp.add_argument(
            "--connect-timeout",
            type=_seconds,
            metavar="SECONDS",
            help="how long a Spark Connect server (--master sc://...) has to answer before the run fails, exit 1 "
            "(default 20)",
        )
        sp.add_argument(
            "--cast-to-plan-types",
            action="store_true",
            help="cast read columns to the plan's declared types even where that can lose information (else a "
            "schema mismatch, exit 4); the run report's notes list each such cast",
        )

    def policy(sp: argparse.ArgumentParser) -> None:
        sp.add_argument(
            "--policy",
            metavar="FILE",
            help="what plans may read, write and run (YAML/JSON; docs/reference/policy.md): exit 5 if refused",
        )

    run = sub.add_parser("run", help="run plans and write or print their results")
    run.add_argument("plans", nargs="+", metavar="PLAN")
    tables(run)
    policy(run)
    run.add_argument("--output-dir", help="write <plan stem>.<format> per plan and summary.json here")
    run.add_argument("--output-format", choices=[f.value for f in FILE_FORMATS], default="csv")
    run.add_argument(
        "--run-key",
        metavar="KEY",
        help="make write/DDL steps retry-safe: a step a run of the same plan, at the same place on the command line, "
        "committed under this key is skipped (a changed plan needs a new key)",
    )
    run.add_argument(
        "--state",
        metavar="FILE",
        help="a durable run: keep here what a rerun after a crash resumes from (on Spark Connect it reattaches to "
        "each output's operation still running on the server instead of submitting it again; outputs finished "
        "are not run again; a plan the state says finished is reported from it, not run again: a new file "
        "starts afresh)",
    )
    run.add_argument(
        "--audit-log",
        metavar="SPEC",
        help="write one audit record per plan run: 'iceberg[:[CATALOG.]NS.TABLE]' (default table "
        "<namespace>.audit_log in the default catalog) or 'jsonl:PATH'",
    )
    run.add_argument("--audit-strict", action="store_true", help="fail the run when its audit record cannot be written")
    run.add_argument(
        "--update-key",
        action="append",
        default=[],
        metavar="TABLE=COL[,COL...]",
        help="the columns UPDATE writes to TABLE match rows by (before the plan's key and identifier fields)",
    )
    run.add_argument(
        "--param",
        action="append",
        default=[],
        type=_name_value("NAME=VALUE", empty_value=True),
        metavar="NAME=VALUE",
        help="bind dynamic parameter NAME (its anchor: 0 or $0) to VALUE, typed as the plan declares",
    )

    run.add_argument(
        "--limit",
        type=_row_limit,
        default=None,
        metavar="N",
        help=f"print at most N rows of each result (default {DEFAULT_LIMIT}; 0: all); the row count is always the "
        "real one. Not with --output-dir (files get every row)",
    )
    run.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress lines or summary table on stderr (errors are still printed)",
    )

    val = sub.add_parser(
        "validate",
        help="exit 0 iff every feature of every plan is supported and (with table options) every table it reads is "
        "there with the declared types; no Spark",
    )
    val.add_argument("plans", nargs="+", metavar="PLAN")
    val.add_argument("--json", action="store_true", help="print findings as JSON")
    policy(val)
    tables(val)  # as run's: the tables are looked up where run finds them, without Spark

    exp = sub.add_parser("explain", help="the plan as a tree with schemas, and Spark's physical plan")
    exp.add_argument("plan", metavar="PLAN")
    tables(exp)
    exp.add_argument(
        "--format",
        choices=["text", "svg", "html"],
        default="text",
        help="text: the tree and Spark's plan; svg/html: the plan as a graph (no Spark session)",
    )
    exp.add_argument("--output", metavar="FILE", help="svg/html: write the picture here instead of stdout")
    exp.add_argument(
        "--report", metavar="FILE", help="svg/html: a run report (JSON) whose tables, snapshots and steps to show"
    )

    lin = sub.add_parser("lineage", help="tables read and written, and column lineage (OpenLineage), as JSON")
    lin.add_argument("plan", metavar="PLAN")
    lin.add_argument("--output", metavar="FILE", help="write the JSON here instead of stdout")
    for sp in sub.choices.values():  # also after the command; SUPPRESS: not given there keeps the global value
        sp.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show Python tracebacks")
    return p


def _seconds(text: str) -> float:
    """An argparse type for a timeout: a number of seconds above 0 (else a usage error, exit 2)."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"expects a number of seconds above 0, got {text!r}")
    return seconds


def _name_value(syntax: str, empty_value: bool = False) -> Callable[[str], tuple[str, str]]:
    """An argparse type for `NAME=VALUE` options: a malformed one is a usage error (usage printed, exit 2)."""

    def parse(spec: str) -> tuple[str, str]:
        name, sep, value = spec.partition("=")
        if not sep or not name or not (value or empty_value):
            raise argparse.ArgumentTypeError(f"expects {syntax}, got {spec!r}")
        return name, value

    return parse


def _row_limit(text: str) -> int:
    """`--limit N`: a count of rows, 0 for all."""
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"expects a number of rows (0: all), got {text!r}")
    return n


def _runner(args: argparse.Namespace):
    """The run's composition root (`hooks/plan_run.py`), built once per command from its options."""
    if not hasattr(args, "_runner"):
        from substrait_spark.hooks.plan_run import PlanRunner, RunSettings

        settings = RunSettings(
            tables=dict(args.table),
            tables_dir=args.tables_dir,
            tables_file=args.tables_file,
            catalog_config=args.catalog_config,
            master=args.master,
            connect_timeout=args.connect_timeout,
            audit_log=getattr(args, "audit_log", None) or "off",  # the CLI audits only when asked
            audit_strict=getattr(args, "audit_strict", False),
            update_keys=_update_keys(getattr(args, "update_key", [])),
            cast_to_plan_types=args.cast_to_plan_types,
            policy=getattr(args, "policy", None),  # run (explain has none)
        )
        args._runner = PlanRunner(
            settings,
            session=lambda catalog_conf: _quiet(_session(args.master, catalog_conf(()), args.connect_timeout)),
            bind_hint=BIND_HINT,
            session_catalog_empty=_fresh_local(args.master),
        )
    return args._runner


def _fresh_local(master: str | None) -> bool:
    """Whether the command's session is a new local one (its catalog empty: a table found in no table map or
    catalog is missing). A cluster's or a Spark Connect server's catalog may hold tables, and so may a session
    this process already runs (`main` called from a notebook or a test), which `get_session` would reuse, and so
    may the session of a spark-submit application (its master, metastore and catalogs are spark-submit's)."""
    from substrait_spark.hooks.spark_submit import launched_by_spark_submit

    local = master is None or master.startswith("local")
    return local and not _session_running() and not launched_by_spark_submit()


def _session_running() -> bool:
    """A Spark session already running in this process (no JVM is started to find out)."""
    if "pyspark" not in sys.modules:
        return False
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession() is not None or SparkSession._instantiatedSession is not None


def _session(master: str | None, conf: dict[str, str], connect_timeout: float | None):
    from substrait_spark.hooks.spark import get_session

    return get_session(master, conf, connect_timeout=connect_timeout)


def _quiet(spark):
    with contextlib.suppress(Exception):  # Spark Connect sessions have no SparkContext
        spark.sparkContext.setLogLevel("ERROR")
    return spark


def _update_keys(specs: list[str]) -> dict[str, list[str]]:
    """`--update-key TABLE=col1,col2`, repeatable (see `consumer/running/steps/update_key.py`)."""
    from substrait_spark.consumer.running.steps.update_key import parse_option

    return dict(parse_option(spec) for spec in specs)


def _plan_stem(plan: str) -> str:
    """`dir/q06.json` and `s3://bucket/dir/q06.bin?versionId=x` both name their outputs `q06`."""
    return Path(urlsplit(plan).path if "://" in plan else plan).stem


def _loader(runner=None):
    """Plans from paths, file:// and s3:// URIs (boto3's own configuration: AWS_* variables, profiles), read and
    parsed as a run reads them (`PlanRunner.load`: `runner`'s, with its policy's bounds), unchecked: validate
    reports what a check would refuse."""
    from substrait_spark.hooks.plan_run import PlanRunner

    runner = runner or PlanRunner()

    def load(plan: str):
        read = runner.load(plan)
        return read.loaded, read.source

    return load


class _PlanObserver:
    """The CLI's part of one plan's run (`hooks/run_sequence.RunObserver`): its error line and audit warning on
    stderr, its `running` progress line and Spark stage progress; how long it ran from there."""

    def __init__(self, args: argparse.Namespace, plan: str, progress: PlanProgress):
        self.args, self.plan, self.progress = args, plan, progress
        self.start: float | None = None

    def on_read(self, obj: Any) -> None:
        pass

    def on_loaded(self, planned: Any) -> None:
        pass

    @contextlib.contextmanager
    def running(self, spark: Any, planned: Any) -> Iterator[None]:
        from substrait_spark.hooks.spark_progress import StageProgress

        self.progress.started()
        self.start = time.perf_counter()
        quiet = self.args.quiet
        with StageProgress(spark, self.progress.label, self.progress.say) if not quiet else contextlib.nullcontext():
            yield

    def on_report(self, report: RunReport, error: SubstraitSparkError | None) -> None:
        pass

    def on_audit(self, result: Any) -> None:
        """A record not written is a note in the report (an error with --audit-strict) and a warning here."""
        if result is not None and result.status == "failed":
            print(f"{PROG}: warning: {result.error} (audit log {result.location})", file=sys.stderr)

    def on_error(self, error: SubstraitSparkError) -> None:
        _report_error(error, self.plan, self.args.debug)

    @property
    def seconds(self) -> float | None:
        """Since the run started (None: it failed before it ran)."""
        return None if self.start is None else time.perf_counter() - self.start


def cmd_run(args: argparse.Namespace) -> int:
    """Load every plan and check it with the parameters it declares (no Spark: a plan that cannot run fails at
    once), then start one Spark session for the plans that can, and run them in order. Progress on stderr, results
    on stdout (print mode) or in `--output-dir`. The exit code is the first failed plan's."""
    from substrait_spark.hooks.audit import AuditContext
    from substrait_spark.hooks.run_sequence import PlanRun, RunResult

    if args.output_dir and args.limit is not None:
        return _usage_error("--limit applies to printed results: with --output-dir every row is written")
    runner = _runner(args)
    progress = Progress(list(args.plans), quiet=args.quiet, printed=not args.output_dir)
    if args.output_dir:
        Path(args.output_dir).mkdir(parents=True, exist_ok=True)
    if args.audit_log:
        _ = runner.audit  # an audit log that cannot be set up fails the command before any plan
    entries: list[dict[str, Any]] = [{"plan": plan} for plan in args.plans]
    runs = [PlanRun(runner, plan) for plan in args.plans]
    observers = [_PlanObserver(args, plan, progress.at(i)) for i, plan in enumerate(args.plans)]
    results: dict[int, RunResult] = {}

    def fail(i: int, exc: SubstraitSparkError) -> None:
        results[i] = runs[i].failed(exc, AuditContext(run_key=args.run_key), observers[i])
        _publish(args, results[i], entries[i], observers[i])

    for i, run in enumerate(runs):
        try:
            run.load()
        except SubstraitSparkError as exc:
            fail(i, exc)
    loaded = {i: run.planned for i, run in enumerate(runs) if i not in results}
    from substrait_spark.consumer.translation.parameters import batch_parameters

    try:  # --param NAME=VALUE: NAME the anchor (`0` or `$0`), the value typed by the plan that declares it
        params = batch_parameters(dict(args.param), {i: p.loaded.plan for i, p in loaded.items() if p is not None})
    except SubstraitSparkError as exc:  # a name that is no anchor, or a value no plan of the batch takes
        return _usage_error(f"--param: {exc}")
    for i in loaded:
        try:
            runs[i].check(params[i])
        except SubstraitSparkError as exc:
            fail(i, exc)
    ready = [i for i in loaded if i not in results]
    if ready:
        _ = runner.resolver, runner.spark, runner.targets  # shared by every plan: a failure here fails them all
        for i in ready:  # `slot`: the plan's place on the command line, part of its write steps' keys
            results[i] = runs[i].execute(
                parameters=params[i],
                run_key=args.run_key,
                sink=_sink(args, runner, args.plans[i]),
                slot=i,
                audit_context=AuditContext(run_key=args.run_key),
                observer=observers[i],
                state=_state(args, i),
            )
            _publish(args, results[i], entries[i], observers[i])
    if args.output_dir:
        summary = json.dumps({SUMMARY_PLANS: entries}, indent=2, default=str)
        (Path(args.output_dir) / "summary.json").write_text(summary + "\n")
    progress.summary(args.output_dir)
    return next((int(results[i].exit_code) for i in sorted(results) if results[i].error), 0)


def _state(args: argparse.Namespace, slot: int) -> Any:
    """`--state FILE`: each plan of the batch under its own key (its place on the command line)."""
    if not args.state:
        return None
    from substrait_spark.hooks.durable import HEADER_KEY, FileStore, RunState

    return RunState(FileStore(args.state), header_key=f"{HEADER_KEY}.{slot}")


def _usage_error(message: str) -> int:
    print(f"{PROG}: usage error: {message}", file=sys.stderr)
    return ExitCode.INVALID_INPUT


def _sink(args: argparse.Namespace, runner, plan: str):
    """Where a plan's root rows go: `--output-dir`'s file, else the first `--limit` rows (0: all) printed, never
    more than the policy lets a run return; all rows counted."""
    from substrait_spark.consumer.running.sinks import Sink

    if args.output_dir:
        target = Path(args.output_dir) / f"{_plan_stem(plan)}.{args.output_format}"
        return Sink("file", str(target), format=args.output_format)
    limit = DEFAULT_LIMIT if args.limit is None else args.limit
    return Sink("preview", max_rows=preview_rows(limit, runner.max_result_rows))


def _publish(args: argparse.Namespace, result, entry: dict[str, Any], observer: _PlanObserver) -> None:
    """A plan's run as the CLI shows it: its summary entry, its progress line, its rows (print mode)."""
    report, error = result.report, result.error
    if error is not None:
        entry.update(report.to_dict() if report else {"status": "failed"})
        entry["error"] = error.to_dict()
        observer.progress.failed(error, observer.seconds)
        return
    entry.update(report.to_dict())
    observer.progress.finished(report, observer.seconds or 0.0)
    if not args.output_dir:
        limit = DEFAULT_LIMIT if args.limit is None else args.limit
        for o in report.outputs:
            print_result(entry["plan"], o, limit or None)


def cmd_validate(args: argparse.Namespace) -> int:
    """Every unsupported feature, with `--policy` every policy violation, and every table problem of each plan:
    what `run` (with the same options) refuses — exit 5 for a violation, else 4 for a table missing or not of the
    declared types, else 3 for an unsupported feature. No Spark: tables only Spark can see are listed as not
    checked."""
    from substrait_spark.consumer.analysis.analyze import validate_plan
    from substrait_spark.consumer.running.table_check import TableCheck

    runner = _runner(args)
    load = _loader(runner)
    exit_code: int = ExitCode.OK
    results = []
    for plan in args.plans:
        try:
            loaded = load(plan)[0]
            violations = runner.violations(loaded)
            findings = validate_plan(loaded)
            tables = runner.tables(loaded) if _binds_tables(args) else TableCheck(not_checked=[NO_TABLE_OPTIONS])
        except SubstraitSparkError as exc:
            _report_error(exc, plan, args.debug)
            exit_code = max(exit_code, exc.exit_code)
            results.append({"plan": plan, "error": str(exc), "exit_code": exc.exit_code})
            continue
        result: dict[str, Any] = {"plan": plan, "unsupported": [f.to_dict() for f in findings], **tables.to_dict()}
        if args.policy:
            result["violations"] = [v.to_dict() for v in violations]
        results.append(result)
        codes = [
            (findings, ExitCode.UNSUPPORTED),
            (tables.problems, ExitCode.RESOLUTION_FAILED),
            (violations, ExitCode.REFUSED_BY_POLICY),
        ]
        exit_code = max([exit_code, *(code for found, code in codes if found)])
        if not args.json:
            _print_validation(plan, findings, tables, violations)
    if args.json:
        print(json.dumps(results, indent=2))
    return exit_code


NO_TABLE_OPTIONS = "tables (no --tables-dir, --table, --tables-file or --catalog-config given)"


def _binds_tables(args: argparse.Namespace) -> bool:
    return bool(args.tables_dir or args.table or args.tables_file or args.catalog_config)


def _print_validation(plan: str, findings: list, tables: Any, violations: list) -> None:
    status = [f"{len(findings)} unsupported feature(s)"] if findings else []
    status += [f"{len(tables.problems)} table problem(s)"] if tables.problems else []
    status += [f"{len(violations)} policy violation(s)"] if violations else []
    print(f"{plan}: {', '.join(status) or 'supported'}")
    for f in findings:
        print(f"  - {f.feature} (at {f.path})")
    for p in tables.problems:
        print(f"  - {p.kind}: {p}")
    for v in violations:
        print(f"  - refused by policy: {v}")
    for note in tables.not_checked:
        print(f"  - not checked: {note}")


def cmd_explain(args: argparse.Namespace) -> int:
    from substrait_spark.consumer.analysis.explain import plan_tree
    from substrait_spark.consumer.running.planned_steps import planned_steps
    from substrait_spark.consumer.translation.consumer import SubstraitConsumer

    loaded, _ = _loader()(args.plan)
    if args.format != "text":
        return _explain_picture(loaded, args)
    from substrait_spark.consumer.running.runner import preflight

    preflight(loaded)  # a plan that cannot be translated fails before Spark starts
    runner = _runner(args)
    consumer = SubstraitConsumer(runner.spark, loaded.plan, runner.resolver, cast_to_plan_types=args.cast_to_plan_types)
    steps = planned_steps(loaded.plan)
    try:
        if not steps:
            df = consumer.root(0)
            print(plan_tree(consumer))
            print("\n== Spark physical plan ==")
            df.explain(mode="formatted")
            return 0
        # A plan with write/DDL/update steps: each step's input query is translated and explained (a step's
        # own relation is refused outside a run: `steps_refused`); nothing is committed.
        inputs = [(s, consumer.query(s.input, s.input_path, s.columns)) for s in steps if s.input is not None]
        print(plan_tree(consumer))
        print("\n== Steps (explain applies none of them) ==")
        for step in steps:
            print(step.line())
            print(f"  target: {_explain_target(runner, step.names)}")
        for step, df in inputs:
            print(f"\n== Spark physical plan of step {step.index}'s input ({step.input_path}) ==")
            df.explain(mode="formatted")
    finally:
        consumer.close()
    return 0


def _explain_target(runner, names: Sequence[str]) -> str:
    """Where a step would write, as the write catalog resolves it; without one, said so (no failure)."""
    if runner.targets is None:
        return "not resolved: no catalog given (--catalog-config); a run needs one to apply the step"
    try:
        target = runner.targets.write_target(runner.spark, list(names))
    except SubstraitSparkError as exc:
        return f"not resolved: {exc}"
    return f"{target.identity} ({'exists' if target.exists() else 'does not exist yet'})"


def _explain_picture(loaded, args: argparse.Namespace) -> int:
    """`explain --format svg|html`: the plan as a graph (`graph.py`), from the plan alone or with a run report."""
    from substrait_spark.graph import build_graph, render_html, render_svg

    graph = build_graph(loaded, _report_of(args.report, loaded) if args.report else None)
    text = render_svg(graph) if args.format == "svg" else render_html(graph, title=Path(str(loaded.uri)).name)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def _report_of(path: str, loaded) -> RunReport:
    """This plan's run report in `path`: a `run --output-dir` summary.json (the entry whose sha256 is the plan's;
    of several, the one of the same URI) or a single run report (an XCom value). Refused when no report in it is
    of this plan: a picture of one plan with another's steps and tables would be wrong, not merely incomplete."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise RunReportError(f"cannot read the run report {path}: {exc}") from exc
    reports = doc.get(SUMMARY_PLANS) if isinstance(doc, dict) and SUMMARY_PLANS in doc else doc
    reports = reports if isinstance(reports, list) else [reports]  # a list: reports of several plans
    if not all(isinstance(r, dict) for r in reports):
        raise RunReportError(f"{path} is neither a run report nor a summary.json ({{{SUMMARY_PLANS!r}: [...]}})")
    mine = [r for r in reports if r.get("plan_sha256") == loaded.sha256]
    if not mine:
        others = sorted({str(r["plan_sha256"])[:12] for r in reports if r.get("plan_sha256")})
        held = f"sha256 {', '.join(others)}" if others else "no plan sha256"
        mine_is = loaded.sha256[:12]
        raise RunReportError(f"{path} is not a report of this plan: it holds {held}, the plan's is {mine_is}")
    return RunReport.from_dict(next((r for r in mine if r.get("plan_uri") == loaded.uri), mine[0]))


def cmd_lineage(args: argparse.Namespace) -> int:
    """Column lineage from the plan alone: no Spark session, no catalog (`consumer/analysis/lineage`)."""
    from substrait_spark.consumer.analysis.lineage import column_lineage

    loaded, _ = _loader()(args.plan)
    plan = {"uri": loaded.uri, "sha256": loaded.sha256, "producer": loaded.producer}
    doc = {"plan": {**plan, "spec_version": loaded.spec_version}, **column_lineage(loaded).to_dict()}
    text = json.dumps(doc, indent=2) + "\n"
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def _report_error(exc: SubstraitSparkError, plan: str, debug: bool) -> None:
    """`substrait-spark: PLAN: kind: message`, PLAN said once: a store's message that starts with it (a plan not
    found) is given without it."""
    message = str(exc).removeprefix(f"{plan}: ")
    print(f"{PROG}: {plan}: {described(exc.kind, message)}", file=sys.stderr)
    if debug:
        traceback.print_exc()


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "run": cmd_run,
    "validate": cmd_validate,
    "explain": cmd_explain,
    "lineage": cmd_lineage,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except SubstraitSparkError as exc:
        _report_error(exc, getattr(args, "plan", None) or " ".join(getattr(args, "plans", [])), args.debug)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug of ours: still one line unless --debug
        print(
            f"{PROG}: internal error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
            file=sys.stderr,
        )
        if args.debug:
            traceback.print_exc()
        return ExitCode.EXECUTION_FAILED


if __name__ == "__main__":
    sys.exit(main())
