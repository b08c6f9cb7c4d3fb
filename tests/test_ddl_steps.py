"""UpdateRel and DdlRel on real Iceberg tables as run steps, checked through pyiceberg as well as Spark."""

from __future__ import annotations

import pytest
from plan_builder import DdlRel, PlanBuilder, ddl, field, fp64, i32, i64, lit, string, update
from pyiceberg.types import DoubleType, LongType, StringType
from substrait_spark.consumer.errors import ExecutionError, PlanInvalidError, UnsupportedFeatureError
from substrait_spark.consumer.running.steps.log import KEY_PROPERTY
from test_write_steps import (  # noqa: F401
    NAMES,
    SLOT_SHA,
    TYPES,
    catalogs_fixture,
    content,
    ns_fixture,
    rows_of,
    run,
    spark_rows,
    table,
)

pytestmark = [pytest.mark.spark, pytest.mark.iceberg]

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
        last.snapshot_id == step.snapshot_after
        and last.summary.additional_properties[KEY_PROPERTY] == f"dag/r/u/{SLOT_SHA}/step-0"
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


def test_a_retried_drop_finds_its_own_earlier_commit(lake, catalogs, ns):
    table(lake, ns)
    drop = ddl_plan(ddl_rel(ns, D.DDL_OP_DROP))
    first = run(lake, catalogs, drop, run_key="dag/r/d")
    assert first.steps[0].status == "committed" and not lake.catalog.table_exists(f"{ns}.t")
    recorded = lake.catalog.load_namespace_properties(ns)["substrait-spark.dropped.t"]
    assert (
        recorded.split("\n")[0] == f"dag/r/d/{SLOT_SHA}/step-0" and len(recorded.split("\n")[1]) == 36
    )  # key, table UUID
    retry = ddl_plan(ddl([ns.upper(), "T"], D.DDL_OP_DROP))  # names match in any case
    again = run(lake, catalogs, retry, run_key="dag/r/d")
    step = again.steps[0]
    assert again.status == "success" and step.status == "skipped" and step.reason.startswith("already committed")
    with pytest.raises(ExecutionError, match="does not exist") as info:
        run(lake, catalogs, drop, run_key="dag/r/other")
    assert info.value.path == "relations[0].root.input.ddl.op" and info.value.report.steps[0].status == "failed"
    if_exist = run(lake, catalogs, ddl_plan(ddl_rel(ns, D.DDL_OP_DROP_IF_EXIST)), run_key="dag/r/d")
    assert (if_exist.steps[0].status, if_exist.steps[0].reason) == (
        "skipped",
        "table does not exist (DDL_OP_DROP_IF_EXIST)",
    )


def test_a_drop_that_crashed_after_recording_its_key_drops_on_retry(lake, catalogs, ns):
    uuid = str(table(lake, ns).metadata.table_uuid)
    lake.catalog.update_namespace_properties(
        ns, updates={"substrait-spark.dropped.t": f"dag/r/c/{SLOT_SHA}/step-0\n{uuid}"}
    )
    report = run(lake, catalogs, ddl_plan(ddl_rel(ns, D.DDL_OP_DROP)), run_key="dag/r/c")
    assert report.steps[0].status == "committed" and not lake.catalog.table_exists(f"{ns}.t")


def test_a_retried_drop_leaves_the_table_a_later_step_created_again(lake, catalogs, ns):
    """DROP t; CREATE t; INSERT t — retried after it all committed: nothing is applied again, and the re-created
    table (another UUID than the one the DROP recorded) keeps its rows."""
    from test_write_steps import values, write

    table(lake, ns)
    rebuild = ddl_plan(
        ddl_rel(ns, D.DDL_OP_DROP),
        ddl_rel(ns, D.DDL_OP_CREATE, NAMES, TYPES),
        write([ns, "t"], values(rows_of([7])), NAMES, TYPES),
    )
    first = run(lake, catalogs, rebuild, run_key="dag/r/rebuild")
    assert [s.status for s in first.steps] == ["committed"] * 3 and content(lake, ns) == rows_of([7])
    again = run(lake, catalogs, rebuild, run_key="dag/r/rebuild")
    assert [s.status for s in again.steps] == ["skipped"] * 3
    assert "created since" in again.steps[0].reason and content(lake, ns) == rows_of([7])


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
    after = ddl_rel(ns, D.DDL_OP_ALTER, ["id", "name", "amount", "extra"], [i32(), string(False), fp64(), i64(False)])
    with pytest.raises(UnsupportedFeatureError) as info:
        run(lake, catalogs, ddl_plan(after))
    msg = str(info.value)
    assert "column 'id': bigint → int is not a widening" in msg
    assert "column 'name': optional → required would reject existing NULLs" in msg
    assert "new column 'extra' is required" in msg
    assert info.value.path == "relations[0].root.input.ddl.table_schema"
    assert lake.catalog.load_table(f"{ns}.t").schema() == t.schema()


def commits(lake, ns, name="t") -> int:
    """Catalog commits of the table so far (one metadata file each)."""
    return len(lake.catalog.load_table(f"{ns}.{name}").metadata.metadata_log)


