"""WriteRel on real Iceberg tables as run steps: INSERT, DELETE, UPDATE, CTAS, every create mode and output mode,
checked through pyiceberg's snapshots as well as Spark; the run report's steps; retries skip committed steps;
a failing step leaves its table as it was."""

from __future__ import annotations

import pyarrow as pa
import pytest
from iceberg_stack import Lake  # fixtures `iceberg_spark` and `lake` come from conftest (one per session)
from plan_builder import (
    PlanBuilder,
    WriteRel,
    aggregate,
    cast,
    field,
    filter_,
    fp64,
    i64,
    lit,
    named,
    project,
    sorted_rows,
    string,
    virtual,
    write,
)
from pyiceberg.schema import Schema
from pyiceberg.types import DoubleType, LongType, NestedField, StringType
from substrait_spark.consumer.errors import (
    ExecutionError,
    PlanInvalidError,
    ResolutionError,
    SubstraitSparkError,
    UnsupportedFeatureError,
)
from substrait_spark.consumer.loading.loader import LoadedPlan
from substrait_spark.consumer.running.runner import run_loaded
from substrait_spark.consumer.running.sinks import Sink
from substrait_spark.consumer.running.steps.log import KEY_PROPERTY
from substrait_spark.consumer.running.steps.update_key import UPDATE_KEY_FIELD, enhancement
from substrait_spark.hooks.iceberg import Catalogs
from substrait_spark.hooks.iceberg_writes import WritableIcebergResolver
from substrait_spark.hooks.spark import job_group

pytestmark = [pytest.mark.spark, pytest.mark.iceberg]

NAMES = ["id", "name", "amount"]
TYPES = [i64(), string(), fp64()]
ARROW = pa.schema([("id", pa.int64()), ("name", pa.string()), ("amount", pa.float64())])
KEYED = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "name", StringType(), required=False),
    NestedField(3, "amount", DoubleType(), required=False),
    identifier_field_ids=[1],
)
W = WriteRel
SLOT_SHA = "0/000000000000"  # in a step key: slot 0, the first digits of the sha256 `run` gives every plan


@pytest.fixture(scope="module", name="catalogs")
def catalogs_fixture(lake: Lake) -> Catalogs:
    return lake.catalogs()


@pytest.fixture(name="ns")
def ns_fixture(lake: Lake, request) -> str:
    name = "w_" + request.node.name.replace("[", "_").replace("]", "").replace("-", "_")[:60].lower()
    lake.catalog.create_namespace_if_not_exists(name)
    return name


def rows_of(ids, names=None) -> list[tuple]:
    return [(i, (names or {}).get(i, f"n{i}"), i * 1.5) for i in ids]


def table(lake: Lake, ns: str, ids=range(3), schema=ARROW, name: str = "t"):
    t = lake.catalog.create_table(f"{ns}.{name}", schema=schema)
    if ids:
        t.append(
            pa.Table.from_pylist([dict(zip(NAMES, r, strict=True)) for r in rows_of(ids)], schema=t.schema().as_arrow())
        )
    return lake.catalog.load_table(f"{ns}.{name}")


def values(rows) -> object:
    return virtual(NAMES, TYPES, rows)


def run(lake, catalogs, plan, run_key=None, update_keys=None):
    loaded = LoadedPlan(plan, None, "0" * 64, "binary", plan.version.producer, None)
    resolver = WritableIcebergResolver(catalogs)
    sink = Sink("preview", max_rows=None)
    return run_loaded(loaded, lake.spark, resolver, sink=sink, run_key=run_key, update_keys=update_keys)


def plan_of(*rels, names=NAMES, b: PlanBuilder | None = None):
    b = b or PlanBuilder()
    return b.plan(rels[0], names, more=[(r, names) for r in rels[1:]])


def content(lake, ns, name="t") -> list[tuple]:
    """The table's rows as pyiceberg reads its current snapshot."""
    return sorted_rows(tuple(r.values()) for r in lake.catalog.load_table(f"{ns}.{name}").scan().to_arrow().to_pylist())


