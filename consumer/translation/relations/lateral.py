"""LateralJoinRel: the right input is evaluated per left row, reading it through `rel_reference` outer references.

Spark 3.5's DataFrame API has no lateral join and no outer-reference column, so the right input is decorrelated
with the subquery machinery (`subqueries.py`, `relations/filter.py`): its outer references to this join become
ordinary outer references one scope out (`steps_out`), the right input is translated with the left input as
its enclosing scope, and the correlated filter conjuncts it pulls up (`Relation.pending`) join the lateral's
own condition — one Spark join Catalyst can plan as an equi-join when those conjuncts are equalities.

Refused with the reason: a right input that reads the left row anywhere but in a filter conjunct (e.g. in a
projection: `LATERAL (SELECT l.a + r.b ...)`, no DataFrame decorrelation) on Spark 3.5 — on Spark 4 (a pyspark
4.x client, classic or Connect) INNER and LEFT lateral joins of that shape run as Spark's own
`DataFrame.lateralJoin`, the right input reading the left row through `Column.outer()`; an aggregate over the
correlation that counts (its value for a left row without matches would be 0, which a join cannot produce; on
classic Spark 4 a grouped DataFrame over outer references fails analysis, so it stays refused there too); and
join types the spec does not allow for lateral joins (RIGHT, OUTER and the right-side variants).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from google.protobuf.message import Message
from pyspark.sql import Column
from substrait import algebra_pb2 as alg

from ...clients import has_outer_references
from ...errors import PlanInvalidError, UnsupportedFeatureError
from ...walk import children
from ..relation import Relation, conjunction
from ..scope import Scope
from . import join

if TYPE_CHECKING:
    from ..consumer import SubstraitConsumer

JoinRel = alg.JoinRel
FieldReference = alg.Expression.FieldReference
ALLOWED = {
    JoinRel.JOIN_TYPE_INNER,
    JoinRel.JOIN_TYPE_LEFT,
    JoinRel.JOIN_TYPE_LEFT_SEMI,
    JoinRel.JOIN_TYPE_LEFT_ANTI,
    JoinRel.JOIN_TYPE_LEFT_SINGLE,
    JoinRel.JOIN_TYPE_LEFT_MARK,
}
# Join types whose output holds the right input's columns (then its correlation keys, dropped after the join).
_WITH_RIGHT = {JoinRel.JOIN_TYPE_INNER, JoinRel.JOIN_TYPE_LEFT, JoinRel.JOIN_TYPE_LEFT_SINGLE}


def rebase(right: alg.Rel, anchor: int, path: str) -> tuple[alg.Rel, list[str]]:
    """A copy of the right input with outer references to `anchor` as `steps_out` ones (the lateral join is
    one more enclosing scope), and the paths where the left row is read outside a filter condition."""
    out = alg.Rel()
    out.CopyFrom(right)
    escapes: list[str] = []
    _rebase(out, anchor, 0, False, path, escapes)
    return out, escapes


def _rebase(msg: Message, anchor: int, depth: int, in_filter: bool, path: str, escapes: list[str]) -> None:
    if isinstance(msg, FieldReference) and msg.WhichOneof("root_type") == "outer_reference":
        ref = msg.outer_reference
        kind = ref.WhichOneof("outer_reference_type")
        if kind == "rel_reference" and ref.rel_reference == anchor:
            ref.steps_out = depth + 1
            if depth == 0 and not in_filter:
                escapes.append(path)
        elif kind == "steps_out" and ref.steps_out > depth:
            ref.steps_out += 1  # a scope beyond the lateral join: one more boundary to cross now
    for child, p in children(msg, path):
        inner, filtering = depth, in_filter and not isinstance(child, alg.Rel)
        if isinstance(child, alg.Expression.Subquery) or (isinstance(msg, alg.LateralJoinRel) and p.endswith(".right")):
            inner = depth + 1
        elif isinstance(msg, alg.FilterRel) and p.endswith(".condition"):
            filtering = True
        _rebase(child, anchor, inner, filtering, p, escapes)


def checked_type(rel: alg.LateralJoinRel, path: str) -> join.JoinType:
    jt = rel.type
    if jt == JoinRel.JOIN_TYPE_UNSPECIFIED:
        raise PlanInvalidError("join type unspecified", f"{path}.type")
    if jt not in ALLOWED:
        name = JoinRel.JoinType.Name(jt) if jt in JoinRel.JoinType.values() else str(jt)
        raise PlanInvalidError(f"lateral join of type {name} (only INNER and left-side types)", f"{path}.type")
    if not rel.common.rel_anchor:
        raise PlanInvalidError("lateral join without common.rel_anchor for its right input to reference", path)
    return jt


def refusals(rel: alg.LateralJoinRel, path: str) -> Iterator[tuple[str, str]]:
    """What the translation refuses in a lateral join, as (feature, path), without translating (`analyze`);
    an invalid one raises PlanInvalidError as translation would."""
    jt = checked_type(rel, path)
    _, escapes = rebase(rel.right, rel.common.rel_anchor, f"{path}.right")
    if _native(jt):
        return
    for p in escapes[:1]:
        yield _ESCAPE, p
    yield from join.condition_subquery(rel, path)


# Spark 4's `DataFrame.lateralJoin` join types (it has no semi, anti, single or mark lateral join).
_NATIVE_HOW = {JoinRel.JOIN_TYPE_INNER: "inner", JoinRel.JOIN_TYPE_LEFT: "left"}


def _native(jt: join.JoinType) -> bool:
    """Spark 4 runs the lateral join itself: the right input reads the left row through `Column.outer()`."""
    return has_outer_references() and jt in _NATIVE_HOW


_ESCAPE = (
    "lateral join whose right input reads the left row outside a filter condition (Spark 3.5's "
    "DataFrame API has no lateral column references, and only correlated filters decorrelate into a join)"
)


IN_CORRELATED = "lateral join inside a correlated subquery"


def decorrelation_refusals(jt: join.JoinType, keyed: bool, count_bug: bool, path: str) -> Iterator[tuple[str, str]]:
    """What the decorrelated lateral join refuses, given its right input's correlation state (the translator's
    `Relation`, validate's static mirror of it): a counting aggregate over the correlated rows, and an aggregate of
    them under a join type other than INNER and LEFT."""
    if count_bug:
        yield (
            "lateral join over a counting aggregate of the correlated rows (a left row without matches "
            "would need a count of 0, not NULL)",
            f"{path}.right",
        )
    elif keyed and jt not in (JoinRel.JOIN_TYPE_INNER, JoinRel.JOIN_TYPE_LEFT):
        yield f"lateral {JoinRel.JoinType.Name(jt)} join over an aggregate of the correlated rows", path


def escapes_natively(rel: alg.LateralJoinRel, path: str) -> bool:
    """Whether the lateral join runs as Spark's own (its right input reads the left row outside a filter, on a
    client that has outer references): then it is not decorrelated."""
    _, escapes = rebase(rel.right, rel.common.rel_anchor, f"{path}.right")
    return bool(escapes) and _native(checked_type(rel, path))


def translate_lateral_join(cx: SubstraitConsumer, rel: alg.LateralJoinRel, path: str, outer: Scope | None) -> Relation:
    """Decorrelated into one join (the 3.5 path, which Catalyst plans as an equi-join); on Spark 4 a right input
    that reads the left row outside a filter runs as Spark's own lateral join instead."""
    jt = checked_type(rel, path)
    right_rel, escapes = rebase(rel.right, rel.common.rel_anchor, f"{path}.right")
    if escapes and _native(jt):
        return _lateral_join(cx, rel, jt, right_rel, path, outer)
    if escapes:
        raise UnsupportedFeatureError(_ESCAPE, escapes[0])
    left = cx.rel(rel.left, f"{path}.left", outer).materialized()
    if left.correlated():
        raise UnsupportedFeatureError(IN_CORRELATED, path)
    right = cx.rel(right_rel, f"{path}.right", Scope(left.named(), outer)).materialized()
    for feature, at in decorrelation_refusals(jt, right.keyed, right.count_bug, path):
        raise UnsupportedFeatureError(feature, at)
    if right.keyed:  # one aggregate row per left row, matched or not: never drops a left row
        jt = JoinRel.JOIN_TYPE_LEFT
    correlation = [p.cond for p in right.pending]
    # The right input's correlation keys become ordinary columns of it, dropped again after the join.
    types = {f.name: f.dataType for f in right.df.schema.fields}
    widened = Relation(right.df, [*right.names, *right.hidden], [*right.types, *(types[n] for n in right.hidden)])

    def condition(scope: Scope) -> Column | None:
        conds = list(correlation)
        if rel.HasField("expression"):
            conds.append(cx.expression(rel.expression, scope, f"{path}.expression").col)
        return conjunction(conds)

    post = rel.post_join_filter if rel.HasField("post_join_filter") else None
    out = join.join_inputs(cx, left, widened, jt, condition, post, [rel.expression, rel.post_join_filter], path, outer)
    if jt in _WITH_RIGHT and right.hidden:
        out = out.select_positions(range(len(left.names) + len(right.names)), cx.names)
    return out


