"""Every kind the protobuf defines, against every reader of a plan (consumer/plan_visitor.py).

The readers — the translator, validate, lineage and explain/graph — each declare per oneof (relation, expression,
read source, literal, subquery and field-reference root kinds) which kinds they handle and which they refuse with
a reason. The kinds come from the installed substrait-protobuf's descriptors, so a kind a new release adds and a
reader forgets fails here (and at import), not in a user's plan. No Spark session: the tables and the refusals
are read from the protobuf messages only; `test_validate.py` holds validate against translation.
"""

from __future__ import annotations

import pytest
from plan_builder import PlanBuilder, field, i64, named, project
from substrait import algebra_pb2 as alg
from substrait import plan_pb2
from substrait_spark.consumer.analysis.analyze import Finding, validate_plan
from substrait_spark.consumer.analysis.lineage import LineageWalker, column_lineage
from substrait_spark.consumer.errors import UnsupportedFeatureError
from substrait_spark.consumer.plan_visitor import KINDS, READERS, KindTable
from substrait_spark.consumer.translation.consumer import SubstraitConsumer

pytestmark = pytest.mark.unit

READER_NAMES = ("translator", "validate", "lineage", "explain")
# The oneofs the readers dispatch on, as the protobuf names them, with the message each belongs to.
ONEOFS = {
    "rel_type": alg.Rel,
    "rex_type": alg.Expression,
    "read_type": alg.ReadRel,
    "literal_type": alg.Expression.Literal,
    "subquery_type": alg.Expression.Subquery,
    "root_type": alg.Expression.FieldReference,
}


def _load_readers() -> None:
    import substrait_spark.consumer.analysis.analyze
    import substrait_spark.consumer.analysis.explain
    import substrait_spark.consumer.analysis.lineage
    import substrait_spark.graph  # noqa: F401  (explain's picture: a PlanTree, explain's tables)


def test_kinds_are_the_protobufs_oneofs():
    assert set(KINDS) == set(ONEOFS)
    for oneof, message in ONEOFS.items():
        protobuf = [f.name for f in message.DESCRIPTOR.oneofs_by_name[oneof].fields]
        assert list(KINDS[oneof]) == protobuf and protobuf, oneof


@pytest.mark.parametrize("reader", READER_NAMES)
@pytest.mark.parametrize("oneof", list(ONEOFS))
def test_every_reader_handles_or_refuses_every_kind(reader, oneof):
    _load_readers()
    tables = [t for t in READERS.get(reader, []) if t.oneof == oneof]
    assert len(tables) == 1, f"{reader} declares {len(tables)} tables for {oneof}"
    (table,) = tables
    assert table.missing() == []
    assert table.handled | set(table.refused) == set(KINDS[oneof])
    assert not table.handled & set(table.refused)
    assert all(reason.strip() for reason in table.refused.values())


def _plan_tree():
    from substrait_spark.consumer.analysis.explain import PlanTree

    return PlanTree


def _validator():
    from substrait_spark.consumer.analysis.analyze import Validator

    return Validator


# Every PlanVisitor: the translator, lineage, explain (text, picture, validate's static records) and validate's walk.
VISITORS = [SubstraitConsumer, LineageWalker, _plan_tree(), _validator()]


@pytest.mark.parametrize("cls", VISITORS)
def test_every_visitor_walks_every_kind(cls):
    """Each visitor class's dispatch tables cover every relation and expression kind of the protobuf (handled, or
    refused with a reason), and each kind it handles by name has its method."""
    from substrait_spark.consumer.plan_visitor import PlanVisitor
    from substrait_spark.graph import _GraphBuilder

    assert issubclass(cls, PlanVisitor) and issubclass(_GraphBuilder, _plan_tree())
    for table in cls.kind_tables():
        assert table.missing() == [], (cls.__name__, table.oneof)
        assert table.handled | set(table.refused) == set(KINDS[table.oneof])


@pytest.mark.parametrize("cls", VISITORS)
def test_handled_relation_and_expression_kinds_have_their_handlers(cls):
    """A kind handled by method name names a method the class has (the walk calls it)."""
    for oneof in ("rel_type", "rex_type"):
        for kind in KINDS[oneof]:
            table = cls.relation_handlers if oneof == "rel_type" else cls.expression_handlers
            if kind in table:
                assert cls.handles(oneof, kind), f"{cls.__name__}: {kind}"


