"""A skipped step says which of three things it means (`report.Skip`): committed by an earlier try, a CTAS ignored
because the table exists, a DROP IF EXISTS of nothing. Every reader of a run report tells them apart: Asset events
(`changed_tables`) and OpenLineage count only the first as a change (no CREATE for an ignored CTAS, no DROP for a
table that never existed), the graph draws the other two as unchanged, the audit record keeps the kind (an audit
table of version 2 gains the column), and a report written before the kind was recorded reads the same."""

from __future__ import annotations

import pyarrow as pa
import pytest
from plan_builder import DdlRel, PlanBuilder, ddl, write
from substrait_spark.consumer.running.report import RunReport, Skip, Step, StepKind, StepStatus, changed_tables
from substrait_spark.graph import build_graph
from substrait_spark.hooks.audit import NO_RETRY, AuditLog, audit_schema, build_record
from substrait_spark.operators import openlineage
from test_audit import refresh, sql, try_ctx
from test_write_steps import (  # noqa: F401
    NAMES,
    TYPES,
    W,
    catalogs_fixture,
    content,
    ns_fixture,
    rows_of,
    run,
    table,
    values,
)

# Each test carries its tier: `unit` (pure Python) or `spark`, `iceberg`.


def three_skips(ns: str):
    """INSERT into ns.t; CTAS ns.t ignored if it exists; DROP TABLE IF EXISTS ns.gone."""
    b = PlanBuilder()
    insert = write([ns, "t"], values(rows_of([7, 8])), NAMES, TYPES)
    ctas = write(
        [ns, "t"], values(rows_of([9])), NAMES, TYPES, op=W.WRITE_OP_CTAS, create_mode=W.CREATE_MODE_IGNORE_IF_EXISTS
    )
    drop = ddl([ns, "gone"], DdlRel.DDL_OP_DROP_IF_EXIST, DdlRel.DDL_OBJECT_TABLE, (), ())
    return b.plan(insert, NAMES, more=[(ctas, NAMES), (drop, [])])


def kinds(report) -> list[tuple[str, StepStatus, Skip | None]]:
    return [(s.kind, s.status, s.skip) for s in report.steps]


def legacy(report: dict) -> dict:
    """The report as a version before `skip` wrote it."""
    return {**report, "steps": [{k: v for k, v in s.items() if k != "skip"} for s in report["steps"]]}


@pytest.mark.spark
@pytest.mark.iceberg
def test_three_kinds_of_skip_and_what_each_reader_makes_of_them(lake, catalogs, ns):
    table(lake, ns)
    plan = three_skips(ns)
    first = run(lake, catalogs, plan, run_key="dag/r/skips")
    assert kinds(first) == [
        ("insert", StepStatus.COMMITTED, None),
        ("ctas", StepStatus.SKIPPED, Skip.TABLE_EXISTS),
        ("drop_if_exist_table", StepStatus.SKIPPED, Skip.ABSENT),
    ]
    again = run(lake, catalogs, plan, run_key="dag/r/skips")  # a retry: the INSERT is found committed
    assert kinds(again) == [
        ("insert", StepStatus.SKIPPED, Skip.ALREADY_COMMITTED),
        ("ctas", StepStatus.SKIPPED, Skip.TABLE_EXISTS),
        ("drop_if_exist_table", StepStatus.SKIPPED, Skip.ABSENT),
    ]
    assert content(lake, ns) == rows_of([0, 1, 2, 7, 8])  # inserted once, the CTAS left it alone
    assert not lake.catalog.table_exists(f"{ns}.gone")
    current = lake.catalog.load_table(f"{ns}.t").current_snapshot().snapshot_id
    target = f"{lake.name}.{ns}.t"

    # (the retry does not know how many rows the earlier try inserted)
    for report, rows in ((first.to_dict(), 2), (again.to_dict(), None), (legacy(again.to_dict()), None)):
        # Asset events: the table the INSERT changed (also on the retry, whose earlier try failed before its
        # events went out), with the INSERT's rows only; nothing for the ignored CTAS or the DROP of nothing.
        changed = changed_tables(RunReport.from_dict(report))
        assert {t: change.extra() for t, change in changed.items()} == {
            target: {
                "rows_changed": rows or 0,
                "snapshot_id": current,
                "plan_sha256": "0" * 64,
                "steps": [{"kind": "insert", "rows": rows, "snapshot_id": current}],
            }
        }
        # OpenLineage: no CREATE for the ignored CTAS, no DROP (nor a dataset) for the table that was never there.
        lineage = openlineage.build(report, catalogs=catalogs, complete=True)
        by_name = {o.name: o for o in lineage.outputs}
        assert not [n for n in by_name if n.endswith("gone")]
        [out] = [o for n, o in by_name.items() if n.endswith(f"{ns}.t") or n.endswith(f"{ns}/t")]
        assert "lifecycleStateChange" not in out.facets
        assert out.facets["version"].datasetVersion == str(current)
        # The graph: the INSERT is a change, the other two are drawn unchanged and say which skip they are.
        steps = [n for n in build_graph(plan, report=report).nodes if n.title.startswith("step ")]
        assert [n.cls for n in steps] == ["step", "unchanged", "unchanged"]
        assert [line for n in steps[1:] for line in n.lines if line.startswith("status")] == [
            "status: skipped (table exists)",
            "status: skipped (absent)",
        ]
        # The audit record keeps the kind, whether or not the report recorded it.
        record = build_record(report, try_ctx(1))
        assert [s["skip"] for s in record["steps"][1:]] == ["table_exists", "absent"]
    assert [s["skip"] for s in build_record(legacy(again.to_dict()), try_ctx(1))["steps"]] == [
        "already_committed",
        "table_exists",
        "absent",
    ]


