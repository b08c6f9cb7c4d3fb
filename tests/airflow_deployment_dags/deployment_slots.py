"""Six tasks that each wait `WAIT` seconds deferred (a trigger in the triggerer, no worker slot held), then resume on
a worker: with 2 slots they finish together only if deferring frees the slot (tests/test_airflow_deployment.py)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from airflow.providers.standard.triggers.temporal import TimeDeltaTrigger
from airflow.sdk import DAG, BaseOperator

WAIT = timedelta(seconds=15)
TASKS = 6


class WaitDeferred(BaseOperator):
    """Waits `WAIT` from its own start in the triggerer, then resumes on a worker to finish."""

    def execute(self, context: Any) -> None:
        self.defer(trigger=TimeDeltaTrigger(WAIT), method_name="resume")

    def resume(self, context: Any, event: Any = None) -> str:
        return "resumed"


with DAG("deployment_slots", schedule=None, catchup=False, max_active_tasks=TASKS, tags=["substrait-spark-tests"]):
    for i in range(TASKS):
        WaitDeferred(task_id=f"wait_{i}")
