"""Record what every corpus plan does, to compare two versions of the engine (before / after a refactoring).

    .venv/bin/python tools/compare_reports.py OUT_DIR [--corpus ../shared/corpus] [--tpch .data/tpch/sf0.01]
    .venv/bin/python tools/compare_reports.py --diff BEFORE_DIR AFTER_DIR

Every plan file of every corpus set (`*.json`, `*.bin`, `*.textproto`/`*.pbtxt`; SQL texts and oracles are not
plans) runs in one Spark session over the TPC-H sf0.01 tables and consumer-testing's table `t`. One JSON file per
plan (`OUT_DIR/<set>/<relative path>.json`) records what a user sees of it:

- `load`: the typed error of a plan that does not load (kind, exit code, path, message);
- `validate`: the findings (feature, path) or the typed error;
- `lineage`: the `lineage` command's JSON (without the plan identity), or the typed error;
- `graph`: the `explain --format svg` picture (plan alone);
- `run`: status and exit code, the typed error (kind, path, message), the steps, each root's columns and row
  count and a digest of its rows sorted (more than MAX_ROWS rows: a multiset digest computed in Spark);
- `explain`: the plan tree of `explain` and Spark's formatted physical plan, expression ids (`#123`), temp view
  names and other per-run identifiers removed.

`--diff` compares two such folders and prints one line per plan that differs, with the fields that differ.
Kept to a few minutes on 2 cores: one session, shuffle partitions 2, results of MAX_ROWS rows at most collected.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import io
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # table `t` of the function corpus: tests/function_corpus.py

PLAN_SUFFIXES = (".json", ".bin", ".textproto", ".pbtxt")
NOT_PLANS = ("expected", "sql", "tpcds", "tpch", "tpch-postgresql")  # folders of oracles and SQL texts
MAX_ROWS = 100_000
# Per-run identifiers in explain text: expression ids, plan ids, temp views and aliases named with a run id.
NORMALISE = [
    (re.compile(r"#\d+L?"), "#"),
    (re.compile(r"plan_id=\d+"), "plan_id="),
    (re.compile(r"\b[0-9a-f]{8,}\b"), "<id>"),
    (re.compile(r"(_ss_?[a-z]*_?)[0-9a-f]{6,}"), r"\1<id>"),
    (re.compile(r"file:[^\s,\]]+"), "file:<path>"),
    (re.compile(r"\[(\d+)\]"), r"[\1]"),
]


def normalise(text: str) -> str:
    for pattern, repl in NORMALISE:
        text = pattern.sub(repl, text)
    return text


def plan_files(corpus: Path) -> list[Path]:
    out = []
    for f in sorted(corpus.rglob("*")):
        rel = f.relative_to(corpus)
        if not f.is_file() or f.suffix not in PLAN_SUFFIXES or rel.parts[0] == "README.md":
            continue
        if any(part in NOT_PLANS for part in rel.parts[1:-1]):
            continue
        out.append(f)
    return out


def error_of(exc: BaseException) -> dict[str, Any]:
    from substrait_spark.consumer.errors import SubstraitSparkError

    if isinstance(exc, SubstraitSparkError):
        d = exc.to_dict()
        d["message"] = normalise(str(d.get("message")))
        return d
    return {"kind": f"untyped {type(exc).__name__}", "message": normalise(str(exc).strip().split("\n")[0][:300])}


def rows_digest(df) -> dict[str, Any]:
    """sha256 of the sorted rows (repr of each value), or for a large result Spark's multiset digest."""
    from pyspark.sql import functions as F

    rows = df.limit(MAX_ROWS + 1).collect()
    if len(rows) <= MAX_ROWS:
        text = "\n".join(sorted(repr(tuple(r)) for r in rows))
        return {"rows": len(rows), "sha256": hashlib.sha256(text.encode()).hexdigest()}
    row_hash = F.xxhash64(*[F.coalesce(F.col(c).cast("string"), F.lit("\u0000NULL")) for c in df.columns])
    count, total = df.agg(F.count(F.lit(1)), F.sum(row_hash)).first()
    return {"rows": count, "xxhash64_sum": str(total)}


def physical_plan(df) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        df.explain(mode="formatted")
    return normalise(buf.getvalue())


def consumer_class():
    """The consumer, recording each root's columns, row digest, plan tree and physical plan while it is open."""
    from substrait_spark.consumer.analysis.explain import plan_tree
    from substrait_spark.consumer.translation.consumer import SubstraitConsumer

    class Recording(SubstraitConsumer):
        record: dict[str, Any] = {}

        def root(self, n: int = 0):
            df = super().root(n)
            try:
                entry: dict[str, Any] = {"columns": list(df.columns), **rows_digest(df)}
            except Exception as exc:  # the run's own delivery reports it; record what collecting said
                entry = {"error": error_of(exc)}
            if n == 0:
                Recording.record["explain"] = {"tree": normalise(plan_tree(self)), "physical": physical_plan(df)}
            Recording.record.setdefault("roots", []).append(entry)
            return df

    return Recording