def spark_rows(lake, ns, name="t") -> list[tuple]:
    return sorted_rows(lake.spark.read.format("iceberg").load(f"{lake.name}.{ns}.{name}").collect())


def snapshots(lake, ns, name="t"):
    return lake.catalog.load_table(f"{ns}.{name}").snapshots()


def step_dict(report, i=0) -> dict:
    return report.to_dict()["steps"][i]


# --- INSERT ------------------------------------------------------------------------------------------------


def test_insert_appends_in_one_commit_carrying_its_key(lake, catalogs, ns):
    before = table(lake, ns).current_snapshot().snapshot_id
    report = run(lake, catalogs, plan_of(write([ns, "t"], values(rows_of([7, 8])), NAMES, TYPES)), run_key="d/r/t")
    assert content(lake, ns) == spark_rows(lake, ns) == rows_of([0, 1, 2, 7, 8])
    snaps = snapshots(lake, ns)
    assert len(snaps) == 2 and snaps[-1].summary.operation.value == "append"
    assert snaps[-1].summary.additional_properties[KEY_PROPERTY] == f"d/r/t/{SLOT_SHA}/step-0"
    step = step_dict(report)
    assert step["kind"] == "insert" and step["status"] == "committed" and step["rows"] == 2
    assert step["target"] == f"{lake.name}.{ns}.t" and step["path"] == "relations[0].root.input.write"
    assert (step["snapshot_before"], step["snapshot_after"]) == (before, snaps[-1].snapshot_id)
    assert step["idempotency_key"] == f"d/r/t/{SLOT_SHA}/step-0" and step["duration_s"] >= 0
    assert report.outputs[0].rows == 0  # NO_OUTPUT: the table's columns, no rows


def test_a_write_runs_the_jobs_of_spark_sqls_insert_and_no_more(lake, catalogs, ns):
    """A NO_OUTPUT root holds no rows: the run counts them without a job, so an INSERT plan costs the Spark jobs
    of Spark SQL's own INSERT of the same rows."""
    table(lake, ns, name="ours")
    table(lake, ns, name="sql")
    tracker = lake.spark.sparkContext.statusTracker()
    with job_group(lake.spark, f"sql-{ns}"):
        lake.spark.sql(f"INSERT INTO {lake.name}.{ns}.sql VALUES (7, 'n7', 10.5)")
    sql_jobs = len(tracker.getJobIdsForGroup(f"sql-{ns}"))
    assert sql_jobs >= 1
    plan = plan_of(write([ns, "ours"], values(rows_of([7])), NAMES, TYPES))
    loaded = LoadedPlan(plan, None, "0" * 64, "binary", plan.version.producer, None)
    for i, sink in enumerate((Sink(), Sink("preview", max_rows=None), Sink("preview", max_rows=5))):
        with job_group(lake.spark, f"ours-{ns}-{i}"):
            report = run_loaded(loaded, lake.spark, WritableIcebergResolver(catalogs), sink=sink)
        assert report.outputs[0].rows == 0
        assert report.outputs[0].preview == ([] if sink.kind == "preview" else None)
        assert len(tracker.getJobIdsForGroup(f"ours-{ns}-{i}")) == sql_jobs, sink
    assert content(lake, ns, "ours") == rows_of([0, 1, 2, 7, 7, 7])


def test_insert_modified_records_reach_the_parent(lake, catalogs, ns):
    table(lake, ns)
    b = PlanBuilder()
    w = write([ns, "t"], values(rows_of([5, 6, 9])), NAMES, TYPES, output=W.OUTPUT_MODE_MODIFIED_RECORDS)
    plan = b.plan(aggregate(w, measures=[b.agg("count", field(0), out=i64(False))]), ["n"])
    report = run(lake, catalogs, plan)
    assert report.outputs[0].preview == [[3]]
    assert step_dict(report)["rows"] == 3
    assert len(content(lake, ns)) == 6


