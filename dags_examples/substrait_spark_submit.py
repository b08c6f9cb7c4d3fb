"""A Substrait plan run as a Spark application by the Spark provider's `SparkSubmitOperator`.

`substrait-spark run` is the application (`substrait_spark.SUBMIT_APPLICATION`, the path of its file): spark-submit
starts the driver, and the plan runs on the session spark-submit configured (the connection's master, the task's
`conf`). The provider does the submitting and tracking: in client mode (here) the driver is the spark-submit
process, whose exit code is the CLI's (0 ok, 1 execution failed, 2 invalid input, 3 unsupported, 4 resolution
failed, 5 refused by policy) and fails the task when not 0; in YARN or Kubernetes cluster mode the provider tracks
the driver on the cluster (and, from provider 6.1 on Airflow 3.3, reconnects to it after a worker restart).

The result and `summary.json` (the run report: plan version, tables read, rows, Spark application id) are written
to `--output-dir`, on the driver's file system. The driver's Python must have substrait-spark installed: spark-submit
starts `python3` unless `PYSPARK_DRIVER_PYTHON` / `PYSPARK_PYTHON` or `spark.pyspark.driver.python` says otherwise.

Connections: `spark_default` (type `spark`): host `spark://<master host>` and port, or `yarn`, `k8s://...`; extra
`{"deploy-mode": "client"}` (or `cluster` on YARN/Kubernetes). The driver reads the plan with its own credentials
(boto3's: instance role, `AWS_*` variables), not Airflow's `aws_default`.
Variables: `substrait_plans` (default `s3://substrait-plans`), `substrait_tables_dir` (TPC-H `<table>.parquet`
files, as the driver sees them), `substrait_reports_dir`.
"""

from __future__ import annotations

import pendulum
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import dag
from substrait_spark import SUBMIT_APPLICATION

PLANS = "{{ var.value.get('substrait_plans', 's3://substrait-plans') }}"
TABLES_DIR = "{{ var.value.get('substrait_tables_dir', '/data/tpch') }}"
REPORTS = "{{ var.value.get('substrait_reports_dir', '/tmp/substrait-reports') }}"


@dag(
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    tags=["substrait", "example"],
    doc_md=__doc__,
)
def substrait_spark_submit():
    SparkSubmitOperator(
        task_id="shipping_priority",
        conn_id="spark_default",
        application=SUBMIT_APPLICATION,
        name="substrait-shipping-priority",
        application_args=[
            "run",
            f"{PLANS}/tpch/isthmus_q03_shipping_priority.json",
            *("--tables-dir", TABLES_DIR),
            *("--output-dir", f"{REPORTS}/spark_submit/{{{{ ds }}}}"),
            *("--output-format", "parquet"),
        ],
        conf={"spark.sql.shuffle.partitions": "4"},
    )


substrait_spark_submit()
