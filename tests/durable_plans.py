"""What the durable-run tests share: the plan with several outputs (one heavy), DuckDB's answers to it, and how
often the Spark Connect server ran something (its UI's REST API, `tools/connect_server.sql_executions`).

The heavy output is native Spark — lineitem x orders x region counted, tens of seconds at sf 0.01 on 2 cores:
no sleeps, no UDFs.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from connect_server import OPERATION_TAG, SqlExecution, jobs, sql_executions
from google.protobuf import json_format
from plan_builder import PlanBuilder, aggregate, cross, field, i64, named, project

OUTPUTS = 3
HEAVY = 1  # the output that runs for tens of seconds


def outputs_plan() -> dict:
    """Three outputs: nation rows per region (quick), lineitem x orders x region counted (heavy), orders counted."""
    b = PlanBuilder()
    nations = aggregate(
        named("nation", ["n_nationkey", "n_regionkey"], [i64(), i64()]),
        keys=[field(1)],
        measures=[b.agg("count", out=i64(nullable=False))],
    )
    heavy = _heavy(b)
    orders = aggregate(named("orders", ["o_orderkey"], [i64()]), measures=[b.agg("count", out=i64(nullable=False))])
    plan = b.plan(nations, ["n_regionkey", "nations"], more=[(heavy, ["n"]), (orders, ["orders"])])
    return json_format.MessageToDict(plan)


def _heavy(b: PlanBuilder):
    """lineitem x orders x region counted."""
    rel = cross(
        cross(named("lineitem", ["l_orderkey"], [i64()]), named("orders", ["o_orderkey"], [i64()])),
        named("region", ["r_regionkey"], [i64()]),
    )
    return aggregate(project(rel, emit=[0]), measures=[b.agg("count", out=i64(nullable=False))])


def heavy_plan() -> dict:
    """One output: the heavy one of `outputs_plan` alone (many of these run at once)."""
    b = PlanBuilder()
    return json_format.MessageToDict(b.plan(_heavy(b), ["n"]))


def expected_outputs(tpch_dir: Path) -> dict[int, list[list[str]]]:
    """Each output's rows as CSV text cells (sorted), by DuckDB over the same parquet files."""
    import duckdb

    t = {name: f"'{tpch_dir / f'{name}.parquet'}'" for name in ("nation", "lineitem", "orders", "region")}
    queries = (
        f"SELECT n_regionkey, count(*) FROM {t['nation']} GROUP BY 1",
        f"SELECT count(*) FROM {t['lineitem']}, {t['orders']}, {t['region']}",
        f"SELECT count(*) FROM {t['orders']}",
    )
    with duckdb.connect() as db:
        return {i: sorted([str(v) for v in row] for row in db.execute(q).fetchall()) for i, q in enumerate(queries)}


def csv_rows(path: Path) -> list[list[str]]:
    """The rows of a CSV file, or of every part file of a Spark folder of CSV files (headers left out), sorted."""
    files = sorted(path.glob("part-*")) if path.is_dir() else [path]
    rows = [line.split(",") for f in files for line in f.read_text().splitlines()[1:]]
    return sorted(rows)


def root_executions(ui_url: str) -> list[SqlExecution]:
    """The top-level SQL executions, each with the job tags of its nested ones too."""
    executions = sql_executions(ui_url)
    tags: dict[int, frozenset[str]] = {}
    for e in executions:
        tags[e.root_id] = tags.get(e.root_id, frozenset()) | e.job_tags
    return [dataclasses.replace(e, job_tags=tags[e.id]) for e in executions if e.is_root]


def executions_of(ui_url: str, operation_id: str) -> int:
    """The top-level SQL executions that ran jobs of the Connect operation `operation_id`: a query submitted twice
    is two, one reattached to is one."""
    return sum(1 for e in root_executions(ui_url) if operation_id in e.operation_ids)


def execution_statuses(ui_url: str, operation_id: str) -> list[str]:
    """The statuses of the top-level SQL executions of an operation (`COMPLETED`, `FAILED` when interrupted)."""
    return [e.status for e in root_executions(ui_url) if operation_id in e.operation_ids]


def running_jobs_of(ui_url: str, operation_id: str) -> int:
    marker = f"{OPERATION_TAG}{operation_id}"
    running = [j for j in jobs(ui_url) if j["status"] == "RUNNING"]
    return sum(1 for j in running if any(t.endswith(marker) for t in j.get("jobTags") or []))


def wait_until_ended(ui_url: str, operation_id: str, timeout_s: float = 60) -> float:
    """Seconds until no job of the operation runs (it finished, failed or was interrupted)."""
    start = time.monotonic()
    while running_jobs_of(ui_url, operation_id):
        if time.monotonic() - start > timeout_s:
            raise TimeoutError(f"operation {operation_id} still running after {timeout_s} s")
        time.sleep(0.2)
    return time.monotonic() - start
