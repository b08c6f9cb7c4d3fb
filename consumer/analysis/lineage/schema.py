"""Column names of NamedStructs and of root outputs, without Spark types (lineage imports no pyspark).

A NamedStruct's `names` holds the nested struct field names too, depth-first; the top-level columns are found by
skipping each column's nested names, as `consumer.types.schema_of` does.
"""

from __future__ import annotations

from ...errors import PlanInvalidError
from ...walk import nested_name_count
from .model import Col


def named_columns(cols: list[Col], names: list[str], path: str) -> list[tuple[str, Col]]:
    """A root's columns under the names the plan gives them (`RelRoot.names`, nested names included), as the
    consumer reads them; unnamed columns are `#<position>`."""
    if not names:
        return [(f"#{i}", c) for i, c in enumerate(cols)]
    if len(names) == len(cols) - 1 and cols and cols[-1].grouping_index:
        cols = cols[:-1]  # Calcite-based producers (Isthmus) neither name nor keep the grouping-set index column
    top, k = [], 0
    for c in cols:
        if k >= len(names):
            break
        top.append(names[k])
        k += 1 + nested_name_count(c.type)
    if len(top) == len(cols) and k == len(names):
        return list(zip(top, cols, strict=True))
    if len(names) == len(cols):  # a column's type unknown here (an expression without output type): flat names
        return list(zip(names, cols, strict=True))
    raise PlanInvalidError(f"{len(names)} output names for {len(cols)} columns", f"{path}.names")
