"""Extra links on the task: the plan the task ran (the exact object version, where the store has versions)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from airflow.providers.common.compat.sdk import BaseOperatorLink

PLAN_LINK_XCOM_KEY = "substrait_plan_link"


def plan_link(uri: str, version_id: str | None = None, endpoint_url: str | None = None) -> str:
    """A browsable address for a plan: the S3 console (or the S3-compatible endpoint) for s3://, else the URI."""
    if not uri.startswith("s3://"):
        return uri if "://" in uri else f"file://{uri}"
    bucket, _, key = uri[len("s3://") :].partition("/")
    key = key.split("?versionId=")[0]
    if endpoint_url:
        link = f"{endpoint_url.rstrip('/')}/{quote(bucket)}/{quote(key)}"
        return f"{link}?versionId={quote(version_id)}" if version_id else link
    link = f"https://s3.console.aws.amazon.com/s3/object/{quote(bucket)}?prefix={quote(key)}"
    return f"{link}&versionId={quote(version_id)}" if version_id else link


class SubstraitPlanLink(BaseOperatorLink):
    """ "Substrait plan": the plan object this try read (the operator pushes it to XCom when it has read it)."""

    name = "Substrait plan"

    def get_link(self, operator: Any, *, ti_key: Any) -> str:
        from airflow.providers.common.compat.sdk import XCom

        return XCom.get_value(ti_key=ti_key, key=PLAN_LINK_XCOM_KEY) or ""


def graph_link(dag_id: str, run_id: str, task_id: str, map_index: int = -1, base_url: str = "") -> str:
    """The plugin page drawing this task instance's plan (`substrait_spark.graph_app`, under /substrait-spark)."""
    path = "/".join(quote(str(x), safe="") for x in (dag_id, run_id, task_id))
    return f"{base_url.rstrip('/')}/substrait-spark/runs/{path}?map_index={int(map_index)}"


class SubstraitGraphLink(BaseOperatorLink):
    """ "Substrait graph": the plan this task instance ran, as a graph with its tables, steps and lineage."""

    name = "Substrait graph"

    def get_link(self, operator: Any, *, ti_key: Any) -> str:
        try:
            from airflow.configuration import conf

            base_url = conf.get("api", "base_url", fallback="") or ""
        except Exception:
            base_url = ""
        if "://" in base_url:  # an absolute base URL: keep only its path, the link stays on the UI's own host
            from urllib.parse import urlsplit

            base_url = urlsplit(base_url).path
        return graph_link(ti_key.dag_id, ti_key.run_id, ti_key.task_id, getattr(ti_key, "map_index", -1), base_url)
