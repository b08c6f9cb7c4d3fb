"""Shared pieces of the benchmarks: the Spark session, the TPC-H plans and SQL, tables, timing, machine facts.

The benchmarks compare two ways of running the same TPC-H query in one Spark session:

* "ours": IBM's compliance-suite Substrait plan (``corpus/ibm-substrait-compliance-tpch/qNN.json``, Isthmus)
  translated by ``SubstraitConsumer`` into a DataFrame;
* "sql": the same query as Spark SQL text over temp views of the same parquet files.

The SQL is the project's TPC-H oracle SQL (``tests/tpch_sql``): ``standard/qNN.sql`` (TPC-H validation
parameters, which are the literals of IBM's plans 2-22), or ``ibm/qNN.sql`` where the plan's own query differs
from the TPC-H text (``SQL_OVERRIDES`` says how): q01's plan filters ``l_shipdate <= 1998-09-01``, one day
earlier than TPC-H's ``1998-12-01 - 90 days``; Calcite's plans carry decimal literals (``1.00``), casts to the
decimal types they declare (precision capped at 19) and explicit null orders (ASC NULLS LAST, DESC NULLS
FIRST, where Spark SQL's defaults are the opposite), which the physical plan comparison (``plans.py``) sees.
Those texts are written for DuckDB but are plain ANSI SQL that Spark SQL parses as is; ``verify_same_query``
checks, at sf0.01, that each SQL returns the plan's result before anything is timed.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
TESTS_DIR = REPO_ROOT / "tests"
SQL_DIR = TESTS_DIR / "tpch_sql"
CORPUS_DIR = Path(os.environ.get("SUBSTRAIT_SPARK_CORPUS", REPO_ROOT.parent / "shared" / "corpus"))
IBM_DIR = CORPUS_DIR / "ibm-substrait-compliance-tpch"
DATA_DIR = REPO_ROOT / ".data" / "tpch"
SMALL_DIR = DATA_DIR / "sf0.01"
SF1_DIR = DATA_DIR / "sf1"
SF10_DIR = DATA_DIR / "sf10"

TPCH_TABLES = ("lineitem", "orders", "customer", "part", "partsupp", "supplier", "nation", "region")
QUERIES = tuple(range(1, 23))

# Where the SQL of a query is not tests/tpch_sql/standard/qNN.sql, and why.
_PLAN_TYPES = "the plan's decimal literals, casts to its declared decimal types and its sorts' null order"
SQL_OVERRIDES = {
    1: ("ibm/q01.sql", f"IBM's plan filters l_shipdate <= date '1998-09-01' (TPC-H: 1998-09-02); {_PLAN_TYPES}"),
    2: ("ibm/q02.sql", "its sorts' null order"),
    3: ("ibm/q03.sql", _PLAN_TYPES),
    4: ("ibm/q04.sql", _PLAN_TYPES),
    5: ("ibm/q05.sql", _PLAN_TYPES),
    6: ("ibm/q06.sql", _PLAN_TYPES),
    7: ("ibm/q07.sql", _PLAN_TYPES),
    8: ("ibm/q08.sql", _PLAN_TYPES),
    10: ("ibm/q10.sql", _PLAN_TYPES),
    9: ("ibm/q09.sql", _PLAN_TYPES),
    11: ("ibm/q11.sql", _PLAN_TYPES),
    12: ("ibm/q12.sql", f"{_PLAN_TYPES}; IN for an OR of equalities (the plan cannot tell them apart)"),
    13: ("ibm/q13.sql", _PLAN_TYPES),
    14: ("ibm/q14.sql", _PLAN_TYPES),
    15: ("ibm/q15.sql", _PLAN_TYPES),
    16: ("ibm/q16.sql", _PLAN_TYPES),
    17: ("ibm/q17.sql", _PLAN_TYPES),
    18: ("ibm/q18.sql", _PLAN_TYPES),
    19: ("ibm/q19.sql", _PLAN_TYPES),
    20: ("ibm/q20.sql", _PLAN_TYPES),
    21: ("ibm/q21.sql", "its sorts' null order"),
    22: ("ibm/q22.sql", _PLAN_TYPES),
}


def qname(q: int) -> str:
    return f"q{q:02d}"


def plan_path(q: int) -> Path:
    return IBM_DIR / f"{qname(q)}.json"


def sql_path(q: int) -> Path:
    rel = SQL_OVERRIDES.get(q, (f"standard/{qname(q)}.sql", ""))[0]
    return SQL_DIR / rel


def sql_text(q: int) -> str:
    """The SQL text without comment lines and the trailing semicolon."""
    lines = [ln for ln in sql_path(q).read_text(encoding="utf-8").splitlines() if not ln.lstrip().startswith("--")]
    return "\n".join(lines).strip().rstrip(";")


def split_top(s: str) -> list[str]:
    """Split on commas outside brackets/parentheses."""
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def parse_queries(spec: str | None, universe: tuple[int, ...] = QUERIES) -> list[int]:
    """``"1,3,5-7"`` -> [1, 3, 5, 6, 7]; None or "" -> all of `universe` (TPC-H's 22)."""
    if not spec:
        return list(universe)
    out: list[int] = []
    for part in spec.split(","):
        part = part.strip().lower().lstrip("q")
        if "-" in part:
            lo, hi = part.split("-", 1)
            out.extend(range(int(lo), int(hi.lstrip("q")) + 1))
        elif part:
            out.append(int(part))
    return out


# --------------------------------------------------------------------------------------------------
# Spark
# --------------------------------------------------------------------------------------------------

SPARK_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.memory": "4g",
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.session.timeZone": "UTC",
    # Only how plans print (bench/plans.py compares them): no "..." truncation of pushed filters and field lists.
    "spark.sql.maxMetadataStringLength": "100000",
    "spark.sql.debug.maxToStringFields": "10000",
}


