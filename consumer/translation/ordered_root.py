"""The plan's output names given below the root's sorts, limits and HAVING filters (and projections that pass
their input through as it is), where Spark SQL gives them.

Spark SQL names a query's columns in the SELECT list, below its HAVING, ORDER BY and LIMIT: the aliases
become part of the aggregate or projection that computes the columns. Naming them above a sort or filter
instead leaves a Project of pure renames over it in the physical plan, which no optimizer rule removes. So
the root's chain of sorts, fetches and filters is translated over an input that already carries the names.

The relation that computes a column names it, as Spark SQL's aggregate or projection does
(`SubstraitConsumer.output_names`, by plan path: `computed_names`): an aggregate or a projection's computed
column, found below the chain through projections of plain columns, filters, sorts, fetches and joins (a join's
column comes unchanged from one side). Whatever is not named so is named by a projection over the relation
below the chain, below the sorts and fetches (not below a filter: Spark pushes a filter under a projection of
renames, which then stays), or at the root.

This applies when the sorts order by plain columns of their input (what SQL producers write), no relation of
the chain has an emit, and the names are flat and distinct (case-insensitively, as Spark resolves them).
The names are reserved (`NameSource.reserve`): a table read later, in a filter's subquery, does not keep a
column name that would clash with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import types as T
from substrait import algebra_pb2 as alg

from ..walk import descendants, plain_field
from .relation import Relation

_ABOVE_NAMES = ("sort", "fetch", "filter")  # relations that keep their input's columns


def _plain_column(e: alg.Expression) -> bool:
    return (
        e.WhichOneof("rex_type") == "selection"
        and e.selection.WhichOneof("root_type") in ("root_reference", None)
        and e.selection.direct_reference.WhichOneof("reference_type") == "struct_field"
        and not e.selection.direct_reference.struct_field.HasField("child")
    )


def _passes_through(rel: alg.Rel) -> bool:
    """A projection of its input's k columns as they are, in order (DataFusion's between a sort and a HAVING
    filter): k plain fields 0..k-1, emitted alone. (Over an input of other than k columns it is no such
    projection; it is translated as it is, and the names are given above it.)"""
    if rel.WhichOneof("rel_type") != "project":
        return False
    body = rel.project
    k = len(body.expressions)
    mapping = list(body.common.emit.output_mapping) if body.common.WhichOneof("emit_kind") == "emit" else None
    fields = [plain_field(e) for e in body.expressions]
    return k > 0 and fields == list(range(k)) and mapping == list(range(k, 2 * k))


@dataclass(frozen=True)
class Below:
    """The relation under the root's chain of sorts, fetches and filters, its path, and whether a filter is in
    the chain (Spark pushes a filter below a Project of renames: only the relation's own names avoid one)."""

    rel: alg.Rel
    path: str
    filtered: bool


def ordering_input(rel: alg.Rel, path: str) -> Below | None:
    """What is below the chain of sorts, fetches and filters at the top of `rel` (at `path`); None when `rel`
    starts with no such chain or the chain does not qualify (see the module's docstring)."""
    found = None
    filtered = False
    while (kind := rel.WhichOneof("rel_type") or "") in _ABOVE_NAMES or _passes_through(rel):
        body = getattr(rel, kind)
        if kind != "project" and body.common.WhichOneof("emit_kind") == "emit":
            return None
        if kind == "sort" and not all(_plain_column(s.expr) for s in body.sorts):
            return None
        filtered = filtered or kind == "filter"
        rel, path = body.input, f"{path}.{kind}.input"
        found = Below(rel, path, filtered)
    return found


def distinct(names: Sequence[str]) -> bool:
    """Whether Spark can tell the names apart (it compares them case-insensitively)."""
    return len({n.lower() for n in names}) == len(names)


def names_fit(names: Sequence[str], rel: Relation) -> bool:
    """Whether `names` can name `rel`'s columns in its frame: one flat, distinct name per column."""
    flat = not any(isinstance(t, T.StructType | T.ArrayType | T.MapType) for t in rel.types)
    return flat and len(names) == len(rel.names) and distinct(names) and not rel.hidden and not rel.pending


Wanted = list[str | None]  # a relation's columns by position: the name it should give each (None: its own)

_JOIN_SIDES = {  # join types whose output is the left input's columns then (True) the right input's, unchanged
    alg.JoinRel.JOIN_TYPE_INNER: True,
    alg.JoinRel.JOIN_TYPE_LEFT: True,
    alg.JoinRel.JOIN_TYPE_RIGHT: True,
    alg.JoinRel.JOIN_TYPE_OUTER: True,
    alg.JoinRel.JOIN_TYPE_LEFT_SEMI: False,
    alg.JoinRel.JOIN_TYPE_LEFT_ANTI: False,
}


def table_columns(plan: Any) -> frozenset[str]:
    """The (lower-case) column names of every table the plan reads: a name given below a join must not be one,
    or the join's two sides could hold the same name (a read keeps its table's names, `NameSource.claim`)."""
    return frozenset(n.lower() for r in descendants(plan, alg.ReadRel) for n in r.base_schema.names)


def computed_names(
    rel: alg.Rel, path: str, names: Sequence[str | None], tables: frozenset[str], expressions_only: bool
) -> dict[str, Wanted]:
    """The plan paths of the aggregates and projections that compute the columns `names` name (the output of
    `rel`, at `path`), each with the names it should give its own columns (by its output positions before
    its emit for an aggregate, after it for a projection). Empty when the names do not qualify (`distinct`,
    one per column: none for a struct's fields)."""
    found: dict[str, Wanted] = {}
    flat = width(rel, expressions_only) == len(names)  # no struct's field names among them
    if flat and distinct([n for n in names if n is not None]):
        _walk(rel, path, list(names), _Walk(tables, expressions_only, found))
    return found


@dataclass(frozen=True)
class _Walk:
    tables: frozenset[str]
    expressions_only: bool  # the producer's projection outputs its expressions only (`Quirks`)
    found: dict[str, Wanted]


def _walk(rel: alg.Rel, path: str, want: Wanted, w: _Walk) -> None:
    kind = rel.WhichOneof("rel_type")
    body: Any = getattr(rel, kind) if kind else None
    if kind is None or not any(want):
        return
    if kind == "project":  # its own columns after its emit; the plain ones are the input's, named below
        _walk_project(body, f"{path}.project", want, w)
        return
    inner = _before_emit(body, want)
    if inner is None:
        return
    at = f"{path}.{kind}"
    if kind in _ABOVE_NAMES:
        _walk(body.input, f"{at}.input", inner, w)
    elif kind == "aggregate" and len(body.groupings) <= 1:
        columns = len(body.grouping_expressions) + len(body.measures)
        w.found[at] = [*inner[:columns], *[None] * (columns - len(inner))]
    elif (both := _both_sides(kind, body)) is not None:
        # A table's own column name could be held by the other side too: that column is named above the join.
        inner = [None if n is None or n.lower() in w.tables else n for n in inner]
        left = width(body.left, w.expressions_only) if both else len(inner)
        if left is not None:
            _walk(body.left, f"{at}.left", inner[:left], w)
            _walk(body.right, f"{at}.right", inner[left:], w)


def _both_sides(kind: str | None, body: Any) -> bool | None:
    """Whether a join's output is both inputs' columns (False: the left one's only); None: not such a join."""
    if kind == "cross":
        return True
    return _JOIN_SIDES.get(body.type) if kind == "join" else None


def _walk_project(body: alg.ProjectRel, path: str, want: Wanted, w: _Walk) -> None:
    n_input = width(body.input, w.expressions_only)
    if n_input is None:
        return
    start = 0 if w.expressions_only else n_input
    total = start + len(body.expressions)
    mapping = _emit(body) or list(range(total))
    below: Wanted = [None] * n_input
    own: Wanted = [None] * len(mapping)
    for i, (m, name) in enumerate(zip(mapping, want, strict=False)):
        source = m if m < start else plain_field(body.expressions[m - start]) if m < total else None
        if source is None or not 0 <= source < n_input:
            own[i] = name  # a column this projection computes
        elif below[source] is None:
            below[source] = name
    if any(own):
        w.found[path] = own
    _walk(body.input, f"{path}.input", below, w)


def _emit(body: Any) -> list[int] | None:
    common = getattr(body, "common", None)
    if common is None or common.WhichOneof("emit_kind") != "emit":
        return None
    return list(common.emit.output_mapping)


def _before_emit(body: Any, want: Wanted) -> Wanted | None:
    """`want` for the relation's columns before its emit (a column emitted twice keeps its first name)."""
    mapping = _emit(body)
    if mapping is None:
        return want
    if len(mapping) != len(want):
        return None
    inner: Wanted = [None] * (max(mapping, default=-1) + 1)
    for m, name in zip(mapping, want, strict=True):
        if inner[m] is None:
            inner[m] = name
    return inner


def width(rel: alg.Rel, expressions_only: bool) -> int | None:
    """The number of columns `rel` outputs, where it is worked out from the plan alone (else None)."""
    kind = rel.WhichOneof("rel_type")
    body: Any = getattr(rel, kind) if kind else None
    mapping = _emit(body) if body is not None else None
    if mapping is not None:
        return len(mapping)
    if kind in _ABOVE_NAMES:
        return width(body.input, expressions_only)
    if kind == "read" and not body.HasField("projection"):
        return len(body.base_schema.struct.types)
    if kind == "aggregate":
        return len(body.grouping_expressions) + len(body.measures) + (1 if len(body.groupings) > 1 else 0)
    if kind == "project":
        inner = 0 if expressions_only else width(body.input, expressions_only)
        return None if inner is None else inner + len(body.expressions)
    if (both := _both_sides(kind, body)) is not None:
        left = width(body.left, expressions_only)
        right = width(body.right, expressions_only) if both else 0
        return None if left is None or right is None else left + right
    return None
