"""Outer references by `rel_reference` read as the `steps_out` form where they name the record a subquery's
enclosing query evaluates.

A subquery's outer reference reads the record of the relation whose expression holds the subquery: its input's
output. Spec 0.106 names that record by the input relation's `RelCommon.rel_anchor` (`rel_reference`; `steps_out`,
the count of subquery boundaries, is deprecated), and the `substrait` Python package writes correlated EXISTS, IN
and scalar subqueries that way. The loader rewrites each such reference into its `steps_out` equivalent, so that
validation, translation and lineage see one form. A `rel_reference` naming anything else (a LateralJoinRel's left
input: translation/relations/lateral.py reads those; a join side) is left as written.
"""

from __future__ import annotations

from google.protobuf.message import Message
from substrait import algebra_pb2 as alg

from ..walk import children

FieldReference = alg.Expression.FieldReference


def _input_anchor(rel: alg.Rel) -> int | None:
    """The rel_anchor of a single-input relation's input, when it has one (0 is no anchor)."""
    kind = rel.WhichOneof("rel_type")
    body = getattr(rel, kind) if kind else None
    if body is None or "input" not in body.DESCRIPTOR.fields_by_name or not body.HasField("input"):
        return None
    source = body.input
    source_kind = source.WhichOneof("rel_type")
    source_body = getattr(source, source_kind) if source_kind else None
    if source_body is None or "common" not in source_body.DESCRIPTOR.fields_by_name:
        return None
    return source_body.common.rel_anchor or None


def resolve_rel_references(plan: Message) -> list[str]:
    """Rewrite, in place, every outer `rel_reference` that names an enclosing subquery's record; notes for the
    run report."""
    rewritten: list[str] = []
    _visit(plan, "", [], None, rewritten)
    if not rewritten:
        return []
    more = f" and {len(rewritten) - 1} more" if len(rewritten) > 1 else ""
    return [f"outer reference rel_reference read as steps_out at {rewritten[0]}{more}"]


def _visit(msg: Message, path: str, scopes: list[int | None], holder: int | None, out: list[str]) -> None:
    """`scopes`: for each subquery boundary crossed, the anchor of the record outside it (innermost last);
    `holder`: the anchor of the record the expressions of the current relation read."""
    if isinstance(msg, alg.Rel):
        holder = _input_anchor(msg)
    elif isinstance(msg, FieldReference) and msg.WhichOneof("root_type") == "outer_reference":
        ref = msg.outer_reference
        if ref.WhichOneof("outer_reference_type") == "rel_reference":
            for k in range(len(scopes) - 1, -1, -1):
                if scopes[k] == ref.rel_reference:
                    ref.steps_out = len(scopes) - k  # replaces rel_reference (one oneof)
                    out.append(path)
                    break
    inner = [*scopes, holder] if isinstance(msg, alg.Expression.Subquery) else scopes
    for child, p in children(msg, path):
        _visit(child, p, inner, holder, out)
