"""Rewrites of the fields Substrait 0.108 removed into their modern equivalents, on a superset message.

The loader parses old plans against ``superset`` (0.108 plus the removed fields), then ``upgrade`` rewrites
each removed field in place into what 0.108 says instead, so the re-read with the standard classes finds
no unknown field. Each rule that fires adds one note (with the first plan path and a count) for the run
report. A removed field without an exact modern meaning is a PlanInvalidError naming its path.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import Message

from ...errors import PlanInvalidError
from ...walk import children

# Old timestamp/time types and literals counted microseconds: precision 6 in the precision_* forms.
MICROS = 6
EQ = 1  # ComparisonJoinKey.SimpleComparisonType.SIMPLE_COMPARISON_TYPE_EQ
_STANDARD_URI = re.compile(
    r"^(?:https?://(?:(?:www\.)?github\.com/substrait-io/substrait/(?:blob|raw)/[^/]+/extensions/"
    r"|raw\.githubusercontent\.com/substrait-io/substrait/[^/]+/extensions/"
    r"|(?:www\.)?substrait\.io/extensions/)"
    r"|/)(functions_\w+)\.yaml$"
)


# A message of the superset pool (superset.py): built at run time with the removed fields, which no stub declares,
# so the rules read and write them untyped.
Old = Any


def urn_for_uri(uri: str) -> str:
    """The URN of an extension URI: the standard extension files by name, any other URI as written."""
    m = _STANDARD_URI.match(uri)
    return f"extension:io.substrait:{m.group(1)}" if m else uri


@dataclass
class Notes:
    """Where each rule fired, in order of first use."""

    hits: dict[str, list[str]] = field(default_factory=dict)

    def add(self, rule: str, path: str) -> None:
        self.hits.setdefault(rule, []).append(path)

    def lines(self) -> list[str]:
        out = []
        for rule, paths in self.hits.items():
            more = f" and {len(paths) - 1} more" if len(paths) > 1 else ""
            out.append(f"{rule} at {paths[0]}{more}" if paths[0] else rule)  # "": the plan itself
        return out


def _at(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _extension_uris(plan: Old, path: str, notes: Notes) -> None:
    """extension_uris → extension_urns; each declaration's extension_uri_reference → extension_urn_reference."""
    decls = [getattr(e, kind) for e in plan.extensions if (kind := e.WhichOneof("mapping_type"))]
    if not len(plan.extension_uris) and not any(d.extension_uri_reference for d in decls):
        return
    urns = {u.extension_urn_anchor: u.urn for u in plan.extension_urns}
    declared = set(urns)  # a declaration naming one of these keeps it
    by_text = {urn: anchor for anchor, urn in urns.items()}
    to_urn: dict[int, int] = {}
    for u in plan.extension_uris:
        text = urn_for_uri(u.uri)
        anchor = by_text.get(text)
        if anchor is None:
            anchor = u.extension_uri_anchor if u.extension_uri_anchor not in urns else max(urns) + 1
            plan.extension_urns.add(extension_urn_anchor=anchor, urn=text)
            urns[anchor], by_text[text] = text, anchor
        to_urn[u.extension_uri_anchor] = anchor
    for decl in decls:
        ref = decl.extension_uri_reference
        if ref and decl.extension_urn_reference not in declared and ref in to_urn:
            decl.extension_urn_reference = to_urn[ref]
        decl.ClearField("extension_uri_reference")
    plan.ClearField("extension_uris")
    notes.add("extension_uris read as extension_urns (standard extension files by name)", path)


def _fetch(rel: Old, path: str, notes: Notes) -> None:
    """FetchRel.offset/count → offset_expr/count_expr i64 literals; the old count -1 (ALL) is no count."""
    for old, new in (("offset", "offset_expr"), ("count", "count_expr")):
        if not rel.HasField(old):
            continue
        value = getattr(rel, old)
        if rel.HasField(new):
            raise PlanInvalidError(f"FetchRel sets both {old} and {new}", _at(path, old))
        if value < (-1 if old == "count" else 0):
            raise PlanInvalidError(f"negative fetch {old} {value}", _at(path, old))
        if value > 0 or (value == 0 and old == "count"):  # offset 0 is no offset; count -1 no count
            getattr(rel, new).literal.i64 = value
        rel.ClearField(old)
        notes.add(f"FetchRel.{old} read as {new}", path)