def test_insert_reading_the_target_sees_the_snapshot_before_it(lake, catalogs, ns):
    table(lake, ns)
    b = PlanBuilder()
    shifted = project(
        named([ns, "t"], NAMES, TYPES),
        b.call("add", field(0), lit(10, i64()), out=i64()),
        field(1),
        field(2),
        emit=[3, 4, 5],
    )
    report = run(
        lake, catalogs, b.plan(write([ns, "t"], shifted, NAMES, TYPES, output=W.OUTPUT_MODE_MODIFIED_RECORDS), NAMES)
    )
    assert sorted(r[0] for r in content(lake, ns)) == [0, 1, 2, 10, 11, 12]
    assert sorted(r[0] for r in report.outputs[0].preview) == [10, 11, 12]


def test_table_schema_is_checked_against_the_table_and_the_input(lake, catalogs, ns):
    t = table(lake, ns)
    snap = t.current_snapshot().snapshot_id
    wrong = write([ns, "t"], virtual(["id", "nom"], [i64(), string()], [(1, "x")]), ["id", "nom"], [i64(), string()])
    with pytest.raises(ResolutionError, match=r"column 'nom' missing; column 'name' is not in .*'amount' is not in"):
        run(lake, catalogs, plan_of(wrong, names=["id", "nom"]))
    narrow = write([ns, "t"], virtual(["id"], [i64()], [(1,)]), NAMES, TYPES)
    with pytest.raises(PlanInvalidError, match="the input has 1 columns, table_schema 3"):
        run(lake, catalogs, plan_of(narrow))
    assert lake.catalog.load_table(f"{ns}.t").current_snapshot().snapshot_id == snap


# --- DELETE ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("output", [W.OUTPUT_MODE_NO_OUTPUT, W.OUTPUT_MODE_MODIFIED_RECORDS])
def test_delete_by_predicate_over_the_same_table(lake, catalogs, ns, output):
    t = table(lake, ns, range(6))
    before = t.current_snapshot().snapshot_id
    b = PlanBuilder()
    doomed = filter_(named([ns.upper(), "T"], NAMES, TYPES), b.call("gt", field(0), lit(2, i64()), out=None))
    report = run(
        lake, catalogs, plan_of(write([ns, "t"], doomed, NAMES, TYPES, op=W.WRITE_OP_DELETE, output=output), b=b)
    )
    assert content(lake, ns) == spark_rows(lake, ns) == rows_of(range(3))
    last = snapshots(lake, ns)[-1]
    assert last.summary.operation.value in ("overwrite", "delete") and last.parent_snapshot_id == before
    step = step_dict(report)
    assert (step["kind"], step["rows"], step["snapshot_before"]) == ("delete", 3, before)
    expected = rows_of(range(3, 6)) if output == W.OUTPUT_MODE_MODIFIED_RECORDS else []
    assert sorted_rows(report.outputs[0].preview) == expected


def test_delete_of_other_rows_is_null_safe(lake, catalogs, ns):
    t = table(lake, ns, range(4))
    t.append(pa.Table.from_pylist([{"id": 9, "name": None, "amount": None}], schema=ARROW))
    doomed = values([(9, None, None), (1, "n1", 1.5), (5, "n5", 7.5)])
    report = run(lake, catalogs, plan_of(write([ns, "t"], doomed, NAMES, TYPES, op=W.WRITE_OP_DELETE)))
    assert content(lake, ns) == rows_of([0, 2, 3])
    assert step_dict(report)["rows"] == 2


# --- UPDATE ------------------------------------------------------------------------------------------------


