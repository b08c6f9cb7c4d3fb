"""The daily example DAG with its plan in GCS and in Azure Blob Storage (emulators on 127.0.0.1), run by
`airflow dags test`: the Azure plan through an Airflow `wasb` connection (`plan_conn_id`, from the
`substrait_plans_conn_id` Variable; its `connection_string` extra names Azurite's blob endpoint; no Azure
credentials in the environment), the GCS plan through the client's environment (`STORAGE_EMULATOR_HOST`: the
google provider is not installed, see setup.cfg). The run report names the object's generation or version and
ETag. The S3 case is tests/test_airflow_e2e.py's, on another day: these runs bind their own logical date, and
publish TPC-H q1 up to that day, so the logical date is shown to reach the plan on two days without a run more.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from local_stack import EXAMPLE_PLANS, AirflowStack
from oracles import assert_same_result, tpch_q01_until
from test_airflow_e2e import OTHER_DAY as DAY  # not the S3 case's day

pytestmark = [pytest.mark.spark, pytest.mark.airflow]

PLAN = EXAMPLE_PLANS / "daily_pricing_summary.json"
BUCKET = "substrait-plans"


@pytest.fixture(scope="module")
def stack(tmp_path_factory, s3_endpoint, tpch_dir) -> AirflowStack:
    home = tmp_path_factory.mktemp("airflow-stores")
    stack = AirflowStack(home, s3_endpoint, tpch_dir, home / "reports")
    stack.migrate()
    return stack


def _seed_gcs(endpoint: str) -> tuple[dict[str, str], dict[str, Any]]:
    from gcsfs.core import GCSFileSystem

    fs = GCSFileSystem(token="anon", project="test", endpoint_url=endpoint, skip_instance_cache=True)
    if not fs.exists(BUCKET):
        fs.mkdir(BUCKET)
    fs.pipe_file(f"{BUCKET}/tpch/{PLAN.name}", PLAN.read_bytes())
    return {"STORAGE_EMULATOR_HOST": endpoint}, fs.info(f"{BUCKET}/tpch/{PLAN.name}")


def _seed_azure(connection_string: str) -> tuple[dict[str, str], dict[str, Any]]:
    """The blob, and the environment naming a `wasb` connection to Azurite as docs/guides/plan-stores.md shows it."""
    from adlfs import AzureBlobFileSystem

    fs = AzureBlobFileSystem(connection_string=connection_string, skip_instance_cache=True)
    if not fs.exists(BUCKET):
        fs.mkdir(BUCKET)
    fs.pipe_file(f"{BUCKET}/tpch/{PLAN.name}", PLAN.read_bytes())
    connection = {"conn_type": "wasb", "extra": {"connection_string": connection_string}}
    env = {
        "AIRFLOW_CONN_SUBSTRAIT_PLANS_AZURE": json.dumps(connection),
        "AIRFLOW_VAR_SUBSTRAIT_PLANS_CONN_ID": "substrait_plans_azure",
    }
    return env, fs.info(f"{BUCKET}/tpch/{PLAN.name}")


@pytest.mark.parametrize("scheme", ["gs", "az"])
def test_daily_report_reads_its_plan_from_the_store(
    stack: AirflowStack, scheme: str, request, monkeypatch, spark, tpch_dir
):
    # Only the connection reaches Azurite: the stack hands this process's environment on to the task.
    for name in ("AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ACCOUNT_KEY"):
        monkeypatch.delenv(name, raising=False)
    if scheme == "gs":
        env, info = _seed_gcs(request.getfixturevalue("gcs_endpoint"))
    else:
        env, info = _seed_azure(request.getfixturevalue("azurite"))

    run = stack.dags_test("substrait_daily_report", DAY, AIRFLOW_VAR_SUBSTRAIT_PLANS=f"{scheme}://{BUCKET}", **env)

    assert run.state == "success", run.log[-5000:]
    report = run.value("pricing_summary")
    assert report["status"] == "success"
    assert report["plan_uri"] == f"{scheme}://{BUCKET}/tpch/{PLAN.name}"
    assert report["plan_sha256"] == hashlib.sha256(PLAN.read_bytes()).hexdigest()
    assert report["plan_etag"] == str(info["etag"]).strip('"')
    if scheme == "gs":  # every GCS object has a generation; Azurite keeps no blob versions
        assert report["plan_version_id"] == str(info["generation"])
    assert report["parameters"] == [{"anchor": 0, "type": "date", "value": DAY, "source": "caller"}]
    out = report["outputs"][0]
    expected = tpch_q01_until(tpch_dir, DAY)
    rows = [tuple(r) for r in spark.read.parquet(out["location"]).collect()]
    assert out["rows"] == len(rows) == len(expected.rows) > 0
    assert_same_result(rows, expected.rows, context=f"daily report {DAY} from {scheme}://")
    assert connection_secret(env) not in run.log


def connection_secret(env: dict[str, str]) -> str:
    """What must never reach a task log: the Azure connection's account key, or a marker that cannot match."""
    value = (
        json.loads(env.get("AIRFLOW_CONN_SUBSTRAIT_PLANS_AZURE", "{}")).get("extra", {}).get("connection_string", "")
    )
    return value.split("AccountKey=")[1].split(";")[0] if "AccountKey=" in value else "\x00no-secret\x00"
