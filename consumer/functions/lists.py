"""List and set functions (functions_list.yaml, functions_set.yaml)."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from .call import Call, Handler


def _index_in(c: Call) -> Column:
    needle, haystack = c.arity(2).cols
    pos = F.call_function("array_position", haystack, needle)  # F.array_position wants a Python value
    return F.when(pos > 0, pos - 1).cast(T.LongType())


LIST: dict[str, Handler] = {
    "index_in": _index_in,
}
