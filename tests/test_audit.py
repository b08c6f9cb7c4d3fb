"""The audit trail (hooks/audit.py): one record per run and task try, in an Iceberg table read back with Spark SQL
(steps exploded) or in JSON lines; a second write for the same try is a no-op; a failing run records its error;
an unwritable audit log never fails a run unless strict; no credentials in records."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from types import SimpleNamespace

import pyarrow as pa
import pytest
from google.protobuf import json_format
from iceberg_stack import Lake  # fixtures `iceberg_spark` and `lake` come from conftest (one per session)
from plan_builder import PlanBuilder, fp64, i64, named, string, virtual, write
from substrait_spark.consumer.errors import ResolutionError
from substrait_spark.consumer.loading.loader import LoadedPlan
from substrait_spark.consumer.records import plain
from substrait_spark.consumer.running.runner import run_loaded
from substrait_spark.consumer.running.sinks import Sink
from substrait_spark.hooks.audit import (
    RECORD_PROPERTY,
    AuditContext,
    AuditError,
    AuditLog,
    IcebergAuditLog,
    JsonLinesAuditLog,
    build_record,
)
from substrait_spark.hooks.iceberg import Catalogs
from substrait_spark.hooks.iceberg_writes import WritableIcebergResolver

# Each test carries its tier: `unit` (pure Python) or `spark`, `iceberg`.

NAMES = ["id", "name", "amount"]
TYPES = [i64(), string(), fp64()]
ARROW = pa.schema([("id", pa.int64()), ("name", pa.string()), ("amount", pa.float64())])


def audit_from_operator(report, context, spec, catalogs, *, strict=False):
    """A task try's audit record as the operator writes it: its runner's `record`, with the task's context."""
    from substrait_spark.hooks.audit import AuditContext
    from substrait_spark.hooks.plan_run import PlanRunner, RunSettings

    runner = PlanRunner(RunSettings(audit_log=spec, audit_strict=strict), catalogs=catalogs)
    return runner.record(report, AuditContext.from_airflow(context, None))


@pytest.fixture(scope="module", name="catalogs")
def catalogs_fixture(lake: Lake) -> Catalogs:
    return lake.catalogs()


@pytest.fixture(name="ns")
def ns_fixture(lake: Lake, request) -> str:
    name = "audit_" + request.node.name.replace("[", "_").replace("]", "").replace("-", "_")[:50].lower()
    lake.catalog.create_namespace_if_not_exists(name)
    lake.catalog.create_table(f"{name}.t", schema=ARROW).append(
        pa.Table.from_pylist([{"id": i, "name": f"n{i}", "amount": i * 1.5} for i in range(3)], schema=ARROW)
    )
    return name


def insert_and_read(ns: str, ids=(7, 8)):
    """A plan that inserts rows into ns.t (a step) and reads ns.t (a table read)."""
    b = PlanBuilder()
    rows = [(i, f"n{i}", i * 1.5) for i in ids]
    w = write([ns, "t"], virtual(NAMES, TYPES, rows), NAMES, TYPES)
    return b.plan(w, NAMES, more=[(named([ns, "t"], NAMES, TYPES), NAMES)])


def failing(ns: str):
    bad = write([ns, "t"], virtual(["id", "nom"], [i64(), string()], [(1, "x")]), ["id", "nom"], [i64(), string()])
    return PlanBuilder().plan(bad, ["id", "nom"])


def run(lake, catalogs, plan, run_key="d/r/t/-1", uri=None):
    loaded = LoadedPlan(plan, uri, "ab" * 32, "binary", plan.version.producer, None)
    return run_loaded(
        loaded, lake.spark, WritableIcebergResolver(catalogs), sink=Sink("preview", max_rows=None), run_key=run_key
    )


def try_ctx(n: int, key: str = "d/r/t/-1") -> AuditContext:
    return AuditContext(run_key=key, dag_id="d", run_id="r", task_id="t", map_index=-1, try_number=n)