def _lateral_join(
    cx: SubstraitConsumer,
    rel: alg.LateralJoinRel,
    jt: join.JoinType,
    right_rel: alg.Rel,
    path: str,
    outer: Scope | None,
) -> Relation:
    """Spark 4: `left.lateralJoin(right, on, how)`, the right input reading the left row through `outer()`
    columns."""
    left = cx.rel(rel.left, f"{path}.left", outer)
    if left.correlated():
        raise UnsupportedFeatureError("lateral join inside a correlated subquery", path)
    # Internal names only: Spark resolves an `outer()` column in the right query first when a column of that
    # name is there, and a table read keeps its own column names until a projection needs renaming.
    left = left.renamed(cx.names).materialized()
    right = cx.rel(right_rel, f"{path}.right", Scope(left.named(), outer, native=True)).materialized()
    both = Relation(left.df, [*left.names, *right.names], [*left.types, *right.types])
    on = None
    if rel.HasField("expression"):
        on = cx.expression(rel.expression, Scope(both, outer), f"{path}.expression").col
    # lateralJoin is Spark 4's: pyspark 3.5's stubs, which mypy reads, take it for a column by name.
    lateral = left.df.lateralJoin(right.df, on=on, how=_NATIVE_HOW[jt])  # type: ignore[operator]
    out = Relation(lateral, both.names, both.types)
    if rel.HasField("post_join_filter"):
        post = cx.expression(rel.post_join_filter, Scope(out, outer), f"{path}.post_join_filter").col
        out = out.with_df(out.df.filter(post))
    return out
