"""Column names of NamedStructs and of root outputs, without Spark types (lineage imports no pyspark).

A NamedStruct's `names` holds the nested struct field names too, depth-first; the top-level columns are found by
skipping each column's nested names, as `consumer.types.schema_of` does.
"""

from __future__ import annotations

from substrait import type_pb2 as tp

from ..errors import PlanInvalidError
from .model import Col


def nested_name_count(t: tp.Type | None) -> int:
    """Names a NamedStruct spends on the nested struct fields of a column (depth-first)."""
    if t is None:
        return 0
    kind = t.WhichOneof("kind")
    if kind == "struct":
        return sum(1 + nested_name_count(ft) for ft in t.struct.types)
    if kind == "list":
        return nested_name_count(t.list.type)
    if kind == "map":
        return nested_name_count(t.map.key) + nested_name_count(t.map.value)
    return 0


def columns_of(named: tp.NamedStruct, path: str) -> list[tuple[str, tp.Type]]:
    """Top-level (name, type) pairs of a NamedStruct."""
    types, names = list(named.struct.types), list(named.names)
    out, i = [], 0
    for t in types:
        if i >= len(names):
            raise PlanInvalidError(f"{len(names)} names for {len(types)} columns", path)
        out.append((names[i], t))
        i += 1 + nested_name_count(t)
    if i != len(names):
        raise PlanInvalidError(f"{len(names)} names do not match {len(types)} columns", path)
    return out


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
