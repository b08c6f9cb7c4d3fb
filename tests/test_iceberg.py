"""Plans reading Iceberg tables: NamedTable through catalogs (pyiceberg finds the table and pins its current
snapshot, Spark reads that snapshot through the same-named JDBC catalog on one SQLite file) and IcebergTable
reads by metadata file with time travel. Catalog, identifier, metadata location and snapshot are reported.
"""

from __future__ import annotations

import json
import time

import pyarrow as pa
import pytest
from google.protobuf import json_format
from iceberg_stack import CATALOG_STORES, Lake, store_lake
from plan_builder import PlanBuilder, fp64, i64, named, project, string, tuples
from substrait import algebra_pb2 as alg
from substrait_spark.cli import main
from substrait_spark.consumer.errors import ResolutionError
from substrait_spark.consumer.records import plain
from substrait_spark.consumer.running.resolver import ChainResolver
from substrait_spark.consumer.translation.consumer import SubstraitConsumer
from substrait_spark.hooks.iceberg import Catalogs, IcebergCatalogResolver

pytestmark = [pytest.mark.spark, pytest.mark.iceberg]

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string()), ("amount", pa.float64())])
COLUMNS = (["id", "name", "amount"], [i64(), string(), fp64()])


def arrow(ids: range) -> pa.Table:
    return pa.Table.from_pylist([{"id": i, "name": f"n{i}", "amount": i * 1.5} for i in ids], schema=SCHEMA)


@pytest.fixture(scope="module", params=CATALOG_STORES)
def lake(request, iceberg_spark, tmp_path_factory) -> Lake:
    """The catalog store: a SQLite file (the embedded default) or a PostgreSQL database started on 127.0.0.1."""
    return store_lake(request, iceberg_spark, tmp_path_factory, "")


@pytest.fixture(scope="module")
def catalogs(lake: Lake) -> Catalogs:
    return lake.catalogs()


@pytest.fixture
def ns(lake: Lake, request) -> str:
    """A namespace of this test's own (the catalog is shared by the session)."""
    name = "t_" + request.node.name.split("[")[0].removeprefix("test_")[:40]
    lake.catalog.create_namespace_if_not_exists(name)
    return name


def read_plan(table: list[str], columns=COLUMNS, twice: bool = False):
    b = PlanBuilder()
    rel = named(table, *columns)
    if twice:  # the same table read twice in one plan (a union of both reads)
        from plan_builder import set_

        rel = set_(alg.SetRel.SET_OP_UNION_ALL, rel, named(table, *columns))
    return b.plan(project(rel, emit=list(range(len(columns[0])))), columns[0])


def run(spark, plan, catalogs: Catalogs):
    consumer = SubstraitConsumer(spark, plan, ChainResolver([IcebergCatalogResolver(catalogs)]))
    try:
        return tuples(consumer.root(0).collect()), plain(consumer.tables_read)
    finally:
        consumer.close()


# --- NamedTable through catalogs ------------------------------------------------------------------------------


def test_table_written_by_pyiceberg_is_read_with_its_snapshot(lake, catalogs, ns):
    table = lake.catalog.create_table(f"{ns}.sales", schema=SCHEMA)
    table.append(arrow(range(3)))
    table.append(arrow(range(3, 5)))
    rows, read = run(lake.spark, read_plan([ns, "sales"]), catalogs)
    assert sorted(rows) == [(i, f"n{i}", i * 1.5) for i in range(5)]
    table = lake.catalog.load_table(f"{ns}.sales")
    assert read == [
        {
            "name": f"{ns}.sales",
            "identity": f"{lake.name}.{ns}.sales",
            "format": "iceberg",
            "snapshot_id": table.current_snapshot().snapshot_id,
            "catalog": lake.name,
            "metadata_location": table.metadata_location,
        }
    ]


def test_table_written_by_spark_is_resolved_case_insensitively(lake, catalogs, ns):
    spark = lake.spark
    full = f"{lake.name}.{ns}.orders"
    spark.range(4).selectExpr("id", "concat('n', id) AS name", "CAST(id * 1.5 AS DOUBLE) AS amount").writeTo(
        full
    ).create()
    spark.range(4, 6).selectExpr("id", "concat('n', id) AS name", "CAST(id * 1.5 AS DOUBLE) AS amount").writeTo(
        full
    ).append()
    latest = spark.sql(f"SELECT snapshot_id FROM {full}.snapshots ORDER BY committed_at DESC LIMIT 1").first()[0]
    # catalog part, upper case, as producers write it
    rows, read = run(spark, read_plan([lake.name.upper(), ns.upper(), "ORDERS"]), catalogs)
    assert len(rows) == 6
    assert read[0]["snapshot_id"] == latest
    assert read[0]["identity"] == full