def test_update_matches_after_images_by_identifier_fields(lake, catalogs, ns):
    table(lake, ns, range(4), schema=KEYED)
    after = values([(1, "one", 100.0), (3, "three", 300.0), (42, "nobody", 0.0)])
    w = write(
        [ns, "t"],
        after,
        NAMES,
        [i64(False), string(), fp64()],
        op=W.WRITE_OP_UPDATE,
        output=W.OUTPUT_MODE_MODIFIED_RECORDS,
    )
    report = run(lake, catalogs, plan_of(w))
    assert (
        content(lake, ns)
        == spark_rows(lake, ns)
        == [(0, "n0", 0.0), (1, "one", 100.0), (2, "n2", 3.0), (3, "three", 300.0)]
    )
    assert step_dict(report)["rows"] == 2
    assert sorted_rows(report.outputs[0].preview) == [(1, "one", 100.0), (3, "three", 300.0)]


def test_update_without_a_key_is_refused_and_changes_nothing(lake, catalogs, ns):
    snap = table(lake, ns).current_snapshot().snapshot_id
    w = write([ns, "t"], values(rows_of([1])), NAMES, TYPES, op=W.WRITE_OP_UPDATE)
    with pytest.raises(UnsupportedFeatureError, match="no identifier fields") as info:
        run(lake, catalogs, plan_of(w))
    assert info.value.path == "relations[0].root.input.write.op"
    for way in ("update_keys", "--update-key", UPDATE_KEY_FIELD, "advanced_extension", "identifier fields"):
        assert way in info.value.message
    assert info.value.report.steps[0].status == "failed"
    assert lake.catalog.load_table(f"{ns}.t").current_snapshot().snapshot_id == snap


def keyed_update(ns: str, after, plan_key=None, op=W.WRITE_OP_UPDATE):
    """An UPDATE write of `after` into ns.t (id required, as KEYED has it), naming `plan_key` in its enhancement."""
    w = write([ns, "t"], values(after), NAMES, [i64(False), string(), fp64()], op=op)
    if plan_key is not None:
        w.write.advanced_extension.CopyFrom(enhancement(plan_key))
    return plan_of(w)


# After-image (7, "n2", 100.0): by `id` it matches nothing, by `name` it replaces row 2.
BY_ID = (0, rows_of(range(4)))
BY_NAME = (1, [*rows_of([0, 1, 3]), (7, "n2", 100.0)])


@pytest.mark.parametrize(
    ("caller", "plan_key", "source", "outcome"),
    [
        (None, None, "identifier fields", BY_ID),
        (None, ["NAME"], "plan", BY_NAME),
        ({"{ns}.t": ["id"]}, ["name"], "caller", BY_ID),
        ({"LAKE.{ns}.T": "name"}, ["id"], "caller", BY_NAME),
    ],
    ids=["identifier-fields", "plan", "caller-over-plan", "caller-by-identity"],
)
def test_update_key_precedence(lake, catalogs, ns, caller, plan_key, source, outcome):
    """The caller's key, else the plan's, else the table's identifier fields."""
    table(lake, ns, range(4), schema=KEYED)
    keys = {k.format(ns=ns): v for k, v in caller.items()} if caller else None
    report = run(lake, catalogs, keyed_update(ns, [(7, "n2", 100.0)], plan_key), update_keys=keys)
    rows, expected = outcome
    assert content(lake, ns) == spark_rows(lake, ns) == expected
    step = step_dict(report)
    assert (step["status"], step["rows"], step["details"]["update_key_source"]) == ("committed", rows, source)
    assert step["details"]["update_key"] == ["id" if outcome is BY_ID else "name"]


def test_update_by_the_plans_key_on_a_table_without_identifier_fields(lake, catalogs, ns):
    from substrait_spark.consumer.analysis.analyze import validate_plan

    table(lake, ns, range(4))
    after = [(1, "one", 100.0), (3, "three", 300.0)]
    plan = plan_of(write([ns, "t"], values(after), NAMES, TYPES, op=W.WRITE_OP_UPDATE))
    plan.relations[0].root.input.write.advanced_extension.CopyFrom(enhancement(["id"]))
    assert validate_plan(plan) == []  # the enhancement is consumed, not refused
    report = run(lake, catalogs, plan)
    assert content(lake, ns) == [(0, "n0", 0.0), (1, "one", 100.0), (2, "n2", 3.0), (3, "three", 300.0)]
    assert step_dict(report)["details"] == {"update_key": ["id"], "update_key_source": "plan"}
    assert step_dict(report)["rows"] == 2


