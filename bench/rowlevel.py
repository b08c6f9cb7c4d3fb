"""(d) Row-level DELETE and UPDATE at sf1 in Iceberg: ours against Spark SQL's own statement on an identical copy.

    .venv/bin/python bench/rowlevel.py [--rounds 3] [--warmup 1] [--cases delete-clustered,...] [--output FILE]

* **ours** — a Substrait plan (WriteRel DELETE of a filter over the table; WriteRel UPDATE of after-images keyed
  by `o_orderkey`) run by `run_loaded` with the Iceberg catalog: resolve and pin the table, translate, stage the
  row-level statement on a branch, publish. The whole run is timed.
* **sql** — Spark SQL's own `DELETE FROM t WHERE …` / `MERGE INTO t USING (after-images) ON o_orderkey … WHEN
  MATCHED THEN UPDATE SET *`, timed around `spark.sql`.

Each run works on its own copy of the table: the base table's metadata registered under a new name (the same data
files; Iceberg never deletes a data file on commit), so both paths start from identical tables. Per case:
`--warmup` untimed rounds, then `--rounds` timed rounds, each running both paths, which one first alternating
(the second reads the shared data files warm). Reported: median wall time,
bytes written (the new snapshot's `added-files-size`: data and delete files), files added/removed, rows changed
(checked equal between the paths, and the two tables compared row for row after the first round).

Tables: TPC-H sf1 `lineitem` and `orders` (`make data-sf1`) written once into a SQLite-backed catalog under
`.data/bench-iceberg` with `write.target-file-size-bytes` = 8 MiB (so a table has many files, as a large table
has); the table properties are Iceberg's defaults otherwise (copy-on-write, serializable). Target: ours within
1.1 times sql's time and bytes. The section replaces its own in `bench/RESULTS.md` (others are kept; `run_all.py`
keeps this one).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    BENCH_DIR,
    DATA_DIR,
    ROWLEVEL_HEADING,
    SF1_DIR,
    TESTS_DIR,
    environment,
    log,
    median,
    replace_section,
    spark_session,
)

CATALOG = "benchlake"
NAMESPACE = "bench"
TARGET_FILE_BYTES = 8 << 20
WORK_DIR = DATA_DIR / "bench-iceberg"
ORDERS_KEY = "o_orderkey"


@dataclass(frozen=True)
class Case:
    """One statement: the table, what is changed (SQL text for Spark SQL; the same predicate as a plan)."""

    name: str
    table: str
    kind: str  # delete | update
    where_sql: str  # Spark SQL's predicate
    where_plan: Callable[[Any, list[str], dict[str, Any]], Any]  # (builder, names, types by name) -> Expr
    about: str


def _between(column: str, lo: dt.date, hi: dt.date):
    def build(b, names, types):
        from plan_builder import field, lit

        i, t = names.index(column), types[column]
        return b.call("and", b.call("gte", field(i), lit(lo, t)), b.call("lte", field(i), lit(hi, t)))

    return build


def _at_most(column: str, value: int):
    def build(b, names, types):
        from plan_builder import field, lit

        return b.call("lte", field(names.index(column)), lit(value, types[column]))

    return build


CASES = [
    Case("delete-clustered", "lineitem", "delete", "l_orderkey <= 6000", _at_most("l_orderkey", 6000),
         "0.1% of lineitem, in the first file (the table is in l_orderkey order)"),
    Case("delete-spread", "lineitem", "delete", "l_shipdate BETWEEN DATE '1995-03-13' AND DATE '1995-03-14'",
         _between("l_shipdate", dt.date(1995, 3, 13), dt.date(1995, 3, 14)), "0.08% of lineitem, in every file"),
    Case("update-clustered", "orders", "update", "o_orderkey <= 60000", _at_most("o_orderkey", 60000),
         "1% of orders (o_comment set), in the first file"),
    Case("update-spread", "orders", "update", "o_orderdate BETWEEN DATE '1995-01-01' AND DATE '1995-01-24'",
         _between("o_orderdate", dt.date(1995, 1, 1), dt.date(1995, 1, 24)),
         "1% of orders (o_comment set), in every file"),
]  # fmt: skip


@dataclass
class Run:
    seconds: float
    bytes: int
    rows: int
    files: tuple[int, int, int]  # data files added, data files removed, delete files added


@dataclass
class Result:
    case: Case
    ours: list[Run] = field(default_factory=list)
    sql: list[Run] = field(default_factory=list)
    same_table: str = "not checked"
    base_files: int = 0
    error: str | None = None


class Bench:
    def __init__(self, spark, catalog, catalogs):
        self.spark, self.catalog, self.catalogs = spark, catalog, catalogs
        self.copies = 0

    def base(self, table: str) -> Any:
        ident = f"{NAMESPACE}.{table}"
        if not self.catalog.table_exists(ident):
            log(f"loading {table} (sf1) into Iceberg ...")
            df = self.spark.read.parquet(str(SF1_DIR / f"{table}.parquet"))
            writer = df.writeTo(f"{CATALOG}.{ident}")
            writer.tableProperty("write.target-file-size-bytes", str(TARGET_FILE_BYTES)).create()
        return self.catalog.load_table(ident)

    def copy(self, table: str) -> str:
        """A new table with the base table's metadata (same data files)."""
        self.copies += 1
        name = f"{table}_{os.getpid()}_{self.copies}"
        self.catalog.register_table(f"{NAMESPACE}.{name}", self.base(table).metadata_location)
        return name

    def drop(self, name: str) -> None:
        self.catalog.drop_table(f"{NAMESPACE}.{name}")  # metadata only: the data files are shared

    def schema(self, name: str) -> tuple[list[str], list[Any], dict[str, Any]]:
        from plan_builder import date, decimal_, i32, i64, string
        from pyspark.sql import types as T

        def plan_type(t):
            if isinstance(t, T.LongType):
                return i64()
            if isinstance(t, T.IntegerType):
                return i32()
            if isinstance(t, T.DecimalType):
                return decimal_(t.precision, t.scale)
            if isinstance(t, T.DateType):
                return date()
            if isinstance(t, T.StringType):
                return string()
            raise TypeError(f"no plan type for {t}")

        fields = self.spark.table(f"{CATALOG}.{NAMESPACE}.{name}").schema.fields
        names = [f.name for f in fields]
        types = [plan_type(f.dataType) for f in fields]
        return names, types, dict(zip(names, types, strict=True))

    def plan(self, case: Case, name: str):
        from plan_builder import PlanBuilder, WriteRel, field, filter_, lit, named, project, write

        names, types, by_name = self.schema(name)
        b = PlanBuilder()
        rows = filter_(named([NAMESPACE, name], names, types), case.where_plan(b, names, by_name))
        if case.kind == "delete":
            rel = write([NAMESPACE, name], rows, names, types, op=WriteRel.WRITE_OP_DELETE)
        else:
            comment = lit("updated", by_name["o_comment"])
            images = [comment if n == "o_comment" else field(i) for i, n in enumerate(names)]
            after = project(rows, *images, emit=list(range(len(names), 2 * len(names))))
            rel = write([NAMESPACE, name], after, names, types, op=WriteRel.WRITE_OP_UPDATE)
        return b.plan(rel, names)

    def ours(self, case: Case, name: str) -> Run:
        from substrait_spark.consumer.loading.loader import LoadedPlan
        from substrait_spark.consumer.running.runner import run_loaded
        from substrait_spark.hooks.iceberg_writes import WritableIcebergResolver

        plan = self.plan(case, name)
        loaded = LoadedPlan(plan, None, "0" * 64, "binary", plan.version.producer, None)
        keys = {f"{NAMESPACE}.{name}": [ORDERS_KEY]} if case.kind == "update" else None
        t0 = time.perf_counter()
        report = run_loaded(loaded, self.spark, WritableIcebergResolver(self.catalogs), update_keys=keys)
        seconds = time.perf_counter() - t0
        step = report.steps[0]
        if (step.commit or {}).get("method") != "row-level":
            raise RuntimeError(f"ours did not run row-level: {step.commit}")
        return self._run(name, seconds, step.rows)

    def sql(self, case: Case, name: str) -> Run:
        full = f"{CATALOG}.{NAMESPACE}.{name}"
        if case.kind == "delete":
            statement = f"DELETE FROM {full} WHERE {case.where_sql}"
            rows = self.spark.table(full).where(case.where_sql).count()  # before, outside the timer
        else:
            names = self.spark.table(full).columns
            images = ", ".join("'updated' AS o_comment" if n == "o_comment" else n for n in names)
            statement = (
                f"MERGE INTO {full} t USING (SELECT {images} FROM {full} WHERE {case.where_sql}) s "
                f"ON t.{ORDERS_KEY} = s.{ORDERS_KEY} WHEN MATCHED THEN UPDATE SET *"
            )
            rows = self.spark.table(full).where(case.where_sql).count()
        t0 = time.perf_counter()
        self.spark.sql(statement)
        return self._run(name, time.perf_counter() - t0, rows)

    def _run(self, name: str, seconds: float, rows: int) -> Run:
        s = self.catalog.load_table(f"{NAMESPACE}.{name}").current_snapshot().summary.additional_properties
        n = [int(s.get(k, 0)) for k in ("added-data-files", "deleted-data-files", "added-delete-files")]
        return Run(seconds, int(s.get("added-files-size", 0)), rows, (n[0], n[1], n[2]))

    def same_rows(self, a: str, b: str) -> str:
        ta, tb = (self.spark.table(f"{CATALOG}.{NAMESPACE}.{n}") for n in (a, b))
        differ = ta.exceptAll(tb).count() + tb.exceptAll(ta).count()
        return "yes" if differ == 0 else f"NO: {differ} rows differ"


