"""How the plan reads each LEFT MARK join's mark: where only TRUE counts, the mark may be Spark's own predicate.

DataFusion decorrelates EXISTS / IN standing under an OR of a filter into LEFT MARK joins whose marks the filter
reads (TPC-DS q10, q35, q45: `filter(or(mark1, mark2))`). A mark is three-valued (TRUE / NULL / FALSE), which
`marks.mark` computes with a join and counts; a filter keeps a row only when its condition is TRUE, and under an
AND / OR alone a NULL mark acts as FALSE. There Spark SQL's own IN subquery gives the same rows, and Spark plans it
as the ExistenceJoin it makes of the same SQL. So the plan is read from its roots down, each relation's output
columns with the `Truth` they stand in above it (absent: not read), as far as the relations the walk knows
(projections, filters, sorts, limits, aggregates, joins); a mark under any other relation is not looked at and
keeps its exact value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from substrait import algebra_pb2 as alg

from ..walk import plain_field, record_fields
from .scope import Truth

if TYPE_CHECKING:
    from .subqueries import PlanReader

JoinRel = alg.JoinRel
Reads = dict[int, Truth]  # an output column's position -> the truth it is read in (absent: not read)

# Join types whose output is the left columns then the right ones, and those whose output is the left columns only.
_BOTH = {JoinRel.JOIN_TYPE_INNER, JoinRel.JOIN_TYPE_LEFT, JoinRel.JOIN_TYPE_RIGHT, JoinRel.JOIN_TYPE_OUTER}
_LEFT_ONLY = {JoinRel.JOIN_TYPE_LEFT_SEMI, JoinRel.JOIN_TYPE_LEFT_ANTI}


def mark_reads(cx: PlanReader, relations: Iterable[Any]) -> dict[str, Truth | None]:
    """The truth each LEFT MARK join's mark is read in, by the join's plan path (`<rel path>.join`; None: not
    read at all), for the joins the walk from the plan's roots reaches."""
    out: dict[str, Truth | None] = {}
    for i, r in enumerate(relations):
        if r.WhichOneof("rel_type") == "root":
            root = r.root
            _walk(cx, root.input, f"relations[{i}].root.input", dict.fromkeys(range(len(root.names)), Truth.VALUE), out)
    return out


def either(a: Truth | None, b: Truth | None) -> Truth | None:
    """The truth a column read in `a` and in `b` stands in: the exact value unless both read the same."""
    if a is None or a == b:
        return b
    return a if b is None else Truth.VALUE


def _read(reads: Reads, fields: Iterable[int], truth: Truth) -> None:
    for f in fields:
        reads[f] = either(reads.get(f), truth) or truth


def _before_emit(body: Any, reads: Reads) -> Reads:
    """The reads of a relation's columns before its emit, from those of its output."""
    common = getattr(body, "common", None)
    if common is None or common.WhichOneof("emit_kind") != "emit":
        return reads
    mapping = list(common.emit.output_mapping)
    out: Reads = {}
    for i, t in reads.items():
        if 0 <= i < len(mapping):
            _read(out, [mapping[i]], t)
    return out


def _walk(cx: PlanReader, rel: alg.Rel, path: str, reads: Reads, out: dict[str, Truth | None]) -> None:
    kind = rel.WhichOneof("rel_type")
    if kind is None or kind not in _WALKERS:
        return  # not followed: the marks below keep their exact value
    body = getattr(rel, kind)
    _WALKERS[kind](cx, body, f"{path}.{kind}", _before_emit(body, reads), out)


def _same_columns(cx: PlanReader, body: Any, path: str, reads: Reads, out: dict[str, Truth | None]) -> None:
    """Sorts and limits: their columns are their input's; sort keys are read as values."""
    inner = dict(reads)
    for s in getattr(body, "sorts", []):
        _read(inner, record_fields(s.expr), Truth.VALUE)
    _walk(cx, body.input, f"{path}.input", inner, out)


def _filter(cx: PlanReader, body: alg.FilterRel, path: str, reads: Reads, out: dict[str, Truth | None]) -> None:
    inner = dict(reads)
    if body.HasField("condition"):
        _condition(cx, body.condition, Truth.TRUE, inner)
    _walk(cx, body.input, f"{path}.input", inner, out)


