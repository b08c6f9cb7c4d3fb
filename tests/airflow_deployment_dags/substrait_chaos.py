"""Plan runs on Spark Connect for the chaos, slot and cancel tests (tests/test_chaos.py): the plan and where its
outputs go come with each DAG run (`conf`), the server and the tables from the `substrait_chaos` connection.

- `substrait_chaos_durable`: durable (the default), retried on a killed worker;
- `substrait_chaos_deferrable`: deferrable, the operation waited for in the triggerer;
- `substrait_chaos_slots`: `TASKS` deferrable plan tasks at once (more than the deployment's worker slots).
"""

from __future__ import annotations

from datetime import timedelta

import pendulum
from airflow.sdk import DAG
from substrait_spark.operators.substrait_spark import SubstraitSparkOperator

TASKS = 5
START = pendulum.datetime(2024, 1, 1, tz="UTC")
RUN = {
    "plan_uri": "{{ dag_run.conf['plan'] }}",
    "results": {"path": "{{ dag_run.conf['out'] }}", "format": "csv"},
    "spark_conn_id": "substrait_chaos",
    "aws_conn_id": None,
    "audit_log": "off",
    "retries": 6,
    "retry_delay": timedelta(seconds=1),
}

with DAG("substrait_chaos_durable", schedule=None, start_date=START, catchup=False, tags=["substrait-spark-tests"]):
    SubstraitSparkOperator(task_id="plan", **RUN)

with DAG("substrait_chaos_deferrable", schedule=None, start_date=START, catchup=False, tags=["substrait-spark-tests"]):
    SubstraitSparkOperator(task_id="plan", deferrable=True, **RUN)

with DAG(
    "substrait_chaos_slots",
    schedule=None,
    start_date=START,
    catchup=False,
    max_active_tasks=TASKS,
    tags=["substrait-spark-tests"],
):
    for i in range(TASKS):
        SubstraitSparkOperator(
            task_id=f"plan_{i}",
            deferrable=True,
            **{**RUN, "results": {"path": f"{{{{ dag_run.conf['out'] }}}}/task_{i}", "format": "csv"}},
        )
