"""UpdateRel and DdlRel on real Iceberg tables as run steps, checked through pyiceberg as well as Spark."""

from __future__ import annotations

import pytest
from plan_builder import DdlRel, PlanBuilder, ddl, field, fp64, i32, i64, lit, string, update
from pyiceberg.types import DoubleType, LongType, StringType
from substrait_spark.consumer.errors import ExecutionError, UnsupportedFeatureError
from substrait_spark.consumer.steps.log import KEY_PROPERTY
from test_write_steps import NAMES, TYPES, catalogs_fixture, content, ns_fixture, rows_of, run, spark_rows, table  # noqa: F401

D = DdlRel


def ddl_plan(*rels):
    b = PlanBuilder()
    return b.plan(rels[0], [], more=[(r, []) for r in rels[1:]])


def ddl_rel(ns, op, names=(), types=(), name="t", object_=D.DDL_OBJECT_TABLE, view_definition=None):
    return ddl([ns, name], op, object_, names, types, view_definition)


# --- UpdateRel ---------------------------------------------------------------------------------------------


def test_update_rel_sets_columns_where_the_condition_holds(lake, catalogs, ns):
    before = table(lake, ns, range(5)).current_snapshot().snapshot_id
    b = PlanBuilder()
    cond = b.call("gte", field(0), lit(3, i64()))
    rel = update([ns, "t"], NAMES, TYPES, cond, {1: lit("big"), 2: b.call("multiply", field(2), lit(2.0), out=fp64())})
    report = run(lake, catalogs, b.plan(rel, NAMES), run_key="dag/r/u")
    assert content(lake, ns) == spark_rows(lake, ns) == [*rows_of(range(3)), (3, "big", 9.0), (4, "big", 12.0)]
    step = report.steps[0]
    assert (step.kind, step.status, step.rows, step.snapshot_before) == ("update", "committed", 2, before)
    last = lake.catalog.load_table(f"{ns}.t").current_snapshot()
    assert (
        last.snapshot_id == step.snapshot_after and last.summary.additional_properties[KEY_PROPERTY] == "dag/r/u/step-0"
    )
    again = run(lake, catalogs, b.plan(rel, NAMES), run_key="dag/r/u")
    assert again.steps[0].status == "skipped" and content(lake, ns)[-1] == (4, "big", 12.0)


def test_update_rel_without_condition_updates_every_row(lake, catalogs, ns):
    table(lake, ns, range(3))
    b = PlanBuilder()
    report = run(lake, catalogs, b.plan(update([ns, "t"], NAMES, TYPES, None, {1: lit("x")}), NAMES))
    assert [r[1] for r in content(lake, ns)] == ["x"] * 3 and report.steps[0].rows == 3


# --- DdlRel: tables ----------------------------------------------------------------------------------------


def test_create_table_keeps_required_columns_and_is_skipped_on_retry(lake, catalogs, ns):
    rel = ddl_rel(ns, D.DDL_OP_CREATE, NAMES, [i64(False), string(), fp64()])
    report = run(lake, catalogs, ddl_plan(rel), run_key="dag/r/c")
    t = lake.catalog.load_table(f"{ns}.t")
    assert [(f.name, f.required) for f in t.schema().fields] == [("id", True), ("name", False), ("amount", False)]
    assert (report.steps[0].kind, report.steps[0].status) == ("create_table", "committed")
    again = run(lake, catalogs, ddl_plan(rel), run_key="dag/r/c")
    assert again.steps[0].status == "skipped" and "table properties" in again.steps[0].reason
    with pytest.raises(ExecutionError, match="already exists"):
        run(lake, catalogs, ddl_plan(rel), run_key="dag/r/other")


def test_create_or_replace_replaces_an_existing_table(lake, catalogs, ns):
    table(lake, ns)
    run(lake, catalogs, ddl_plan(ddl_rel(ns, D.DDL_OP_CREATE_OR_REPLACE, ["k"], [i32()])))
    t = lake.catalog.load_table(f"{ns}.t")
    assert [f.name for f in t.schema().fields] == ["k"] and content(lake, ns) == []


def test_drop_and_drop_if_exist(lake, catalogs, ns):
    table(lake, ns)
    report = run(lake, catalogs, ddl_plan(ddl_rel(ns, D.DDL_OP_DROP), ddl_rel(ns, D.DDL_OP_DROP_IF_EXIST)))
    assert not lake.catalog.table_exists(f"{ns}.t")
    assert [(s.kind, s.status) for s in report.steps] == [
        ("drop_table", "committed"),
        ("drop_if_exist_table", "skipped"),
    ]
    with pytest.raises(ExecutionError, match="does not exist"):
        run(lake, catalogs, ddl_plan(ddl_rel(ns, D.DDL_OP_DROP)))


def test_alter_adds_columns_and_widens_types(lake, catalogs, ns):
    import pyarrow as pa

    narrow = pa.schema([("id", pa.int32()), ("name", pa.string())])
    lake.catalog.create_table(f"{ns}.t", schema=narrow).append(pa.table({"id": [1], "name": ["a"]}, schema=narrow))
    after = ddl_rel(ns, D.DDL_OP_ALTER, NAMES, TYPES)
    report = run(lake, catalogs, ddl_plan(after))
    t = lake.catalog.load_table(f"{ns}.t")
    assert [(f.name, f.field_type) for f in t.schema().fields] == [
        ("id", LongType()),
        ("name", StringType()),
        ("amount", DoubleType()),
    ]
    assert spark_rows(lake, ns) == [(1, "a", None)] and report.steps[0].status == "committed"


def test_alter_refuses_unsafe_changes_with_the_reason_and_changes_nothing(lake, catalogs, ns):
    t = table(lake, ns)
    after = ddl_rel(ns, D.DDL_OP_ALTER, ["id", "name", "extra"], [i32(), string(), i64(False)])
    with pytest.raises(UnsupportedFeatureError) as info:
        run(lake, catalogs, ddl_plan(after))
    msg = str(info.value)
    assert "dropping column 'amount'" in msg and "bigint → int is not a widening" in msg
    assert "new column 'extra' is required" in msg
    assert lake.catalog.load_table(f"{ns}.t").schema() == t.schema()


def test_validate_accepts_writes_and_names_what_is_refused(ns):
    from substrait_spark.consumer.analyze import validate_plan
    from test_write_steps import values, write

    ok = PlanBuilder().plan(write([ns, "t"], values(rows_of([1])), NAMES, TYPES), NAMES)
    assert validate_plan(ok) == []
    view = ddl_plan(ddl_rel(ns, D.DDL_OP_DROP, object_=D.DDL_OBJECT_VIEW))
    assert validate_plan(view) == []
    extension = ddl_plan(ddl_rel(ns, D.DDL_OP_DROP))
    extension.relations[0].root.input.ddl.extension_object.SetInParent()
    assert [(f.feature, f.path) for f in validate_plan(extension)] == [
        ("DDL on an extension_object", "relations[0].root.input.ddl.extension_object")
    ]
