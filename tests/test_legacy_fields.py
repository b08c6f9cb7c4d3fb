"""Plans using the fields Substrait 0.108 removed still load, with a note, as the modern plan they mean.

Each case builds a modern plan, writes the same query in the old spelling (through the loader's superset
schema, which still has the removed fields), and checks that the old plan, as binary and as JSON, loads to
exactly the modern plan with the rule's note, and gives the same rows on Spark.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable

import pytest
from google.protobuf import json_format, text_format
from google.protobuf.message import Message
from plan_builder import (
    PlanBuilder,
    aggregate,
    cast,
    fetch,
    field,
    i32,
    i64,
    interval_day,
    lit,
    named,
    precision_timestamp,
    precision_timestamp_tz,
    project,
    run,
    sort,
    string,
    tuples,
    view,
    virtual,
)
from substrait import algebra_pb2 as alg
from substrait.plan_pb2 import Plan
from substrait_spark.consumer.errors import PlanInvalidError
from substrait_spark.consumer.loading.loader import LoadedPlan, parse_plan_bytes
from substrait_spark.consumer.loading.superset import SupersetPlan

# Each test carries its tier: `unit` (pure Python) or `spark`.

ROWS = [(1, "a", 10), (2, "b", 20), (2, "c", 30), (3, None, 40)]
ASC = alg.SortField.SORT_DIRECTION_ASC_NULLS_LAST
GITHUB = "https://github.com/substrait-io/substrait/blob/main/extensions/"


@pytest.fixture(autouse=True)
def _table_for_spark_tests(request):
    """The module's views for its Spark tests only: its `unit` tests start no Spark."""
    if request.node.get_closest_marker("unit") is None:
        request.getfixturevalue("table")


@pytest.fixture(scope="module")
def table(spark):
    view(spark, "legacy_t", "k int, s string, v int", ROWS)
    yield
    spark.catalog.dropTempView("legacy_t")


def t():
    return named("legacy_t", ["k", "s", "v"], [i32(), string(), i32()])


def old_form(plan: Plan) -> Message:
    """The plan as a superset message, to be rewritten into the removed fields' spelling."""
    return SupersetPlan.FromString(plan.SerializeToString())


def root_body(old: Message, *path: str) -> Message:
    """A message under the root relation, e.g. root_body(old, "fetch") or ("fetch", "input", "sort")."""
    m = old.relations[-1].root.input
    for name in path:
        m = getattr(m, name)
    return m


def loads(old: Message) -> tuple[LoadedPlan, LoadedPlan]:
    """The old plan loaded from binary and from JSON."""
    binary = parse_plan_bytes(old.SerializeToString())
    js = parse_plan_bytes(json_format.MessageToJson(old).encode())
    assert (binary.format, js.format) == ("binary", "json")
    return binary, js


def check(spark, modern: Plan, downgrade: Callable[[Message], None], *notes: str) -> None:
    """`downgrade` rewrites the modern plan into the old spelling; both formats load back to the modern plan,
    with the notes, and Spark gives the same rows."""
    old = old_form(modern)
    downgrade(old)
    assert old.SerializeToString() != modern.SerializeToString(), "the downgrade changed nothing"
    for loaded in loads(old):
        for note in notes:
            assert any(n.startswith(note) for n in loaded.notes), loaded.notes
        assert loaded.plan == modern, loaded.format
    expected = sorted(tuples(run(modern, spark).collect()), key=repr)
    got = sorted(tuples(run(loads(old)[0].plan, spark).collect()), key=repr)
    assert got == expected


def _uris(old: Message) -> None:
    for urn in old.extension_urns:
        stem = urn.urn.rpartition(":")[2]
        old.extension_uris.add(extension_uri_anchor=urn.extension_urn_anchor, uri=f"{GITHUB}{stem}.yaml")
    for decl in old.extensions:
        f = decl.extension_function
        f.extension_uri_reference, f.extension_urn_reference = f.extension_urn_reference, 0
    old.ClearField("extension_urns")


@pytest.mark.spark
def test_extension_uris(spark) -> None:
    b = PlanBuilder()
    modern = b.plan(project(t(), b.call("add", field(0), lit(1), out=i32()), emit=[3]), ["k1"])
    check(spark, modern, _uris, "extension_uris read as extension_urns")