def _struct_enhancement(**fields) -> object:
    from google.protobuf.struct_pb2 import Struct
    from substrait.extensions.extensions_pb2 import AdvancedExtension

    struct, ext = Struct(), AdvancedExtension()
    struct.update(fields)
    ext.enhancement.Pack(struct)
    return ext


def _with_extension(plan, ext):
    plan.relations[0].root.input.write.advanced_extension.CopyFrom(ext)
    return plan


WRITE = "relations[0].root.input.write"


@pytest.mark.parametrize(
    ("make", "error", "path", "message", "validate"),
    [
        (
            lambda ns: keyed_update(ns, rows_of([1]), ["id", "nope"]),
            PlanInvalidError,
            f"{WRITE}.advanced_extension.enhancement",
            r"key column\(s\) \['nope'\] from the plan's 'substrait_spark.update_key'",
            "clean",
        ),
        (
            lambda ns: _with_extension(keyed_update(ns, rows_of([1])), _struct_enhancement(other=["id"])),
            UnsupportedFeatureError,
            f"{WRITE}.advanced_extension",
            "advanced extension enhancement",
            "finding",
        ),
        (
            lambda ns: _with_extension(
                keyed_update(ns, rows_of([1])), _struct_enhancement(**{UPDATE_KEY_FIELD: ["id"], "mode": "x"})
            ),
            UnsupportedFeatureError,
            f"{WRITE}.advanced_extension.enhancement",
            r"field\(s\) \['mode'\] beside",
            "finding",
        ),
        (
            lambda ns: _with_extension(keyed_update(ns, rows_of([1])), _struct_enhancement(**{UPDATE_KEY_FIELD: "id"})),
            PlanInvalidError,
            f"{WRITE}.advanced_extension.enhancement",
            "must be a non-empty list of column names",
            "raises",
        ),
        (
            lambda ns: keyed_update(ns, rows_of([9]), ["id"], op=W.WRITE_OP_INSERT),
            UnsupportedFeatureError,
            f"{WRITE}.advanced_extension.enhancement",
            "on a WRITE_OP_INSERT write",
            "finding",
        ),
    ],
    ids=["unknown-column", "unknown-enhancement", "extra-field", "not-a-list", "on-insert"],
)
def test_unusable_plan_update_keys(lake, catalogs, ns, make, error, path, message, validate):
    """Refused with the path, before anything changes; validate names what translation refuses."""
    from substrait_spark.consumer.analysis.analyze import validate_plan

    snap = table(lake, ns, range(3), schema=KEYED).current_snapshot().snapshot_id
    plan = make(ns)
    with pytest.raises(error, match=message) as info:
        run(lake, catalogs, plan)
    assert info.value.path == path
    assert lake.catalog.load_table(f"{ns}.t").current_snapshot().snapshot_id == snap
    if validate == "raises":  # malformed: validate says so as translation does
        with pytest.raises(PlanInvalidError):
            validate_plan(plan)
        return
    findings = [f.path for f in validate_plan(plan)]
    assert findings == ([path] if validate == "finding" else [])  # only a catalog knows the table's columns


def test_a_callers_key_column_the_table_lacks_is_refused(lake, catalogs, ns):
    snap = table(lake, ns, range(3)).current_snapshot().snapshot_id
    plan = plan_of(write([ns, "t"], values(rows_of([1])), NAMES, TYPES, op=W.WRITE_OP_UPDATE))
    with pytest.raises(PlanInvalidError, match=r"\['ident'\] from the caller's update_keys") as info:
        run(lake, catalogs, plan, update_keys={f"{lake.name}.{ns}.t": ["ident"]})
    assert info.value.path == f"{WRITE}.table_schema"
    assert lake.catalog.load_table(f"{ns}.t").current_snapshot().snapshot_id == snap


