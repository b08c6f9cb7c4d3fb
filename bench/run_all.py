"""Run every benchmark in one Spark session and regenerate bench/RESULTS.md.

    .venv/bin/python bench/run_all.py                       # what `make bench` runs
    .venv/bin/python bench/run_all.py --rounds 1 --queries 1-5 --output /tmp/r.md
    .venv/bin/python bench/run_all.py --skip-execution      # translation + plans only (a minute or two)

Order: check that each SQL text returns the plan's result (sf0.01); translation times (a); physical plan
comparison (c); execution at sf1 (b); then, in processes of their own, the CLI overhead (e) and Spark Connect. See
bench/README.md for what each measures.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import cli as cli_bench
import execution
import plans as plan_bench
import tpcds
import translation
from common import (
    BENCH_DIR,
    CONNECT_MARK,
    REPO_ROOT,
    ROWLEVEL_HEADING,
    SF1_DIR,
    SF10_DIR,
    SMALL_DIR,
    SQL_OVERRIDES,
    TPCH_TABLES,
    Stopwatch,
    environment,
    load_plans,
    log,
    parse_queries,
    plan_path,
    qname,
    replace_section,
    repo_relative,
    require_data,
    section,
    spark_session,
    sql_path,
    verify_same_query,
)
from plan_sets import SetKey, plan_set


def _loadavg() -> str:
    try:
        return " / ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "?"


class Section:
    """Times a benchmark section and records the machine's load average around it."""

    def __init__(self, label: str):
        self.label = label
        self.watch = Stopwatch(label)

    def __enter__(self):
        self.load_before = _loadavg()
        self.watch.__enter__()
        return self

    def __exit__(self, *exc):
        self.watch.__exit__(*exc)
        self.load_after = _loadavg()

    def footer(self) -> str:
        return (
            f"_Section took {self.watch.seconds:.0f} s; load average (1/5/15 min) before {self.load_before}, "
            f"after {self.load_after}._"
        )


def _connect_section(args: argparse.Namespace, tpcds_plans: bool = False) -> dict | None:
    """bench/connect.py in a process of its own, with pyspark 4.x's client when `.venv-spark4` exists (with
    `tpcds_plans`: DataFusion's TPC-DS plans, translation only)."""
    python = REPO_ROOT / ".venv-spark4" / "bin" / "python"
    python = python if python.exists() else Path(sys.executable)
    with tempfile.TemporaryDirectory() as tmp:
        md, js = Path(tmp) / "connect.md", Path(tmp) / "connect.json"
        cmd = [str(python), str(BENCH_DIR / "connect.py"), "--markdown", str(md), "--summary", str(js)]
        cmd += ["--runs", str(args.translation_runs), "--warmup", str(args.translation_warmup)]
        cmd += ["--rounds", str(args.rounds), "--execution-warmup", str(args.warmup)]
        cmd += ["--queries", args.queries] if args.queries else []
        cmd += ["--skip-execution"] if args.skip_execution or tpcds_plans else []
        cmd += ["--tpcds"] if tpcds_plans else []
        with Section("Spark Connect (translation, execution)"):
            done = subprocess.run(cmd, cwd=REPO_ROOT, check=False)
        if done.returncode != 0:
            log(f"Spark Connect section failed (exit {done.returncode})")
            heading = f"{tpcds.CONNECT_HEADING} ({tpcds.TPCDS_SF1.name})" if tpcds_plans else "## Over Spark Connect"
            return {"summary": None, "markdown": f"{heading}\n\nFailed (exit {done.returncode})."}
        return {"summary": json.loads(js.read_text()), "markdown": md.read_text()}


def _cli_section(args: argparse.Namespace, tables_dir: Path) -> dict:
    """bench/cli.py in a process of its own (it starts Spark processes of its own: run after this one's stops)."""
    with tempfile.TemporaryDirectory() as tmp:
        js = Path(tmp) / "cli.json"
        cmd = [sys.executable, str(BENCH_DIR / "cli.py"), "--tables-dir", str(tables_dir), "--summary", str(js)]
        cmd += ["--rounds", str(args.cli_rounds), "--warmup", str(args.cli_warmup)]
        cmd += ["--queries", args.cli_queries] if args.cli_queries else []
        with Section("CLI overhead"):
            done = subprocess.run(cmd, cwd=REPO_ROOT, check=False, capture_output=True, text=True)
        if done.returncode != 0:
            log(f"CLI overhead section failed (exit {done.returncode}): {done.stderr[-500:]}")
            return {"summary": None, "markdown": f"{cli_bench.HEADING}\n\nFailed (exit {done.returncode})."}
        return {"summary": json.loads(js.read_text()), "markdown": done.stdout}


