"""DdlRel on views: the definition is kept in the Iceberg catalog (a view version whose representation holds the
Substrait plan), later plans read the view through NamedTable, and every op is a tracked, retry-safe step.
Checked through the catalog itself (the view row and its metadata file), Spark's Iceberg catalog and reads."""

from __future__ import annotations

import json

import pytest
from plan_builder import DdlRel, PlanBuilder, WriteRel, ddl, field, filter_, fp64, lit, named, string, write
from sqlalchemy import text
from substrait.plan_pb2 import Plan
from substrait_spark.consumer.errors import ExecutionError, PlanInvalidError, ResolutionError
from substrait_spark.consumer.records import plain
from substrait_spark.consumer.running.steps.log import KEY_PROPERTY
from substrait_spark.hooks.iceberg_views import SUBSTRAIT_DIALECT, views_of
from test_write_steps import NAMES, TYPES, catalogs_fixture, ns_fixture, rows_of, run, table  # noqa: F401

pytestmark = [pytest.mark.spark, pytest.mark.iceberg]

D = DdlRel


def view_rel(ns, op, definition=None, name="v", names=NAMES, types=TYPES):
    return ddl([ns, name], op, D.DDL_OBJECT_VIEW, names if definition is not None else (), types, definition)


def big_amounts(ns, b: PlanBuilder, source="t", above=2.0):
    """SELECT * FROM source WHERE amount > above."""
    return filter_(named([ns, source], NAMES, TYPES), b.call("gt", field(2), lit(above, fp64())))


def plan(b: PlanBuilder, *rels, names=NAMES):
    return b.plan(rels[0], names, more=[(r, names) for r in rels[1:]])


def read_view(lake, catalogs, ns, name="v"):
    """A later plan reading the view through NamedTable: its rows and run report."""
    report = run(lake, catalogs, plan(PlanBuilder(), named([ns, name], NAMES, TYPES)))
    return sorted(tuple(r) for r in report.outputs[0].preview), report


def catalog_row(lake, ns, name="v"):
    with lake.catalog.engine.connect() as conn:
        return conn.execute(
            text(
                "SELECT iceberg_type, metadata_location FROM iceberg_tables "
                "WHERE catalog_name = :c AND table_namespace = :n AND table_name = :t"
            ),
            {"c": lake.catalog.name, "n": ns, "t": name},
        ).one_or_none()


def test_create_view_keeps_the_substrait_plan_in_the_catalog_and_a_later_plan_reads_it(lake, catalogs, ns):
    table(lake, ns, range(4))
    b = PlanBuilder()
    report = run(lake, catalogs, plan(b, view_rel(ns, D.DDL_OP_CREATE, big_amounts(ns, b))), run_key="dag/r/v")
    step = report.steps[0]
    assert (step.kind, step.target, step.status) == ("create_view", f"{lake.name}.{ns}.v", "committed")
    assert (step.snapshot_before, step.snapshot_after) == (None, 1)

    # In the catalog: a VIEW row (as Iceberg's JdbcCatalog keeps views) pointing at view metadata whose one
    # representation is the Substrait plan, with the step's key in the version summary.
    kind, location = catalog_row(lake, ns)
    assert kind == "VIEW" and location.endswith(".metadata.json")
    stored = views_of(lake.catalog).load((ns, "v"))
    version = stored.metadata.versions[0]
    assert stored.dialects == (SUBSTRAIT_DIALECT,) and version.summary[KEY_PROPERTY] == "dag/r/v/0/000000000000/step-0"
    definition = Plan()
    from google.protobuf import json_format

    json_format.Parse(stored.definition, definition)
    assert list(definition.relations[0].root.names) == NAMES
    assert definition.relations[0].root.input.filter.input.read.named_table.names == [ns, "t"]
    assert [f.name for f in stored.metadata.schemas[0].fields] == NAMES
    # pyiceberg's table listing does not take the view for a table; Spark's Iceberg catalog lists it as a view.
    assert [t[-1] for t in lake.catalog.list_tables(ns)] == ["t"]
    shown = lake.spark.sql(f"SHOW VIEWS IN {lake.name}.{ns}").collect()  # temp views of other tests too
    assert [r.viewName for r in shown if not r.isTemporary] == ["v"]

    rows, later = read_view(lake, catalogs, ns)
    assert rows == rows_of([2, 3])
    read = {t["identity"]: t for t in plain(later.tables_read)}
    assert read[f"{lake.name}.{ns}.v"]["view_version"] == 1
    assert (
        read[f"{lake.name}.{ns}.t"]["snapshot_id"] == lake.catalog.load_table(f"{ns}.t").current_snapshot().snapshot_id
    )

    # A view is not materialised: new rows in the table show through it.
    lake.catalog.load_table(f"{ns}.t").append(table_rows(lake, ns, [7]))
    assert read_view(lake, catalogs, ns)[0] == rows_of([2, 3, 7])


