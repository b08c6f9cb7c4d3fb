"""A task that runs long enough to be killed mid-run, with retries: tests/test_airflow_deployment.py kills its
process and expects the next try to finish the run. Each try writes `try-<n>` (its start time) into the run conf's
`marker_dir`, then sleeps `seconds` (default 20) on the first try, `retry_seconds` (default the same) on later ones."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG, get_current_context


def sleep_and_mark() -> int:
    context = get_current_context()
    conf = context["dag_run"].conf or {}
    try_number = context["ti"].try_number
    marker = Path(conf["marker_dir"]) / f"try-{try_number}"
    marker.write_text(f"{time.time()}\n")
    seconds = float(conf.get("seconds", 20))
    time.sleep(seconds if try_number == 1 else float(conf.get("retry_seconds", seconds)))
    return try_number


with DAG("deployment_retry", schedule=None, catchup=False, tags=["substrait-spark-tests"]):
    PythonOperator(
        task_id="sleep_and_mark",
        python_callable=sleep_and_mark,
        retries=2,
        retry_delay=timedelta(seconds=1),
    )