_CLI_ROW = "| (e) one-off CLI run"


def _cli_row(cli: dict, tables_dir: Path) -> str:
    s = cli["summary"]
    if s is None:
        return f"{_CLI_ROW}: overhead beyond Spark start-up and execution | failed | < 1 s |"
    return (
        f"{_CLI_ROW}: overhead beyond Spark start-up and execution ({tables_dir.name}), largest of the queries "
        f"| {s['max_overhead_s']:.2f} s (median {s['median_overhead_s']:.2f} s) | < 1 s |"
    )


def _replace_cli_section(args: argparse.Namespace) -> int:
    """Re-measure only the CLI section: its summary row and its section in --output are replaced."""
    tables_dir = SF1_DIR if all((SF1_DIR / f"{t}.parquet").exists() for t in TPCH_TABLES) else SMALL_DIR
    cli = _cli_section(args, tables_dir)
    lines = [ln for ln in args.output.read_text(encoding="utf-8").split("\n") if not ln.startswith(_CLI_ROW)]
    at = next(i for i, ln in enumerate(lines) if ln.startswith(_SQL_ROW))
    lines[at:at] = [_cli_row(cli, tables_dir)]
    args.output.write_text("\n".join(lines), encoding="utf-8")
    replace_section(args.output, cli_bench.HEADING, cli["markdown"])
    log(f"replaced the CLI overhead section of {args.output}")
    return 0


_CONNECT_ROW = "| (a) translation over Spark Connect"
_CONNECT_EXEC_ROW = "| (b) execution over Spark Connect"


def _connect_rows(connect: dict) -> list[str]:
    """The Summary table's rows for the Connect section."""
    summary = connect["summary"]
    if summary is None:
        return [f"{_CONNECT_ROW} | failed | <= 1.0 |"]
    c_tr, c_ex = summary["translation"], summary["execution"]
    rows = [
        f"{_CONNECT_ROW} ({summary['client']} client, {summary.get('date', '')}), median ratio ours/sql "
        f"| {c_tr['median_ratio']:.2f} (median {c_tr['median_ours_ms']:.1f} vs {c_tr['median_sql_ms']:.1f} ms, "
        f"slowest {c_tr['max_ours_ms']:.1f} ms; plus one analysis round trip, which run no longer makes, "
        f"{c_tr.get('median_analyzed_ratio', float('nan')):.2f}) | <= 1.0 |"
    ]
    if c_ex is not None:
        rows.append(
            f"{_CONNECT_EXEC_ROW}, geometric mean ours/sql | {c_ex['geomean_ratio']:.3f} "
            f"(end to end {c_ex['geomean_total_ratio']:.3f}) "
            f"| <= {execution.TARGET_GEOMEAN}, no query above {execution.TARGET_WORST} |"
        )
    return rows


def _replace_connect_section(args: argparse.Namespace) -> int:
    """Re-measure only the Spark Connect section: its summary rows and its section in --output are replaced, the
    rest (measured at the date it states) is kept."""
    text = args.output.read_text(encoding="utf-8")
    connect = _connect_section(args)
    lines = [ln for ln in text.split("\n") if not ln.startswith((_CONNECT_ROW, _CONNECT_EXEC_ROW))]
    at = next(i for i, ln in enumerate(lines) if ln.startswith("| (a) translation, slowest plan")) + 1
    lines[at:at] = _connect_rows(connect)
    body = "\n".join(lines)
    body = body.split(CONNECT_MARK)[0].rstrip("\n")
    args.output.write_text(f"{body}\n\n{CONNECT_MARK}\n{connect['markdown']}\n", encoding="utf-8")
    log(f"replaced the Spark Connect section of {args.output}")
    return 0


def _producers_heading(bench_dir: Path) -> str:
    return f"## (c) Physical plans of the other producers' TPC-H plans ({bench_dir.name})"