def sql(lake, query: str) -> list:
    return lake.spark.sql(query).collect()


def refresh(lake, table: str) -> None:
    lake.spark.sql(f"REFRESH TABLE {table}")


# --- Iceberg ----------------------------------------------------------------------------------------------------


@pytest.mark.spark
@pytest.mark.iceberg
def test_run_loaded_record_in_iceberg_read_back_with_spark_sql(lake, catalogs, ns):
    report = run(lake, catalogs, insert_and_read(ns))
    audit = AuditLog.from_spec(f"iceberg:{ns}.audit_log", catalogs)
    assert isinstance(audit, IcebergAuditLog) and audit.location == f"{lake.name}.{ns}.audit_log"
    result = audit.write(report, try_ctx(1))
    assert (result.status, result.record_id) == ("written", "d/r/t/-1/try-1")
    audit_table = f"{lake.name}.{ns}.audit_log"
    refresh(lake, audit_table)
    [row] = sql(
        lake,
        f"SELECT record_id, run_key, dag_id, run_id, task_id, map_index, try_number, plan_sha256, status, "
        f"started_at, finished_at, duration_s, error, size(steps) AS n_steps FROM {audit_table}",
    )
    assert row.record_id == "d/r/t/-1/try-1" and row.run_key == "d/r/t/-1"
    assert (row.dag_id, row.run_id, row.task_id, row.map_index, row.try_number) == ("d", "r", "t", -1, 1)
    assert row.plan_sha256 == "ab" * 32 and row.status == "success" and row.error is None
    assert row.started_at <= row.finished_at and row.duration_s == report.duration_s and row.n_steps == 1
    step = report.steps[0]
    [s] = sql(
        lake,
        f"SELECT s.kind, s.target, s.rows, s.snapshot_before, s.snapshot_after, s.status, s.duration_s "
        f"FROM {audit_table} a LATERAL VIEW explode(a.steps) x AS s",
    )
    assert (s.kind, s.target, s.rows, s.status) == ("insert", f"{lake.name}.{ns}.t", 2, "committed")
    assert (s.snapshot_before, s.snapshot_after) == (step.snapshot_before, step.snapshot_after)
    assert s.snapshot_after == lake.catalog.load_table(f"{ns}.t").current_snapshot().snapshot_id
    reads = sql(
        lake, f"SELECT r.identity, r.snapshot_id, r.format FROM {audit_table} LATERAL VIEW explode(tables_read) x AS r"
    )
    assert [tuple(r) for r in reads] == [(t.identity, t.snapshot_id, t.format) for t in report.tables_read]
    assert reads[0].identity == f"{lake.name}.{ns}.t" and reads[0].snapshot_id is not None
    # the same try again (a re-invocation): no second record, no new snapshot
    snaps = len(lake.catalog.load_table(f"{ns}.audit_log").snapshots())
    assert audit.write(report, try_ctx(1)).status == "exists"
    assert len(lake.catalog.load_table(f"{ns}.audit_log").snapshots()) == snaps
    refresh(lake, audit_table)
    assert sql(lake, f"SELECT count(*) AS n FROM {audit_table}")[0].n == 1
    last = lake.catalog.load_table(f"{ns}.audit_log").current_snapshot()
    assert last.summary.additional_properties[RECORD_PROPERTY] == "d/r/t/-1/try-1"


@pytest.mark.spark
@pytest.mark.iceberg
def test_two_tries_two_records_and_the_failed_one_has_its_error(lake, catalogs, ns):
    audit = AuditLog.from_spec({"type": "iceberg", "namespace": ns, "table": "audit"}, catalogs)
    with pytest.raises(ResolutionError) as info:
        run(lake, catalogs, failing(ns))
    assert audit.write(info.value.report, try_ctx(1)).status == "written"
    report = run(lake, catalogs, insert_and_read(ns))
    assert audit.write(report, try_ctx(2)).status == "written"
    assert audit.write(report, try_ctx(2)).status == "exists"
    table = f"{lake.name}.{ns}.audit"
    refresh(lake, table)
    rows = sql(lake, f"SELECT try_number, status, error.kind, error.message, error.path FROM {table} ORDER BY 1")
    assert [(r.try_number, r.status) for r in rows] == [(1, "failed"), (2, "success")]
    assert rows[0].kind == "resolution failed" and "column 'nom' missing" in rows[0].message
    assert rows[0].path == info.value.path and rows[1].kind is None