def test_a_forgotten_kind_fails_when_the_reader_is_defined():
    """A reader that drops a kind from its table without refusing it is a TypeError at class creation (import)."""
    handlers = {k: v for k, v in SubstraitConsumer.relation_handlers.items() if k != "window"}
    with pytest.raises(TypeError, match=r"translator \(rel_type\): neither handles nor refuses window"):
        type("Forgetful", (SubstraitConsumer,), {"relation_handlers": handlers})
    relations = {k: v for k, v in LineageWalker.relations.items() if k != "expand"}
    with pytest.raises(TypeError, match="neither handles nor refuses expand"):
        type("ForgetfulLineage", (LineageWalker,), {"relations": relations})
    walk = {k: v for k, v in _validator().expression_handlers.items() if k != "subquery"}
    with pytest.raises(TypeError, match=r"validate \(rex_type\): neither handles nor refuses subquery"):
        type("ForgetfulValidator", (_validator(),), {"expression_handlers": walk})
    tree = _plan_tree()
    schemas = {k: v for k, v in tree.relation_handlers.items() if k != "aggregate"}
    with pytest.raises(TypeError, match=r"explain \(rel_type\): neither handles nor refuses aggregate"):
        type("ForgetfulExplain", (tree,), {"relation_handlers": schemas})
    with pytest.raises(TypeError, match="names kinds the protobuf lacks: fancy_join"):
        KindTable.of("mine", "rel_type", {*KINDS["rel_type"], "fancy_join"})
    with pytest.raises(TypeError, match="both handles and refuses read"):
        KindTable.of("mine", "rel_type", KINDS["rel_type"], {"read": "no"})


def test_a_refusing_subclass_is_refused_by_validate_as_by_translation():
    """A consumer subclass that refuses a kind explicitly: validate reports it in the translator's words."""

    class NoSort(SubstraitConsumer):
        relation_handlers = {k: v for k, v in SubstraitConsumer.relation_handlers.items() if k != "sort"}
        refused_relations = {**SubstraitConsumer.refused_relations, "sort": "this deployment never sorts"}

    from plan_builder import sort

    b = PlanBuilder()
    plan = b.plan(sort(named("t", ["a"], [i64()]), (field(0), 1)), ["a"])
    path = "relations[0].root.input.sort"
    assert validate_plan(plan, NoSort) == [Finding("sort relation: this deployment never sorts", path)]
    assert validate_plan(plan) == []


def _detached_plans() -> dict[str, plan_pb2.Plan]:
    """A relation and an expression that are ordinals into lists outside the plan."""
    b = PlanBuilder()
    rel_plan = b.plan(alg.Rel(detached_rel_ordinal=0), ["a"])
    b = PlanBuilder()
    expr_plan = b.plan(
        project(named("t", ["a"], [i64()]), field(0), alg.Expression(detached_expression_ordinal=0), emit=[2]), ["x"]
    )
    return {"relation": rel_plan, "expression": expr_plan}


@pytest.mark.parametrize("what", ["relation", "expression"])
def test_detached_kinds_are_refused_alike_by_every_reader(what):
    """The kinds every reader refuses: validate lists them with the translator's words (exit 3), lineage refuses
    them typed, explain shows them with an unknown schema — none crashes."""
    from substrait_spark.consumer.analysis.explain import plan_tree_of
    from substrait_spark.graph import plan_svg

    plan = _detached_plans()[what]
    kind = "detached_rel_ordinal" if what == "relation" else "detached_expression_ordinal"
    path = "relations[0].root.input." + ("detached_rel_ordinal" if what == "relation" else "project.expressions[1]."
                                          "detached_expression_ordinal")  # fmt: skip
    reason = SubstraitConsumer.refused_relations.get(kind) or SubstraitConsumer.refused_expressions[kind]
    assert validate_plan(plan) == [Finding(f"{kind} {what}: {reason}", path)]
    with pytest.raises(UnsupportedFeatureError) as exc:
        column_lineage(plan)
    assert exc.value.path == path and exc.value.exit_code == 3 and kind in exc.value.message
    shown = "detached_rel_ordinal  -> (?)" if what == "relation" else "<detached_expression_ordinal>] emit=[2]  -> (?)"
    assert shown in plan_tree_of(plan)
    assert kind in plan_svg(plan)  # explain's picture draws it too


