"""What a translation builds, to compare a refactor's before and after: for each TPC-H query, the number of
DataFrame operations of the translated DataFrame (the nodes of its logical plan as built, before analysis) and
the physical plan Spark runs (expression ids normalised), as JSON.

    .venv/bin/python bench/operations.py --out before.json      # on the old code
    .venv/bin/python bench/operations.py --out after.json       # on the new code
    .venv/bin/python bench/operations.py --compare before.json after.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import SMALL_DIR, load_plans, parse_queries, qname, resolver_for, spark_session, translated

_IDS = re.compile(r"#\d+L?|plan_id=\d+|_s\d+\b|substrait_[0-9a-f_]+")


def operations(spark, plans: dict, tables_dir: Path) -> dict[str, dict[str, object]]:
    resolver = resolver_for(tables_dir)
    out: dict[str, dict[str, object]] = {}
    for q, plan in plans.items():
        with translated(spark, plan, resolver) as df:
            execution = df._jdf.queryExecution()
            logical = execution.logical().treeString().strip().splitlines()
            physical = _IDS.sub("#", execution.executedPlan().treeString())
        out[qname(q)] = {"operations": len(logical), "physical_plan": physical}
        print(f"[bench] {qname(q)}: {len(logical)} operations", file=sys.stderr, flush=True)
    return out


def compare(before: dict, after: dict) -> int:
    changed = 0
    for q in sorted(before.keys() | after.keys()):
        b, a = before.get(q, {}), after.get(q, {})
        same_plan = b.get("physical_plan") == a.get("physical_plan")
        plan = "same" if same_plan else "DIFFERENT"
        print(f"{q}: operations {b.get('operations')} -> {a.get('operations')}, physical plan {plan}")
        changed += b.get("operations") != a.get("operations") or not same_plan
    print(f"{changed} of {len(before.keys() | after.keys())} queries changed")
    return 1 if changed else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables-dir", type=Path, default=SMALL_DIR)
    ap.add_argument("--queries", help="e.g. 1,3,5-7 (default: all 22)")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--compare", nargs=2, type=Path)
    args = ap.parse_args(argv)
    if args.compare:
        return compare(*(json.loads(p.read_text()) for p in args.compare))
    queries = parse_queries(args.queries)
    spark = spark_session()
    try:
        result = operations(spark, load_plans(queries), args.tables_dir)
    finally:
        spark.stop()
    text = json.dumps(result, indent=1)
    if args.out:
        args.out.write_text(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
