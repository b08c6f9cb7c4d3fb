"""The plan's output names given below the root's sorts, limits and HAVING filters (and projections that pass
their input through as it is), where Spark SQL gives them.

Spark SQL names a query's columns in the SELECT list, below its HAVING, ORDER BY and LIMIT: the aliases
become part of the aggregate or projection that computes the columns. Naming them above a sort or filter
instead leaves a Project of pure renames over it in the physical plan, which no optimizer rule removes. So
the root's chain of sorts, fetches and filters is translated over an input that already carries the names.

An aggregate right below the chain gives its columns the plan's names itself (`SubstraitConsumer.output_names`),
as Spark SQL's aggregate does; any other relation is named by a projection over it, below the sorts and
fetches (not below a filter: Spark pushes a filter under a projection of renames, which then stays).

This applies when the sorts order by plain columns of their input (what SQL producers write), no relation of
the chain has an emit, and the names are flat and distinct (case-insensitively, as Spark resolves them).
The names are reserved (`NameSource.reserve`): a table read later, in a filter's subquery, does not keep a
column name that would clash with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import types as T
from substrait import algebra_pb2 as alg

from ..walk import plain_field
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

    def aggregate_path(self) -> str | None:
        """The path of the aggregate that computes the root's columns itself (no emit), or None."""
        if (
            self.rel.WhichOneof("rel_type") != "aggregate"
            or self.rel.aggregate.common.WhichOneof("emit_kind") == "emit"
        ):
            return None
        return f"{self.path}.aggregate"


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
