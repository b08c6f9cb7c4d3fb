"""Writes, DDL and updates: each records an `Output` for the table (or view) it changes, in plan order, and
returns the relation's own output (its records: MODIFIED_RECORDS rows, else none).

- WriteRel INSERT / CTAS / UPDATE (after-images): table column k is the input's column k.
- WriteRel DELETE: the rows that remain are the table's own (IDENTITY); the input — the rows to delete —
  is INDIRECT FILTER of the whole table.
- DdlRel on a view with a definition (CREATE, CREATE_OR_REPLACE, ALTER): view column k is the definition's
  column k. Other DDL moves no data: the table is listed with its columns and no input.
- UpdateRel: a transformed column is its new value's lineage — and, under a condition, also its old value
  (rows the condition leaves alone keep it), with the condition INDIRECT CONDITIONAL; other columns are their
  own (IDENTITY).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from substrait import algebra_pb2 as alg

from ...errors import PlanInvalidError, UnsupportedFeatureError
from ...walk import columns_of, update_transformations
from .model import CONDITIONAL, FILTER, IDENTITY, NONE, Col, InputField, Output, RelLineage, Scope, apply, merge

if TYPE_CHECKING:
    from .walker import LineageWalker

WriteRel = alg.WriteRel
DdlRel = alg.DdlRel
_DEFINES_VIEW = {DdlRel.DDL_OP_CREATE, DdlRel.DDL_OP_CREATE_OR_REPLACE, DdlRel.DDL_OP_ALTER}


def _op_name(enum, value: int, prefix: str, path: str) -> str:
    if value not in enum.values() or enum.Name(value).endswith("UNSPECIFIED"):
        raise PlanInvalidError(f"{prefix.lower().rstrip('_')} {value} unspecified or unknown", path)
    return enum.Name(value).removeprefix(prefix).lower()


def _schema(rel, what: str, path: str, required: bool = True):
    if not rel.table_schema.names:
        if required:
            raise PlanInvalidError(f"{what} with no table_schema", f"{path}.table_schema")
        return []
    return columns_of(rel.table_schema, f"{path}.table_schema")


def _fits(src: RelLineage, columns: list, path: str) -> None:
    if len(src.columns) != len(columns):
        raise PlanInvalidError(f"the input has {len(src.columns)} columns, table_schema {len(columns)}", path)


def _own(dataset, columns) -> list[Col]:
    return [Col({InputField(dataset, n): frozenset({IDENTITY})}, t) for n, t in columns]


def write(w: LineageWalker, rel: alg.WriteRel, path: str, outer: Scope | None) -> RelLineage:
    kind = rel.WhichOneof("write_type")
    if kind is None:
        raise PlanInvalidError("write with no target set", path)
    if kind != "named_table":
        raise UnsupportedFeatureError(f"write to an {kind}", f"{path}.{kind}")
    op = _op_name(WriteRel.WriteOp, rel.op, "WRITE_OP_", f"{path}.op")
    columns = _schema(rel, "write", path)
    dataset = w.dataset(list(rel.named_table.names), f"{path}.named_table")
    src = w.rel(rel.input, f"{path}.input", outer)
    _fits(src, columns, f"{path}.input")
    names = [n for n, _ in columns]
    if op == "delete":
        w.read(dataset, "written_table", names)
        deciding = merge(*(apply(FILTER, c.sources) for c in src.columns), apply(FILTER, src.indirect))
        written = [(n, c.sources) for n, c in zip(names, _own(dataset, columns), strict=True)]
        w.outputs.append(Output("write", path, written, deciding, dataset, op))
    else:
        written = [(n, c.sources) for n, c in zip(names, src.columns, strict=True)]
        w.outputs.append(Output("write", path, written, src.indirect, dataset, op))
    if rel.output == WriteRel.OUTPUT_MODE_MODIFIED_RECORDS:
        return RelLineage([Col(c.sources, t) for c, (_, t) in zip(src.columns, columns, strict=True)], src.indirect)
    return RelLineage([Col(NONE, t) for _, t in columns])


def ddl(w: LineageWalker, rel: alg.DdlRel, path: str, outer: Scope | None) -> RelLineage:
    kind = rel.WhichOneof("write_type")
    if kind != "named_object":
        raise (PlanInvalidError if kind is None else UnsupportedFeatureError)(f"DDL on {kind or 'nothing'}", path)
    if rel.object not in (DdlRel.DDL_OBJECT_TABLE, DdlRel.DDL_OBJECT_VIEW):
        raise PlanInvalidError(f"DDL object {rel.object}", f"{path}.object")
    what = "view" if rel.object == DdlRel.DDL_OBJECT_VIEW else "table"
    op = _op_name(DdlRel.DdlOp, rel.op, "DDL_OP_", f"{path}.op")
    columns = _schema(rel, "DDL", path, required=op not in ("drop", "drop_if_exist"))
    dataset = w.dataset(list(rel.named_object.names), f"{path}.named_object")
    names = [n for n, _ in columns]
    written, indirect = [(n, NONE) for n in names], NONE
    if what == "view" and rel.op in _DEFINES_VIEW:
        if not rel.HasField("view_definition"):
            raise PlanInvalidError("view DDL with no view_definition", f"{path}.view_definition")
        src = w.rel(rel.view_definition, f"{path}.view_definition")
        _fits(src, columns, f"{path}.view_definition")
        written = [(n, c.sources) for n, c in zip(names, src.columns, strict=True)]
        indirect = src.indirect
    w.outputs.append(Output("ddl", path, written, indirect, dataset, f"{op}_{what}"))
    return RelLineage([Col(NONE, t) for _, t in columns])


def update(w: LineageWalker, rel: alg.UpdateRel, path: str, outer: Scope | None) -> RelLineage:
    if rel.WhichOneof("update_type") != "named_table":
        raise PlanInvalidError("update with no target table", path)
    columns = _schema(rel, "update", path)
    dataset = w.dataset(list(rel.named_table.names), f"{path}.named_table")
    names = [n for n, _ in columns]
    w.read(dataset, "written_table", names)
    own = _own(dataset, columns)
    scope = Scope(own, outer)
    condition = w.expr(rel.condition, scope, f"{path}.condition") if rel.HasField("condition") else None
    values = [c.sources for c in own]
    for target, expr, at in update_transformations(rel, len(columns), path):
        new = w.expr(expr, scope, at)
        values[target] = new if condition is None else merge(own[target].sources, new, apply(CONDITIONAL, condition))
    w.outputs.append(Output("update", path, list(zip(names, values, strict=True)), NONE, dataset, "update"))
    return RelLineage([Col(NONE, t) for _, t in columns])
