"""Functions internal to a producer that its plans carry, each with the producer's defined meaning.

Their keys name the extension `producers.FUNCTION_ALIASES` gives them (`duckdb_internal/...` for
`extension:org.duckdb:duckdb_internal`): only that producer's plans declare them there, so a like-named function
of another producer stays unsupported.
"""

from __future__ import annotations

import operator

from pyspark.sql import Column
from pyspark.sql import functions as F

from ...errors import PlanInvalidError
from .build import balanced
from .call import Call, Handler


def _constant_or_null(c: Call) -> Column:
    """DuckDB's constant_or_null(c, args...): `c` when every arg is non-null, else NULL (its optimizer writes it)."""
    if len(c.values) < 2:
        raise PlanInvalidError(f"{c.ref.name} takes a value and at least one argument, got {len(c.values)}", c.path)
    value, *args = c.values
    every_given = balanced(operator.and_, [a.col.isNotNull() for a in args])
    return c.declared(F.when(every_given, value.col))


INTERNAL: dict[str, Handler] = {
    "duckdb_internal/constant_or_null": _constant_or_null,
}