def test_a_bare_table_name_is_found_in_the_default_catalog(lake, catalogs, ns):
    lake.catalog.create_table(f"{ns}.uniquely_named_items", schema=SCHEMA).append(arrow(range(2)))
    rows, read = run(lake.spark, read_plan(["uniquely_named_items"]), catalogs)
    assert len(rows) == 2 and read[0]["identity"] == f"{lake.name}.{ns}.uniquely_named_items"


def test_a_concurrent_writer_does_not_change_what_the_run_reads(lake, catalogs, ns):
    """Resolved (and pinned) first; another writer commits; both reads of the table still see the pinned
    snapshot when the plan executes."""
    table = lake.catalog.create_table(f"{ns}.events", schema=SCHEMA)
    table.append(arrow(range(10)))
    pinned = lake.catalog.load_table(f"{ns}.events").current_snapshot().snapshot_id
    consumer = SubstraitConsumer(
        lake.spark, read_plan([ns, "events"], twice=True), ChainResolver([IcebergCatalogResolver(catalogs)])
    )
    df = consumer.root(0)
    lake.catalog.load_table(f"{ns}.events").append(arrow(range(10, 15)))  # commits while the run is under way
    assert lake.catalog.load_table(f"{ns}.events").current_snapshot().snapshot_id != pinned
    first = sorted(tuples(df.collect()))
    lake.catalog.load_table(f"{ns}.events").append(arrow(range(15, 20)))
    second = sorted(tuples(df.collect()))
    consumer.close()
    assert first == second == sorted([(i, f"n{i}", i * 1.5) for i in range(10)] * 2)
    assert [t.snapshot_id for t in consumer.tables_read] == [pinned]  # resolved once for both reads
    # A new run pins the newest snapshot.
    rows, read = run(lake.spark, read_plan([ns, "events"]), catalogs)
    assert len(rows) == 20 and read[0]["snapshot_id"] != pinned


# --- errors -----------------------------------------------------------------------------------------------------


def test_schema_mismatch_lists_each_difference(lake, catalogs, ns):
    lake.catalog.create_table(f"{ns}.typed", schema=SCHEMA).append(arrow(range(1)))
    wrong = (["id", "name", "amount", "extra"], [string(), string(nullable=False), fp64(), i64()])
    with pytest.raises(ResolutionError) as exc:
        run(lake.spark, read_plan([ns, "typed"], wrong), catalogs)
    message = str(exc.value)
    assert exc.value.exit_code == 4
    assert "column 'extra' missing" in message or "'extra'" in message
    with pytest.raises(ResolutionError) as exc:
        run(lake.spark, read_plan([ns, "typed"], (wrong[0][:3], wrong[1][:3])), catalogs)
    message = str(exc.value)
    assert "column 'id' is bigint, plan says string" in message
    assert "column 'name' is optional (nullable) in the table, plan says required" in message
    assert "read.named_table" in exc.value.path


def test_missing_table_and_missing_catalog_each_say_so(lake, catalogs, ns):
    with pytest.raises(ResolutionError, match=rf"table '{ns}.nothing_here' not found in catalog '{lake.name}'"):
        run(lake.spark, read_plan([ns, "nothing_here"]), catalogs)
    with pytest.raises(ResolutionError, match=r"no namespace 'no_such_ns'"):
        run(lake.spark, read_plan(["no_such_ns", "t"]), catalogs)
    other = Catalogs.from_mapping({"catalogs": {"elsewhere": {"type": "sql", "uri": "sqlite:////nonexistent/x.db"}}})
    with pytest.raises(ResolutionError, match=r"catalog 'elsewhere' cannot be opened"):
        run(lake.spark, read_plan(["elsewhere", ns, "t"]), other)


# --- IcebergTable reads: metadata file, time travel -------------------------------------------------------------


def iceberg_table_plan(metadata: str, snapshot_id: int | None = None, timestamp_ms: int | None = None):
    direct = alg.ReadRel.IcebergTable.MetadataFileRead(metadata_uri=metadata)
    if snapshot_id is not None:
        direct.snapshot_id = str(snapshot_id)
    if timestamp_ms is not None:
        direct.snapshot_timestamp = timestamp_ms
    read = named(["ignored"], *COLUMNS)
    read.read.ClearField("named_table")
    read.read.iceberg_table.direct.CopyFrom(direct)
    return PlanBuilder().plan(project(read, emit=[0, 1, 2]), COLUMNS[0])