def _producers_markdown(producers: list, bench_dir: Path) -> str:
    out = [
        _producers_heading(bench_dir),
        "",
        "As (c) above, for each producer's plans against the SQL that states each plan's query "
        "(`bench/plan_sets.py`); each SQL was first run next to its plan at sf0.01 and the results compared.",
        "",
    ]
    for ps, compared, checked, s_ps in producers:
        out += [f"### {ps.title}", "", plan_bench.set_markdown(ps, compared, checked), "", s_ps.footer(), ""]
    return "\n".join(out)


def _exec_row(tables_dir: Path) -> str:
    """How the Summary table's row for the execution on `tables_dir`'s data (b) starts."""
    return f"| (b) execution {tables_dir.name},"


def _exec_heading(tables_dir: Path) -> str:
    return f"## (b) Execution ({tables_dir.name})"


def _execution_row(ex: list | None, tables_dir: Path = SF1_DIR) -> str:
    """The Summary table's row for the execution (b) on `tables_dir`'s data."""
    target = f"<= {execution.TARGET_GEOMEAN}, no query above {execution.TARGET_WORST}"
    if ex is None:
        return f"{_exec_row(tables_dir)} not run (--skip-execution) | | {target} |"
    ex_s = execution.summary(ex)
    return (
        f"{_exec_row(tables_dir)} geometric mean ours/sql | {ex_s['geomean_ratio']:.3f} "
        f"(end to end {ex_s['geomean_total_ratio']:.3f}; worst query {ex_s['worst_ratio']:.2f}) | {target} |"
    )


def _replace_execution_section(args: argparse.Namespace, queries: list[int], tables_dir: Path = SF1_DIR) -> int:
    """Re-measure only the execution (b) on `tables_dir`'s data: its section of --output and its Summary row are
    replaced (or added, after the other execution rows); every other section is kept as measured at the date it
    states."""
    require_data(tables_dir, f"data-{tables_dir.name}")
    spark = spark_session()
    try:
        with Section(f"execution ({tables_dir.name})") as s_ex:
            ex = execution.run(spark, queries, load_plans(queries), tables_dir, args.rounds, args.warmup)
    finally:
        spark.stop()
    env = environment()
    lines = [
        ln for ln in args.output.read_text(encoding="utf-8").split("\n") if not ln.startswith(_exec_row(tables_dir))
    ]
    at = max(
        i for i, ln in enumerate(lines) if ln.startswith(("| (a) translation, slowest plan", "| (b) execution sf"))
    )
    lines[at + 1 : at + 1] = [_execution_row(ex, tables_dir)]
    args.output.write_text("\n".join(lines), encoding="utf-8")
    body = "\n".join(
        [
            _exec_heading(tables_dir),
            "",
            execution.markdown(ex, args.rounds, args.warmup),
            "",
            s_ex.footer(),
            "",
            f"_Measured {env['date']}, commit {env['commit']}; {env['cpu']}, {env['nproc']} cores, {env['memory']}._",
        ]
    )
    replace_section(args.output, _exec_heading(tables_dir), body)
    log(f"replaced the execution section (b, {tables_dir.name}) of {args.output}")
    return 0


_SQL_ROW = "| SQL returns the plan's result (sf0.01)"
_PLAN_ROW = "| (c) "


def _plan_rows(pl: list, producers: list) -> list[str]:
    """The Summary table's rows for the physical-plan comparisons (c): the IBM set's, then each producer's."""
    pl_c = plan_bench.counts(pl)
    rows = [
        f"{_PLAN_ROW}identical physical plan (ids and names normalised) | {pl_c['identical']} of {len(pl)} "
        f"(+{pl_c['same shape']} same shape, {pl_c['same shape except Project']} same except Project nodes) "
        "| >= 20 |"
    ]
    for ps, compared, checked, _ in producers:
        pc = plan_bench.counts(compared)
        n_checked = sum(1 for v in checked.values() if v == "ok")
        rows.append(
            f"{_PLAN_ROW}{ps.title}: identical physical plan | {pc['identical']} of {len(compared)} compared "
            f"({len(ps.plans)} of 22 queries with a compared plan; SQL returns the plan's result: {n_checked}) "
            "| >= 18 of 22 |"
        )
    return rows


