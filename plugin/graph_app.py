"""The Airflow plugin page: a task instance's plan as a graph (`fastapi_apps`, mounted under `/substrait-spark`).

`GET /substrait-spark/runs/{dag_id}/{run_id}/{task_id}?map_index=-1` reads the task instance's run report (its
XCom `return_value`, written by `SubstraitSparkOperator`), reads the plan the report names (`plan_uri`, at the
version or generation the task read, pinned to the report's sha256, through `PlanStoreHook`: the AWS connection
`[substrait_spark] aws_conn_id`, default `aws_default`, for S3; `[substrait_spark] plan_conn_id` for GCS and Azure,
else their clients' environment) and answers the HTML page of `graph.py`.

Access is Airflow's: the caller must be signed in (the UI's JWT cookie, or a bearer token) and allowed to read the
DAG's XComs (`requires_access_dag("GET", XCOM)`), as for the XCom page itself.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Query
from fastapi.responses import HTMLResponse
from substrait_spark.consumer.running.report import RunReport

log = logging.getLogger(__name__)

URL_PREFIX = "/substrait-spark"
REPORT_KEY = "return_value"


def _access() -> Any:
    from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity
    from airflow.api_fastapi.core_api.security import requires_access_dag

    return requires_access_dag("GET", DagAccessEntity.XCOM)


def read_report(dag_id: str, run_id: str, task_id: str, map_index: int) -> RunReport | None:
    """The run report the task instance published as its XCom return value (None if there is none)."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    with create_session() as session:
        row = session.scalars(
            XComModel.get_many(
                run_id=run_id, key=REPORT_KEY, task_ids=task_id, dag_ids=dag_id, map_indexes=map_index, limit=1
            )
        ).first()
        value = XComModel.deserialize_value(row) if row is not None else None
    return RunReport.from_dict(value) if isinstance(value, dict) and "plan_sha256" in value else None


def read_plan(report: RunReport) -> Any:
    """The plan the report names, at the version the task read, checked against the report's sha256."""
    from airflow.configuration import conf
    from substrait_spark.consumer.loading.loader import parse_plan_bytes
    from substrait_spark.hooks.plan_store import pinned_uri
    from substrait_spark.hooks.plan_store_hook import PlanStoreHook

    uri = report.plan_uri
    if not uri:
        raise HTTPException(404, "the run report names no plan URI")
    uri = pinned_uri(uri, report.plan_version_id)
    conn_id = conf.get("substrait_spark", "aws_conn_id", fallback="aws_default")
    plan_conn_id = conf.get("substrait_spark", "plan_conn_id", fallback=None) or None
    hook = PlanStoreHook(aws_conn_id=conn_id, plan_conn_id=plan_conn_id, retries=1)
    obj = hook.read(uri, expected_sha256=report.plan_sha256)
    return parse_plan_bytes(obj.data, uri=obj.uri)


def create_app() -> FastAPI:
    app = FastAPI(title="substrait-spark", description="Substrait plans of task instances, as graphs")

    @app.get("/runs/{dag_id}/{run_id}/{task_id}", response_class=HTMLResponse, dependencies=[Depends(_access())])
    def task_graph(dag_id: str, run_id: str, task_id: str, map_index: int = Query(-1)) -> HTMLResponse:
        from substrait_spark.graph import esc, plan_html

        title = f"{dag_id} / {run_id} / {task_id}" + (f" [{map_index}]" if map_index >= 0 else "")
        report = read_report(dag_id, run_id, task_id, map_index)
        if report is None:
            body = (
                f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{esc(title)}</title></head><body>'
                f'<h1>{esc(title)}</h1><p class="empty">No Substrait run report for this task instance '
                "(not a SubstraitSparkOperator task, or it has not run yet).</p></body></html>"
            )
            return HTMLResponse(body, status_code=404)
        try:
            plan = read_plan(report)
        except HTTPException:
            raise
        except Exception as exc:  # the plan moved or changed: say so on the page
            log.warning("substrait-spark graph: cannot read the plan of %s: %s", title, exc)
            detail = f"cannot read the plan {report.plan_uri}: {type(exc).__name__}: {exc}"
            raise HTTPException(502, detail) from exc
        return HTMLResponse(plan_html(plan, report, title=title))

    return app


__all__ = ["URL_PREFIX", "create_app", "read_plan", "read_report"]