@pytest.mark.spark
@pytest.mark.iceberg
def test_before_the_fix_readers_disagreed_the_legacy_report_still_reads_the_same(lake, catalogs, ns):
    """A report dict of the earlier version (status "skipped", no kind) is read by its reason text."""
    table(lake, ns)
    report = run(lake, catalogs, three_skips(ns)).to_dict()
    typed = [Step.from_dict(s) for s in report["steps"]]
    old = [Step.from_dict(s) for s in legacy(report)["steps"]]
    assert [(s.status, s.skip, s.changed) for s in old] == [(s.status, s.skip, s.changed) for s in typed]
    assert [s.changed for s in typed] == [True, False, False]


@pytest.mark.spark
@pytest.mark.iceberg
def test_a_version_2_audit_table_gains_the_step_skip_column_in_one_commit(lake, catalogs, ns):
    from pyiceberg.schema import Schema
    from pyiceberg.types import ListType, NestedField, StructType

    # The audit table as version 2 created it: every column but steps' `skip`.
    fields = []
    for f in audit_schema().fields:
        if f.name == "steps":
            element = f.field_type.element_field
            kept = StructType(*[x for x in element.field_type.fields if x.name != "skip"])
            f = NestedField(f.field_id, f.name, ListType(element.field_id, kept, element_required=False))
        fields.append(f)
    table(lake, ns)
    audit_table = lake.catalog.create_table(f"{ns}.audit_log", schema=Schema(*fields), properties=NO_RETRY)
    old = build_record(run(lake, catalogs, three_skips(ns)), try_ctx(1))
    for s in old["steps"]:
        del s["skip"]
    old["record_version"] = 2
    audit_table.append(pa.Table.from_pylist([old], schema=audit_table.schema().as_arrow()))
    before = lake.catalog.load_table(f"{ns}.audit_log").metadata

    report = run(lake, catalogs, three_skips(ns), run_key="dag/r/audit")
    assert AuditLog.from_spec(f"iceberg:{ns}.audit_log", catalogs).write(report, try_ctx(2)).status == "written"

    after = lake.catalog.load_table(f"{ns}.audit_log").metadata
    assert len(after.schemas) == 2 and len(after.metadata_log) == len(before.metadata_log) + 2
    name = f"{lake.name}.{ns}.audit_log"
    refresh(lake, name)
    rows = sql(lake, f"SELECT record_id, s.kind, s.status, s.skip FROM {name} LATERAL VIEW explode(steps) x AS s")
    assert sorted(tuple(r) for r in rows) == [
        ("d/r/t/-1/try-1", "ctas", "skipped", None),  # written before the column existed
        ("d/r/t/-1/try-1", "drop_if_exist_table", "skipped", None),
        ("d/r/t/-1/try-1", "insert", "committed", None),
        ("d/r/t/-1/try-2", "ctas", "skipped", "table_exists"),
        ("d/r/t/-1/try-2", "drop_if_exist_table", "skipped", "absent"),
        ("d/r/t/-1/try-2", "insert", "committed", None),
    ]


@pytest.mark.unit
def test_the_audit_steps_column_is_derived_from_step():
    """Every `Step` field is in the audit table's `steps` struct and in each record's steps, unless explicitly left
    out: a field added to `Step` reaches the audit table (an existing one gains it, as `skip` above)."""
    import dataclasses

    from substrait_spark.hooks.audit import NOT_AUDITED

    not_audited = {p.removeprefix("steps.") for p in NOT_AUDITED if p.startswith("steps.")}
    struct = next(f for f in audit_schema().fields if f.name == "steps").field_type.element_field.field_type
    names = [f.name for f in dataclasses.fields(Step)]
    assert [f.name for f in struct.fields] == [n for n in names if n not in not_audited]
    assert not_audited == {"details", "commit"}
    step = Step(3, StepKind.CTAS, "lake.ns.t", "relations[1].root.input.write", rows=2)
    step.skipped(Skip.TABLE_EXISTS, "table exists (CREATE_MODE_IGNORE_IF_EXISTS)")
    [record] = build_record(
        {"steps": [RunReport(None, "0" * 64, None, None, steps=[step]).to_dict()["steps"][0]]}, try_ctx(1)
    )["steps"]
    assert list(record) == [f.name for f in struct.fields]
    assert (record["index"], record["status"], record["skip"], record["rows"]) == (3, "skipped", "table_exists", 2)
