"""Typed run records (`consumer/report.py`) end to end: a real run's report keeps the JSON shape earlier versions
wrote (DESIGN's contract; recorded from the code before the records were typed), reads back unchanged from JSON
(`RunReport.from_dict`), and from its audit row in an Iceberg table and in JSON lines (what the audit keeps of it);
the audit table's columns are what the dataclasses derive, and the same as the previous version's."""

from __future__ import annotations

import dataclasses
import json
import os
import typing
from pathlib import Path

import pytest
from plan_builder import DdlRel, PlanBuilder, ddl, field, filter_, i64, named, param, string, virtual, write
from substrait_spark.consumer.errors import ResolutionError
from substrait_spark.consumer.loading.loader import LoadedPlan
from substrait_spark.consumer.running.report import RunReport, RunStatus, StepKind
from substrait_spark.consumer.running.runner import run_loaded
from substrait_spark.consumer.running.sinks import Sink
from substrait_spark.hooks.audit import ADDED_COLUMNS, NOT_AUDITED, AuditContext, AuditLog, audit_schema, audited
from substrait_spark.hooks.iceberg_writes import WritableIcebergResolver
from test_write_steps import NAMES, TYPES, W, catalogs_fixture, ns_fixture, rows_of, table, values  # noqa: F401

# Each test carries its tier: `unit` (pure Python) or `spark`, `iceberg`.

# The key structure of the two reports `full_reports` makes, as the code before the typed records wrote them
# (`RECORD_REPORT_SHAPE=1 pytest tests/test_run_records.py -k shape` on that code writes it).
SHAPE = Path(__file__).parent / "data" / "run_report_shape.json"

# The audit table's full column names as the previous version (record version 3) created them.
AUDIT_COLUMNS_V3 = {
    *("record_id", "record_version", "run_key", "dag_id", "run_id", "task_id", "map_index", "try_number"),
    *("plan_uri", "plan_version_id", "plan_sha256", "producer", "spec_version", "status", "started_at"),
    *("finished_at", "duration_s", "spark_application_id", "notes", "notes.element"),
    *("error", "error.kind", "error.message", "error.path", "error.exit_code"),
    *("tables_read", "tables_read.element", "tables_read.element.name", "tables_read.element.identity"),
    *("tables_read.element.format", "tables_read.element.catalog", "tables_read.element.snapshot_id"),
    *("tables_read.element.metadata_location", "tables_read.element.view_version"),
    *("steps", "steps.element", "steps.element.index", "steps.element.kind", "steps.element.target"),
    *("steps.element.path", "steps.element.status", "steps.element.reason", "steps.element.rows"),
    *("steps.element.snapshot_before", "steps.element.snapshot_after", "steps.element.idempotency_key"),
    *("steps.element.duration_s", "steps.element.skip"),
    *("outputs", "outputs.element", "outputs.element.index", "outputs.element.rows", "outputs.element.location"),
    "outputs.element.format",
    *("parameters", "parameters.element", "parameters.element.anchor", "parameters.element.type"),
    *("parameters.element.value", "parameters.element.source"),
}
# Version 4 adds a durable run's resumption: the table of version 3 gains these columns on its next write.
AUDIT_COLUMNS_V4 = AUDIT_COLUMNS_V3 | {
    "durability",
    *("outputs.element.resumed", "outputs.element.operations", "outputs.element.operations.element"),
    *("outputs.element.operations.element.operation_id", "outputs.element.operations.element.session_id"),
    *("outputs.element.operations.element.resumed", "outputs.element.operations.element.spark_ms"),
}


def everything(ns: str):
    """Rows of ns.t with id > $0; INSERT into ns.t; a CTAS of ns.t ignored (it exists); DROP IF EXISTS ns.gone."""
    b = PlanBuilder()
    read = filter_(named([ns, "t"], NAMES, TYPES), b.call("gt", field(0), param(0, i64())))
    insert = write([ns, "t"], values(rows_of([7, 8])), NAMES, TYPES)
    ctas = write(
        [ns, "t"], values(rows_of([9])), NAMES, TYPES, op=W.WRITE_OP_CTAS, create_mode=W.CREATE_MODE_IGNORE_IF_EXISTS
    )
    drop = ddl([ns, "gone"], DdlRel.DDL_OP_DROP_IF_EXIST, DdlRel.DDL_OBJECT_TABLE, (), ())
    return b.plan(read, NAMES, more=[(insert, NAMES), (ctas, NAMES), (drop, [])])


def missing_column(ns: str):
    bad = write([ns, "t"], virtual(["id", "nom"], [i64(), string()], [(1, "x")]), ["id", "nom"], [i64(), string()])
    return PlanBuilder().plan(bad, ["id", "nom"])


