"""Substrait types as text, in the spec's notation (`i32`, `decimal<15,2>?`, `list<string>`): what explain shows,
what a bound parameter's record says, what validate's messages name. Stage 0: every stage writes types this way.
"""

from __future__ import annotations

from substrait import algebra_pb2 as alg
from substrait import type_pb2 as tp

from .types import declared_user_types

UNKNOWN = "?"  # a type not known (explain's `?`)


def type_str(t: tp.Type) -> str:
    """A Substrait type in the spec's notation: `i32`, `decimal<15,2>`, `list<string>`; `?` marks nullable."""
    kind = t.WhichOneof("kind")
    if kind is None:
        return UNKNOWN
    body = getattr(t, kind)
    if kind == "decimal":
        text = f"decimal<{body.precision},{body.scale}>"
    elif kind in ("precision_time", "precision_timestamp", "precision_timestamp_tz"):
        text = f"{kind}<{body.precision}>"
    elif kind in ("fixed_char", "varchar", "fixed_binary"):
        text = f"{kind}<{body.length}>"
    elif kind == "struct":
        text = f"struct<{', '.join(type_str(f) for f in body.types)}>"
    elif kind == "list":
        text = f"list<{type_str(body.type)}>"
    elif kind == "map":
        text = f"map<{type_str(body.key)}, {type_str(body.value)}>"
    elif kind == "user_defined":
        name = declared_user_types().get(body.type_reference)  # `unsigned_integers/u8` while rendering a plan
        text = f"u!{name.rpartition('/')[2]}" if name else f"u!{body.type_reference}"
    else:
        text = kind
    return text + ("?" if getattr(body, "nullability", 0) == tp.Type.NULLABILITY_NULLABLE else "")


_LITERAL_TYPES = {
    "boolean": "boolean",
    "var_char": "varchar",
    "interval_year_to_month": "interval_year",
    "interval_day_to_second": "interval_day",
    "empty_list": "list",
    "empty_map": "map",
}


def literal_type(lit: alg.Expression.Literal) -> str:
    """A literal's type in the spec's notation (as `type_str`)."""
    kind = lit.WhichOneof("literal_type") or UNKNOWN
    suffix = "?" if lit.nullable else ""
    if kind == "null":
        return type_str(lit.null)
    if kind == "interval_compound":
        kind = compound_interval_kind(lit.interval_compound)
    if kind == "decimal":
        return f"decimal<{lit.decimal.precision},{lit.decimal.scale}>{suffix}"
    return _LITERAL_TYPES.get(kind, kind) + suffix


def compound_interval_kind(c: alg.Expression.Literal.IntervalCompound) -> str:
    """The literal kind a compound interval is to Spark (one rule for translation and validate): with no months, a
    day-time interval; with no days or seconds, a year-month one; with both, a compound (refused)."""
    ym, ds = c.interval_year_to_month, c.interval_day_to_second
    if ym.years * 12 + ym.months == 0:
        return "interval_day_to_second"
    if (ds.days * 86_400 + ds.seconds) * 10**ds.precision + ds.subseconds == 0:
        return "interval_year_to_month"
    return "interval_compound"