def _ibm_plans_markdown(pl: list, s_pl: Section, bench_dir: Path) -> str:
    return "\n".join([f"## (c) Physical plans ({bench_dir.name})", "", plan_bench.markdown(pl), "", s_pl.footer()])


def _replace_plan_sections(args: argparse.Namespace, queries: list[int]) -> int:
    """Re-measure only the physical-plan comparisons (c), the IBM set's and the other producers' (sf1 when
    present): their sections of --output and their Summary rows are replaced; every other section is kept as
    measured at the date it states."""
    bench_dir = SF1_DIR if all((SF1_DIR / f"{t}.parquet").exists() for t in TPCH_TABLES) else SMALL_DIR
    spark = spark_session()
    producers = []
    try:
        with Section(f"physical plans ({bench_dir.name})") as s_pl:
            pl = plan_bench.run(spark, queries, load_plans(queries), bench_dir)
        for key in args.plan_sets:
            with Section(f"physical plans, {key} ({bench_dir.name})") as s_ps:
                ps = plan_set(key)
                compared, checked = plan_bench.compare_set(spark, ps, queries, bench_dir)
            producers.append((ps, compared, checked, s_ps))
    finally:
        spark.stop()
    env = environment()
    stamp = f"\n_Measured {env['date']}, commit {env['commit']}._\n"
    lines = [ln for ln in args.output.read_text(encoding="utf-8").split("\n") if not ln.startswith(_PLAN_ROW)]
    at = next(i for i, ln in enumerate(lines) if ln.startswith(_SQL_ROW)) + 1
    lines[at:at] = _plan_rows(pl, producers)
    args.output.write_text("\n".join(lines), encoding="utf-8")
    replace_section(
        args.output, f"## (c) Physical plans ({bench_dir.name})", _ibm_plans_markdown(pl, s_pl, bench_dir) + stamp
    )
    replace_section(args.output, _producers_heading(bench_dir), _producers_markdown(producers, bench_dir) + stamp)
    log(f"replaced the physical-plan sections (c) of {args.output}")
    return 0


TPCDS_PARTS = ("plans", "translation", "execution", "connect")
# Each TPC-DS query's execution figures, kept across runs (all 99 take hours on 2 cores): a run re-measures the
# queries it is given and keeps the others as measured (each with its date and load average).
TPCDS_EXECUTION_STORE = BENCH_DIR / "tpcds_execution.json"


def _load_execution_store(path: Path) -> dict[int, dict]:
    return {int(q): v for q, v in json.loads(path.read_text()).items()} if path.exists() else {}


def _store_execution(path: Path, r: execution.ExecutionResult) -> None:
    """Add (or replace) one query's measurement in the store, written at once."""
    store = _load_execution_store(path)
    store[r.query] = {
        **dataclasses.asdict(r),
        "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load": _loadavg(),
    }
    path.write_text(json.dumps({str(q): store[q] for q in sorted(store)}, indent=1) + "\n", encoding="utf-8")


def _stored_results(path: Path) -> tuple[list[execution.ExecutionResult], dict[int, dict]]:
    fields = {f.name for f in dataclasses.fields(execution.ExecutionResult)}
    store = _load_execution_store(path)
    return [execution.ExecutionResult(**{k: v for k, v in d.items() if k in fields}) for d in store.values()], store


_TPCDS_ROW = "| TPC-DS "


def _put_summary_rows(path: Path, prefix: str, rows: list[str]) -> None:
    """Replace the Summary table's rows starting with `prefix` by `rows` (at the table's end)."""
    lines = [ln for ln in path.read_text(encoding="utf-8").split("\n") if not ln.startswith(prefix)]
    start = lines.index("## Summary")
    first = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("|"))
    end = next((i for i in range(first, len(lines)) if not lines[i].startswith("|")), len(lines))
    lines[end:end] = rows
    path.write_text("\n".join(lines), encoding="utf-8")


def _tpcds_plans_markdown(ps, compared: list, checked: dict, s_pl: Section) -> str:
    """The TPC-DS plan comparison: the producer-set table, then every difference explained query by query."""
    refused = [r for r in compared if r.verdict == "error"]
    lines = [plan_bench.set_markdown(ps, compared, checked), "", "Every plan that is not identical, and why:", ""]
    for r in compared:
        if r.verdict == "identical":
            continue
        if r.verdict == "error":
            why = f"refused by the engine: {r.note.removeprefix('ours: ')}"
        else:
            why = tpcds.PLAN_DIFFERENCES.get(r.query, "not explained yet")
        lines.append(f"- {qname(r.query)} ({r.verdict}): {why}")
    if refused:
        lines += ["", f"Refused by the engine: {', '.join(qname(r.query) for r in refused)}."]
    lines += ["", s_pl.footer()]
    return "\n".join(lines)