def _virtual_table(table: Old, path: str, notes: Notes) -> None:
    """VirtualTable.values (rows as struct literals) → expressions (rows of literal expressions)."""
    if not len(table.values):
        return
    if len(table.expressions):
        raise PlanInvalidError("virtual table with both values and expressions", _at(path, "values"))
    for row in table.values:
        out = table.expressions.add()
        for lit in row.fields:
            out.fields.add().literal.CopyFrom(lit)
    table.ClearField("values")
    notes.add("VirtualTable.values read as expressions", path)


def _args(fn: Old, path: str, notes: Notes) -> None:
    """args → arguments[{value}] (ignored, as before, when arguments is set too); enum args → arguments[{enum}]."""
    if not len(fn.args):
        return
    if not len(fn.arguments):
        for i, e in enumerate(fn.args):
            arg = fn.arguments.add()
            if e.WhichOneof("rex_type") != "enum":
                arg.value.CopyFrom(e)
            elif e.enum.WhichOneof("enum_kind") == "specified":
                arg.enum = e.enum.specified
            else:
                raise PlanInvalidError("unspecified enum argument has no modern form", f"{path}.args[{i}].enum")
    fn.ClearField("args")
    notes.add(f"{fn.DESCRIPTOR.name}.args read as arguments", path)


def _blob(e: Old) -> bytes:
    return e.SerializeToString(deterministic=True)


def _check_both(rel: Old, grouping: Old, path: str) -> None:
    """A grouping written both ways (DataFusion 55 does, for older consumers) must say the same thing twice:
    its inline expressions are, in order, the AggregateRel expressions its references name."""
    inline, refs = grouping.grouping_expressions, grouping.expression_references
    if len(inline) != len(refs):
        raise PlanInvalidError(
            f"grouping has {len(inline)} inline grouping_expressions but {len(refs)} expression_references", path
        )
    for i, (e, r) in enumerate(zip(inline, refs, strict=True)):
        if not 0 <= r < len(rel.grouping_expressions):
            raise PlanInvalidError(
                f"expression_references[{i}] = {r} is out of range of the AggregateRel's "
                f"{len(rel.grouping_expressions)} grouping_expressions",
                path,
            )
        if _blob(e) != _blob(rel.grouping_expressions[r]):
            raise PlanInvalidError(
                f"inline grouping_expressions[{i}] differs from AggregateRel.grouping_expressions[{r}] named by "
                f"expression_references[{i}]: the grouping's two spellings disagree",
                path,
            )


def _groupings(rel: Old, path: str, notes: Notes) -> None:
    """Grouping.grouping_expressions → AggregateRel.grouping_expressions (equal ones once) + expression_references.

    A grouping that also has expression_references keeps them, once checked to agree with its inline copy."""
    if not any(len(g.grouping_expressions) for g in rel.groupings):
        return
    seen = {_blob(e): i for i, e in enumerate(rel.grouping_expressions)}
    both = False
    for g, grouping in enumerate(rel.groupings):
        if len(grouping.expression_references) and len(grouping.grouping_expressions):
            _check_both(rel, grouping, f"{path}.groupings[{g}]")
            both = True
        else:
            for e in grouping.grouping_expressions:
                blob = _blob(e)
                if blob not in seen:
                    seen[blob] = len(rel.grouping_expressions)
                    rel.grouping_expressions.add().CopyFrom(e)
                grouping.expression_references.append(seen[blob])
        grouping.ClearField("grouping_expressions")
    if both:
        notes.add("Grouping.grouping_expressions (equal to its expression_references) dropped", path)
    else:
        notes.add("Grouping.grouping_expressions read as AggregateRel.grouping_expressions", path)