def spark_session(master: str = "local[*]", extra: dict[str, str] | None = None):
    """One local session for both paths (same configuration: the comparison is fair by construction); `extra`
    adds settings (the Iceberg jars and extensions for bench/rowlevel.py)."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName("substrait-spark-bench")
    for k, v in {**SPARK_CONF, **(extra or {})}.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def register_views(spark, tables_dir: Path) -> None:
    """A temp view per ``tables_dir/<name>.parquet`` (``lineitem``, ``orders``, …; TPC-DS's ``store_sales``, …),
    named as the table resolver names it, for the SQL path."""
    tables = sorted(tables_dir.glob("*.parquet"))
    if not tables:
        raise FileNotFoundError(f"no <table>.parquet in {tables_dir}")
    for path in tables:
        # Resolved, as the table resolver does: both plans then print the same file location.
        spark.read.parquet(str(path.resolve())).createOrReplaceTempView(path.name.removesuffix(".parquet"))


def require_data(tables_dir: Path, make_target: str) -> None:
    if not all((tables_dir / f"{t}.parquet").exists() for t in TPCH_TABLES):
        raise SystemExit(f"TPC-H data missing in {tables_dir}: run `make {make_target}` first")


# --------------------------------------------------------------------------------------------------
# Our path
# --------------------------------------------------------------------------------------------------


def load_plans(queries: list[int]) -> dict[int, Any]:
    """The parsed Substrait ``Plan`` of each query (loaded once, outside every timer)."""
    from substrait_spark.consumer import load_plan

    return {q: load_plan(str(plan_path(q))).plan for q in queries}


def resolver_for(tables_dir: Path):
    from substrait_spark.consumer import TableMapResolver

    return TableMapResolver.from_tables_dir(str(tables_dir))


@contextmanager
def translated(spark, plan, resolver) -> Iterator[Any]:
    """Translate ``plan`` to a DataFrame; the consumer's temp views live until the block ends."""
    from substrait_spark.consumer.translation.consumer import SubstraitConsumer

    c = SubstraitConsumer(spark, plan, resolver)
    try:
        yield c.root(0)
    finally:
        c.close()


def repo_relative(p: Path) -> str:
    """`p` relative to the repository (as RESULTS.md names files), `corpus/...` in the corpus, else as given."""
    for root, prefix in ((REPO_ROOT, ""), (CORPUS_DIR.resolve(), "corpus/")):
        try:
            return prefix + str(p.resolve().relative_to(root))
        except ValueError:
            continue
    return str(p)


def first_line(exc: BaseException, limit: int = 200) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()[0] if str(exc) else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------------------------------
# Same query? (checked at sf0.01 before anything is timed)
# --------------------------------------------------------------------------------------------------


def _assert_same_result():
    if str(TESTS_DIR) not in sys.path:
        sys.path.insert(0, str(TESTS_DIR))
    from oracles import assert_same_result  # the corpus tests' comparison: multiset, decimal-scale aware

    return assert_same_result


def verify_same_query(
    spark,
    queries: list[int],
    plans: dict[int, Any],
    tables_dir: Path = SMALL_DIR,
    sql_for: Callable[[int], str] = sql_text,
) -> dict[int, str]:
    """Run plan and SQL (``sql_for(q)``; IBM's by default) of each query at ``tables_dir`` (sf0.01) and compare
    the results.

    Returns query -> "ok" or a one-line reason. Leaves the temp views pointing at ``tables_dir``.
    """
    assert_same_result = _assert_same_result()
    register_views(spark, tables_dir)
    resolver = resolver_for(tables_dir)
    out: dict[int, str] = {}
    for q in queries:
        try:
            expected = spark.sql(sql_for(q))
            e_rows = [tuple(r) for r in expected.collect()]
        except Exception as exc:
            out[q] = f"SQL failed: {first_line(exc)}"
            continue
        try:
            with translated(spark, plans[q], resolver) as df:
                a_rows = [tuple(r) for r in df.collect()]
        except Exception as exc:
            out[q] = f"plan failed: {first_line(exc)}"
            continue
        try:
            assert_same_result(a_rows, e_rows, context=qname(q))
            out[q] = "ok"
        except AssertionError as exc:
            out[q] = "results differ: " + " ".join(str(exc).split())[:200]
    return out


# --------------------------------------------------------------------------------------------------
# Timing and statistics
# --------------------------------------------------------------------------------------------------


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def geomean(xs: list[float]) -> float:
    xs = [x for x in xs if x > 0]
    return statistics.geometric_mean(xs) if xs else float("nan")


@dataclass
class Stopwatch:
    label: str

    def __enter__(self):
        self.t0 = time.perf_counter()
        print(f"[bench] {self.label} ...", file=sys.stderr, flush=True)
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.t0
        print(f"[bench] {self.label}: {self.seconds:.1f} s", file=sys.stderr, flush=True)


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------------
# Machine and versions
# --------------------------------------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    return "?"


def _java_version() -> str:
    java = Path(os.environ["JAVA_HOME"]) / "bin" / "java" if os.environ.get("JAVA_HOME") else "java"
    try:
        res = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=30)
        return (res.stderr or res.stdout).strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return "?"