def full_reports(lake, catalogs, ns) -> list[RunReport]:
    """A successful run with a table read, a bound parameter, a root's preview and committed and skipped steps;
    and a failed run (its error)."""
    table(lake, ns)
    resolver = WritableIcebergResolver(catalogs)
    sink = Sink("preview", max_rows=None)

    def run(plan, run_key, parameters=None):
        loaded = LoadedPlan(plan, "s3://plans/p.json", "0" * 64, "binary", plan.version.producer, "0.50")
        return run_loaded(loaded, lake.spark, resolver, sink=sink, parameters=parameters, run_key=run_key)

    ok = run(everything(ns), "d/r/ok", {"$0": "0"})
    with pytest.raises(ResolutionError) as info:
        run(missing_column(ns), "d/r/failed")
    return [ok, info.value.report]


def shape(value: typing.Any) -> typing.Any:
    """The keys of a JSON value, recursively (list items: each distinct shape once)."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):
        shapes: list[typing.Any] = []
        for s in map(shape, value):
            if s not in shapes:
                shapes.append(s)
        return shapes
    return None


@pytest.mark.spark
@pytest.mark.iceberg
def test_a_full_report_keeps_the_recorded_json_shape_and_reads_back_unchanged(lake, catalogs, ns):
    reports = full_reports(lake, catalogs, ns)
    dicts = [r.to_dict() for r in reports]
    if os.environ.get("RECORD_REPORT_SHAPE"):
        SHAPE.write_text(json.dumps([shape(d) for d in dicts], indent=1) + "\n")
    assert [shape(d) for d in dicts] == json.loads(SHAPE.read_text())
    ok, failed = reports
    assert ok.status is RunStatus.SUCCESS and failed.status is RunStatus.FAILED and failed.error is not None
    assert [s.kind for s in ok.steps] == [StepKind.INSERT, StepKind.CTAS, StepKind.DROP_IF_EXIST_TABLE]
    assert ok.outputs[0].preview == [list(r) for r in rows_of([1, 2])]
    for report, d in zip(reports, dicts, strict=True):
        assert json.loads(json.dumps(d)) == d  # plain JSON values
        assert RunReport.from_dict(json.loads(json.dumps(d))) == report


@pytest.mark.spark
@pytest.mark.iceberg
def test_a_report_round_trips_through_its_audit_row_in_iceberg_and_json_lines(lake, catalogs, ns, tmp_path):
    """What the audit keeps of a report (every field but `NOT_AUDITED`) reads back unchanged from the rows
    pyiceberg and the JSON lines file hold."""
    reports = full_reports(lake, catalogs, ns)
    iceberg = AuditLog.from_spec(f"iceberg:{ns}.audit_log", catalogs)
    jsonl = AuditLog.from_spec(f"jsonl:{tmp_path / 'audit.jsonl'}", None)
    for n, report in enumerate(reports):
        context = AuditContext(run_key="d/r/t", try_number=n)
        assert iceberg.write(report, context).status == jsonl.write(report, context).status == "written"
    rows = lake.catalog.load_table(f"{ns}.audit_log").scan().to_arrow().sort_by("try_number").to_pylist()
    expected = [audited(r) for r in reports]
    assert [RunReport.from_dict(row) for row in rows] == expected
    assert [RunReport.from_dict(row) for row in jsonl.read()] == expected
    # what the audit leaves out is the run report's alone
    ok = expected[0]
    assert ok.outputs[0].preview is None and ok.steps[0].details is None and ok.translate_ms is None
    assert ok.tables_read == reports[0].tables_read and ok.parameters == reports[0].parameters
    assert ok.steps[1].skip == reports[0].steps[1].skip and ok.error is None and expected[1].error is not None


def derived_columns(cls: type, prefix: str = "") -> set[str]:
    """Full column names (pyiceberg's: `steps.element.kind`) of a record's audited fields, from its dataclass."""
    names: set[str] = set()
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        path = f"{prefix}{f.name}".replace(".element", "")
        if path in NOT_AUDITED or f.name.startswith("_"):
            continue
        name = f"{prefix}{f.name}"
        names.add(name)
        hint = hints[f.name]
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        inner = args[0] if typing.get_origin(hint) in (list, typing.Union) or args else hint
        if typing.get_origin(hint) is list:
            names.add(f"{name}.element")
            name = f"{name}.element"
        if typing.get_origin(inner) is list:  # Optional[list[...]]
            inner = typing.get_args(inner)[0]
            names.add(f"{name}.element")
            name = f"{name}.element"
        if isinstance(inner, type) and dataclasses.is_dataclass(inner):
            names |= derived_columns(inner, f"{name}.")
    return names


@pytest.mark.unit
def test_the_audit_table_columns_are_what_the_records_derive_and_the_previous_versions():
    from pyiceberg.schema import index_name_by_id

    table_columns = set(index_name_by_id(audit_schema()).values())
    derived = derived_columns(RunReport) | derived_columns(AuditContext) - {"record_id"}
    assert table_columns == derived | {"record_id", "record_version", "finished_at"}
    assert table_columns == AUDIT_COLUMNS_V4
    # what a table of the previous version lacks is exactly what the audit log adds to it on its next write
    added = {c for c in table_columns - AUDIT_COLUMNS_V3 if not any(c.startswith(f"{a}.") for a in ADDED_COLUMNS)}
    assert added == set(ADDED_COLUMNS) - {"parameters", "steps.element.skip"}