def _condition(cx: PlanReader, e: alg.Expression, truth: Truth, reads: Reads) -> None:
    """The fields `e` reads, standing in `truth`: under AND / OR / NOT and casts to boolean a field keeps (or
    negates) it, anywhere else it is read as a value."""
    field = plain_field(e)
    if field is not None:
        _read(reads, [field], truth)
        return
    if e.WhichOneof("rex_type") == "scalar_function":
        fn = e.scalar_function
        ref = cx.extensions.functions.get(fn.function_reference)
        if ref is not None and ref.base in ("and", "or", "not"):
            inner = truth.negated() if ref.base == "not" else truth
            for a in fn.arguments:
                if a.WhichOneof("arg_type") == "value":
                    _condition(cx, a.value, inner, reads)
            return
    if e.WhichOneof("rex_type") == "cast" and e.cast.type.WhichOneof("kind") == "bool":
        _condition(cx, e.cast.input, truth, reads)
        return
    _read(reads, record_fields(e), Truth.VALUE)


def _project(cx: PlanReader, body: alg.ProjectRel, path: str, reads: Reads, out: dict[str, Truth | None]) -> None:
    width = _width(cx, body.input)
    if width is None:
        return
    inner: Reads = {i: t for i, t in reads.items() if i < width}
    for k, e in enumerate(body.expressions):
        t = reads.get(width + k)
        if t is None:
            continue
        field = plain_field(e)  # a column passed on is read as its output is
        _read(inner, [field] if field is not None else record_fields(e), t if field is not None else Truth.VALUE)
    _walk(cx, body.input, f"{path}.input", inner, out)


def _aggregate(cx: PlanReader, body: alg.AggregateRel, path: str, reads: Reads, out: dict[str, Truth | None]) -> None:
    inner: Reads = {}
    for part in (*body.grouping_expressions, *body.groupings, *body.measures):
        _read(inner, record_fields(part), Truth.VALUE)
    _walk(cx, body.input, f"{path}.input", inner, out)


def _join(cx: PlanReader, body: alg.JoinRel, path: str, reads: Reads, out: dict[str, Truth | None]) -> None:
    width = _width(cx, body.left)
    if width is None or (body.type not in _BOTH and body.type not in _LEFT_ONLY and body.type != _MARK):
        return
    left: Reads = {i: t for i, t in reads.items() if i < width}
    right: Reads = {i - width: t for i, t in reads.items() if i >= width} if body.type in _BOTH else {}
    if body.type == _MARK:
        out[path] = reads.get(width)
    both: Reads = {}
    for e in (body.expression, body.post_join_filter):
        _read(both, record_fields(e), Truth.VALUE)
    for f, t in both.items():
        target, at = (left, f) if f < width else (right, f - width)
        _read(target, [at], t)
    _walk(cx, body.left, f"{path}.left", left, out)
    _walk(cx, body.right, f"{path}.right", right, out)


_MARK = JoinRel.JOIN_TYPE_LEFT_MARK
_WALKERS: Mapping[str, Any] = {
    "fetch": _same_columns,
    "sort": _same_columns,
    "filter": _filter,
    "project": _project,
    "aggregate": _aggregate,
    "join": _join,
}


def _width(cx: PlanReader, rel: alg.Rel) -> int | None:
    """How many columns `rel` outputs, for the relations the walk follows and reads (None: not worked out)."""
    kind = rel.WhichOneof("rel_type")
    body: Any = getattr(rel, kind) if kind else None
    common = getattr(body, "common", None)
    if common is not None and common.WhichOneof("emit_kind") == "emit":
        return len(common.emit.output_mapping)
    if kind == "read":
        schema = body.base_schema
        return len(schema.struct.types) if schema.struct.types else None
    if kind in ("fetch", "sort", "filter"):
        return _width(cx, body.input)
    if kind == "project":
        inner = _width(cx, body.input)
        return None if inner is None else inner + len(body.expressions)
    if kind == "aggregate":
        keys = len(body.grouping_expressions) or len(
            {e.SerializeToString() for g in body.groupings for e in g.grouping_expressions}
        )
        return keys + len(body.measures) + (1 if len(body.groupings) > 1 else 0)
    if kind == "join":
        left, right = _width(cx, body.left), _width(cx, body.right)
        if left is None or right is None:
            return None
        return {**dict.fromkeys(_BOTH, left + right), **dict.fromkeys(_LEFT_ONLY, left), _MARK: left + 1}.get(body.type)
    return None