def table_rows(lake, ns, ids):
    import pyarrow as pa

    schema = lake.catalog.load_table(f"{ns}.t").schema().as_arrow()
    return pa.Table.from_pylist([dict(zip(NAMES, r, strict=True)) for r in rows_of(ids)], schema=schema)


def test_create_view_is_skipped_on_retry_and_refused_when_it_exists(lake, catalogs, ns):
    table(lake, ns)
    b = PlanBuilder()
    p = plan(b, view_rel(ns, D.DDL_OP_CREATE, big_amounts(ns, b)))
    run(lake, catalogs, p, run_key="dag/r/c")
    again = run(lake, catalogs, p, run_key="dag/r/c")
    assert again.steps[0].status == "skipped" and "view version 1" in again.steps[0].reason
    with pytest.raises(ExecutionError, match="already exists"):
        run(lake, catalogs, p, run_key="dag/r/other")
    assert len(views_of(lake.catalog).load((ns, "v")).metadata.versions) == 1


def test_create_or_replace_and_alter_add_versions_and_readers_see_the_newest(lake, catalogs, ns):
    table(lake, ns, range(5))
    b = PlanBuilder()
    run(lake, catalogs, plan(b, view_rel(ns, D.DDL_OP_CREATE_OR_REPLACE, big_amounts(ns, b, above=5.0))))
    assert read_view(lake, catalogs, ns)[0] == rows_of([4])
    report = run(lake, catalogs, plan(b, view_rel(ns, D.DDL_OP_CREATE_OR_REPLACE, big_amounts(ns, b, above=3.0))))
    assert (report.steps[0].snapshot_before, report.steps[0].snapshot_after) == (1, 2)
    assert read_view(lake, catalogs, ns)[0] == rows_of([3, 4])
    run(lake, catalogs, plan(b, view_rel(ns, D.DDL_OP_ALTER, big_amounts(ns, b, above=-1.0))))
    assert read_view(lake, catalogs, ns)[0] == rows_of(range(5))
    stored = views_of(lake.catalog).load((ns, "v"))
    assert [v.version_id for v in stored.metadata.versions] == [1, 2, 3] and stored.version_id == 3
    with pytest.raises(ExecutionError, match="does not exist"):
        run(lake, catalogs, plan(b, view_rel(ns, D.DDL_OP_ALTER, big_amounts(ns, b), name="missing")))


def test_drop_and_drop_if_exist_view(lake, catalogs, ns):
    table(lake, ns)
    b = PlanBuilder()
    run(lake, catalogs, plan(b, view_rel(ns, D.DDL_OP_CREATE, big_amounts(ns, b))))
    report = run(lake, catalogs, plan(b, view_rel(ns, D.DDL_OP_DROP), view_rel(ns, D.DDL_OP_DROP_IF_EXIST), names=[]))
    assert [(s.kind, s.status) for s in report.steps] == [("drop_view", "committed"), ("drop_if_exist_view", "skipped")]
    assert catalog_row(lake, ns) is None and lake.catalog.table_exists(f"{ns}.t")
    with pytest.raises(ResolutionError, match="not found"):
        read_view(lake, catalogs, ns)
    with pytest.raises(ExecutionError, match="does not exist"):
        run(lake, catalogs, plan(b, view_rel(ns, D.DDL_OP_DROP), names=[]))


def test_a_retried_view_drop_finds_its_own_earlier_commit(lake, catalogs, ns):
    table(lake, ns)
    b = PlanBuilder()
    run(lake, catalogs, plan(b, view_rel(ns, D.DDL_OP_CREATE, big_amounts(ns, b))))
    drop = plan(b, view_rel(ns, D.DDL_OP_DROP), names=[])
    assert run(lake, catalogs, drop, run_key="dag/r/dv").steps[0].status == "committed"
    again = run(lake, catalogs, drop, run_key="dag/r/dv").steps[0]
    assert again.status == "skipped" and "drop record" in again.reason
    with pytest.raises(ExecutionError, match="does not exist"):
        run(lake, catalogs, drop, run_key="dag/r/other")


