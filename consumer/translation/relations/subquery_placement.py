"""A filter over inner joins whose conjunct holds a correlated scalar subquery: that conjunct is decorrelated at
the join Spark SQL's optimizer pushes it to, not above every join.

Spark pushes filters and semi joins through inner joins itself, but not the outer join a correlated scalar
subquery becomes. Decorrelated above the whole tree, the subquery's aggregate meets the join of every input (TPC-H
q02: a sort-merge join above five tables where Spark SQL joins the aggregate with part ⋈ partsupp, then broadcasts
the other three). So the tree is built as Spark SQL's optimizer builds it for the same query:

- the inputs and conjuncts are those Spark's `ExtractFiltersAndInnerJoins` collects (a left-deep spine of inner
  and cross joins without an emit; the filter's and the joins' conjuncts);
- the join order is `ReorderJoin`'s (`spark_join_order`; Spark's default, without cost-based join reordering):
  from the first input, the next input that some conjunct links to those joined, else the next input;
- the conjunct goes where `PushPredicateThroughJoin` leaves it: on the one input it reads, else above the
  shortest prefix of that order holding every input it reads.

That prefix's inputs, in plan order, are filtered by the conjuncts they alone read and then by the subquery
conjunct; the result stands in the plan's order of inputs in place of the prefix, beside the other inputs, under
the remaining conjuncts; a projection restores the filter input's column order. Spark's optimizer orders the joins
on either side of the decorrelated subquery as it orders Spark SQL's. Any other filter is `filter.translate_filter`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from substrait import algebra_pb2 as alg

from ...walk import contains, descendants, map_record_fields, record_fields
from ..relation import Relation
from ..scope import Scope
from ..subqueries import conjunct_paths
from .filter import filter_by
from .join import product

if TYPE_CHECKING:
    from ..consumer import SubstraitConsumer

Conjunct = tuple[alg.Expression, str]  # an expression over the filter's input, and its plan path


@dataclass(frozen=True)
class Spine:
    """The inputs of a left-deep tree of inner and cross joins (plan order, with the paths `cx.rel` takes) and the
    conjuncts of its joins' conditions, over the concatenation of the inputs' columns."""

    inputs: tuple[tuple[alg.Rel, str], ...]
    conjuncts: tuple[Conjunct, ...]


def placed_filter(cx: SubstraitConsumer, rel: alg.FilterRel, path: str, outer: Scope | None) -> Relation | None:
    """The filter with its correlated scalar subquery conjunct decorrelated where Spark SQL would; None when no
    conjunct needs placing (the inputs translated here are then handed to the usual translation)."""
    if not rel.HasField("condition"):
        return None
    conjuncts = conjunct_paths(cx, rel.condition, f"{path}.condition")
    placed = next((k for k, (c, _) in enumerate(conjuncts) if _correlated_scalar(c)), None)
    spine = _spine(cx, rel.input, f"{path}.input") if placed is not None else None
    if spine is None or placed is None:
        return None
    inputs = [cx.rel(r, p, outer) for r, p in spine.inputs]
    starts = _starts([len(i.names) for i in inputs])
    parts = [*conjuncts, *spine.conjuncts]
    fields = [record_fields(c) for c, _ in parts]
    valid = all(i.can_defer() for i in inputs) and all(f < starts[-1] for read in fields for f in read)
    reads = [_inputs_read(f, starts) for f in fields] if valid else []
    group = _group(len(inputs), reads, placed, [not _has_subquery(c) for c, _ in parts]) if valid else None
    if group is None or len(group) == len(inputs):
        for (_, p), translated in zip(spine.inputs, inputs, strict=True):
            cx._prebuilt[p] = translated  # the usual translation takes them as they are
        return None
    inner = [i for i in range(len(inputs)) if i in group]
    inside = [k for k, r in enumerate(reads) if r and r <= group and (k == placed or not _has_subquery(parts[k][0]))]
    prefix = _remapped(parts, inside, _positions(inner, inputs, starts))
    joined = filter_by(cx, _product([inputs[i] for i in inner]), prefix, outer)
    # The filtered prefix stands where its first input stood, among the other inputs.
    order = [i for i in range(len(inputs)) if i not in group or i == inner[0]]
    top = [joined if i == inner[0] else inputs[i] for i in order]
    columns = [
        p for i in order for p in (_span(inner, inputs, starts) if i == inner[0] else _span([i], inputs, starts))
    ]
    rest = _remapped(parts, [k for k in range(len(parts)) if k not in inside], {p: n for n, p in enumerate(columns)})
    out = filter_by(cx, _product(top), rest, outer)
    return out.select_positions([columns.index(p) for p in range(starts[-1])], cx.names)


def _correlated_scalar(c: alg.Expression) -> bool:
    """Whether `c` holds a scalar subquery reading the record `c` stands over."""
    return any(
        s.WhichOneof("subquery_type") == "scalar" and record_fields(s) for s in descendants(c, alg.Expression.Subquery)
    )


def _has_subquery(c: alg.Expression) -> bool:
    return contains(c, alg.Expression.Subquery)


def _spine(cx: SubstraitConsumer, rel: alg.Rel, path: str) -> Spine | None:
    """Spark's `ExtractFiltersAndInnerJoins` over the plan: None unless `rel` is an inner or cross join."""
    inputs: list[tuple[alg.Rel, str]] = []
    conjuncts: list[Conjunct] = []
    node, at = rel, path
    while True:
        kind = node.WhichOneof("rel_type")
        body = getattr(node, kind) if kind in ("cross", "join") else None
        if body is None or body.common.WhichOneof("emit_kind") == "emit" or body.HasField("advanced_extension"):
            break
        if kind == "join":
            if body.type != alg.JoinRel.JOIN_TYPE_INNER:
                break
            for field in ("expression", "post_join_filter"):
                if body.HasField(field):
                    conjuncts.extend(conjunct_paths(cx, getattr(body, field), f"{at}.join.{field}"))
        inputs.append((body.right, f"{at}.{kind}.right"))
        node, at = body.left, f"{at}.{kind}.left"
    if not inputs:
        return None
    inputs.append((node, at))
    return Spine(tuple(reversed(inputs)), tuple(conjuncts))


