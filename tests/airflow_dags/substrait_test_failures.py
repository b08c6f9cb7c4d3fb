"""Test DAG: tasks that must fail, each with the consumer's typed error as its message (no retries), and one that
runs only because its caller opted in (`lossy_cast_allowed`).

Plans are put in the plans bucket by tests/test_airflow_e2e.py under `failures/`.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import dag
from substrait_spark.operators.substrait_spark import SubstraitSparkOperator

PLANS = "{{ var.value.substrait_plans }}/failures"


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False)
def substrait_test_failures():
    common = {"spark_conn_id": "substrait_spark_default", "retries": 0}
    SubstraitSparkOperator(task_id="missing_table", plan_uri=f"{PLANS}/unknown_table.json", **common)
    SubstraitSparkOperator(task_id="missing_object", plan_uri=f"{PLANS}/no_such_plan.json", **common)
    SubstraitSparkOperator(
        task_id="changed_plan",
        plan_uri=f"{PLANS}/pinned.json",
        expected_sha256="{{ var.value.pinned_sha256 }}",
        **common,
    )
    SubstraitSparkOperator(
        task_id="bad_parameter",
        plan_uri="{{ var.value.substrait_plans }}/tpch/daily_pricing_summary.json",
        parameters={"0": "{{ dag_run.conf.get('cutoff', 'not-a-date') }}"},
        **common,
    )
    SubstraitSparkOperator(task_id="unbound_parameter", plan_uri=f"{PLANS}/unbound_parameter.json", **common)
    SubstraitSparkOperator(task_id="unsupported_plan", plan_uri=f"{PLANS}/unsupported.json", **common)
    SubstraitSparkOperator(task_id="lossy_cast", plan_uri=f"{PLANS}/narrow_quantity.json", **common)
    SubstraitSparkOperator(
        task_id="lossy_cast_allowed", plan_uri=f"{PLANS}/narrow_quantity.json", cast_to_plan_types=True, **common
    )


substrait_test_failures()
