"""The function table: Substrait function base names mapped to native Spark builders, as data.

`SCALAR` and `AGGREGATE` are plain dicts so that users can add or replace entries (and `docs/functions.md`
can be generated from them). Names are matched on their base name (`equal` for `equal:any_any`);
an entry keyed `<extension stem>/<name>` (`unsigned_integers/add`) takes precedence for that extension's function.
`UNSUPPORTED` names standard-extension functions we do not map, with the reason (for docs/functions.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from ...loading.extensions import FunctionRef
from .aggregate import AGGREGATE, AGGREGATE_OPTIONS, AggregateHandler
from .call import UNKNOWN, ArgumentRule, Call, Handler, StaticArgument, StaticCall
from .options import Option, OptionRule
from .scalar import SCALAR, SCALAR_OPTIONS, SCALAR_RULES
from .unsupported import UNSUPPORTED

H = TypeVar("H")


def lookup(table: Mapping[str, H], ref: FunctionRef) -> H | None:
    """The handler for a declared function: extension-specific entry first, then the base name."""
    key = matched_key(table, ref)
    return table[key] if key is not None else None


def matched_key(table: Mapping[str, object], ref: FunctionRef) -> str | None:
    """The key of `table` a declared function resolves to (as `lookup`), or None."""
    return next((k for k in ref.keys if k in table), None)


# Function families by base name, for the checks and displays that need them.
COMPARISONS = frozenset(
    {"equal", "not_equal", "lt", "lte", "gt", "gte", "between", "is_distinct_from", "is_not_distinct_from"}
)
PREDICATES = COMPARISONS | {
    "is_null", "is_not_null", "and", "or", "not", "xor", "like", "contains", "starts_with", "ends_with",
    "is_nan", "isnan", "is_finite", "is_infinite",
}  # fmt: skip

__all__ = [
    "AGGREGATE",
    "AGGREGATE_OPTIONS",
    "COMPARISONS",
    "PREDICATES",
    "SCALAR",
    "SCALAR_OPTIONS",
    "SCALAR_RULES",
    "UNKNOWN",
    "UNSUPPORTED",
    "AggregateHandler",
    "ArgumentRule",
    "Call",
    "Handler",
    "Option",
    "OptionRule",
    "StaticArgument",
    "StaticCall",
    "lookup",
    "matched_key",
]