def run(spark, cases: list[Case], rounds: int, warmup: int) -> list[Result]:
    from substrait_spark.hooks.iceberg import Catalogs
    from substrait_spark.hooks.iceberg_spark import pyiceberg_catalog, pyiceberg_catalog_properties, register_catalog

    settings = {"uri": WORK_DIR / "catalog.db", "warehouse": WORK_DIR / "warehouse"}
    register_catalog(spark, CATALOG, **settings)
    catalog = pyiceberg_catalog(CATALOG, **settings)
    catalog.create_namespace_if_not_exists(NAMESPACE)
    for ident in catalog.list_tables(NAMESPACE):  # copies an interrupted run left (the base tables stay)
        if ident[-1] not in {c.table for c in CASES}:
            catalog.drop_table(ident)
    props = pyiceberg_catalog_properties(CATALOG, **settings)
    bench = Bench(spark, catalog, Catalogs.from_mapping({"default": CATALOG, "catalogs": {CATALOG: props}}))
    results = []
    for case in cases:
        result = Result(case, base_files=len(bench.base(case.table).inspect.files()))
        try:
            for r in range(warmup + rounds):
                pair = []
                # Which path goes first alternates: the copies share data files, so the second reads them warm.
                for path in ("ours", "sql") if r % 2 == 0 else ("sql", "ours"):
                    name = bench.copy(case.table)
                    done = getattr(bench, path)(case, name)
                    log(f"{case.name} round {r} {path}: {done.seconds:.1f} s, {done.bytes} bytes, files {done.files}")
                    if r >= warmup:
                        getattr(result, path).append(done)
                    pair.append(name)
                if r == warmup:
                    result.same_table = bench.same_rows(*pair)  # the two tables after the first timed round
                for name in pair:
                    bench.drop(name)
        except Exception as exc:  # recorded, not raised: the other cases still run
            result.error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
            log(f"{case.name} failed: {result.error}")
        results.append(result)
    return results