def test_iceberg_table_reads_travel_in_time(lake, catalogs, ns):
    table = lake.catalog.create_table(f"{ns}.history", schema=SCHEMA)
    table.append(arrow(range(2)))
    first = lake.catalog.load_table(f"{ns}.history").current_snapshot()
    time.sleep(0.05)
    table = lake.catalog.load_table(f"{ns}.history")
    table.append(arrow(range(2, 5)))
    table = lake.catalog.load_table(f"{ns}.history")
    metadata = table.metadata_location
    no_catalog = Catalogs.from_mapping({"catalogs": {"unused": {"type": "sql", "uri": "sqlite:////tmp/unused.db"}}})

    rows, read = run(lake.spark, iceberg_table_plan(metadata), no_catalog)
    assert len(rows) == 5 and read[0]["metadata_location"] == metadata
    rows, read = run(lake.spark, iceberg_table_plan(metadata, snapshot_id=first.snapshot_id), no_catalog)
    assert sorted(rows) == [(0, "n0", 0.0), (1, "n1", 1.5)] and read[0]["snapshot_id"] == first.snapshot_id
    rows, _ = run(lake.spark, iceberg_table_plan(metadata, timestamp_ms=first.timestamp_ms), no_catalog)
    assert len(rows) == 2
    with pytest.raises(ResolutionError, match="cannot read Iceberg table"):
        run(lake.spark, iceberg_table_plan(metadata, snapshot_id=12345), no_catalog)


# --- pushdown -----------------------------------------------------------------------------------------------------


def test_filters_and_projections_reach_the_iceberg_scan(lake, catalogs, ns):
    lake.catalog.create_table(f"{ns}.wide", schema=SCHEMA).append(arrow(range(100)))
    b = PlanBuilder()
    from plan_builder import field, filter_, lit

    rel = filter_(named([ns, "wide"], *COLUMNS), b.call("gt", field(0), lit(90)))
    plan = b.plan(project(rel, field(1), emit=[3]), ["name"])
    consumer = SubstraitConsumer(lake.spark, plan, ChainResolver([IcebergCatalogResolver(catalogs)]))
    df = consumer.root(0)
    physical = df._jdf.queryExecution().executedPlan().toString()  # tests may look inside; the engine may not
    assert "BatchScan" in physical and f"{lake.name}.{ns}.wide" in physical
    scan = next(line for line in physical.splitlines() if "BatchScan" in line)
    assert "id > 90" in scan.replace("(", "").replace(")", "")  # the filter reached the scan
    assert "amount" not in scan  # only the columns the plan uses are read
    assert sorted(tuples(df.collect())) == [(f"n{i}",) for i in range(91, 100)]
    consumer.close()


# --- the CLI through a catalog config file ------------------------------------------------------------------------


def test_cli_resolves_through_the_catalog_config(lake, ns, tmp_path, capsys):
    lake.catalog.create_table(f"{ns}.cli_sales", schema=SCHEMA).append(arrow(range(7)))
    config = lake.write_config(tmp_path / "catalogs.yaml")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(json_format.MessageToDict(read_plan([ns, "cli_sales"]))))
    out = tmp_path / "out"
    assert main(["run", str(plan), "--catalog-config", str(config), "--output-dir", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())["plans"][0]
    assert summary["outputs"][0]["rows"] == 7
    assert summary["tables_read"][0]["catalog"] == lake.name
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps(json_format.MessageToDict(read_plan([ns, "absent"]))))
    assert main(["run", str(missing), "--catalog-config", str(config)]) == 4
    assert f"table '{ns}.absent' not found in catalog '{lake.name}'" in capsys.readouterr().err


def test_cli_writes_are_retry_safe_with_a_run_key(lake, ns, tmp_path, capsys):
    """`run --run-key`: the same plan run twice with one key inserts once; another key inserts again."""
    from plan_builder import virtual, write

    lake.catalog.create_table(f"{ns}.cli_target", schema=SCHEMA).append(arrow(range(2)))
    config = lake.write_config(tmp_path / "catalogs.yaml")
    rows = virtual(*COLUMNS, [(10, "n10", 15.0), (11, "n11", 16.5)])
    plan = tmp_path / "insert.json"
    plan.write_text(
        json.dumps(json_format.MessageToDict(PlanBuilder().plan(write([ns, "cli_target"], rows, *COLUMNS), COLUMNS[0])))
    )
    out = tmp_path / "out"

    def run_with(key: str) -> dict:
        args = ["run", str(plan), "--catalog-config", str(config), "--run-key", key, "--output-dir", str(out)]
        assert main(args) == 0, capsys.readouterr().err
        return json.loads((out / "summary.json").read_text())["plans"][0]["steps"][0]

    first, retry, other = run_with("nightly/2024-06-01"), run_with("nightly/2024-06-01"), run_with("nightly/2024-06-02")
    assert (first["status"], retry["status"], other["status"]) == ("committed", "skipped", "committed")
    assert first["rows"] == 2 and first["target"] == f"{lake.name}.{ns}.cli_target"
    ids = sorted(r["id"] for r in lake.catalog.load_table(f"{ns}.cli_target").scan().to_arrow().to_pylist())
    assert ids == [0, 1, 10, 10, 11, 11]