@pytest.mark.spark
@pytest.mark.iceberg
def test_default_table_created_once_by_racing_writers(lake, catalogs):
    audit = AuditLog.from_spec(None, catalogs)
    assert isinstance(audit, IcebergAuditLog) and audit.location == f"{lake.name}.substrait_spark.audit_log"
    assert AuditLog.from_spec("iceberg", catalogs).location == audit.location
    assert AuditLog.from_spec("off", catalogs) is None and AuditLog.from_spec(None, None) is None
    report = {"plan_uri": "file:///p.json", "plan_sha256": "0" * 64, "status": "success", "steps": []}
    results: list = []

    def write(ctx: AuditContext) -> None:
        log = AuditLog.from_spec(None, lake.catalogs())  # each writer its own pyiceberg catalog
        results.append(log.write(report, ctx).status)

    contexts = [try_ctx(n, key="race/r/t/-1") for n in (1, 2, 3, 4)] + [try_ctx(1, key="race/r/t/-1")] * 2
    threads = [threading.Thread(target=write, args=(c,)) for c in contexts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["exists"] * 2 + ["written"] * 4, results
    table = f"{lake.name}.substrait_spark.audit_log"
    refresh(lake, table)
    rows = sql(lake, f"SELECT record_id, count(*) AS n FROM {table} WHERE run_key = 'race/r/t/-1' GROUP BY 1")
    assert sorted((r.record_id, r.n) for r in rows) == [(f"race/r/t/-1/try-{n}", 1) for n in (1, 2, 3, 4)]


@pytest.mark.spark
@pytest.mark.iceberg
def test_operator_function_takes_the_task_instance(lake, catalogs, ns):
    ti = SimpleNamespace(dag_id="dag", run_id="manual__1", task_id="task", map_index=3, try_number=1)
    spec = f"iceberg:{lake.name}.{ns}.op_audit"
    report = run(lake, catalogs, insert_and_read(ns), run_key="dag/manual__1/task/3")
    first = audit_from_operator(report, {"ti": ti}, spec, catalogs)
    assert (first.status, first.record_id) == ("written", "dag/manual__1/task/3/try-1")
    assert audit_from_operator(report.to_dict(), {"ti": ti}, spec, catalogs).status == "exists"
    ti.try_number = 2
    assert audit_from_operator(report, {"ti": ti}, spec, catalogs).status == "written"
    assert audit_from_operator(report, {"ti": ti}, None, None) is None  # no catalogs, no spec: no audit log
    table = f"{lake.name}.{ns}.op_audit"
    refresh(lake, table)
    rows = sql(lake, f"SELECT dag_id, run_id, task_id, map_index, try_number FROM {table} ORDER BY try_number")
    assert [tuple(r) for r in rows] == [("dag", "manual__1", "task", 3, 1), ("dag", "manual__1", "task", 3, 2)]


# --- the CLI ----------------------------------------------------------------------------------------------------


def plan_file(tmp_path, plan, name="plan.json"):
    path = tmp_path / name
    path.write_text(json.dumps(json_format.MessageToDict(plan)))
    return path


@pytest.mark.spark
@pytest.mark.iceberg
def test_cli_writes_a_record_per_invocation(lake, ns, tmp_path, capsys):
    from substrait_spark.cli import main

    config = lake.write_config(tmp_path / "catalogs.yaml")
    plan, out = plan_file(tmp_path, insert_and_read(ns)), tmp_path / "out"
    args = ["run", str(plan), "--catalog-config", str(config), "--run-key", "cli-key", "--output-dir", str(out)]
    assert main([*args, "--audit-log", f"iceberg:{ns}.cli_audit"]) == 0, capsys.readouterr().err
    assert main([*args, "--audit-log", f"iceberg:{ns}.cli_audit"]) == 0, capsys.readouterr().err  # retry: step skipped
    bad = plan_file(tmp_path, failing(ns), "bad.json")
    assert main(["run", str(bad), "--catalog-config", str(config), "--audit-log", f"iceberg:{ns}.cli_audit"]) == 4
    table = f"{lake.name}.{ns}.cli_audit"
    refresh(lake, table)
    rows = sql(
        lake,
        f"SELECT run_key, dag_id, try_number, plan_uri, status, error.kind AS kind FROM {table} ORDER BY finished_at",
    )
    assert [(r.run_key, r.dag_id, r.try_number, r.status) for r in rows] == [
        ("cli-key", None, None, "success"),
        ("cli-key", None, None, "success"),
        (None, None, None, "failed"),
    ]
    assert rows[0].plan_uri.endswith("plan.json") and rows[2].kind == "resolution failed"
    steps = sql(lake, f"SELECT s.status, s.rows FROM {table} LATERAL VIEW explode(steps) x AS s ORDER BY finished_at")
    assert [s.status for s in steps] == ["committed", "skipped", "failed"] and steps[0].rows == 2  # retry: skipped


@pytest.mark.spark
@pytest.mark.iceberg
def test_cli_jsonl_and_unwritable_logs(lake, ns, tmp_path, capsys):
    from substrait_spark.cli import main

    config = lake.write_config(tmp_path / "catalogs.yaml")
    plan, out = plan_file(tmp_path, insert_and_read(ns)), tmp_path / "out"
    base = ["run", str(plan), "--catalog-config", str(config), "--run-key", "k1", "--output-dir", str(out)]
    log = tmp_path / "audit.jsonl"
    assert main([*base, "--audit-log", f"jsonl:{log}"]) == 0, capsys.readouterr().err
    [record] = JsonLinesAuditLog(log).read()
    assert record["status"] == "success" and record["run_key"] == "k1" and record["steps"][0]["kind"] == "insert"
    assert record["tables_read"][0]["snapshot_id"] is not None
    # an unwritable audit log: the run succeeds, the summary's notes say why there is no record
    unwritable = tmp_path / "no" / "such" / "dir" / "audit.jsonl"
    assert main([*base, "--audit-log", f"jsonl:{unwritable}"]) == 0
    assert "warning" in capsys.readouterr().err
    notes = json.loads((out / "summary.json").read_text())["plans"][0]["notes"]
    assert any("audit record" in n and "not written" in n for n in notes)
    assert main([*base, "--audit-log", f"jsonl:{unwritable}", "--audit-strict"]) == 1
    assert "audit" in capsys.readouterr().err


# --- bound parameters, and an audit table of the first version ------------------------------------------------


def filtered_by_parameter(ns: str):
    """SELECT * FROM ns.t WHERE id > $0 ($0 an i64)."""
    from plan_builder import field, filter_, param

    b = PlanBuilder()
    rel = filter_(named([ns, "t"], NAMES, TYPES), b.call("gt", field(0), param(0, i64())))
    return b.plan(rel, NAMES)


@pytest.mark.spark
@pytest.mark.iceberg
def test_bound_parameters_recorded_and_a_version_1_audit_table_gains_the_column_in_one_commit(lake, catalogs, ns):
    from pyiceberg.schema import Schema
    from substrait_spark.hooks.audit import NO_RETRY, audit_schema

    # An audit table as the first version created it (no `parameters` column), holding one record.
    v1 = Schema(*[f for f in audit_schema().fields if f.name != "parameters"])
    table = lake.catalog.create_table(f"{ns}.audit_log", schema=v1, properties=NO_RETRY)
    old = build_record(run(lake, catalogs, insert_and_read(ns)), try_ctx(1))
    del old["parameters"]
    old["record_version"] = 1
    table.append(pa.Table.from_pylist([old], schema=table.schema().as_arrow()))
    before = lake.catalog.load_table(f"{ns}.audit_log").metadata

    report = run_loaded(
        LoadedPlan(filtered_by_parameter(ns), None, "cd" * 32, "binary", None, None),
        lake.spark,
        WritableIcebergResolver(catalogs),
        sink=Sink("preview", max_rows=None),
        parameters={"$0": "7"},
    )
    assert report.outputs[0].rows == 1  # id 8 of 0, 1, 2, 7, 8
    assert plain(report.parameters) == [{"anchor": 0, "type": "i64?", "value": 7, "source": "caller"}]
    audit = AuditLog.from_spec(f"iceberg:{ns}.audit_log", catalogs)
    assert audit.write(report, try_ctx(2)).status == "written"
    assert audit.write(report, try_ctx(3)).status == "written"

    after = lake.catalog.load_table(f"{ns}.audit_log").metadata
    assert [f.name for f in after.schema().fields][-1] == "parameters"
    # one schema commit (a new schema, one metadata version) and one append per record, nothing else
    assert len(after.schemas) == 2 and after.current_schema_id != before.current_schema_id
    assert len(after.metadata_log) == len(before.metadata_log) + 3
    assert len(after.snapshots) == len(before.snapshots) + 2
    audit_table = f"{lake.name}.{ns}.audit_log"
    refresh(lake, audit_table)
    rows = sql(
        lake,
        f"SELECT record_id, p.anchor, p.type, p.value, p.source FROM {audit_table} "
        "LATERAL VIEW OUTER explode(parameters) x AS p ORDER BY record_id",
    )
    assert [tuple(r) for r in rows] == [
        ("d/r/t/-1/try-1", None, None, None, None),  # written before the column existed
        ("d/r/t/-1/try-2", 0, "i64?", "7", "caller"),
        ("d/r/t/-1/try-3", 0, "i64?", "7", "caller"),
    ]


@pytest.mark.unit
def test_jsonl_record_holds_the_bound_parameters(tmp_path):
    audit = AuditLog.from_spec(f"jsonl:{tmp_path / 'audit.jsonl'}", None)
    bound = [
        {"anchor": 0, "type": "date", "value": "2024-06-01", "source": "caller"},
        {"anchor": 3, "type": "decimal<10,2>?", "value": "9.50", "source": "plan"},
    ]
    audit.write({"status": "success", "parameters": bound}, try_ctx(1))
    [record] = audit.read()
    assert [{**p, "value": json.loads(p["value"])} for p in record["parameters"]] == bound


# --- JSON lines and failures ------------------------------------------------------------------------------------


@pytest.mark.unit
def test_jsonl_one_record_per_try_and_concurrent_appenders(tmp_path):
    path = tmp_path / "audit.jsonl"
    audit = AuditLog.from_spec(f"jsonl:{path}", None)
    report = {"plan_uri": "s3://b/p.json", "plan_sha256": "1" * 64, "status": "success", "started_at": None}
    assert audit.write(report, try_ctx(1)).status == "written"
    assert audit.write(report, try_ctx(1)).status == "exists"
    assert audit.write(report, try_ctx(2)).status == "written"
    assert [r["record_id"] for r in audit.read()] == ["d/r/t/-1/try-1", "d/r/t/-1/try-2"]
    code = (
        "import sys\n"
        "from substrait_spark.hooks.audit import AuditLog, AuditContext\n"
        "log = AuditLog.from_spec('file://' + sys.argv[1], None, strict=True)\n"
        "for n in range(20):\n"
        "    for key in (sys.argv[2], 'shared'):\n"
        "        log.write({'status': 'success', 'notes': ['x' * 5000]}, AuditContext(run_key=key, try_number=n))\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), f"p{i}"]) for i in range(6)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    records = audit.read()  # every line parses: no interleaving
    ids = [r["record_id"] for r in records]
    assert len(ids) == len(set(ids)) == 2 + 6 * 20 + 20


@pytest.mark.spark
@pytest.mark.iceberg
def test_unwritable_logs_do_not_fail_runs_unless_strict(lake, catalogs, ns, tmp_path):
    report = run(lake, catalogs, insert_and_read(ns))
    (tmp_path / "adir").mkdir()
    for audit in (
        AuditLog.from_spec(f"jsonl:{tmp_path / 'adir'}", None),  # a directory
        AuditLog.from_spec(f"iceberg:{ns}.t", catalogs),  # a table of another schema
        IcebergAuditLog.create(
            Catalogs.from_mapping({"catalogs": {"broken": {"type": "sql", "uri": f"sqlite:///{tmp_path}/x/y/c.db"}}}),
            None,
            None,
        ),
    ):
        result = audit.write(report, try_ctx(1))
        assert result.status == "failed" and result.error, audit.location
        assert any(audit.location in n and "not written" in n for n in report.notes)
        audit.strict = True
        with pytest.raises(AuditError, match="not written"):
            audit.write(report, try_ctx(1))
    with pytest.raises(AuditError, match="needs a catalog configuration"):
        AuditLog.from_spec("iceberg:ns.t", None)
    # the operator's function: a bad spec is a note, not an error (unless strict)
    ti = SimpleNamespace(dag_id="d", run_id="r", task_id="t", map_index=-1, try_number=1)
    assert audit_from_operator(report, {"ti": ti}, "iceberg:x.y", None) is None
    assert any("audit log not usable" in n for n in report.notes)
    with pytest.raises(AuditError):
        audit_from_operator(report, {"ti": ti}, "iceberg:x.y", None, strict=True)


@pytest.mark.unit
def test_no_audit_log_says_so_in_the_task_log(caplog):
    """With no audit_log and no catalog the operator writes no record: the log says so and why."""
    ti = SimpleNamespace(dag_id="d", run_id="r", task_id="t", map_index=-1, try_number=1)
    report = {"plan_sha256": "1" * 64, "status": "success"}
    with caplog.at_level("INFO", logger="substrait_spark.hooks.audit"):
        assert audit_from_operator(report, {"ti": ti}, None, None) is None
        assert audit_from_operator(report, {"ti": ti}, "off", None) is None
    assert [r.getMessage() for r in caplog.records] == [
        "no audit record written: no audit_log given and no Iceberg catalog configured to hold the default table "
        "substrait_spark.audit_log (audit_log='jsonl:/path' writes JSON lines)",
        "audit log off (audit_log='off'): no audit record written",
    ]


@pytest.mark.spark
@pytest.mark.iceberg
def test_no_credentials_in_records(lake, catalogs, ns, tmp_path):
    uri = "s3://AKIAEXAMPLE:wJalrXUtnFEMI@bucket/plan.json?versionId=v1&X-Amz-Security-Token=tok123secret"
    with pytest.raises(ResolutionError) as info:
        run(lake, catalogs, failing(ns), uri=uri)
    report = info.value.report
    report.error.message += " (connect failed: password=hunter2 token: 'abc987')"
    report.notes.append("catalog prod: credential=id:clientsecret")
    record = build_record(report, try_ctx(1))
    assert record["plan_uri"].startswith("s3://***@bucket/plan.json?versionId=v1")
    path = tmp_path / "audit.jsonl"
    AuditLog.from_spec(f"jsonl:{path}", None).write(report, try_ctx(1))
    AuditLog.from_spec(f"iceberg:{ns}.secret_audit", catalogs).write(report, try_ctx(1))
    table = f"{lake.name}.{ns}.secret_audit"
    refresh(lake, table)
    stored = [path.read_text(), json.dumps(lake.spark.table(table).toJSON().collect())]
    for text in stored:
        assert "resolution failed" in text and "versionId=v1" in text
        for secret in ("wJalrXUtnFEMI", "tok123secret", "hunter2", "abc987", "clientsecret", "AKIAEXAMPLE"):
            assert secret not in text
