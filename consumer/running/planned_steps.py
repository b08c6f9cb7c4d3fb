"""The write, DDL and update steps a plan would make, read from the plan alone: what `explain` shows for a plan
with steps (it commits nothing). Each step's kind and target as a run records them (`running/steps`), what it
would do in words, and the relation feeding it (a write's input, a view's definition), whose physical plan
`explain` prints."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from google.protobuf.message import Message
from substrait import algebra_pb2 as alg
from substrait.plan_pb2 import Plan

from ..walk import nodes
from .report import StepKind

WriteRel = alg.WriteRel
DdlRel = alg.DdlRel


@dataclass(frozen=True)
class PlannedStep:
    """A step of the plan before it runs."""

    index: int
    path: str
    kind: StepKind | None  # None: an op the plan leaves unspecified (a run refuses it)
    target: str  # the names the plan gives, dotted (a run resolves them in the write catalog)
    names: tuple[str, ...]
    does: str  # what it would do, in words
    input: alg.Rel | None = None
    input_path: str = ""
    columns: tuple[str, ...] = ()  # the names the step gives its input's columns (a write's table_schema)

    def line(self) -> str:
        return f"Step {self.index} at {self.path}: {self.kind or 'unspecified'} {self.target}: {self.does}"


_CREATE_MODES = {
    WriteRel.CREATE_MODE_UNSPECIFIED: "fails if it exists",
    WriteRel.CREATE_MODE_ERROR_IF_EXISTS: "fails if it exists",
    WriteRel.CREATE_MODE_IGNORE_IF_EXISTS: "left alone if it exists",
    WriteRel.CREATE_MODE_REPLACE_IF_EXISTS: "replaced if it exists",
    WriteRel.CREATE_MODE_APPEND_IF_EXISTS: "appended to if it exists",
}

_WRITES: dict[StepKind, str] = {
    StepKind.INSERT: "appends the rows of its input",
    StepKind.DELETE: "deletes the table's rows its input selects",
    StepKind.UPDATE: "replaces rows by its input's after-images, matched by key",
    StepKind.CTAS: "creates the table with the rows of its input",
}

_DDL: dict[StepKind, str] = {
    StepKind.CREATE_TABLE: "creates the table (no rows)",
    StepKind.CREATE_OR_REPLACE_TABLE: "creates the table, replacing one there (no rows)",
    StepKind.ALTER_TABLE: "changes the table's columns",
    StepKind.DROP_TABLE: "drops the table (fails if it is not there)",
    StepKind.DROP_IF_EXIST_TABLE: "drops the table if it is there",
    StepKind.CREATE_VIEW: "creates the view of its definition",
    StepKind.CREATE_OR_REPLACE_VIEW: "creates the view of its definition, replacing one there",
    StepKind.ALTER_VIEW: "changes the view's definition",
    StepKind.DROP_VIEW: "drops the view (fails if it is not there)",
    StepKind.DROP_IF_EXIST_VIEW: "drops the view if it is there",
}


def _kind(make: Callable[[], StepKind]) -> StepKind | None:
    try:
        return make()
    except ValueError:  # an op (or object) the plan leaves unspecified
        return None


def _write(index: int, r: alg.WriteRel, path: str) -> PlannedStep:
    names = tuple(r.named_table.names)
    kind = _kind(lambda: StepKind.of_op(WriteRel.WriteOp.Name(r.op).removeprefix("WRITE_OP_")))
    does = _WRITES.get(kind, "a write op a run refuses") if kind else "a write with no op (a run refuses it)"
    if kind is StepKind.CTAS:
        does += f" ({_CREATE_MODES.get(r.create_mode, 'an unknown create mode')})"
    has_input = r.HasField("input")
    columns = tuple(r.table_schema.names)
    rel = r.input if has_input else None
    return PlannedStep(index, path, kind, ".".join(names), names, does, rel, f"{path}.input", columns)


def _ddl(index: int, r: alg.DdlRel, path: str) -> PlannedStep:
    names = tuple(r.named_object.names)
    obj = {DdlRel.DDL_OBJECT_TABLE: "table", DdlRel.DDL_OBJECT_VIEW: "view"}.get(r.object)
    kind = _kind(lambda: StepKind.of_op(DdlRel.DdlOp.Name(r.op).removeprefix("DDL_OP_"), obj)) if obj else None
    does = _DDL.get(kind, "a DDL op a run refuses") if kind else "a DDL op or object a run refuses"
    rel = r.view_definition if r.HasField("view_definition") else None
    columns = tuple(r.table_schema.names)
    return PlannedStep(index, path, kind, ".".join(names), names, does, rel, f"{path}.view_definition", columns)


def _update(index: int, r: alg.UpdateRel, path: str) -> PlannedStep:
    names = tuple(r.named_table.names)
    cols = len(r.transformations)
    where = "matching its condition" if r.HasField("condition") else "(all rows: no condition)"
    return PlannedStep(index, path, StepKind.UPDATE, ".".join(names), names, f"sets {cols} column(s) of rows {where}")


_STEPS: dict[type[Message], Callable[[int, Message, str], PlannedStep]] = {
    alg.WriteRel: _write,  # type: ignore[dict-item]
    alg.DdlRel: _ddl,  # type: ignore[dict-item]
    alg.UpdateRel: _update,  # type: ignore[dict-item]
}


def planned_steps(plan: Plan) -> list[PlannedStep]:
    """The plan's steps, in plan order (depth first)."""
    found = [(m, p) for m, p in nodes(plan) if type(m) in _STEPS]
    return [_STEPS[type(m)](i, m, p) for i, (m, p) in enumerate(found)]
