"""`substrait-spark run` as the application of the Spark provider's `SparkSubmitOperator`: the example DAG
`substrait_spark_submit` under `airflow dags test`, on a real standalone cluster (tests/spark_cluster.py) in client
mode, the driver being the spark-submit process the task starts. The plan comes from the local S3 server, read by
the driver with its own credentials (`AWS_*` variables), as on a cluster node.

Covered: the plan runs on the cluster spark-submit was given (the standalone master lists the report's application
id under the task's name) and its result is DuckDB's; a plan whose table is missing fails the task with the CLI's
exit code in the task log; standalone cluster deploy mode is refused by spark-submit for a Python application.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import duckdb
import pytest
from local_stack import PLANS_BUCKET, AirflowStack, s3_exports, seed_plans
from oracles import DuckDBOracle, assert_same_result
from spark_cluster import applications

pytestmark = [pytest.mark.spark, pytest.mark.airflow, pytest.mark.corpus]

TESTS = Path(__file__).resolve().parent
DAG = "substrait_spark_submit"
TASK = "shipping_priority"
PLAN_KEY = "tpch/isthmus_q03_shipping_priority.json"
APP_NAME = "substrait-shipping-priority"  # the DAG's `name=`: spark-submit's `--name`


@pytest.fixture(scope="module")
def plan_versions(s3_endpoint, corpus):
    return seed_plans(s3_endpoint, corpus)


@pytest.fixture(scope="module")
def stack(tmp_path_factory, s3_endpoint, tpch_dir, plan_versions) -> AirflowStack:
    """Airflow over dags_examples/; the spark-submit of pyspark's package on the PATH, as a worker image has it."""
    home = tmp_path_factory.mktemp("airflow-submit")
    stack = AirflowStack(home, s3_endpoint, tpch_dir, home / "reports")
    stack.migrate()
    return stack


def _submit(stack: AirflowStack, master_url: str, day: str, tables_dir: Path, deploy_mode: str = "client"):
    """One `airflow dags test` of the example DAG with the `spark_default` connection on the standalone master."""
    conn = {"conn_type": "spark", "host": master_url, "extra": {"deploy-mode": deploy_mode}}
    return stack.dags_test(
        DAG,
        day,
        AIRFLOW_CONN_SPARK_DEFAULT=json.dumps(conn),
        AIRFLOW_VAR_SUBSTRAIT_TABLES_DIR=str(tables_dir),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        **s3_exports(stack.s3_endpoint),
    )


def _summary(stack: AirflowStack, day: str) -> dict:
    [report] = json.loads((stack.reports_dir / "spark_submit" / day / "summary.json").read_text())["plans"]
    return report


def test_plan_runs_on_the_cluster_spark_submit_was_given(stack, spark_master_url, tpch_dir, plan_versions):
    day = "2024-06-01"
    run = _submit(stack, spark_master_url, day, tpch_dir)
    assert run.state == "success", run.log[-5000:]
    report = _summary(stack, day)
    assert report["status"] == "success"
    assert report["plan_uri"] == f"s3://{PLANS_BUCKET}/{PLAN_KEY}"
    assert report["plan_version_id"] == plan_versions[PLAN_KEY]  # read from S3 by the driver
    # The application ran on the standalone master, under the name spark-submit was given (not the CLI's default
    # session on local[*]: spark-submit's master and settings win over the CLI's defaults).
    app_id = report["spark_application_id"]
    assert applications(spark_master_url).get(app_id) == APP_NAME, (app_id, applications(spark_master_url))
    out = report["outputs"][0]
    assert out["format"] == "parquet" and out["location"].endswith("isthmus_q03_shipping_priority.parquet")
    rows = duckdb.sql(f"SELECT * FROM read_parquet('{out['location']}')").fetchall()
    expected = DuckDBOracle(tpch_dir).run_file(TESTS / "tpch_sql" / "ibm" / "q03.sql")
    assert out["rows"] == len(rows) == len(expected.rows) == 10
    assert_same_result(rows, expected.rows, context="q03 through spark-submit")
    # The task log is the driver's output: the CLI's progress and summary lines.
    assert f"s3://{PLANS_BUCKET}/{PLAN_KEY}: success, 10 rows in " in run.log, run.log[-3000:]


def test_failing_plan_fails_the_task_with_the_cli_exit_code(stack, spark_master_url, tpch_dir, tmp_path):
    day = "2024-06-02"
    tables = tmp_path / "tables"
    tables.mkdir()
    for name in ("customer", "orders"):  # q03 also reads lineitem: not there
        (tables / f"{name}.parquet").symlink_to(tpch_dir / f"{name}.parquet")
    run = _submit(stack, spark_master_url, day, tables)
    assert run.state == "failed" and run.state_of(TASK) == "failed", run.log[-5000:]
    assert "Error code is: 4." in run.log  # spark-submit's exit code is the CLI's: 4, resolution failed
    assert "resolution failed: table 'LINEITEM' not found" in run.log
    report = _summary(stack, day)
    assert report["status"] == "failed" and report["error"]["exit_code"] == 4


def test_standalone_cluster_deploy_mode_is_refused_for_python(stack, spark_master_url, tpch_dir):
    run = _submit(stack, spark_master_url, "2024-06-03", tpch_dir, deploy_mode="cluster")
    assert run.state == "failed", run.log[-5000:]
    assert "Cluster deploy mode is currently not supported for python applications on standalone clusters" in run.log
    assert "Error code is: 1." in run.log
    assert not (stack.reports_dir / "spark_submit" / "2024-06-03").exists()  # no driver ran