def record_plan(path: Path, spark, runner, cls) -> dict[str, Any]:
    from substrait_spark.consumer.analysis.analyze import validate_plan
    from substrait_spark.consumer.analysis.lineage import column_lineage
    from substrait_spark.consumer.errors import SubstraitSparkError
    from substrait_spark.graph import build_graph, render_svg

    out: dict[str, Any] = {}
    try:
        loaded = runner.load(str(path)).loaded
    except SubstraitSparkError as exc:
        return {"load": error_of(exc)}
    for name, fn in (
        ("validate", lambda: [f.to_dict() for f in validate_plan(loaded)]),
        ("lineage", lambda: column_lineage(loaded).to_dict()),
        ("graph", lambda: render_svg(build_graph(loaded))),
    ):
        try:
            out[name] = fn()
        except Exception as exc:
            out[name] = {"error": error_of(exc)}
    cls.record = {}
    run: dict[str, Any] = {}
    try:
        checked = runner.check(loaded)
        report = runner.run(checked)
        run["status"], run["exit_code"] = report.status, 0
        run["steps"] = [_step(s) for s in report.steps]
        run["outputs"] = [{"columns": o.columns, "rows": o.rows} for o in report.outputs]
    except SubstraitSparkError as exc:
        run["status"], run["exit_code"], run["error"] = "failed", exc.exit_code, error_of(exc)
        report = getattr(exc, "report", None)
        run["steps"] = [_step(s) for s in report.steps] if report is not None else []
    except Exception as exc:
        run["status"], run["exit_code"], run["error"] = "crashed", 1, error_of(exc)
    run["roots"] = cls.record.get("roots", [])
    out["run"] = run
    out["explain"] = cls.record.get("explain")
    return out


def _step(step) -> dict[str, Any]:
    d = dataclasses.asdict(step)
    for timing in ("duration_s", "started_at", "finished_at", "snapshot_before", "snapshot_after", "commit"):
        d.pop(timing, None)
    return json.loads(normalise(json.dumps(d, default=str, sort_keys=True)))


def record(out_dir: Path, corpus: Path, tpch: Path) -> int:
    from function_corpus import TABLE_T_VIEW, register_table_t
    from substrait_spark.consumer.running.resolver import TableBinding, TableMapResolver
    from substrait_spark.hooks.plan_run import PlanRunner
    from substrait_spark.hooks.spark import get_session

    spark = get_session("local[2]", {"spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false"})
    spark.sparkContext.setLogLevel("ERROR")
    register_table_t(spark)
    resolver = TableMapResolver.from_tables_dir(str(tpch), {"t": TableBinding(TABLE_T_VIEW, "table")})
    cls = consumer_class()
    runner = PlanRunner(resolver=resolver, session=spark, consumer_class=cls)
    files = plan_files(corpus)
    started = time.perf_counter()
    for i, f in enumerate(files):
        rel = f.relative_to(corpus)
        target = out_dir / rel.parent / (rel.name + ".json")
        target.parent.mkdir(parents=True, exist_ok=True)
        doc = {"plan": rel.as_posix(), **record_plan(f, spark, runner, cls)}
        target.write_text(json.dumps(doc, indent=1, sort_keys=True, default=str) + "\n")
        if (i + 1) % 50 == 0:
            print(f"{i + 1}/{len(files)} plans, {time.perf_counter() - started:.0f}s", file=sys.stderr)
    print(f"{len(files)} plans recorded in {out_dir} ({time.perf_counter() - started:.0f}s)")
    spark.stop()
    return 0


def diff(before: Path, after: Path) -> int:
    names = sorted({p.relative_to(d) for d in (before, after) for p in d.rglob("*.json")})
    differing = 0
    for rel in names:
        a, b = before / rel, after / rel
        if not a.exists() or not b.exists():
            print(f"{rel}: only in {'after' if not a.exists() else 'before'}")
            differing += 1
            continue
        da, db = json.loads(a.read_text()), json.loads(b.read_text())
        fields = sorted(k for k in set(da) | set(db) if da.get(k) != db.get(k))
        if fields:
            differing += 1
            print(f"{rel}: {', '.join(fields)}")
    print(f"{len(names)} plans compared, {len(names) - differing} identical, {differing} differing")
    return 1 if differing else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", nargs="?", type=Path, help="record into this folder")
    p.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    p.add_argument("--tpch", type=Path, default=ROOT / ".data" / "tpch" / "sf0.01")
    p.add_argument("--diff", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = p.parse_args(argv)
    if args.diff:
        return diff(*args.diff)
    if args.out is None:
        p.error("give OUT (record) or --diff BEFORE AFTER")
    return record(args.out, args.corpus, args.tpch)


if __name__ == "__main__":
    sys.exit(main())