@pytest.mark.unit
def test_other_extension_uris_keep_their_text() -> None:
    b = PlanBuilder()
    modern = b.plan(project(t(), b.call("add", field(0), lit(1), out=i32()), emit=[3]), ["k1"])
    old = old_form(modern)
    _uris(old)
    old.extension_uris[0].uri = "https://example.com/ext/functions_arithmetic.yaml"
    for loaded in loads(old):
        assert [u.urn for u in loaded.plan.extension_urns] == ["https://example.com/ext/functions_arithmetic.yaml"]
        assert loaded.plan.extensions[0].extension_function.extension_urn_reference == 1


@pytest.mark.unit
def test_isthmus_relative_uris_are_the_standard_extensions() -> None:
    b = PlanBuilder()
    modern = b.plan(project(t(), b.call("add", field(0), lit(1), out=i32()), emit=[3]), ["k1"])
    old = old_form(modern)
    _uris(old)
    old.extension_uris[0].uri = "/functions_arithmetic.yaml"
    assert parse_plan_bytes(old.SerializeToString()).plan == modern


@pytest.mark.spark
@pytest.mark.parametrize(
    "offset, count, note",
    [(1, 2, "FetchRel.offset read as offset_expr"), (0, 0, "FetchRel.count"), (2, -1, "FetchRel.count")],
    ids=["offset_count", "limit0", "count_all"],
)
def test_fetch_offset_and_count(spark, offset: int, count: int, note: str) -> None:
    modern = PlanBuilder().plan(fetch(sort(t(), (field(2), ASC)), offset=offset or None, count=count), ["k", "s", "v"])

    def downgrade(old: Message) -> None:
        rel = root_body(old, "fetch")
        rel.ClearField("offset_expr")
        rel.ClearField("count_expr")
        rel.offset, rel.count = offset, count

    check(spark, modern, downgrade, note)


@pytest.mark.unit
def test_fetch_count_and_count_expr_is_refused() -> None:
    old = old_form(PlanBuilder().plan(fetch(t(), count=2), ["k", "s", "v"]))
    root_body(old, "fetch").count = 3
    with pytest.raises(PlanInvalidError, match="both count and count_expr") as err:
        parse_plan_bytes(old.SerializeToString())
    assert err.value.path == "relations[0].root.input.fetch.count"


@pytest.mark.spark
def test_virtual_table_values(spark) -> None:
    modern = PlanBuilder().plan(virtual(["k", "s"], [i32(), string()], [(1, "x"), (2, None)]), ["k", "s"])

    def downgrade(old: Message) -> None:
        table = root_body(old, "read", "virtual_table")
        for row in table.expressions:
            table.values.add().fields.extend(e.literal for e in row.fields)
        table.ClearField("expressions")

    check(spark, modern, downgrade, "VirtualTable.values read as expressions")


def _args_of(fn: Message) -> None:
    fn.args.extend(a.value for a in fn.arguments)
    fn.ClearField("arguments")


@pytest.mark.spark
def test_scalar_function_args(spark) -> None:
    b = PlanBuilder()
    modern = b.plan(project(t(), b.call("multiply", field(0), field(2), out=i32()), emit=[3]), ["kv"])
    check(
        spark,
        modern,
        lambda old: _args_of(root_body(old, "project").expressions[0].scalar_function),
        "ScalarFunction.args read as arguments",
    )


@pytest.mark.spark
def test_aggregate_function_args_and_inline_grouping_expressions(spark) -> None:
    b = PlanBuilder()
    # Two grouping sets with the same key: one key column (and Spark's grouping id).
    rel = aggregate(t(), [field(0)], sets=[[0], [0]], measures=[b.agg("sum", field(2), out=i64())])
    modern = b.plan(rel, ["k", "total", "g"])

    def downgrade(old: Message) -> None:
        agg = root_body(old, "aggregate")
        for m in agg.measures:
            _args_of(m.measure)
        for g in agg.groupings:
            g.grouping_expressions.extend(agg.grouping_expressions[r] for r in g.expression_references)
            g.ClearField("expression_references")
        agg.ClearField("grouping_expressions")

    check(
        spark,
        modern,
        downgrade,
        "AggregateFunction.args read as arguments",
        "Grouping.grouping_expressions read as AggregateRel.grouping_expressions",
    )