def test_alter_renames_columns_that_pair_up_by_position_in_one_commit(lake, catalogs, ns):
    import pyarrow as pa

    narrow = pa.schema([("id", pa.int32()), ("name", pa.string()), ("amount", pa.float64())])
    t = lake.catalog.create_table(f"{ns}.t", schema=narrow)
    t.append(pa.Table.from_pylist([dict(zip(NAMES, r, strict=True)) for r in rows_of([1, 2])], schema=narrow))
    before = commits(lake, ns)
    rel = ddl_rel(ns, D.DDL_OP_ALTER, ["key", "label", "amount"], [i64(), string(), fp64()])
    report = run(lake, catalogs, ddl_plan(rel), run_key="dag/r/a")
    t = lake.catalog.load_table(f"{ns}.t")
    assert [(f.field_id, f.name, f.field_type) for f in t.schema().fields] == [
        (1, "key", LongType()),
        (2, "label", StringType()),
        (3, "amount", DoubleType()),
    ]
    assert content(lake, ns) == spark_rows(lake, ns) == rows_of([1, 2])  # the data stays with its columns
    assert commits(lake, ns) == before + 1 and f"dag/r/a/{SLOT_SHA}/step-0" in t.properties[KEY_PROPERTY]
    step = report.steps[0]
    assert step.status == "committed"
    assert step.details == {"renamed": {"id": "key", "name": "label"}, "widened": {"id": "bigint"}}
    again = run(lake, catalogs, ddl_plan(rel), run_key="dag/r/a")
    assert again.steps[0].status == "skipped" and commits(lake, ns) == before + 1


@pytest.mark.parametrize(
    ("names", "types"),
    [
        (["id", "label", "amount", "extra"], [i64(), string(), fp64(), string()]),  # one missing, two new
        (["id", "name", "total"], [i64(), string(), string()]),  # double → string: no rename
        (["label", "id", "amount"], [string(), i64(), fp64()]),  # not at the missing column's position
    ],
    ids=["counts-differ", "types-differ", "positions-differ"],
)
def test_alter_ambiguous_renames(lake, catalogs, ns, names, types):
    """Columns both missing and new that do not pair up: renames cannot be told from drops and adds."""
    t = table(lake, ns)
    with pytest.raises(UnsupportedFeatureError, match="renames cannot be told from drops and adds"):
        run(lake, catalogs, ddl_plan(ddl_rel(ns, D.DDL_OP_ALTER, names, types)))
    assert lake.catalog.load_table(f"{ns}.t").schema() == t.schema() and content(lake, ns) == rows_of(range(3))


def test_alter_drops_columns_but_not_those_the_layout_needs(lake, catalogs, ns):
    import pyarrow as pa
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.transforms import IdentityTransform
    from test_write_steps import KEYED

    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="by_name"))
    t = lake.catalog.create_table(f"{ns}.t", schema=KEYED, partition_spec=spec)
    rows = [dict(zip(NAMES, r, strict=True)) for r in rows_of(range(3))]
    t.append(pa.Table.from_pylist(rows, schema=t.schema().as_arrow()))
    keyed = [i64(False), string(), fp64()]
    with pytest.raises(UnsupportedFeatureError) as info:
        run(lake, catalogs, ddl_plan(ddl_rel(ns, D.DDL_OP_ALTER, ["amount"], keyed[2:])))
    assert "dropping column 'id': it is an identifier field" in info.value.message
    assert "dropping column 'name': it is the source of partition field 'by_name' (identity)" in info.value.message
    assert lake.catalog.load_table(f"{ns}.t").schema() == t.schema()
    report = run(lake, catalogs, ddl_plan(ddl_rel(ns, D.DDL_OP_ALTER, NAMES[:2], keyed[:2])))
    assert report.steps[0].details == {"dropped": ["amount"]}
    assert [f.name for f in lake.catalog.load_table(f"{ns}.t").schema().fields] == ["id", "name"]
    assert content(lake, ns) == spark_rows(lake, ns) == [(i, f"n{i}") for i in range(3)]


def with_defaults(rel, *values):
    rel.ddl.table_defaults.fields.extend(values)
    return rel


def test_null_defaults_are_accepted_and_other_defaults_refused_before_any_change(lake, catalogs, ns):
    from plan_builder import literal
    from substrait_spark.consumer.analysis.analyze import validate_plan

    nulls = with_defaults(ddl_rel(ns, D.DDL_OP_CREATE, NAMES, TYPES), *[literal(None, t) for t in TYPES])
    assert validate_plan(ddl_plan(nulls)) == []
    run(lake, catalogs, ddl_plan(nulls))  # NULL is every Iceberg column's default already
    assert [f.name for f in lake.catalog.load_table(f"{ns}.t").schema().fields] == NAMES
    defaults = [literal(None, i64()), literal(None, string()), literal(None, fp64()), literal(7, i64())]
    alter = with_defaults(ddl_rel(ns, D.DDL_OP_ALTER, [*NAMES, "extra"], [*TYPES, i64()]), *defaults)
    create = with_defaults(
        ddl_rel(ns, D.DDL_OP_CREATE, NAMES, TYPES, name="u"), literal(None, i64()), literal("x"), literal(None, fp64())
    )
    for plan, at, column in [(ddl_plan(alter), 3, "extra"), (ddl_plan(create), 1, "name")]:
        with pytest.raises(UnsupportedFeatureError, match="format v3 tables only") as info:
            run(lake, catalogs, plan)
        assert info.value.path == f"relations[0].root.input.ddl.table_defaults.fields[{at}]"
        assert f"['{column}']" in info.value.message and info.value.report.steps == []
        assert [f.path for f in validate_plan(plan)] == [info.value.path]
    assert [f.name for f in lake.catalog.load_table(f"{ns}.t").schema().fields] == NAMES
    assert not lake.catalog.table_exists(f"{ns}.u")
    short = with_defaults(ddl_rel(ns, D.DDL_OP_CREATE, NAMES, TYPES, name="u"), literal(None, i64()))
    with pytest.raises(PlanInvalidError, match="table_defaults has 1 values, table_schema 3 columns"):
        run(lake, catalogs, ddl_plan(short))


def test_validate_accepts_writes_and_names_what_is_refused(ns):
    from substrait_spark.consumer.analysis.analyze import validate_plan
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
