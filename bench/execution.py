"""Benchmark (b): full execution of each TPC-H query at scale factor 1, ours vs Spark SQL, same session.

Per query: ``--warmup`` untimed runs of each path, then at least ``--rounds`` timed rounds, each running both
paths, which one first alternating round by round (ours first in even rounds); a query whose rounds have not yet
run ``--min-seconds`` of execution per path gets more rounds, in pairs (sub-second queries are the noisiest, and
the worst query's ratio is a target). Nothing is done between runs: a forced JVM garbage collection shrinks the heap (to
under 200 MB at sf1) and slows the next execution of either path by 30-40%, which would flatten the ratios. One
run:

* ours: ``SubstraitConsumer(spark, plan, resolver).root(0)`` (build), then
  ``df.write.format("noop").mode("overwrite").save()`` (execute: every operator runs, nothing is sent to the
  driver), then ``close()``;
* sql: ``spark.sql(text)`` (build: parse + analyze), then the same noop write.

Reported per query: median execute time of each path and their ratio (the target metric: geometric mean of the
ratios <= 1.02, no query above 1.10 — issue 19), and the end-to-end ratio (build + execute) for reference.

    .venv/bin/python bench/execution.py [--tables-dir .data/tpch/sf1] [--queries 1-22] [--rounds 3] [--warmup 1]
        [--min-seconds 10]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    SF1_DIR,
    first_line,
    geomean,
    load_plans,
    log,
    median,
    parse_queries,
    qname,
    register_views,
    require_data,
    resolver_for,
    spark_session,
    sql_text,
    timed,
)

TARGET_GEOMEAN = 1.02
TARGET_WORST = 1.10
MIN_SECONDS = 10.0


@dataclass
class ExecutionResult:
    query: int
    ours_build: list[float] = field(default_factory=list)
    ours_exec: list[float] = field(default_factory=list)
    sql_build: list[float] = field(default_factory=list)
    sql_exec: list[float] = field(default_factory=list)
    error: str = ""

    @property
    def ok(self) -> bool:
        return bool(self.ours_exec and self.sql_exec) and not self.error

    @property
    def ratio(self) -> float:
        return median(self.ours_exec) / median(self.sql_exec) if self.ok else float("nan")

    @property
    def total_ratio(self) -> float:
        if not self.ok:
            return float("nan")
        ours = median([b + e for b, e in zip(self.ours_build, self.ours_exec, strict=True)])
        sql = median([b + e for b, e in zip(self.sql_build, self.sql_exec, strict=True)])
        return ours / sql


def _noop(df) -> None:
    df.write.format("noop").mode("overwrite").save()


def _run_ours(spark, plan, resolver) -> tuple[float, float]:
    from substrait_spark.consumer.translation.consumer import SubstraitConsumer

    c = None

    def build():
        nonlocal c
        c = SubstraitConsumer(spark, plan, resolver)
        return c.root(0)

    try:
        build_s, df = timed(build)
        exec_s, _ = timed(lambda: _noop(df))
    finally:
        if c is not None:
            c.close()
    return build_s, exec_s


def _run_sql(spark, text: str) -> tuple[float, float]:
    build_s, df = timed(lambda: spark.sql(text))
    exec_s, _ = timed(lambda: _noop(df))
    return build_s, exec_s


def _enough(r: ExecutionResult, rounds: int, min_seconds: float) -> bool:
    """At least `rounds` and `min_seconds` per path; rounds added beyond `rounds` come in pairs, so each path goes
    first as often as the other."""
    done = min(len(r.ours_exec), len(r.sql_exec))
    if done < rounds:
        return False
    return min(sum(r.ours_exec), sum(r.sql_exec)) >= min_seconds and (done == rounds or done % 2 == rounds % 2)


def run(
    spark,
    queries: list[int],
    plans: dict,
    tables_dir: Path,
    rounds: int = 3,
    warmup: int = 1,
    min_seconds: float = MIN_SECONDS,
    sql_for: Callable[[int], str] = sql_text,
    budget_s: float | None = None,
    on_result: Callable[[ExecutionResult], None] | None = None,
) -> list[ExecutionResult]:
    """Measure each query of `queries` (`sql_for(q)`: its SQL, IBM's TPC-H by default); with `budget_s`, no query
    is started once that many seconds have passed (the rest are left out of the results: the caller names them);
    `on_result` is given each query's result as soon as it is measured (kept if the run is stopped)."""
    register_views(spark, tables_dir)
    resolver = resolver_for(tables_dir)
    results = []
    started = time.perf_counter()
    for q in queries:
        if budget_s is not None and time.perf_counter() - started > budget_s:
            left = ", ".join(map(qname, queries[len(results) :]))
            log(f"execution: time budget of {budget_s:.0f} s spent; not measured: {left}")
            break
        r = ExecutionResult(q)
        text = sql_for(q)
        i = 0
        while not r.error and (i < warmup or not _enough(r, rounds, min_seconds)):
            timed_round = i >= warmup
            # Which path runs first alternates round by round: the first of a pair pays for what the other left
            # (garbage to collect, colder caches), so a fixed order biases the ratio.
            for path in ("ours", "sql") if i % 2 == 0 else ("sql", "ours"):
                if path == "ours" and not r.error:
                    try:
                        b, e = _run_ours(spark, plans[q], resolver)
                        if timed_round:
                            r.ours_build.append(b)
                            r.ours_exec.append(e)
                    except Exception as exc:
                        r.error = f"ours: {first_line(exc)}"
                elif path == "sql":
                    try:
                        b, e = _run_sql(spark, text)
                        if timed_round:
                            r.sql_build.append(b)
                            r.sql_exec.append(e)
                    except Exception as exc:
                        r.error = r.error or f"sql: {first_line(exc)}"
            i += 1
        print(
            f"[bench] execution {qname(q)}: {len(r.ours_exec)} rounds, ours {median(r.ours_exec):.2f} s, "
            f"sql {median(r.sql_exec):.2f} s, "
            f"ratio {r.ratio:.3f}{'  ERROR ' + r.error if r.error else ''}",
            file=sys.stderr,
            flush=True,
        )
        results.append(r)
        if on_result is not None:
            on_result(r)
    return results


def summary(results: list[ExecutionResult]) -> dict[str, float]:
    ok = [r for r in results if r.ok]
    return {
        "geomean_ratio": geomean([r.ratio for r in ok]),
        "geomean_total_ratio": geomean([r.total_ratio for r in ok]),
        "ours_total_s": sum(median(r.ours_exec) for r in ok),
        "sql_total_s": sum(median(r.sql_exec) for r in ok),
        "worst_ratio": max((r.ratio for r in ok), default=float("nan")),
        "failed": float(len(results) - len(ok)),
    }


def markdown(results: list[ExecutionResult], rounds: int, warmup: int, min_seconds: float = MIN_SECONDS) -> str:
    s = summary(results)
    met = s["geomean_ratio"] <= TARGET_GEOMEAN and s["worst_ratio"] <= TARGET_WORST and not s["failed"]
    lines = [
        f"Geometric mean of the execute-time ratios ours/sql: **{s['geomean_ratio']:.3f}** "
        f"(target <= {TARGET_GEOMEAN}, no query above {TARGET_WORST}: {'met' if met else 'NOT met'}); "
        f"worst query {s['worst_ratio']:.2f}; "
        f"sum of medians ours {s['ours_total_s']:.1f} s vs sql {s['sql_total_s']:.1f} s. "
        f"End to end (build + execute): geometric mean {s['geomean_total_ratio']:.3f}."
        + (f" **{int(s['failed'])} query(ies) failed.**" if s["failed"] else ""),
        "",
        f"At least {rounds} timed round(s), and at least {min_seconds:g} s of execution per path, after {warmup} "
        "warm-up round(s); each round runs both paths, which one first alternating round by round; medians in "
        "seconds.",
        "",
        "| query | rounds | ours execute s | sql execute s | ours/sql | ours build s | sql build s "
        "| end-to-end ours/sql | note |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        if not r.ok:
            lines.append(f"| {qname(r.query)} | — | — | — | — | — | — | — | error: {r.error} |")
            continue
        flag = "**above 1.10**" if r.ratio > TARGET_WORST else ("slower" if r.ratio > TARGET_GEOMEAN else "")
        lines.append(
            f"| {qname(r.query)} | {len(r.ours_exec)} | {median(r.ours_exec):.2f} | {median(r.sql_exec):.2f} | "
            f"{r.ratio:.3f} | "
            f"{median(r.ours_build):.3f} | {median(r.sql_build):.3f} | {r.total_ratio:.3f} | {flag} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables-dir", type=Path, default=SF1_DIR)
    ap.add_argument("--queries", help="e.g. 1,3,5-7 (default: all 22)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--min-seconds", type=float, default=MIN_SECONDS)
    args = ap.parse_args(argv)
    if args.tables_dir == SF1_DIR:
        require_data(SF1_DIR, "data-sf1")
    queries = parse_queries(args.queries)
    spark = spark_session()
    try:
        plans = load_plans(queries)
        results = run(spark, queries, plans, args.tables_dir, args.rounds, args.warmup, args.min_seconds)
        print(markdown(results, args.rounds, args.warmup, args.min_seconds))
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
