"""OpenLineage from the operator, end to end: `airflow dags test` with the OpenLineage provider writing its events
to a file (the client's file transport), for a plan that reads two Iceberg tables and creates a third (CTAS),
and for a plan naming a table that does not exist.

Checked: START and COMPLETE events; inputs named as Spark's OpenLineage integration names Iceberg tables (the
table location, a TABLE symlink to the catalog's name), their schema and version (the snapshot read); the output's
row count, lifecycle change (CREATE) and column lineage (a known fact of the plan); the plan job facet; FAIL for
the failing run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf import json_format
from local_stack import PLANS_BUCKET, AirflowStack, s3_client
from plan_builder import PlanBuilder, WriteRel, field, fp64, i64, join, named, project, string, write

pytestmark = [pytest.mark.spark, pytest.mark.iceberg, pytest.mark.airflow, pytest.mark.corpus]

TESTS = Path(__file__).resolve().parent
NS = "ol_e2e"
DAG = "substrait_test_openlineage"
TASK = "spend_by_customer"


@pytest.fixture(scope="module")
def ol_stack(tmp_path_factory, s3_endpoint, tpch_dir) -> AirflowStack:
    home = tmp_path_factory.mktemp("airflow-openlineage")
    stack = AirflowStack(home, s3_endpoint, tpch_dir, home / "reports", dags=TESTS / "airflow_dags")
    stack.migrate()
    client = s3_client(s3_endpoint)
    if PLANS_BUCKET not in {b["Name"] for b in client.list_buckets().get("Buckets", [])}:
        client.create_bucket(Bucket=PLANS_BUCKET)
        client.put_bucket_versioning(Bucket=PLANS_BUCKET, VersioningConfiguration={"Status": "Enabled"})
    return stack


@pytest.fixture(scope="module")
def tables(lake):
    """ol_e2e.customers (4 rows) and ol_e2e.purchases (5 rows, one of a customer that does not exist)."""
    import pyarrow as pa

    lake.catalog.create_namespace_if_not_exists(NS)
    customers = pa.schema([("id", pa.int64()), ("name", pa.string())])
    orders = pa.schema([("order_id", pa.int64()), ("customer_id", pa.int64()), ("amount", pa.float64())])
    purchases = [{"order_id": i, "customer_id": i % 3 if i < 4 else 9, "amount": i / 2} for i in range(5)]
    for name, schema, rows in (
        ("customers", customers, [{"id": i, "name": f"c{i}"} for i in range(4)]),
        ("purchases", orders, purchases),
    ):
        if lake.catalog.table_exists(f"{NS}.{name}"):
            lake.catalog.drop_table(f"{NS}.{name}")
        table = lake.catalog.create_table(f"{NS}.{name}", schema=schema)
        table.append(pa.Table.from_pylist(rows, schema=schema))
    return {n: lake.catalog.load_table(f"{NS}.{n}") for n in ("customers", "purchases")}


def _ctas_plan():
    """CTAS ol_e2e.spend = SELECT c.name, o.amount FROM purchases o JOIN customers c ON o.customer_id = c.id."""
    b = PlanBuilder()
    orders = named([NS, "purchases"], ["order_id", "customer_id", "amount"], [i64(), i64(), fp64()])
    customers = named([NS, "customers"], ["id", "name"], [i64(), string()])
    joined = join(orders, customers, 1, b.eq(field(1), field(3)))  # JOIN_TYPE_INNER
    rel = project(joined, field(4), field(2), emit=[5, 6])
    ctas = write([NS, "spend"], rel, ["name", "amount"], [string(), fp64()], op=WriteRel.WRITE_OP_CTAS)
    return b.plan(ctas, ["name", "amount"])


def _put(endpoint: str, key: str, plan) -> None:
    body = json_format.MessageToJson(plan).encode()
    s3_client(endpoint).put_object(Bucket=PLANS_BUCKET, Key=f"openlineage/{key}", Body=body)


def _run(stack: AirflowStack, lake, tmp_path: Path, plan_key: str):
    events_file = tmp_path / "events.jsonl"
    transport = {"type": "file", "log_file_path": str(events_file), "append": True}
    run = stack.dags_test(
        DAG,
        "2024-06-01",
        AIRFLOW_VAR_CATALOG_CONFIG=str(lake.write_config(tmp_path / "catalogs.yaml")),
        AIRFLOW_VAR_OL_PLAN=plan_key,
        AIRFLOW__OPENLINEAGE__TRANSPORT=json.dumps(transport),
        AIRFLOW__OPENLINEAGE__NAMESPACE="substrait_tests",
    )
    lines = events_file.read_text().splitlines() if events_file.exists() else []
    events = [json.loads(line) for line in lines if line.strip()]
    ours = [e for e in events if e.get("job", {}).get("name") == f"{DAG}.{TASK}"]
    return run, {e["eventType"]: e for e in ours}


def _location(table) -> tuple[str, str]:
    loc = table.metadata.location
    assert loc.startswith("file:"), loc
    return "file", "/" + loc.removeprefix("file:").lstrip("/")


def test_start_and_complete_events_carry_resolved_lineage(ol_stack, lake, tables, s3_endpoint, tmp_path):
    _put(s3_endpoint, "ctas.json", _ctas_plan())
    run, events = _run(ol_stack, lake, tmp_path, "ctas.json")
    assert run.state == "success", run.log[-5000:]
    assert {"START", "COMPLETE"} <= set(events), sorted(events)
    report = run.value(TASK)
    assert report["plan_version_id"]
    plan_facet = {
        "uri": f"s3://{PLANS_BUCKET}/openlineage/ctas.json",
        "sha256": report["plan_sha256"],
        "versionId": report["plan_version_id"],
        "planProducer": report["producer"],
        "specVersion": report["spec_version"],
    }
    for kind in ("START", "COMPLETE"):
        facet = events[kind]["job"]["facets"]["substrait_plan"]
        assert {k: facet.get(k) for k in plan_facet} == plan_facet, (kind, facet)
        assert facet["_schemaURL"].endswith("SubstraitPlanJobFacet")

    # START: the plan alone — its tables as it names them.
    start = events["START"]
    assert {i["name"] for i in start["inputs"]} == {f"{NS}.purchases", f"{NS}.customers"}
    assert [o["name"] for o in start["outputs"]] == [f"{NS}.spend"]

    # COMPLETE: inputs named by location, TABLE symlink in the catalog, version = snapshot read, schema.
    complete = events["COMPLETE"]
    inputs = {(i["namespace"], i["name"]): i for i in complete["inputs"]}
    for name, table in tables.items():
        ds = inputs[_location(table)]
        links = ds["facets"]["symlinks"]["identifiers"]
        assert [(link["name"], link["type"]) for link in links] == [(f"{NS}.{name}", "TABLE")]
        assert links[0]["namespace"] == "sqlite:" + str(lake.uri)  # Spark's JDBC catalog URL without `jdbc:`
        assert ds["facets"]["version"]["datasetVersion"] == str(table.current_snapshot().snapshot_id)
        assert [f["name"] for f in ds["facets"]["schema"]["fields"]] == [f.name for f in table.schema().fields]
    assert set(inputs) == {_location(t) for t in tables.values()}

    spend = lake.catalog.load_table(f"{NS}.spend")
    (out,) = complete["outputs"]
    assert (out["namespace"], out["name"]) == _location(spend)
    assert out["outputFacets"]["outputStatistics"]["rowCount"] == 4 == report["steps"][0]["rows"]
    assert out["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "CREATE"
    assert out["facets"]["version"]["datasetVersion"] == str(spend.current_snapshot().snapshot_id)
    assert out["facets"]["symlinks"]["identifiers"][0]["name"] == f"{NS}.spend"
    # Column lineage: spend.amount is purchases.amount as is; the join keys decide which rows there are.
    lineage = out["facets"]["columnLineage"]
    orders_ns, orders_name = _location(tables["purchases"])
    _, customers_name = _location(tables["customers"])
    (amount,) = lineage["fields"]["amount"]["inputFields"]
    assert (amount["namespace"], amount["name"], amount["field"]) == (orders_ns, orders_name, "amount")
    assert [(t["type"], t["subtype"]) for t in amount["transformations"]] == [("DIRECT", "IDENTITY")]
    (name,) = lineage["fields"]["name"]["inputFields"]
    assert (name["name"], name["field"]) == (customers_name, "name")
    joins = {(f["name"], f["field"]) for f in lineage["dataset"] if f["transformations"][0]["subtype"] == "JOIN"}
    assert joins == {(orders_name, "customer_id"), (customers_name, "id")}
    assert complete["run"]["facets"]["substrait_run"]["steps"][0]["kind"] == "ctas"


def test_a_failing_run_emits_fail(ol_stack, lake, tables, s3_endpoint, tmp_path):
    plan = PlanBuilder().plan(project(named([NS, "no_such_table"], ["x"], [i64()]), emit=[0]), ["x"])
    _put(s3_endpoint, "missing.json", plan)
    run, events = _run(ol_stack, lake, tmp_path, "missing.json")
    assert run.state == "failed"
    assert {"START", "FAIL"} <= set(events), sorted(events)
    fail = events["FAIL"]
    assert fail["job"]["facets"]["substrait_plan"]["uri"] == f"s3://{PLANS_BUCKET}/openlineage/missing.json"
    assert fail["run"]["facets"]["substrait_run"]["status"] == "failed"
    assert fail["run"]["facets"]["substrait_run"]["error"]["exit_code"] == 4