def _starts(widths: Sequence[int]) -> list[int]:
    """Each input's first position in the concatenated record, and the record's width last."""
    out = [0]
    for w in widths:
        out.append(out[-1] + w)
    return out


def _inputs_read(fields: set[int], starts: Sequence[int]) -> frozenset[int]:
    """The inputs holding the given record positions."""
    return frozenset(next(i for i in range(len(starts) - 1) if f < starts[i + 1]) for f in fields)


def spark_join_order(n: int, reads: Sequence[frozenset[int]], joinable: Sequence[bool]) -> list[int]:
    """The order Spark's `ReorderJoin.createOrderedJoin` joins `n` inputs in, given the inputs each conjunct reads
    and whether it can be a join condition (a subquery cannot): from input 0, the first remaining input that a
    conjunct not yet applied links to those joined, else the first remaining."""
    if n <= 2 or not reads:
        return list(range(n))
    order, joined, rest, pending = [0], frozenset({0}), list(range(1, n)), list(range(len(reads)))
    while len(rest) > 1:
        nxt = next((j for j in rest if _links(reads, pending, joined, j)), rest[0])
        joined = joined | {nxt}
        order.append(nxt)
        rest.remove(nxt)
        pending = [k for k in pending if not (reads[k] <= joined and joinable[k])]
    return order + rest


def _links(reads: Sequence[frozenset[int]], pending: Sequence[int], joined: frozenset[int], j: int) -> bool:
    """Whether a conjunct not yet applied reads input `j` and those joined, and neither alone."""
    both = joined | {j}
    return any(reads[k] <= both and not (reads[k] and (reads[k] <= joined or reads[k] <= {j})) for k in pending)


def _group(n: int, reads: Sequence[frozenset[int]], placed: int, joinable: Sequence[bool]) -> frozenset[int] | None:
    """The inputs (of `n`) the conjunct `placed` stands over once Spark pushed it down: the one input it reads,
    else the shortest prefix of the join order holding every input it reads."""
    need = reads[placed]
    if len(need) <= 1:
        return need or None
    order = spark_join_order(n, reads, joinable)
    return next(frozenset(order[:k]) for k in range(2, n + 1) if need <= set(order[:k]))


def _span(inputs_at: Sequence[int], inputs: Sequence[Relation], starts: Sequence[int]) -> list[int]:
    """The record positions of the given inputs' columns, input after input."""
    return [p for i in inputs_at for p in range(starts[i], starts[i] + len(inputs[i].names))]


def _positions(inputs_at: Sequence[int], inputs: Sequence[Relation], starts: Sequence[int]) -> dict[int, int]:
    """Record position → position in the product of the given inputs."""
    return {p: n for n, p in enumerate(_span(inputs_at, inputs, starts))}


def _remapped(parts: Sequence[Conjunct], chosen: Sequence[int], position: dict[int, int]) -> list[Conjunct]:
    return [(map_record_fields(parts[k][0], position.__getitem__), parts[k][1]) for k in chosen]


def _product(relations: Sequence[Relation]) -> Relation:
    out = relations[0]
    for r in relations[1:]:
        out = product(out, r)
    return out