# The spec's output width of a join of a 2-column left and a 3-column right input, by join type.
SPEC_JOIN_WIDTH = {
    "INNER": 5, "OUTER": 5, "LEFT": 5, "RIGHT": 5, "LEFT_SINGLE": 5, "RIGHT_SINGLE": 5,
    "LEFT_SEMI": 2, "LEFT_ANTI": 2, "RIGHT_SEMI": 3, "RIGHT_ANTI": 3, "LEFT_MARK": 3, "RIGHT_MARK": 4,
}  # fmt: skip


def test_join_layouts_are_declared_once_for_every_join_type():
    """The one table of join outputs covers every join type (physical joins' types map to JoinRel's by name), and
    explain and lineage — which both read it — give every join the spec's width."""
    from plan_builder import join, lit
    from substrait_spark.consumer.analysis.explain import PlanTree
    from substrait_spark.consumer.loading.extensions import Extensions
    from substrait_spark.consumer.loading.producers import Quirks
    from substrait_spark.consumer.plan_visitor import JOIN_OUTPUT, logical_join_type

    JoinRel = alg.JoinRel
    assert set(JOIN_OUTPUT) == {v for n, v in JoinRel.JoinType.items() if n != "JOIN_TYPE_UNSPECIFIED"}
    assert {f"JOIN_TYPE_{n}" for n in SPEC_JOIN_WIDTH} == {JoinRel.JoinType.Name(t) for t in JOIN_OUTPUT}
    for physical in (alg.HashJoinRel, alg.MergeJoinRel, alg.NestedLoopJoinRel):
        for name, value in physical.JoinType.items():
            if name != "JOIN_TYPE_UNSPECIFIED":
                assert logical_join_type(physical(type=value)) == JoinRel.JoinType.Value(name), (physical, name)
    left, right = named("l", ["a", "b"], [i64(), i64()]), named("r", ["c", "d", "e"], [i64(), i64(), i64()])
    for name, width in SPEC_JOIN_WIDTH.items():
        rel = join(left, right, JoinRel.JoinType.Value(f"JOIN_TYPE_{name}"), lit(True))
        plan = PlanBuilder().plan(rel, [f"c{i}" for i in range(width)])
        explained = PlanTree(plan, Extensions(plan), Quirks.of(plan), []).schema(rel, "relations[0].root.input", [])
        assert len(explained) == width, name
        assert len(LineageWalker(plan).rel(rel, "relations[0].root.input").columns) == width, name


def test_relation_refusals_are_the_translators_and_validate_reads_them():
    """Each relation translator's `refusals(rel, path)` is in the consumer class's table for a kind it handles;
    validate lists what a class's table refuses, in the translator's words, at the translator's path."""
    from plan_builder import sort
    from substrait_spark.consumer.translation.consumer import RELATION_REFUSALS

    assert SubstraitConsumer.relation_refusals is RELATION_REFUSALS
    assert set(RELATION_REFUSALS) <= set(SubstraitConsumer.relation_handlers)

    def refuse_descending(rel, path):
        for i, s in enumerate(rel.sorts):
            if s.direction == alg.SortField.SORT_DIRECTION_DESC_NULLS_LAST:
                yield "descending sorts (this deployment)", f"{path}.sorts[{i}]"

    class NoDescending(SubstraitConsumer):
        relation_refusals = {**RELATION_REFUSALS, "sort": refuse_descending}

    b = PlanBuilder()
    plan = b.plan(sort(named("t", ["a"], [i64()]), (field(0), alg.SortField.SORT_DIRECTION_DESC_NULLS_LAST)), ["a"])
    path = "relations[0].root.input.sort.sorts[0]"
    assert validate_plan(plan, NoDescending) == [Finding("descending sorts (this deployment)", path)]
    assert validate_plan(plan) == []
    custom = alg.SortField(expr=field(0), comparison_function_reference=7)
    b = PlanBuilder()
    plan = b.plan(alg.Rel(sort=alg.SortRel(input=named("t", ["a"], [i64()]), sorts=[custom])), ["a"])
    assert validate_plan(plan) == [Finding("sort by a custom comparison function", path)]