def test_cli_update_key_option(lake, catalogs, ns, tmp_path, capsys):
    """`run --update-key TABLE=col`: the CLI's key reaches the UPDATE step."""
    import json

    from google.protobuf import json_format
    from substrait_spark.cli import main

    table(lake, ns, range(3))
    plan = tmp_path / "update.json"
    update = plan_of(write([ns, "t"], values([(2, "two", 20.0)]), NAMES, TYPES, op=W.WRITE_OP_UPDATE))
    plan.write_text(json.dumps(json_format.MessageToDict(update)))
    config, out = lake.write_config(tmp_path / "catalogs.yaml"), tmp_path / "out"
    args = ["run", str(plan), "--catalog-config", str(config), "--output-dir", str(out)]
    assert main([*args, "--update-key", f"{ns}.t=id"]) == 0, capsys.readouterr().err
    step = json.loads((out / "summary.json").read_text())["plans"][0]["steps"][0]
    assert step["details"] == {"update_key": ["id"], "update_key_source": "caller"} and step["rows"] == 1
    assert content(lake, ns) == [(0, "n0", 0.0), (1, "n1", 1.5), (2, "two", 20.0)]
    assert main(args) == 3  # no key at all: unsupported
    assert "--update-key" in capsys.readouterr().err


# --- CTAS --------------------------------------------------------------------------------------------------

EXISTING = {
    W.CREATE_MODE_APPEND_IF_EXISTS: ("committed", rows_of([0, 1, 2, 7, 8])),
    W.CREATE_MODE_REPLACE_IF_EXISTS: ("committed", rows_of([7, 8])),
    W.CREATE_MODE_IGNORE_IF_EXISTS: ("skipped", rows_of([0, 1, 2])),
    W.CREATE_MODE_ERROR_IF_EXISTS: ("failed", rows_of([0, 1, 2])),
}


@pytest.mark.parametrize("exists", [False, True], ids=["new", "exists"])
@pytest.mark.parametrize("mode", list(EXISTING), ids=lambda m: W.CreateMode.Name(m).removeprefix("CREATE_MODE_"))
@pytest.mark.parametrize("output", [W.OUTPUT_MODE_NO_OUTPUT, W.OUTPUT_MODE_MODIFIED_RECORDS], ids=["none", "records"])
def test_ctas_with_every_create_mode(lake, catalogs, ns, exists, mode, output):
    if exists:
        table(lake, ns)
    w = write([ns, "t"], values(rows_of([7, 8])), NAMES, TYPES, op=W.WRITE_OP_CTAS, create_mode=mode, output=output)
    status, expected = EXISTING[mode] if exists else ("committed", rows_of([7, 8]))
    if status == "failed":
        with pytest.raises(ExecutionError, match="already exists") as info:
            run(lake, catalogs, plan_of(w))
        report = info.value.report
    else:
        report = run(lake, catalogs, plan_of(w))
    assert content(lake, ns) == spark_rows(lake, ns) == expected
    step = step_dict(report)
    assert (step["kind"], step["status"]) == ("ctas", status)
    current = lake.catalog.load_table(f"{ns}.t").current_snapshot().snapshot_id
    assert step["snapshot_after"] == current
    if status == "committed":
        assert step["rows"] == 2
        assert snapshots(lake, ns)[-1].summary.additional_properties[KEY_PROPERTY] == step["idempotency_key"]
        if output == W.OUTPUT_MODE_MODIFIED_RECORDS:
            assert sorted_rows(report.outputs[0].preview) == rows_of([7, 8])
    if status != "failed" and output == W.OUTPUT_MODE_NO_OUTPUT:
        assert report.outputs[0].preview == []


# --- steps, retries, failures -------------------------------------------------------------------------------


