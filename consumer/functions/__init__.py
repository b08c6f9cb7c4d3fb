"""The function table: Substrait function base names mapped to native Spark builders, as data.

`SCALAR` and `AGGREGATE` are plain dicts so that users can add or replace entries (and `docs/functions.md`
can be generated from them). Names are matched on their base name (`equal` for `equal:any_any`).
"""

from __future__ import annotations

from .aggregate import AGGREGATE, AggregateHandler
from .call import Call, Handler
from .scalar import SCALAR

# Function families by base name, for the checks and displays that need them.
COMPARISONS = frozenset(
    {"equal", "not_equal", "lt", "lte", "gt", "gte", "between", "is_distinct_from", "is_not_distinct_from"}
)
PREDICATES = COMPARISONS | {
    "is_null", "is_not_null", "and", "or", "not", "xor", "like", "contains", "starts_with", "ends_with",
    "is_nan", "isnan", "is_finite", "is_infinite",
}  # fmt: skip

__all__ = ["AGGREGATE", "COMPARISONS", "PREDICATES", "SCALAR", "AggregateHandler", "Call", "Handler"]