def _git_commit() -> str:
    try:
        res = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10
        )
        dirty = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "status", "--porcelain", "--", "consumer"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        return res.stdout.strip() + (" (consumer/ has uncommitted changes)" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "?"


def environment() -> dict[str, str]:
    import pyspark

    return {
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _git_commit(),
        "cpu": _cpu_model(),
        "nproc": str(os.cpu_count()),
        "memory": _memory(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "pyspark": pyspark.__version__,
        "java": _java_version(),
        "spark conf": ", ".join(f"{k}={v}" for k, v in SPARK_CONF.items()) + ", master=local[*]",
    }


# --------------------------------------------------------------------------------------------------
# RESULTS.md sections written by separate benchmarks
# --------------------------------------------------------------------------------------------------

ROWLEVEL_HEADING = "## (d) Row-level DELETE and UPDATE (sf1, Iceberg)"


def section(text: str, heading: str) -> str | None:
    """The section of a Markdown text that starts with the line `heading`, up to the next `## ` heading."""
    lines = text.splitlines()
    if heading not in lines:
        return None
    start = lines.index(heading)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(("## ", CONNECT_MARK))), len(lines))
    return "\n".join(lines[start:end]).rstrip() + "\n"


# Starts the Spark Connect section, the last of RESULTS.md: `run_all.py --connect-only` replaces all that follows.
CONNECT_MARK = "<!-- Spark Connect section: bench/run_all.py --connect-only replaces it -->"


def replace_section(path: Path, heading: str, body: str) -> None:
    """Put `body` (starting with the line `heading`) in place of that section of `path`, or at its end (before
    the Spark Connect section, which `run_all.py --connect-only` rewrites to the end); every other section is kept
    as it is."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    old = section(text, heading)
    body = body.rstrip() + "\n"
    if old is None:
        head, mark, tail = text.partition(CONNECT_MARK)
        text = (head.rstrip() + "\n\n" if head.strip() else "") + body + (f"\n{mark}{tail}" if mark else "")
    else:
        text = text.replace(old, body + ("\n" if not text.endswith(old) else ""), 1)
    path.write_text(text, encoding="utf-8")