def _join_keys(rel: Old, path: str, notes: Notes) -> None:
    """left_keys/right_keys (pairwise equality) → keys with the simple comparison EQ."""
    if not len(rel.left_keys) and not len(rel.right_keys):
        return
    if len(rel.left_keys) != len(rel.right_keys):
        raise PlanInvalidError(f"{len(rel.left_keys)} left_keys for {len(rel.right_keys)} right_keys", path)
    if len(rel.keys):
        raise PlanInvalidError(f"{rel.DESCRIPTOR.name} sets both left_keys/right_keys and keys", path)
    for left, right in zip(rel.left_keys, rel.right_keys, strict=True):
        key = rel.keys.add()
        key.left.CopyFrom(left)
        key.right.CopyFrom(right)
        key.comparison.simple = EQ
    rel.ClearField("left_keys")
    rel.ClearField("right_keys")
    notes.add(f"{rel.DESCRIPTOR.name}.left_keys/right_keys read as keys (EQ)", path)


_PRECISION_KINDS = {
    "timestamp": "precision_timestamp",
    "timestamp_tz": "precision_timestamp_tz",
    "time": "precision_time",
}


def _type(t: Old, path: str, notes: Notes) -> None:
    """Type.timestamp/timestamp_tz/time → precision_* with precision 6; user_defined_type_reference → user_defined."""
    kind = t.WhichOneof("kind")
    if kind in _PRECISION_KINDS:
        old = getattr(t, kind)
        new = getattr(t, _PRECISION_KINDS[kind])  # setting it clears the old member of the oneof
        new.type_variation_reference = old.type_variation_reference
        new.nullability = old.nullability
        new.precision = MICROS
        notes.add(f"type {kind} read as {_PRECISION_KINDS[kind]}({MICROS})", path)
    elif kind == "user_defined_type_reference":
        t.user_defined.type_reference = t.user_defined_type_reference
        notes.add("type user_defined_type_reference read as user_defined", path)


def _literal(lit: Old, path: str, notes: Notes) -> None:
    """Literal.timestamp/timestamp_tz/time (microseconds) → precision_* literals with precision 6."""
    kind = lit.WhichOneof("literal_type")
    if kind in _PRECISION_KINDS:
        value = getattr(lit, kind)
        new = getattr(lit, _PRECISION_KINDS[kind])
        new.precision = MICROS
        new.value = value
        notes.add(f"literal {kind} read as {_PRECISION_KINDS[kind]}({MICROS})", path)


def _interval(i: Old, path: str, notes: Notes) -> None:
    """IntervalDayToSecond.microseconds → subseconds with precision 6."""
    if not i.HasField("microseconds"):
        return
    if i.precision or i.subseconds:
        raise PlanInvalidError("interval sets both microseconds and precision/subseconds", _at(path, "microseconds"))
    i.subseconds = i.microseconds
    i.precision = MICROS
    i.ClearField("microseconds")
    notes.add(f"IntervalDayToSecond.microseconds read as subseconds (precision {MICROS})", path)


def _expression(e: Old, path: str, notes: Notes) -> None:
    """Expression.enum outside a function's args had no defined meaning, and has no modern form."""
    if e.WhichOneof("rex_type") == "enum":
        raise PlanInvalidError("Expression.enum (removed from Substrait) has a meaning only as a function's arg", path)


Rule = Callable[[Old, str, Notes], None]
RULES: dict[str, Rule] = {
    "substrait.Plan": _extension_uris,
    "substrait.ExtendedExpression": _extension_uris,
    "substrait.FetchRel": _fetch,
    "substrait.ReadRel.VirtualTable": _virtual_table,
    "substrait.Expression.ScalarFunction": _args,
    "substrait.AggregateFunction": _args,
    "substrait.Expression.WindowFunction": _args,
    "substrait.AggregateRel": _groupings,
    "substrait.HashJoinRel": _join_keys,
    "substrait.MergeJoinRel": _join_keys,
    "substrait.Type": _type,
    "substrait.Expression.Literal": _literal,
    "substrait.Expression.Literal.IntervalDayToSecond": _interval,
    "substrait.Expression": _expression,
}


def upgrade(msg: Message) -> list[str]:
    """Rewrite every removed field in a superset message tree in place; one note per rule that fired.

    Each rule runs before the walk descends, so what it creates (arguments, expressions) is visited too.
    """
    notes = Notes()
    stack = [(msg, "")]
    while stack:
        m, path = stack.pop()
        rule = RULES.get(m.DESCRIPTOR.full_name)
        if rule is not None:
            rule(m, path, notes)
        stack.extend(reversed(list(children(m, path))))
    return notes.lines()