def _grouped_twice() -> Plan:
    """Two grouping sets over two distinct keys, (k, s) and (s): references [0, 1] and [1]."""
    b = PlanBuilder()
    rel = aggregate(t(), [field(0), field(1)], sets=[[0, 1], [1]], measures=[b.agg("sum", field(2), out=i64())])
    return b.plan(rel, ["k", "s", "total", "g"])


def _inline_copies(old: Message) -> None:
    """DataFusion 55's spelling: each grouping's keys inline *and* as references (the references stay)."""
    agg = root_body(old, "aggregate")
    for g in agg.groupings:
        g.grouping_expressions.extend(agg.grouping_expressions[r] for r in g.expression_references)


@pytest.mark.spark
def test_grouping_written_both_ways_and_consistent_runs(spark) -> None:
    """Both spellings present and equal (DataFusion 55 writes them for older consumers): the plan loads, from
    binary and JSON, to the plan with references only, and gives its rows."""
    check(spark, _grouped_twice(), _inline_copies, "Grouping.grouping_expressions (equal to its expression_references)")


def _refused(old: Message, match: str, path: str) -> None:
    for blob in (old.SerializeToString(), json_format.MessageToJson(old).encode()):
        with pytest.raises(PlanInvalidError, match=match) as err:
            parse_plan_bytes(blob)
        assert err.value.path == path and err.value.exit_code == 2


@pytest.mark.unit
def test_grouping_spellings_that_disagree_are_refused() -> None:
    """Inline keys that are not the referenced ones, in order, make the plan invalid (exit 2), at the grouping."""
    at = "relations[0].root.input.aggregate.groupings[1]"
    old = old_form(_grouped_twice())
    _inline_copies(old)
    refs_field_1 = root_body(old, "aggregate").groupings[1].grouping_expressions[0]
    refs_field_1.ParseFromString(field(0).SerializeToString())
    _refused(old, r"inline grouping_expressions\[0\] differs from AggregateRel.grouping_expressions\[1\]", at)

    old = old_form(_grouped_twice())
    _inline_copies(old)
    extra = root_body(old, "aggregate").groupings[1].grouping_expressions.add()
    extra.ParseFromString(field(0).SerializeToString())
    _refused(old, "2 inline grouping_expressions but 1 expression_references", at)

    old = old_form(_grouped_twice())
    _inline_copies(old)
    root_body(old, "aggregate").groupings[1].expression_references[0] = 5
    _refused(old, r"expression_references\[0\] = 5 is out of range", at)

    old = old_form(_grouped_twice())
    _inline_copies(old)
    inline = root_body(old, "aggregate").groupings[0].grouping_expressions  # the same keys, in another order
    first, second = (e.SerializeToString() for e in inline)
    inline[0].ParseFromString(second)
    inline[1].ParseFromString(first)
    _refused(old, r"inline grouping_expressions\[0\] differs", "relations[0].root.input.aggregate.groupings[0]")


@pytest.mark.unit
def test_grouping_disagreement_is_exit_2_from_the_cli(tmp_path, capsys) -> None:
    from substrait_spark.cli import main

    old = old_form(_grouped_twice())
    _inline_copies(old)
    root_body(old, "aggregate").groupings[0].grouping_expressions[1].ParseFromString(field(2).SerializeToString())
    plan = tmp_path / "disagree.json"
    plan.write_text(json_format.MessageToJson(old))
    assert main(["validate", str(plan)]) == 2
    err = capsys.readouterr().err
    assert "differs from AggregateRel.grouping_expressions[1]" in err
    assert "relations[0].root.input.aggregate.groupings[0]" in err


@pytest.mark.spark
def test_window_function_args(spark) -> None:
    b = PlanBuilder()
    fn = alg.Expression.WindowFunction(
        function_reference=b.fn("sum"), arguments=[alg.FunctionArgument(value=field(2))], output_type=i64()
    )
    fn.partitions.append(field(0))
    modern = b.plan(project(t(), alg.Expression(window_function=fn), emit=[3]), ["w"])
    check(
        spark,
        modern,
        lambda old: _args_of(root_body(old, "project").expressions[0].window_function),
        "WindowFunction.args read as arguments",
    )