def markdown(results: list[Result], rounds: int, warmup: int, env: dict[str, str], load: tuple[str, str]) -> str:
    out = [
        ROWLEVEL_HEADING,
        "",
        "Generated by `.venv/bin/python bench/rowlevel.py` (see its docstring). Ours: a Substrait WriteRel "
        "DELETE/UPDATE run by `run_loaded` (pin, translate, stage the row-level statement on a branch, publish); "
        "sql: Spark SQL's own `DELETE FROM … WHERE …` / `MERGE INTO … WHEN MATCHED THEN UPDATE SET *`, on an "
        f"identical copy of the table. Median of {rounds} rounds after {warmup} warm-up; bytes = the commit's "
        "`added-files-size`; files = data files added / removed / delete files added. Default table properties "
        "(copy-on-write, serializable). Target: ours <= 1.1 times sql in time and bytes.",
        "",
        "| case | what | table files | rows | ours s | sql s | time ours/sql | ours bytes | sql bytes | bytes ours/sql "
        "| files ours | files sql | same rows |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if r.error or not r.ours or not r.sql:
            out.append(f"| {r.case.name} | {r.case.about} | {r.base_files} | — | — | — | — | — | — | — | — | — | "
                       f"failed: {(r.error or 'no runs').replace('|', '/')} |")  # fmt: skip
            continue
        t_o, t_s = median([x.seconds for x in r.ours]), median([x.seconds for x in r.sql])
        b_o, b_s = median([x.bytes for x in r.ours]), median([x.bytes for x in r.sql])
        rows = {x.rows for x in r.ours} | {x.rows for x in r.sql}
        out.append(
            f"| {r.case.name} | {r.case.about} | {r.base_files} | {'/'.join(map(str, sorted(rows)))} | {t_o:.1f} | "
            f"{t_s:.1f} | {t_o / t_s:.2f} | {b_o:,.0f} | {b_s:,.0f} | {b_o / b_s:.3f} | "
            f"{'/'.join(map(str, r.ours[0].files))} | {'/'.join(map(str, r.sql[0].files))} | {r.same_table} |"
        )
    out += [
        "",
        "Rounds (seconds, ours / sql): " + "; ".join(f"{r.case.name}: {_rounds(r)}" for r in results),
        "",
        f"_Machine: {env['cpu']}, {env['nproc']} cores, {env['memory']}; pyspark {env['pyspark']}, Iceberg 1.10.2; "
        f"{env['date']}, commit {env['commit']}; load average (1/5/15 min) before {load[0]}, after {load[1]}._",
        "",
    ]
    return "\n".join(out)


def _rounds(r: Result) -> str:
    return ", ".join(f"{o.seconds:.1f}/{q.seconds:.1f}" for o, q in zip(r.ours, r.sql, strict=False))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("BENCH_ROUNDS", "3")))
    ap.add_argument("--warmup", type=int, default=int(os.environ.get("BENCH_WARMUP", "1")))
    ap.add_argument("--cases", help="comma-separated: " + ", ".join(c.name for c in CASES))
    ap.add_argument("--fresh", action="store_true", help=f"reload the base tables ({WORK_DIR} removed first)")
    ap.add_argument("--output", type=Path, default=BENCH_DIR / "RESULTS.md")
    args = ap.parse_args(argv)
    wanted = args.cases.split(",") if args.cases else [c.name for c in CASES]
    cases = [c for c in CASES if c.name in wanted]
    if not all((SF1_DIR / f"{t}.parquet").exists() for t in ("lineitem", "orders")):
        raise SystemExit(f"TPC-H sf1 missing in {SF1_DIR}: run `make data-sf1` first")
    if str(TESTS_DIR) not in sys.path:
        sys.path.insert(0, str(TESTS_DIR))  # plan_builder: the tests' Substrait plan builder
    if args.fresh:
        shutil.rmtree(WORK_DIR, ignore_errors=True)
    WORK_DIR.mkdir(parents=True, exist_ok=True)

    from substrait_spark.hooks.iceberg_spark import spark_session_conf

    env = environment()
    before = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    spark = spark_session(extra=spark_session_conf())
    try:
        results = run(spark, cases, args.rounds, args.warmup)
    finally:
        spark.stop()
    after = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    text = markdown(results, args.rounds, args.warmup, env, (before, after))
    print(text)
    replace_section(args.output, ROWLEVEL_HEADING, text)
    log(f"wrote the section to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