def test_cli_view_is_created_in_the_catalog_and_read_by_a_later_plan(lake, ns, tmp_path, capsys):
    """A view DDL run by the CLI keeps its definition in the catalog (SQLite and PostgreSQL alike); a later plan,
    a new process for all it knows, reads it through NamedTable; Spark's own catalog lists the view."""
    from plan_builder import DdlRel, ddl, field, filter_, lit

    lake.catalog.create_table(f"{ns}.cli_base", schema=SCHEMA).append(arrow(range(6)))
    config = lake.write_config(tmp_path / "catalogs.yaml")
    b = PlanBuilder()
    above_four = filter_(named([ns, "cli_base"], *COLUMNS), b.call("gt", field(2), lit(4.0, fp64())))
    define = b.plan(ddl([ns, "cli_view"], DdlRel.DDL_OP_CREATE, DdlRel.DDL_OBJECT_VIEW, *COLUMNS, above_four), [])
    files = {"define.json": define, "read.json": read_plan([ns, "cli_view"])}
    for name, plan in files.items():
        (tmp_path / name).write_text(json.dumps(json_format.MessageToDict(plan)))
    out = tmp_path / "out"
    for name in files:
        args = ["run", str(tmp_path / name), "--catalog-config", str(config), "--output-dir", str(out / name)]
        assert main(args) == 0, capsys.readouterr().err
    defined = json.loads((out / "define.json" / "summary.json").read_text())["plans"][0]["steps"][0]
    assert (defined["kind"], defined["status"], defined["snapshot_after"]) == ("create_view", "committed", 1)
    read = json.loads((out / "read.json" / "summary.json").read_text())["plans"][0]
    assert read["outputs"][0]["rows"] == 3  # ids 3, 4, 5: amount 4.5, 6.0, 7.5
    assert {t["format"] for t in read["tables_read"]} == {"iceberg", "iceberg-view"}
    shown = lake.spark.sql(f"SHOW VIEWS IN {lake.name}.{ns}").collect()  # temp views of other tests too
    assert [r.viewName for r in shown if not r.isTemporary] == ["cli_view"]


def test_a_run_killed_after_a_commit_finishes_on_retry_without_applying_a_step_twice(lake, tmp_path, tpch_dir):
    """The task process (here the CLI) is killed right after its first step commits; the retry with the same run
    key skips that step, applies the others once, and the table holds no duplicates."""
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    from substrait_spark.consumer.running.steps.log import KEY_PROPERTY

    lake.catalog.create_namespace_if_not_exists("demo")
    config = lake.write_config(tmp_path / "catalogs.yaml")
    plan = Path(__file__).resolve().parent.parent / "dags_examples" / "plans" / "big_orders_pipeline.json"
    cli = Path(sys.executable).parent / "substrait-spark"
    args = [str(cli), "run", str(plan), "--tables-dir", str(tpch_dir), "--catalog-config", str(config)]
    import hashlib

    key = f"crash-test/{lake.name}/0/{hashlib.sha256(plan.read_bytes()).hexdigest()[:12]}"  # slot 0, the plan

    def committed_keys() -> list[str]:
        try:
            table = lake.catalog.load_table("demo.big_orders")
        except Exception:  # not created yet
            return []
        return [s.summary.additional_properties.get(KEY_PROPERTY) for s in table.snapshots()]

    run_key = f"crash-test/{lake.name}"
    proc = subprocess.Popen([*args, "--run-key", run_key], env=dict(os.environ), start_new_session=True)
    deadline = time.monotonic() + 240
    while f"{key}/step-0" not in committed_keys():
        assert proc.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the crash: right after the first commit
    proc.wait()
    at_crash = committed_keys()
    assert f"{key}/step-2" not in at_crash  # at least the last step was not committed

    out = tmp_path / "out"
    done = subprocess.run([*args, "--run-key", run_key, "--output-dir", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    steps = json.loads((out / "summary.json").read_text())["plans"][0]["steps"]
    assert steps[0]["status"] == "skipped"
    assert [s["status"] for s in steps[len(at_crash) :]] == ["committed"] * (3 - len(at_crash))
    keys = committed_keys()
    assert sorted(keys) == [f"{key}/step-{i}" for i in range(3)]  # each step applied exactly once
    rows = [r["o_orderkey"] for r in lake.catalog.load_table("demo.big_orders").scan().to_arrow().to_pylist()]
    from oracles import DuckDBOracle

    db = DuckDBOracle(tpch_dir, ["orders"])
    expected = sorted(
        r[0] for r in db.run("select o_orderkey from orders where o_totalprice between 350000 and 450000").rows
    )
    db.close()
    assert sorted(rows) == expected  # what CTAS + INSERT - DELETE leave, no order twice