@pytest.mark.spark
def test_enum_args_read_as_enum_arguments(spark) -> None:
    b = PlanBuilder()
    ts = cast(lit("2024-03-05 06:07:08"), precision_timestamp())
    modern = b.plan(project(t(), b.call("extract", "YEAR", ts, out=i64()), emit=[3]), ["y"])

    def downgrade(old: Message) -> None:
        fn = root_body(old, "project").expressions[0].scalar_function
        fn.args.add().enum.specified = "YEAR"
        fn.args.add().CopyFrom(fn.arguments[1].value)
        fn.ClearField("arguments")

    check(spark, modern, downgrade, "ScalarFunction.args read as arguments")


@pytest.mark.unit
def test_unspecified_enum_and_standalone_enum_are_refused() -> None:
    b = PlanBuilder()
    modern = b.plan(project(t(), b.call("add", field(0), lit(1), out=i32()), emit=[3]), ["k1"])
    old = old_form(modern)
    fn = root_body(old, "project").expressions[0].scalar_function
    fn.args.add().enum.unspecified.SetInParent()
    fn.ClearField("arguments")
    with pytest.raises(PlanInvalidError, match="unspecified enum") as err:
        parse_plan_bytes(old.SerializeToString())
    assert err.value.path == "relations[0].root.input.project.expressions[0].scalar_function.args[0].enum"
    old = old_form(modern)
    root_body(old, "project").expressions[0].enum.specified = "X"
    with pytest.raises(PlanInvalidError, match=r"Expression\.enum") as err:
        parse_plan_bytes(json_format.MessageToJson(old).encode())
    assert err.value.path == "relations[0].root.input.project.expressions[0]"


def _hash_join(b: PlanBuilder) -> Plan:
    rel = alg.Rel()
    join = rel.hash_join
    join.left.CopyFrom(t())
    join.right.CopyFrom(t())
    join.type = alg.HashJoinRel.JOIN_TYPE_INNER
    key = join.keys.add()
    key.left.CopyFrom(field(0).selection)
    key.right.CopyFrom(field(0).selection)
    key.comparison.simple = alg.ComparisonJoinKey.SIMPLE_COMPARISON_TYPE_EQ
    return b.plan(rel, ["k", "s", "v", "k2", "s2", "v2"])


@pytest.mark.spark
def test_hash_join_left_and_right_keys(spark) -> None:
    def downgrade(old: Message) -> None:
        join = root_body(old, "hash_join")
        join.left_keys.extend(k.left for k in join.keys)
        join.right_keys.extend(k.right for k in join.keys)
        join.ClearField("keys")

    check(spark, _hash_join(PlanBuilder()), downgrade, "HashJoinRel.left_keys/right_keys read as keys (EQ)")


@pytest.mark.unit
def test_join_keys_of_different_lengths_are_refused() -> None:
    old = old_form(_hash_join(PlanBuilder()))
    join = root_body(old, "hash_join")
    join.left_keys.extend([join.keys[0].left, join.keys[0].left])
    join.right_keys.append(join.keys[0].right)
    join.ClearField("keys")
    with pytest.raises(PlanInvalidError, match="2 left_keys for 1 right_keys"):
        parse_plan_bytes(old.SerializeToString())


def _old_type(t: Message, kind: str) -> None:
    new = getattr(t, f"precision_{kind}")
    nullability = new.nullability
    getattr(t, kind).nullability = nullability  # replaces the precision_* member of the oneof


@pytest.mark.spark
def test_timestamp_types_and_literals(spark) -> None:
    b = PlanBuilder()
    ts = lit(dt.datetime(2021, 3, 4, 5, 6, 7, 123456), precision_timestamp())
    tz = cast(ts, precision_timestamp_tz())
    modern = b.plan(project(t(), ts, tz, emit=[3, 4]), ["ts", "tz"])

    def downgrade(old: Message) -> None:
        ts_lit, tz_cast = root_body(old, "project").expressions
        ts_lit.literal.timestamp = ts_lit.literal.precision_timestamp.value
        tz_cast.cast.input.literal.timestamp = tz_cast.cast.input.literal.precision_timestamp.value
        _old_type(tz_cast.cast.type, "timestamp_tz")

    check(
        spark,
        modern,
        downgrade,
        "literal timestamp read as precision_timestamp(6)",
        "type timestamp_tz read as precision_timestamp_tz(6)",
    )


