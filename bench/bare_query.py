"""The bare PySpark script `bench/cli.py` compares `substrait-spark run` with: start Spark, register the TPC-H
tables as temp views, run the query's SQL text, collect and print its rows — what a user would write by hand.

Imports nothing from substrait_spark (the session settings come as JSON on the command line, the CLI's own, so
both processes run the same Spark). Prints one JSON line of its own timings (seconds) last.

    .venv/bin/python bench/bare_query.py --tables-dir .data/tpch/sf1 --sql-file q.sql --conf '{"k": "v"}'
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

STARTED = time.perf_counter()

TPCH_TABLES = ("lineitem", "orders", "customer", "part", "partsupp", "supplier", "nation", "region")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables-dir", required=True)
    ap.add_argument("--sql-file", required=True)
    ap.add_argument("--conf", default="{}")
    ap.add_argument("--master", default="local[*]")
    ap.add_argument("--tables", default=",".join(TPCH_TABLES), help="the tables the query reads")
    args = ap.parse_args()
    text = Path(args.sql_file).read_text(encoding="utf-8")

    from pyspark.sql import SparkSession

    imported = time.perf_counter()
    builder = SparkSession.builder.master(args.master).appName("bare-query")
    for k, v in json.loads(args.conf).items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    started = time.perf_counter()
    for t in args.tables.split(","):
        spark.read.parquet(f"{args.tables_dir}/{t}.parquet").createOrReplaceTempView(t)
    views = time.perf_counter()
    df = spark.sql(text)
    rows = df.collect()
    print(" | ".join(df.columns))
    for r in rows:
        print(" | ".join("NULL" if v is None else str(v) for v in r))
    done = time.perf_counter()
    spark.stop()
    timings = {
        "import_s": imported - STARTED,
        "spark_start_s": started - imported,
        "views_s": views - started,
        "query_s": done - views,
        "rows": len(rows),
    }
    print(json.dumps(timings))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
