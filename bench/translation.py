"""Benchmark (a): plan -> DataFrame translation time vs Spark SQL's parse + analyze time.

For each TPC-H query, in one warm Spark session:

* ours: what ``run_loaded`` does for a root before executing it: ``SubstraitConsumer(spark, plan, resolver)``,
  ``.root(0)`` and its output columns (``root_columns``: the names attached, no round trip) — on classic Spark a
  DataFrame built and analyzed, on Spark Connect built on the client; nothing executed.
  The plan is loaded (file read, protobuf parsed) once, outside the timer; ``close()`` (dropping the run's temp
  views) is outside the timer too. One ``TableMapResolver.from_tables_dir`` serves every run, as the CLI's does
  for a batch of plans: if it keeps the tables it opened, the timed runs do not open them again.
* sql: ``spark.sql(text)`` over temp views already registered on the same files. PySpark returns an analyzed
  DataFrame, so this is parse + analyze.
* ours (fresh resolver): for reference, ours with a new ``TableMapResolver`` per run, so every table the plan
  reads is opened (``spark.read.parquet``: without a schema, a one-task Spark job reads the footer) — what a
  single ``substrait-spark run`` of one plan pays. The SQL path paid that once, when its views were registered.

Each is warmed up, then run ``--runs`` times alternating (ours, sql, ours (fresh), ours, sql, ...);
the median is reported. Target: median of the per-query ratios ours/sql <= 1.0, every plan < 100 ms.

    .venv/bin/python bench/translation.py [--tables-dir .data/tpch/sf1] [--queries 1-22] [--runs 7]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    SF1_DIR,
    SMALL_DIR,
    TESTS_DIR,
    first_line,
    load_plans,
    median,
    parse_queries,
    qname,
    register_views,
    resolver_for,
    spark_session,
    sql_text,
    timed,
)

TARGET_RATIO = 1.0
TARGET_MS = 100.0


@dataclass
class TranslationResult:
    query: int
    ours_ms: list[float] = field(default_factory=list)
    sql_ms: list[float] = field(default_factory=list)
    fresh_ms: list[float] = field(default_factory=list)
    analyzed_ms: list[float] = field(default_factory=list)  # Spark Connect: ours + the one analysis round trip
    round_trips: str = ""  # Spark Connect: the requests ours sent while translating (the last run), by call site
    error: str = ""

    @property
    def ours(self) -> float:
        return median(self.ours_ms) * 1000

    @property
    def sql(self) -> float:
        return median(self.sql_ms) * 1000

    @property
    def fresh(self) -> float:
        return median(self.fresh_ms) * 1000

    @property
    def analyzed(self) -> float:
        return median(self.analyzed_ms) * 1000

    @property
    def analyzed_ratio(self) -> float:
        return self.analyzed / self.sql if self.analyzed_ms and self.sql_ms else float("nan")

    @property
    def ratio(self) -> float:
        return self.ours / self.sql if self.ours_ms and self.sql_ms else float("nan")

    @property
    def fresh_ratio(self) -> float:
        return self.fresh / self.sql if self.fresh_ms and self.sql_ms else float("nan")


def _translate_once(spark, plan, resolver, sent: list[str] | None = None) -> tuple[float, float | None]:
    """Seconds `run_loaded` spends on a root before it executes it: the consumer made, the root built and its
    output columns taken (the names the consumer attached: no round trip). On Spark Connect also, for reference,
    with one analysis round trip added (`df.schema`: one AnalyzePlan call, which `run` no longer makes: the server
    analyzes once, when the root runs); None on classic Spark, where building analyzes. On Spark Connect the
    requests the translation sent (tests/round_trips.py) are appended to `sent` ("none" when none)."""
    from substrait_spark.consumer.clients import is_connect
    from substrait_spark.consumer.translation.consumer import SubstraitConsumer

    c = None

    def build():
        nonlocal c
        c = SubstraitConsumer(spark, plan, resolver)
        df = c.root(0)
        _ = c.root_columns[0]  # what the run report records (runner.py)
        return df

    try:
        if sent is not None and is_connect(spark):
            if str(TESTS_DIR) not in sys.path:
                sys.path.insert(0, str(TESTS_DIR))
            from round_trips import count_round_trips

            with count_round_trips(spark) as trips:
                seconds, df = timed(build)
            sent.append(f"{len(trips)} ({trips.describe()})" if len(trips) else "none")
        else:
            seconds, df = timed(build)
        analysis = timed(lambda: df.schema)[0] if is_connect(spark) else None
    finally:
        if c is not None:
            c.close()
    return seconds, None if analysis is None else seconds + analysis


def run(
    spark,
    queries: list[int],
    plans: dict,
    tables_dir: Path,
    warmup: int = 1,
    runs: int = 7,
    sql_for: Callable[[int], str] = sql_text,
    fresh: bool = True,
) -> list[TranslationResult]:
    """Time each query's plan against its SQL (`sql_for(q)`: IBM's TPC-H text by default); `fresh`: also ours with
    a fresh resolver per run (for reference)."""
    register_views(spark, tables_dir)
    resolver = resolver_for(tables_dir)
    results = []
    for q in queries:
        r = TranslationResult(q)
        text = sql_for(q)
        try:
            for i in range(warmup + runs):
                sent: list[str] = []
                ours, analyzed = _translate_once(spark, plans[q], resolver, sent)
                r.round_trips = sent[-1] if sent else r.round_trips
                sql, _ = timed(lambda: spark.sql(text))  # noqa: B023 - called at once
                if fresh:
                    fresh_s, _ = _translate_once(spark, plans[q], resolver_for(tables_dir))
                if i >= warmup:
                    r.ours_ms.append(ours)
                    r.sql_ms.append(sql)
                    if fresh:
                        r.fresh_ms.append(fresh_s)
                    if analyzed is not None:
                        r.analyzed_ms.append(analyzed)
        except Exception as exc:
            r.error = first_line(exc)
        print(
            f"[bench] translation {qname(q)}: ours {r.ours:.1f} ms, sql {r.sql:.1f} ms, "
            f"ours (fresh resolver) {r.fresh:.1f} ms{'  ERROR ' + r.error if r.error else ''}"
            + (f", round trips {r.round_trips}" if r.round_trips else ""),
            file=sys.stderr,
            flush=True,
        )
        results.append(r)
    return results


def summary(results: list[TranslationResult]) -> dict[str, float]:
    ok = [r for r in results if not r.error and r.ours_ms and r.sql_ms]
    return {
        "median_ratio": median([r.ratio for r in ok]),
        "median_fresh_ratio": median([r.fresh_ratio for r in ok]),
        "max_ours_ms": max((r.ours for r in ok), default=float("nan")),
        "max_fresh_ms": max((r.fresh for r in ok), default=float("nan")),
        "median_ours_ms": median([r.ours for r in ok]),
        "median_analyzed_ratio": median([r.analyzed_ratio for r in ok if r.analyzed_ms])
        if any(r.analyzed_ms for r in ok)
        else float("nan"),
        "median_sql_ms": median([r.sql for r in ok]),
        "failed": float(len(results) - len(ok)),
        "over_100ms": float(sum(1 for r in ok if r.ours >= TARGET_MS)),
    }


def markdown(results: list[TranslationResult]) -> str:
    s = summary(results)
    met_ratio = s["median_ratio"] <= TARGET_RATIO
    met_ms = s["max_ours_ms"] < TARGET_MS and not s["failed"]
    lines = [
        f"Median ratio ours/sql: **{s['median_ratio']:.2f}** (target <= {TARGET_RATIO:.1f}: "
        f"{'met' if met_ratio else 'NOT met'}). Slowest plan: **{s['max_ours_ms']:.1f} ms** "
        f"(target every plan < {TARGET_MS:.0f} ms: {'met' if met_ms else 'NOT met'}, "
        f"{int(s['over_100ms'])} at or over). Median per plan: ours {s['median_ours_ms']:.1f} ms, "
        f"sql {s['median_sql_ms']:.1f} ms." + (f" **{int(s['failed'])} plan(s) failed.**" if s["failed"] else ""),
        "",
        f"For reference, ours with a fresh resolver per run (every table opened again: a schema-inference job "
        f"per parquet read): median ratio {s['median_fresh_ratio']:.2f}, slowest {s['max_fresh_ms']:.1f} ms.",
        "",
    ]
    connect = any(r.analyzed_ms for r in results)
    if connect:
        lines[-1:-1] = [
            f"For reference, ours plus one analysis round trip (`df.schema` right after building), which `run` "
            f"made before execution until 2026-11-24 (`df.columns` for the report) and no longer makes: on Spark "
            f"Connect building does not analyze, and execution analyzes once: median ratio "
            f"{s['median_analyzed_ratio']:.2f}.",
            "",
        ]
    extra = " ours + analysis ms | (ours + analysis)/sql |" if connect else ""
    lines += [
        f"| query | ours ms | sql ms | ours/sql |{extra} ours (fresh resolver) ms | (fresh)/sql | note |",
        "|---|---:|---:|---:|" + ("---:|---:|" if connect else "") + "---:|---:|---|",
    ]
    for r in results:
        if r.error and not r.ours_ms:
            dashes = "— | " * (7 if connect else 5)
            lines.append(f"| {qname(r.query)} | {dashes}error: {r.error} |")
            continue
        note = f"error: {r.error}" if r.error else ("**>= 100 ms**" if r.ours >= TARGET_MS else "")
        cells = f" {r.analyzed:.1f} | {r.analyzed_ratio:.2f} |" if connect else ""
        lines.append(
            f"| {qname(r.query)} | {r.ours:.1f} | {r.sql:.1f} | {r.ratio:.2f} |{cells} {r.fresh:.1f} | "
            f"{r.fresh_ratio:.2f} | {note} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables-dir", type=Path, default=SF1_DIR if SF1_DIR.is_dir() else SMALL_DIR)
    ap.add_argument("--queries", help="e.g. 1,3,5-7 (default: all 22)")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args(argv)
    queries = parse_queries(args.queries)
    spark = spark_session()
    try:
        plans = load_plans(queries)
        results = run(spark, queries, plans, args.tables_dir, args.warmup, args.runs)
        print(markdown(results))
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