def pipeline(ns: str):
    """CTAS ns.s from values, INSERT into ns.t, DELETE from ns.t by predicate: three steps, three roots."""
    b = PlanBuilder()
    ctas = write([ns, "s"], values(rows_of([1, 2])), NAMES, TYPES, op=W.WRITE_OP_CTAS)
    insert = write([ns, "t"], values(rows_of([10, 11])), NAMES, TYPES)
    doomed = filter_(named([ns, "t"], NAMES, TYPES), b.call("lt", field(0), lit(2, i64()), out=None))
    delete = write([ns, "t"], doomed, NAMES, TYPES, op=W.WRITE_OP_DELETE)
    return b.plan(ctas, NAMES, more=[(insert, NAMES), (delete, NAMES)])


def test_steps_run_in_plan_order_and_later_steps_see_earlier_commits(lake, catalogs, ns):
    table(lake, ns)
    report = run(lake, catalogs, pipeline(ns), run_key="dag/run-1/task")
    assert [(s.index, s.kind, s.status, s.rows) for s in report.steps] == [
        (0, "ctas", "committed", 2),
        (1, "insert", "committed", 2),
        (2, "delete", "committed", 2),
    ]
    assert report.steps[2].snapshot_before == report.steps[1].snapshot_after
    assert content(lake, ns) == rows_of([2, 10, 11]) and content(lake, ns, "s") == rows_of([1, 2])
    assert report.to_dict()["steps"][0]["target"] == f"{lake.name}.{ns}.s"


def test_a_retry_skips_the_steps_already_committed(lake, catalogs, ns):
    table(lake, ns)
    first = run(lake, catalogs, pipeline(ns), run_key="dag/run-1/task")
    history = [s.snapshot_id for s in snapshots(lake, ns)]
    again = run(lake, catalogs, pipeline(ns), run_key="dag/run-1/task")
    assert [s.status for s in again.steps] == ["skipped"] * 3
    assert all("already committed" in s.reason for s in again.steps)
    assert [s.snapshot_id for s in snapshots(lake, ns)] == history
    assert content(lake, ns) == rows_of([2, 10, 11]) and content(lake, ns, "s") == rows_of([1, 2])
    assert [s.snapshot_after for s in again.steps][1:] == [history[-1], history[-1]]
    with pytest.raises(ExecutionError, match="already exists") as info:  # another run key applies them again
        run(lake, catalogs, pipeline(ns), run_key="dag/run-2/task")
    assert [s.status for s in info.value.report.steps] == ["failed"] and first.status == "success"


def test_a_failing_step_leaves_its_table_as_it_was_and_earlier_steps_committed(lake, catalogs, ns):
    table(lake, ns)
    b = PlanBuilder()
    ok = write([ns, "t"], values(rows_of([5])), NAMES, TYPES)
    bad_rows = project(
        values(rows_of([6])), cast(lit("not a number"), i64(), throw=True), field(1), field(2), emit=[3, 4, 5]
    )
    bad = write([ns, "t"], bad_rows, NAMES, TYPES)
    with pytest.raises(SubstraitSparkError) as info:
        run(lake, catalogs, b.plan(ok, NAMES, more=[(bad, NAMES)]), run_key="dag/run-f/task")
    steps = info.value.report.steps
    assert [(s.kind, s.status) for s in steps] == [("insert", "committed"), ("insert", "failed")]
    assert steps[1].snapshot_before == steps[1].snapshot_after == steps[0].snapshot_after
    assert steps[1].path == "relations[1].root.input.write" and steps[1].reason
    assert content(lake, ns) == rows_of([0, 1, 2, 5])
    assert snapshots(lake, ns)[-1].snapshot_id == steps[0].snapshot_after


def test_writes_outside_a_run_are_refused(lake, catalogs, ns):
    from substrait_spark.consumer import to_dataframe

    table(lake, ns)
    plan = plan_of(write([ns, "t"], values(rows_of([5])), NAMES, TYPES))
    with pytest.raises(UnsupportedFeatureError, match="outside a run") as info:
        to_dataframe(plan, lake.spark, WritableIcebergResolver(catalogs))
    assert info.value.path == "relations[0].root.input.write"
    assert content(lake, ns) == rows_of(range(3))