def test_a_view_defined_and_read_in_the_same_plan(lake, catalogs, ns):
    table(lake, ns, range(4))
    b = PlanBuilder()
    define = view_rel(ns, D.DDL_OP_CREATE, big_amounts(ns, b))
    copy = write([ns, "copy"], named([ns, "v"], NAMES, TYPES), NAMES, TYPES, op=WriteRel.WRITE_OP_CTAS)
    report = run(lake, catalogs, plan(b, define, copy))
    assert [s.kind for s in report.steps] == ["create_view", "ctas"]
    assert sorted(tuple(r.values()) for r in lake.catalog.load_table(f"{ns}.copy").scan().to_arrow().to_pylist()) == (
        rows_of([2, 3])
    )


def test_view_steps_never_touch_a_table_of_the_same_name(lake, catalogs, ns):
    before = table(lake, ns, name="v").current_snapshot().snapshot_id
    b = PlanBuilder()
    table(lake, ns)
    for op in (D.DDL_OP_CREATE, D.DDL_OP_CREATE_OR_REPLACE):
        with pytest.raises(ExecutionError, match="is a table, not a view"):
            run(lake, catalogs, plan(b, view_rel(ns, op, big_amounts(ns, b))))
    with pytest.raises(ExecutionError, match="is a table, not a view"):
        run(lake, catalogs, plan(b, view_rel(ns, D.DDL_OP_DROP), names=[]))
    assert lake.catalog.load_table(f"{ns}.v").current_snapshot().snapshot_id == before
    assert catalog_row(lake, ns)[0] in ("TABLE", None)


def test_a_definition_that_does_not_fit_or_cannot_stand_alone_is_refused_before_any_commit(lake, catalogs, ns):
    table(lake, ns)
    b = PlanBuilder()
    wrong_types = view_rel(ns, D.DDL_OP_CREATE, big_amounts(ns, b), types=[string(), string(), fp64()])
    with pytest.raises(PlanInvalidError, match="does not fit the table_schema") as info:
        run(lake, catalogs, plan(b, wrong_types))
    assert info.value.path.endswith("ddl.view_definition")
    writes = write([ns, "t"], big_amounts(ns, b), NAMES, TYPES)
    with pytest.raises(PlanInvalidError, match="cannot hold a write"):
        run(lake, catalogs, plan(b, view_rel(ns, D.DDL_OP_CREATE, writes)))
    missing = view_rel(ns, D.DDL_OP_CREATE, named([ns, "nope"], NAMES, TYPES))
    with pytest.raises(ResolutionError, match="nope"):
        run(lake, catalogs, plan(b, missing))
    assert catalog_row(lake, ns) is None


def test_a_view_reading_itself_is_refused_when_read(lake, catalogs, ns):
    table(lake, ns, range(4))
    b = PlanBuilder()
    run(lake, catalogs, plan(b, view_rel(ns, D.DDL_OP_CREATE, big_amounts(ns, b))))
    # Replacing v by a filter over v is accepted (it reads v's first version when defined) but v now reads v.
    run(lake, catalogs, plan(b, view_rel(ns, D.DDL_OP_CREATE_OR_REPLACE, big_amounts(ns, b, source="v"))))
    with pytest.raises(PlanInvalidError, match=r"reads itself: .*\.v -> .*\.v") as info:
        read_view(lake, catalogs, ns)
    assert info.value.path == "relations[0].root.input.read.named_table"


def test_a_view_without_a_substrait_representation_is_named_with_its_dialects(lake, catalogs, ns):
    table(lake, ns)
    lake.spark.sql(f"CREATE VIEW {lake.name}.{ns}.sv AS SELECT id, name, amount FROM {lake.name}.{ns}.t")
    with pytest.raises(ResolutionError, match=r"has no Substrait definition \(its representations: spark\)"):
        read_view(lake, catalogs, ns, name="sv")


def test_view_definition_text_is_plain_json(lake, catalogs, ns):
    table(lake, ns)
    b = PlanBuilder()
    run(lake, catalogs, plan(b, view_rel(ns, D.DDL_OP_CREATE, big_amounts(ns, b))))
    doc = json.loads(views_of(lake.catalog).load((ns, "v")).definition)
    assert doc["version"] and doc["extensions"] and doc["relations"][0]["root"]["names"] == NAMES
