"""Benchmarks (a) and (b) over Spark Connect: a local Connect server (pyspark 4.x's, tools/connect_server.py) runs
both paths; this process is only a client.

* ours: what ``run`` does for a root before executing it (``SubstraitConsumer(spark, plan, resolver).root(0)`` and
  its output columns) builds the plan on the client, with no round trip (the server analyzes it once, when it
  runs); for reference also with one analysis round trip (``df.schema``), which ``run`` no longer makes;
* sql: ``spark.sql(text)``: one call in which the server parses and analyzes the text.

Run by ``run_all.py`` in a process of its own (pyspark 3.5 keeps one kind of session per process), with the
client of ``.venv-spark4`` (pyspark 4.x) when it exists; it writes its section of RESULTS.md and a JSON summary.

    .venv-spark4/bin/python bench/connect.py [--queries 1-22] [--runs 7] [--rounds 3] [--skip-execution]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import execution
import tpcds
import translation
from common import (
    REPO_ROOT,
    SF1_DIR,
    SMALL_DIR,
    SPARK_CONF,
    TPCH_TABLES,
    _git_commit,
    load_plans,
    log,
    parse_queries,
    sql_text,
    verify_same_query,
)

sys.path.insert(0, str(REPO_ROOT / "tools"))
from connect_server import connect_server


def connect_session(url: str):
    """A Connect session made by the engine's own hook (its session defaults: UTC, ANSI off)."""
    from substrait_spark.hooks.spark import get_session

    return get_session(url, conf={"spark.sql.shuffle.partitions": SPARK_CONF["spark.sql.shuffle.partitions"]})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", help="e.g. 1,3,5-7 (default: all 22)")
    ap.add_argument("--runs", type=int, default=7, help="timed translation runs per query")
    ap.add_argument("--warmup", type=int, default=1, help="untimed translation runs per query")
    ap.add_argument("--rounds", type=int, default=3, help="timed execution rounds per query")
    ap.add_argument("--execution-warmup", type=int, default=1)
    ap.add_argument("--skip-execution", action="store_true")
    ap.add_argument("--markdown", type=Path, help="write the RESULTS.md section here (default: stdout)")
    ap.add_argument("--summary", type=Path, help="write the summary figures here as JSON")
    ap.add_argument(
        "--tpcds",
        action="store_true",
        help="DataFusion's TPC-DS plans (bench/tpcds.py) at sf1 instead of IBM's TPC-H plans; the same-result "
        "check is the classic session's (run_all.py --tpcds-only)",
    )
    args = ap.parse_args(argv)

    import pyspark

    if args.tpcds:
        ps = tpcds.plan_set()
        queries = [q for q in parse_queries(args.queries, tpcds.QUERIES) if q in ps.plans]
        big, sql_for = tpcds.TPCDS_SF1, ps.sql_text
        tpcds.require_tpcds(big, "data-tpcds-sf1")
    else:
        queries = parse_queries(args.queries)
        big = SF1_DIR if all((SF1_DIR / f"{t}.parquet").exists() for t in TPCH_TABLES) else SMALL_DIR
        sql_for = sql_text
    started = time.perf_counter()
    with connect_server(Path(tempfile.mkdtemp(prefix="bench-connect-")), SPARK_CONF, master="local[*]") as url:
        spark = connect_session(url)
        try:
            plans = ps.load_plans(queries) if args.tpcds else load_plans(queries)
            verified = {} if args.tpcds else verify_same_query(spark, queries, plans, SMALL_DIR)
            log("connect: translation")
            tr = translation.run(spark, queries, plans, big, args.warmup, args.runs, sql_for, fresh=not args.tpcds)
            ex = None
            if not args.skip_execution:
                log("connect: execution")
                ex = execution.run(spark, queries, plans, big, args.rounds, args.execution_warmup, sql_for=sql_for)
            server = spark.version
        finally:
            spark.stop()
    elapsed = time.perf_counter() - started
    tr_s = translation.summary(tr)
    summary = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "client": f"pyspark {pyspark.__version__}",
        "server": f"Spark {server}",
        "translation": tr_s,
        "execution": execution.summary(ex) if ex is not None else None,
        "same_result": sum(1 for v in verified.values() if v == "ok"),
        "queries": len(verified),
        "seconds": round(elapsed),
    }
    heading = (
        f"{tpcds.CONNECT_HEADING} ({big.name})"
        if args.tpcds
        else f"## Over Spark Connect ({big.name}): a local Connect server (Spark {server}), client pyspark "
        f"{pyspark.__version__}"
    )
    server_note = (
        f"A local Connect server (Spark {server}, started with `spark.python.sql.dataFrameDebugging.enabled=false` "
        f"as docs/guides/spark-modes.md recommends), client pyspark {pyspark.__version__}. "
    )
    checked = (
        "Each SQL is checked against its plan's result in the classic session (see the physical-plan section)."
        if args.tpcds
        else f"SQL returns the plan's result (sf0.01): {summary['same_result']} of {summary['queries']}."
    )
    lines = [
        heading,
        "",
        (server_note if args.tpcds else "")
        + "Both paths run on the server; this process is a client. ours = what `run` does for a root before it "
        "executes it (`SubstraitConsumer(...).root(0)` and its output columns): the plan is built on the client, "
        "with no round trip (the server analyzes it once, when it runs; `run` makes no analysis round trip "
        "before that, a rejection is named then); sql = "
        "`spark.sql(text)`: one call in which the server parses and analyzes the text (and analyzes it again "
        "when it runs). " + checked,
        "",
        "### Translation",
        "",
        translation.markdown(tr),
        "",
    ]
    if ex is not None:
        lines += ["### Execution", "", execution.markdown(ex, args.rounds, args.execution_warmup), ""]
    lines.append(
        f"_Measured {summary['date']}, commit {_git_commit()}; section time {elapsed:.0f} s; load average (1/5/15 "
        f"min) at the end {' / '.join(f'{x:.1f}' for x in os.getloadavg())}._"
    )
    text = "\n".join(lines)
    if args.markdown:
        args.markdown.write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    if args.summary:
        args.summary.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
