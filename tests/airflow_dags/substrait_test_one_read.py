"""Test DAG: one task running a plan from S3, then a task returning how often the plan store was read and a plan
was parsed in this process (tests/test_airflow_e2e.py; issue 29: one read and one parse per task try, OpenLineage's
start event included).

`airflow dags test` runs the tasks in the process that parsed this file, so counting wrappers of our own functions
installed here see every call: `PlanStoreHook.read` (the operator's plan store) and `parse_plan_bytes` wherever a
module bound it."""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

import pendulum
from airflow.sdk import dag, task
from substrait_spark.consumer.loading import loader
from substrait_spark.hooks.plan_store_hook import PlanStoreHook
from substrait_spark.operators.substrait_spark import SubstraitSparkOperator

CALLS: Counter[str] = Counter()


def _counting(name: str, fn: Any) -> Any:
    if getattr(fn, "_counts", None) is not None:  # this file parsed again: count once
        return fn

    def counted(*args: Any, **kwargs: Any) -> Any:
        CALLS[name] += 1
        return fn(*args, **kwargs)

    counted._counts = name  # type: ignore[attr-defined]
    return counted


PlanStoreHook.read = _counting("read", PlanStoreHook.read)  # type: ignore[method-assign]
for module in [m for m in list(sys.modules.values()) if getattr(m, "__name__", "").startswith("substrait_spark")]:
    if getattr(module, "parse_plan_bytes", None) is not None:
        module.parse_plan_bytes = _counting("parse", module.parse_plan_bytes)  # type: ignore[attr-defined]
assert loader.parse_plan_bytes._counts == "parse"  # type: ignore[attr-defined]


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False)
def substrait_test_one_read():
    run = SubstraitSparkOperator(
        task_id="count_nations",
        plan_uri="{{ var.value.substrait_plans }}/one_read/nations.json",
        spark_conn_id="substrait_spark_default",
        retries=0,
    )

    @task
    def calls() -> dict[str, int]:
        return dict(CALLS)

    run >> calls()


substrait_test_one_read()
