"""The tables a plan reads, checked without Spark: each NamedTable is looked up where the run would resolve it
(`running/table_schemas.py`: table maps' parquet footers, catalog schemas) and its base schema compared with the
table's columns by the rules the read applies (`translation/relations/read.py`: `catalog_schema_error`,
`file_schema_error`, i.e. `conversions.conversion` with `cast_to_plan_types`). A table missing or a declared type
the run would refuse is a problem (exit 4), found in well under a second instead of after Spark's start-up; what
only Spark can see is listed as not checked, never claimed fine.

`validate` lists both (`TableCheck`); `run` refuses the first problem before it starts Spark (`PlanRunner.check`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from pyspark.sql import types as T
from substrait import algebra_pb2 as alg
from substrait import plan_pb2

from ..errors import ResolutionError, SubstraitSparkError
from ..translation.relations.read import catalog_schema_error, file_schema_error, table_label
from ..types import nullable, schema_of
from ..walk import nodes
from .planned_steps import planned_steps
from .table_schemas import Missing, NotChecked, SchemaSource, TableSchema


@dataclass
class TableCheck:
    """What the check found: errors the run would fail with (with their plan paths), and what it left to the run."""

    problems: list[SubstraitSparkError] = field(default_factory=list)
    not_checked: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, list]:
        return {
            "table_problems": [p.to_dict() for p in self.problems],
            "not_checked": list(self.not_checked),
        }

    def raise_first(self) -> None:
        """Fail as the run would, at its first problem."""
        if self.problems:
            raise self.problems[0]


def check_tables(plan: plan_pb2.Plan, source: SchemaSource, *, lossy_ok: bool = False) -> TableCheck:
    """Check every NamedTable read of `plan` against `source` (the run's resolver chain). `lossy_ok`: the run's
    `cast_to_plan_types`."""
    out = TableCheck()
    written = _written(plan)
    found: dict[tuple[str, ...], TableSchema | Missing | NotChecked] = {}
    for rel, path in _named_reads(plan):
        parts = list(rel.named_table.names)
        key = tuple(p.lower() for p in parts)
        if key in written or key[-1:] in written:
            _note(out, f"table {'.'.join(parts)!r}: the plan writes it, the run reads what it holds then")
            continue
        if key not in found:
            found[key] = source.schema(parts)
        lookup, at = found[key], f"{path}.named_table"
        if isinstance(lookup, Missing):
            out.problems.append(ResolutionError(lookup.message, at))
        elif isinstance(lookup, NotChecked):
            _note(out, lookup.reason)
        else:
            error = _compare(rel, parts, lookup, lossy_ok, path, out)
            if error is not None:
                out.problems.append(error)
    return out


def _named_reads(plan: plan_pb2.Plan) -> Iterator[tuple[alg.ReadRel, str]]:
    for msg, path in nodes(plan):
        if isinstance(msg, alg.ReadRel) and msg.WhichOneof("read_type") == "named_table" and msg.named_table.names:
            yield msg, path


def _written(plan: plan_pb2.Plan) -> set[tuple[str, ...]]:
    """The names (all parts, and the last one) of the tables the plan writes."""
    out = set()
    for step in planned_steps(plan):  # a read of a table the plan writes may read what the plan made
        if step.names:
            names = tuple(n.lower() for n in step.names)
            out |= {names, names[-1:]}
    return out


def _note(out: TableCheck, text: str) -> None:
    if text not in out.not_checked:
        out.not_checked.append(text)


@dataclass(frozen=True)
class Compared:
    """A read's base schema (names, Spark types, which columns it calls required) beside the table's columns as
    the read would see them (`fields`; a column whose type is not worked out without Spark has the plan's type:
    compared by name only)."""

    names: list[str]
    types: list[T.DataType]
    required: list[bool]
    fields: list[T.StructField]


def compared(
    rel: alg.ReadRel,
    parts: list[str],
    table: TableSchema,
    lossy_ok: bool,
    path: str = "",
    out: TableCheck | None = None,
) -> Compared | None:
    """The read's base schema and the table's columns, ready for the read's rules (None: a type Spark cannot
    hold, which `validate_plan` reports). Public: the Dagster schema checks (plugin/dagster/checks.py) list the
    problems of the same comparison. `out` collects what is left to Spark."""
    try:
        names, types = schema_of(rel.base_schema, f"{path}.base_schema")
    except SubstraitSparkError:
        return None
    required = [not nullable(t) for t in rel.base_schema.struct.types]
    label, at = table_label(parts), f"{path}.named_table"
    declared = {n.lower(): (n, t, r) for n, t, r in zip(names, types, required, strict=True)}
    fields = []
    for column in table.columns:
        want = declared.get(column.name.lower())
        if want is None:  # a column the plan does not read
            fields.append(T.StructField(column.name, (column.types[:1] or (T.NullType(),))[0], column.nullable))
            continue
        verdicts = {
            _error(
                table,
                parts,
                lossy_ok,
                at,
                [want[0]],
                [want[1]],
                [want[2]],
                [T.StructField(column.name, t, column.nullable)],
            )
            is None
            for t in column.types
        }
        if len(verdicts) != 1:  # no type worked out, or Spark's settings decide the verdict: compared by name only
            why = column.note or "its type is not worked out without Spark"
            if out is not None:
                _note(out, f"{label} ({table.identity}), column {column.name!r}: {why}")
        chosen = column.types[0] if len(verdicts) == 1 else want[1]
        fields.append(T.StructField(column.name, chosen, column.nullable))
    return Compared(names, types, required, fields)


def _error(
    table: TableSchema,
    parts: list[str],
    lossy_ok: bool,
    at: str,
    names: list[str],
    types: list[T.DataType],
    required: list[bool],
    fields: list[T.StructField],
) -> SubstraitSparkError | None:
    """The error a read of `table` fails with: the catalog's exact check, then the files' conversion check."""
    if table.strict:
        strict = catalog_schema_error(".".join(parts), table.identity, names, types, required, fields, at)
        if strict is not None:
            return strict
    return file_schema_error(table_label(parts), names, types, fields, lossy_ok, at)


def _compare(
    rel: alg.ReadRel, parts: list[str], table: TableSchema, lossy_ok: bool, path: str, out: TableCheck
) -> SubstraitSparkError | None:
    """The error the read fails with, if any."""
    found = compared(rel, parts, table, lossy_ok, path, out)
    if found is None:
        return None
    return _error(table, parts, lossy_ok, f"{path}.named_table", found.names, found.types, found.required, found.fields)