@pytest.mark.unit
def test_time_type_and_literal() -> None:
    b = PlanBuilder()
    e = alg.Expression()
    e.cast.input.literal.precision_time.precision = 6
    e.cast.input.literal.precision_time.value = 3_600_000_000
    e.cast.type.precision_time.precision = 6
    e.cast.type.precision_time.nullability = e.cast.type.NULLABILITY_REQUIRED
    modern = b.plan(project(t(), e, emit=[3]), ["t"])
    old = old_form(modern)
    c = root_body(old, "project").expressions[0].cast
    c.input.literal.time = 3_600_000_000
    _old_type(c.type, "time")
    for loaded in loads(old):
        assert loaded.plan == modern
        assert {n.split(" at ")[0] for n in loaded.notes} == {
            "literal time read as precision_time(6)",
            "type time read as precision_time(6)",
        }


@pytest.mark.spark
def test_interval_microseconds(spark) -> None:
    b = PlanBuilder()
    iv = lit(dt.timedelta(days=1, seconds=5, microseconds=250), interval_day())
    modern = b.plan(project(t(), iv, emit=[3]), ["iv"])
    assert root_body(old_form(modern), "project").expressions[0].literal.interval_day_to_second.precision == 6

    def downgrade(old: Message) -> None:
        i = root_body(old, "project").expressions[0].literal.interval_day_to_second
        i.microseconds = i.subseconds
        i.ClearField("subseconds")
        i.ClearField("precision")

    check(spark, modern, downgrade, "IntervalDayToSecond.microseconds read as subseconds (precision 6)")


@pytest.mark.unit
def test_user_defined_type_reference() -> None:
    b = PlanBuilder()
    e = alg.Expression()
    e.cast.input.CopyFrom(field(0))
    e.cast.type.user_defined.type_reference = 7
    modern = b.plan(project(t(), e, emit=[3]), ["u"])
    old = old_form(modern)
    c = root_body(old, "project").expressions[0].cast
    c.type.user_defined_type_reference = 7
    for loaded in loads(old):
        assert loaded.plan == modern
        assert loaded.notes[0].startswith("type user_defined_type_reference read as user_defined")


@pytest.mark.spark
def test_old_textproto_plan(spark) -> None:
    modern = PlanBuilder().plan(fetch(sort(t(), (field(2), ASC)), count=2), ["k", "s", "v"])
    old = old_form(modern)
    rel = root_body(old, "fetch")
    rel.ClearField("count_expr")
    rel.count = 2
    loaded = parse_plan_bytes(text_format.MessageToString(old).encode())
    assert loaded.format == "textproto" and loaded.plan == modern
    assert loaded.notes == ("FetchRel.count read as count_expr at relations[0].root.input.fetch",)


@pytest.mark.unit
def test_notes_count_every_place_a_rule_fired() -> None:
    b = PlanBuilder()
    modern = b.plan(fetch(fetch(t(), count=5), count=2), ["k", "s", "v"])
    old = old_form(modern)
    for rel, count in ((root_body(old, "fetch"), 2), (root_body(old, "fetch", "input", "fetch"), 5)):
        rel.ClearField("count_expr")
        rel.count = count
    (note,) = parse_plan_bytes(json.dumps(json_format.MessageToDict(old)).encode()).notes
    assert note == "FetchRel.count read as count_expr at relations[0].root.input.fetch and 1 more"


@pytest.mark.unit
@pytest.mark.parametrize(
    "uri, urn",
    [
        (f"{GITHUB}functions_string.yaml", "extension:io.substrait:functions_string"),
        (
            "https://raw.githubusercontent.com/substrait-io/substrait/v0.50.0/extensions/functions_set.yaml",
            "extension:io.substrait:functions_set",
        ),
        ("https://substrait.io/extensions/functions_boolean.yaml", "extension:io.substrait:functions_boolean"),
        ("/functions_comparison.yaml", "extension:io.substrait:functions_comparison"),
        (GITHUB, GITHUB),  # a directory: kept as written
        ("urn:substrait:functions_string", "urn:substrait:functions_string"),
        ("https://example.com/functions_string.yaml", "https://example.com/functions_string.yaml"),
    ],
)
def test_urn_for_uri(uri: str, urn: str) -> None:
    from substrait_spark.consumer.loading.extensions import FunctionRef
    from substrait_spark.consumer.loading.legacy.fields import urn_for_uri

    assert urn_for_uri(uri) == urn
    assert FunctionRef.parse(1, "f", urn).extension_stem == FunctionRef.parse(1, "f", uri).extension_stem
