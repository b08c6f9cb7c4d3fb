"""Which output columns of a plan relation hold each combination of values at most once (a unique key).

A join whose other input is unique on the columns the condition equates keeps each row at most once: a LEFT SEMI
join onto an aggregate grouped by the join keys (DataFusion's decorrelated scalar subquery) is then the INNER
join Spark SQL makes of the same subquery (`relations/join.py`). Read from the plan alone; relation kinds not
listed here have no known key (None), which only ever costs the rewrite, never correctness.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from substrait import algebra_pb2 as alg

from ..walk import emit_mapping, plain_field


@dataclass(frozen=True)
class Keyed:
    """A relation's output `width` and a unique `key` among its positions (empty: at most one row; None: no key
    known). `copies` maps a position that repeats another one's value (a Project's plain field) to that one."""

    width: int
    key: frozenset[int] | None
    copies: Mapping[int, int] = field(default_factory=dict)


def _aggregate(rel: alg.AggregateRel) -> Keyed | None:
    width = len(rel.grouping_expressions) + len(rel.measures)
    if not rel.groupings:
        return Keyed(width, frozenset())
    if len(rel.groupings) > 1:  # grouping sets: a key value repeats across sets
        return None
    used = set(rel.groupings[0].expression_references)
    if used != set(range(len(rel.grouping_expressions))):
        return None
    return Keyed(width, frozenset(used))


def _project(rel: alg.ProjectRel) -> Keyed | None:
    source = keyed(rel.input)
    if source is None:
        return None
    copies = dict(source.copies)
    for i, e in enumerate(rel.expressions):
        f = plain_field(e)
        if f is not None and 0 <= f < source.width:
            copies[source.width + i] = copies.get(f, f)
    return Keyed(source.width + len(rel.expressions), source.key, copies)


def _same_rows(body: alg.FilterRel | alg.SortRel | alg.FetchRel) -> Keyed | None:
    """Some of the input's rows, in its columns."""
    return keyed(body.input)


_HANDLERS: dict[str, Callable[..., Keyed | None]] = {
    "aggregate": _aggregate,
    "project": _project,
    "filter": _same_rows,
    "sort": _same_rows,
    "fetch": _same_rows,
}


def keyed(rel: alg.Rel) -> Keyed | None:
    """`rel`'s width and unique key after its emit, or None when either is not known."""
    kind = rel.WhichOneof("rel_type")
    handler = _HANDLERS.get(kind or "")
    if handler is None:
        return None
    body = getattr(rel, kind or "")
    inner = handler(body)
    if inner is None:
        return None
    mapping = emit_mapping(body, inner.width, "")
    if mapping is None:
        return inner
    if inner.key is None:
        return Keyed(len(mapping), None)
    origin = [inner.copies.get(m, m) for m in mapping]
    key = []
    for k in sorted(inner.key):
        if k not in origin:  # the emit drops a key column: the rows left need not be distinct
            return Keyed(len(mapping), None)
        key.append(origin.index(k))
    copies = {i: origin.index(o) for i, o in enumerate(origin) if origin.index(o) != i}
    return Keyed(len(mapping), frozenset(key), copies)