def _replace_tpcds_sections(args: argparse.Namespace) -> int:
    """Measure TPC-DS (DataFusion's 99 plans, bench/tpcds.py): the same-result check at sf0.1 and the physical
    plans, the translation and the execution at sf1, the translation over Spark Connect (`--tpcds-parts` picks);
    each part replaces its section and Summary row in --output, the rest is kept as measured."""
    parts = args.tpcds_parts or list(TPCDS_PARTS)
    big = tpcds.TPCDS_SF1
    tpcds.require_tpcds(big, "data-tpcds-sf1")
    ps = tpcds.plan_set()
    queries = [q for q in parse_queries(args.queries, tpcds.QUERIES) if q in ps.plans]
    sections: list[tuple[str, str]] = []  # (heading, body)
    rows: list[tuple[str, list[str]]] = []  # (row prefix, rows)
    stamp = f"_Load average at start (1/5/15 min) {_loadavg()}._"
    if set(parts) - {"connect"}:
        spark = spark_session()
        try:
            plans = ps.load_plans(queries)
            if "plans" in parts:
                with Section(f"TPC-DS physical plans ({big.name})") as s_pl:
                    compared, checked = plan_bench.compare_set(spark, ps, queries, big)
                c = plan_bench.counts(compared)
                refused = ", ".join(qname(r.query) for r in compared if r.verdict == "error") or "none"
                n_ok = sum(1 for v in checked.values() if v == "ok")
                heading = f"{tpcds.PLANS_HEADING} ({big.name})"
                sections.append((heading, f"{heading}\n\n{_tpcds_plans_markdown(ps, compared, checked, s_pl)}"))
                prefix = f"{_TPCDS_ROW}(c) "
                rows.append(
                    (
                        prefix,
                        [
                            f"{prefix}{ps.title} plans: identical physical plan | {c['identical']} of {len(compared)} "
                            f"compared (+{c['same shape']} same shape, {c['same shape except Project']} same except "
                            f"Project; refused: {refused}; SQL returns the plan's result at sf0.1: {n_ok}) "
                            f"| >= 95 of 99 |"
                        ],
                    )
                )
            if "translation" in parts:
                with Section(f"TPC-DS translation ({big.name})") as s_tr:
                    tr = translation.run(
                        spark, queries, plans, big, args.translation_warmup, args.translation_runs, ps.sql_text, False
                    )
                t = translation.summary(tr)
                heading = f"{tpcds.TRANSLATION_HEADING} ({big.name})"
                body = (
                    f"{heading}\n\nAs (a) for TPC-H, on DataFusion's TPC-DS plans: median of "
                    f"{args.translation_runs} warm runs after {args.translation_warmup} warm-up, milliseconds "
                    "(the fresh-resolver reference is not measured here).\n\n"
                    f"{translation.markdown(tr)}\n\n{s_tr.footer()}"
                )
                sections.append((heading, body))
                prefix = f"{_TPCDS_ROW}(a) translation ({big.name})"
                rows.append(
                    (
                        prefix,
                        [
                            f"{prefix}, slowest plan | {t['max_ours_ms']:.1f} ms (median {t['median_ours_ms']:.1f} "
                            f"ms; median ratio ours/sql {t['median_ratio']:.2f}; {int(t['failed'])} refused) "
                            "| every plan < 100 ms |"
                        ],
                    )
                )
            if "execution" in parts:
                budget = args.tpcds_budget_minutes * 60 if args.tpcds_budget_minutes else None
                with Section(f"TPC-DS execution ({big.name})") as s_ex:
                    run_now = execution.run(
                        spark,
                        queries,
                        plans,
                        big,
                        args.rounds,
                        args.warmup,
                        sql_for=ps.sql_text,
                        budget_s=budget,
                        on_result=lambda r: _store_execution(TPCDS_EXECUTION_STORE, r),
                    )
                ex, store = _stored_results(TPCDS_EXECUTION_STORE)
                e = execution.summary(ex)
                measured = {r.query for r in ex if r.ok}
                left = [q for q in ps.plans if q not in store]
                dates = sorted({v["measured"] for v in store.values()})
                heading = f"{tpcds.EXECUTION_HEADING} ({big.name})"
                body = (
                    f"{heading}\n\nAs (b) for TPC-H (same round rules), on DataFusion's TPC-DS plans and their SQL. "
                    f"Measured: {len(measured)} queries ({len(run_now)} in the last run, the others kept from "
                    f"earlier runs: `bench/{TPCDS_EXECUTION_STORE.name}` holds each query's rounds, date and load "
                    f"average; measured {dates[0] if dates else '?'} to {dates[-1] if dates else '?'})"
                    + (f"; not measured yet: {', '.join(map(qname, sorted(left)))}" if left else "")
                    + f".\n\n{execution.markdown(ex, args.rounds, args.warmup)}\n\n{s_ex.footer()}"
                )
                sections.append((heading, body))
                prefix = f"{_TPCDS_ROW}(b) execution {big.name}"
                rows.append(
                    (
                        prefix,
                        [
                            f"{prefix}, geometric mean ours/sql | {e['geomean_ratio']:.3f} (worst query "
                            f"{e['worst_ratio']:.2f}; {len(measured)} queries measured, {int(e['failed'])} failed) "
                            f"| <= {execution.TARGET_GEOMEAN}, no query above {execution.TARGET_WORST} |"
                        ],
                    )
                )
        finally:
            spark.stop()
    if "connect" in parts:
        connect = _connect_section(args, tpcds_plans=True)
        assert connect is not None
        heading = f"{tpcds.CONNECT_HEADING} ({big.name})"
        sections.append((heading, connect["markdown"]))
        prefix = f"{_TPCDS_ROW}(a) translation over Spark Connect"
        summary = connect["summary"]
        row = f"{prefix} | failed | every plan < 100 ms |"
        if summary is not None:
            c_tr = summary["translation"]
            row = (
                f"{prefix} ({summary['client']} client), slowest plan | {c_tr['max_ours_ms']:.1f} ms (median "
                f"{c_tr['median_ours_ms']:.1f} ms; median ratio ours/sql {c_tr['median_ratio']:.2f}) "
                "| every plan < 100 ms |"
            )
        rows.append((prefix, [row]))
    env = environment()
    measured_at = (
        f"_Measured {env['date']}, commit {env['commit']}; {env['cpu']}, {env['nproc']} cores, {env['memory']}._"
    )
    for heading, body in sections:
        replace_section(args.output, heading, f"{body.rstrip()}\n\n{stamp} {measured_at}")
    for prefix, new_rows in rows:
        _put_summary_rows(args.output, prefix, new_rows)
    log(f"replaced the TPC-DS sections ({', '.join(parts)}) of {args.output}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", help="e.g. 1,3,5-7 (default: all 22)")
    ap.add_argument("--translation-runs", type=int, default=7, help="timed translation runs per query (default 7)")
    ap.add_argument("--translation-warmup", type=int, default=1)
    ap.add_argument(
        "--rounds",
        type=int,
        default=int(os.environ.get("BENCH_ROUNDS", "3")),
        help="timed execution rounds per query (default 3, env BENCH_ROUNDS)",
    )
    ap.add_argument(
        "--warmup",
        type=int,
        default=int(os.environ.get("BENCH_WARMUP", "1")),
        help="untimed execution rounds per query (default 1, env BENCH_WARMUP)",
    )
    ap.add_argument("--skip-execution", action="store_true", help="leave out the sf1 execution benchmark")
    ap.add_argument("--skip-connect", action="store_true", help="leave out the Spark Connect section")
    ap.add_argument(
        "--connect-only",
        action="store_true",
        help="measure only the Spark Connect section and replace it (and its summary rows) in --output",
    )
    ap.add_argument("--skip-cli", action="store_true", help="leave out the CLI overhead section")
    ap.add_argument("--cli-only", action="store_true", help="measure only the CLI overhead section and replace it")
    ap.add_argument("--cli-queries", help=f"queries of the CLI overhead section (default {cli_bench.DEFAULT_QUERIES})")
    ap.add_argument("--cli-rounds", type=int, default=3)
    ap.add_argument("--cli-warmup", type=int, default=1)
    ap.add_argument("--output", type=Path, default=BENCH_DIR / "RESULTS.md")
    ap.add_argument(
        "--execution-only",
        action="store_true",
        help="measure only the execution at sf1 (b) and replace its section and Summary row in --output",
    )
    ap.add_argument(
        "--sf10-only",
        action="store_true",
        help="measure only the execution at sf10 (b; `make data-sf10`) and replace its section and Summary row "
        "in --output (a full run keeps them as measured)",
    )
    ap.add_argument(
        "--plans-only",
        action="store_true",
        help="compare only the physical plans (c), the IBM set's and the other producers', and replace their "
        "sections and Summary rows in --output",
    )
    ap.add_argument(
        "--plan-set",
        dest="plan_sets",
        action="append",
        choices=[k.value for k in SetKey if k is not SetKey.IBM],
        help="other producers' plan sets whose physical plans are compared too (repeatable; default all)",
    )
    ap.add_argument(
        "--tpcds-only",
        action="store_true",
        help="measure only TPC-DS (DataFusion's 99 plans, `make data-tpcds data-tpcds-sf1`) and replace its sections "
        "and Summary rows in --output (a full run keeps them as measured); --queries then counts 1-99",
    )
    ap.add_argument(
        "--tpcds-parts",
        action="append",
        choices=TPCDS_PARTS,
        help="with --tpcds-only, the parts to measure (repeatable; default all)",
    )
    ap.add_argument(
        "--tpcds-budget-minutes",
        type=float,
        help="with --tpcds-only, start no execution query after this many minutes (the rest are named unmeasured)",
    )
    args = ap.parse_args(argv)

    if args.tpcds_only:
        return _replace_tpcds_sections(args)
    if args.connect_only:
        return _replace_connect_section(args)
    if args.cli_only:
        return _replace_cli_section(args)
    queries = parse_queries(args.queries)
    args.plan_sets = args.plan_sets or [k.value for k in SetKey if k is not SetKey.IBM]
    if args.plans_only:
        return _replace_plan_sections(args, queries)
    if args.execution_only:
        return _replace_execution_section(args, queries)
    if args.sf10_only:
        return _replace_execution_section(args, queries, SF10_DIR)
    require_data(SMALL_DIR, "data")
    big = SF1_DIR if all((SF1_DIR / f"{t}.parquet").exists() for t in TPCH_TABLES) else None
    if big is None and not args.skip_execution:
        require_data(SF1_DIR, "data-sf1")
    bench_dir = big or SMALL_DIR

    env = environment()
    env["load average at start (1/5/15 min)"] = _loadavg()
    started = time.perf_counter()
    spark = spark_session()
    try:
        plans = load_plans(queries)
        with Section("verify SQL == plan results (sf0.01)") as s_verify:
            verified = verify_same_query(spark, queries, plans, SMALL_DIR)
        with Section(f"translation ({bench_dir.name})") as s_tr:
            tr = translation.run(spark, queries, plans, bench_dir, args.translation_warmup, args.translation_runs)
        with Section(f"physical plans ({bench_dir.name})") as s_pl:
            pl = plan_bench.run(spark, queries, plans, bench_dir)
        producers = []  # (plan set, comparisons, sf0.01 check, section timing)
        for key in args.plan_sets:
            with Section(f"physical plans, {key} ({bench_dir.name})") as s_ps:
                ps = plan_set(key)
                compared, checked = plan_bench.compare_set(spark, ps, queries, bench_dir)
            producers.append((ps, compared, checked, s_ps))
        ex = None
        if not args.skip_execution:
            with Section(f"execution ({bench_dir.name})") as s_ex:
                ex = execution.run(spark, queries, plans, bench_dir, args.rounds, args.warmup)
    finally:
        spark.stop()
    cli = None if args.skip_cli else _cli_section(args, bench_dir)
    connect = None if args.skip_connect else _connect_section(args)
    env["load average at end (1/5/15 min)"] = _loadavg()
    env["total bench time"] = f"{time.perf_counter() - started:.0f} s"

    tr_s = translation.summary(tr)
    n_ok = sum(1 for v in verified.values() if v == "ok")
    out: list[str] = [
        "# Benchmark results",
        "",
        "Generated by `make bench` (`.venv/bin/python bench/run_all.py`); see `bench/README.md` for what is "
        "measured and how. Do not edit by hand.",
        "",
        "## Summary",
        "",
        "| benchmark | result | target |",
        "|---|---|---|",
        f"| (a) translation, median ratio ours/sql | {tr_s['median_ratio']:.2f} | <= 1.0 |",
        f"| (a) translation, slowest plan | {tr_s['max_ours_ms']:.1f} ms ({int(tr_s['over_100ms'])} plans >= 100 ms) "
        "| every plan < 100 ms |",
    ]
    out.append(_execution_row(ex))
    previous = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
    sf10 = section(previous, _exec_heading(SF10_DIR))  # written by --sf10-only: kept as it is
    out += [ln for ln in previous.split("\n") if sf10 is not None and ln.startswith(_exec_row(SF10_DIR))]
    if cli is not None:
        out.append(_cli_row(cli, bench_dir))
    if connect is not None:
        out += _connect_rows(connect)
    out += [f"{_SQL_ROW} | {n_ok} of {len(verified)} | all |", *_plan_rows(pl, producers)]
    out += [ln for ln in previous.split("\n") if ln.startswith(_TPCDS_ROW)]  # --tpcds-only's: kept as measured
    out += [
        "",
        "## Machine and versions",
        "",
        "| | |",
        "|---|---|",
    ]
    out += [f"| {k} | {v} |" for k, v in env.items()]
    out += [
        "",
        "The machine may be shared: the load averages around each section tell how busy it was. On a loaded "
        "machine the execution ratios are noisy; the alternating order keeps the comparison fair, not precise.",
        "",
        "## Queries",
        "",
        f"Ours: `corpus/{plan_path(1).parent.name}/qNN.json` (IBM compliance suite, Isthmus). SQL: "
        f"`{repo_relative(sql_path(2).parent)}/qNN.sql` (TPC-H validation parameters = the plans' literals)"
        + "".join(f"; {qname(q)}: `{repo_relative(sql_path(q))}` ({why})" for q, (_, why) in SQL_OVERRIDES.items())
        + ". Each SQL was run next to its plan at sf0.01 and the results compared (multiset, decimal-scale aware):",
        "",
        "| query | same result |",
        "|---|---|",
    ]
    out += [f"| {qname(q)} | {v.replace('|', '/')} |" for q, v in verified.items()]
    out += ["", s_verify.footer(), ""]
    out += [
        f"## (a) Translation time ({bench_dir.name})",
        "",
        f"Median of {args.translation_runs} warm runs after {args.translation_warmup} warm-up, milliseconds. "
        "ours = what `run` does for a root before executing it: `SubstraitConsumer(spark, plan, "
        "TableMapResolver.from_tables_dir(...)).root(0)` and its output columns; "
        "sql = `spark.sql(text)` (parse + analyze) over temp views.",
        "",
        translation.markdown(tr),
        "",
        s_tr.footer(),
        "",
        _ibm_plans_markdown(pl, s_pl, bench_dir),
        "",
    ]
    if producers:
        out += [_producers_markdown(producers, bench_dir)]
    out += [_exec_heading(SF1_DIR), ""]
    if ex is not None:
        out += [execution.markdown(ex, args.rounds, args.warmup), "", s_ex.footer(), ""]
    else:
        out += ["Not run (`--skip-execution`).", ""]
    if sf10 is not None:
        out += [sf10]
    if cli is not None:
        out += [cli["markdown"].rstrip(), ""]
    for heading in (tpcds.PLANS_HEADING, tpcds.TRANSLATION_HEADING, tpcds.EXECUTION_HEADING, tpcds.CONNECT_HEADING):
        kept_tpcds = section(previous, f"{heading} ({tpcds.TPCDS_SF1.name})")  # written by --tpcds-only
        if kept_tpcds is not None:
            out += [kept_tpcds]
    kept = section(previous, ROWLEVEL_HEADING)
    if kept is not None:  # written by bench/rowlevel.py (its own Iceberg session): kept as it is
        out += [kept]
    if connect is not None:
        out += [CONNECT_MARK, connect["markdown"], ""]
    args.output.write_text("\n".join(out), encoding="utf-8")
    log(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
