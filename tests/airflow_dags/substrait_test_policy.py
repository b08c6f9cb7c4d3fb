"""Test DAG: a plan writing into a namespace its policy does not allow, refused by the operator's own `policy=`
(templated: a file's path from a Variable) and by the connection's `policy` extra; a read the policy allows
runs (tests/test_policy.py)."""

from __future__ import annotations

import pendulum
from airflow.sdk import dag
from substrait_spark.operators.substrait_spark import SubstraitSparkOperator


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False)
def substrait_test_policy():
    common = {"catalog_config": "{{ var.value.catalog_config }}", "retries": 0}
    SubstraitSparkOperator(
        task_id="refused_by_operator_policy",
        plan_uri="{{ var.value.substrait_plans }}/policy/write.json",
        policy="{{ var.value.policy_file }}",
        spark_conn_id="substrait_spark_default",
        **common,
    )
    SubstraitSparkOperator(
        task_id="refused_by_connection_policy",
        plan_uri="{{ var.value.substrait_plans }}/policy/write.json",
        spark_conn_id="substrait_spark_policy",
        **common,
    )
    SubstraitSparkOperator(
        task_id="allowed_read",
        plan_uri="{{ var.value.substrait_plans }}/policy/read.json",
        policy="{{ var.value.policy_file }}",
        results="preview:5",
        spark_conn_id="substrait_spark_policy",
        **common,
    )


substrait_test_policy()
