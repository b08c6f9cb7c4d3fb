"""Write, DDL and update relations as steps: translating one records a `PendingStep` — a plain record of what
the step is to do, its input translated (a lazy DataFrame: nothing runs) — and changes no table. The runner
executes each root's steps in plan order after translating the root (`running/steps/execute.py`), before the next
root is translated. Where nothing can run them the consumer refuses them as it meets them (`steps_refused`:
`to_dataframe`, `explain`'s queries; a run without a writable catalog).

Also here: what these relations refuse from the plan alone (read by `validate` too, `analysis/analyze.py`):
column defaults other than NULL (`DEFAULTS_REFUSED`, `set_defaults`) and the UPDATE write's key enhancement
(`is_update_key`, `plan_update_key`; where the key comes from: `running/steps/update_key.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import TYPE_CHECKING, Any

from google.protobuf.message import DecodeError
from google.protobuf.struct_pb2 import Struct
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from substrait import algebra_pb2 as alg
from substrait.extensions.extensions_pb2 import AdvancedExtension

from ..errors import PlanInvalidError, SubstraitSparkError, TargetRefusedError, UnsupportedFeatureError
from ..types import compatible, nullable, schema_of
from . import views as view_defs
from .relation import Relation
from .scope import Scope

if TYPE_CHECKING:
    from .consumer import SubstraitConsumer

WriteRel, DdlRel = alg.WriteRel, alg.DdlRel


class StepRelation(Enum):
    """The relation a step comes from: it says which executor runs it (`running/steps/execute.py`)."""

    WRITE = "write"
    DDL = "ddl"
    UPDATE = "update"


class StepObject(Enum):
    """What a step changes."""

    TABLE = "table"
    VIEW = "view"


@dataclass(frozen=True)
class PendingStep:
    """One write, DDL or update step as translation leaves it: what to do, to what, with which input. Data only —
    the executor resolves the target, takes the run's idempotency key and commits."""

    relation: StepRelation
    op: str  # the relation's op without its prefix: INSERT, CTAS, DELETE, UPDATE, CREATE, ALTER, DROP, …
    path: str  # the relation's plan path: the step record's, and where its errors point
    target: tuple[str, ...]  # the names the plan gives the table or view (resolved by the run's write catalog)
    rel: Any  # the plan's WriteRel / DdlRel / UpdateRel (its modes: create_mode, output, condition, …)
    names: tuple[str, ...] = ()  # the declared table_schema: names, Spark types and nullability
    types: tuple[T.DataType, ...] = ()
    nullability: tuple[bool, ...] = ()
    object: StepObject = StepObject.TABLE
    input: Relation | None = None  # the translated input (a write's; None where the executor translates parts)
    outer: Scope | None = None  # the scope the relation was translated in (for parts translated later)
    plan_key: tuple[str, ...] | None = None  # an UPDATE write's key, as its enhancement names it
    definition: str = ""  # a view's stored definition (protobuf JSON)
    records: bool = False  # the relation outputs the rows it modified (WriteRel OUTPUT_MODE_MODIFIED_RECORDS)
    # The input's translation failed: the executor raises this where it takes the input, so the step is recorded
    # failed (or skipped, a CTAS an earlier try committed) as when translation and commit were one.
    failure: SubstraitSparkError | None = None

    @property
    def schema(self) -> T.StructType:
        """The declared table_schema as a Spark schema (with its nullability)."""
        fields = zip(self.names, self.types, self.nullability, strict=True)
        return T.StructType([T.StructField(n, t, f) for n, t, f in fields])


OUTSIDE_A_RUN = "write/DDL/update relations outside a run (use run_plan/run_loaded)"
NO_WRITE_CATALOG = "write/DDL/update relations without a writable catalog (an Iceberg catalog configuration)"

# WriteRel output modes and whether the relation outputs the modified rows.
RECORDS = {
    WriteRel.OUTPUT_MODE_UNSPECIFIED: False,
    WriteRel.OUTPUT_MODE_NO_OUTPUT: False,
    WriteRel.OUTPUT_MODE_MODIFIED_RECORDS: True,
}
WRITE_OPS = frozenset(
    {WriteRel.WRITE_OP_INSERT, WriteRel.WRITE_OP_DELETE, WriteRel.WRITE_OP_UPDATE, WriteRel.WRITE_OP_CTAS}
)
DDL_OPS = frozenset(
    {
        DdlRel.DDL_OP_CREATE,
        DdlRel.DDL_OP_CREATE_OR_REPLACE,
        DdlRel.DDL_OP_ALTER,
        DdlRel.DDL_OP_DROP,
        DdlRel.DDL_OP_DROP_IF_EXIST,
    }
)
# DDL ops whose table_schema is the object's new shape (and, for a view, that come with a view_definition).
SCHEMA_OPS = frozenset({DdlRel.DDL_OP_CREATE, DdlRel.DDL_OP_CREATE_OR_REPLACE, DdlRel.DDL_OP_ALTER})


# --- translating the relations: record the step, output what the relation outputs ------------------------------


def write_step(cx: SubstraitConsumer, rel: alg.WriteRel, path: str, outer: Scope | None) -> Relation:
    """A WriteRel: INSERT, DELETE, UPDATE or CTAS of a catalog table (`running/steps/writes.py` runs it)."""
    refuse(cx, path)
    kind = rel.WhichOneof("write_type")
    if kind is None:
        raise PlanInvalidError("write with no target set", path)
    if kind != "named_table":
        raise UnsupportedFeatureError(f"write to an {kind}", f"{path}.{kind}")
    if rel.op not in WRITE_OPS:
        raise (PlanInvalidError if rel.op == WriteRel.WRITE_OP_UNSPECIFIED else UnsupportedFeatureError)(
            f"write op {WriteRel.WriteOp.Name(rel.op) if rel.op in WriteRel.WriteOp.values() else rel.op}",
            f"{path}.op",
        )
    if rel.output not in RECORDS:
        raise UnsupportedFeatureError(f"write output mode {rel.output}", f"{path}.output")
    if not rel.table_schema.names:
        raise PlanInvalidError("write with no table_schema", f"{path}.table_schema")
    names, types = schema_of(rel.table_schema, f"{path}.table_schema")
    plan_key = plan_update_key(rel, path)
    if path in cx.step_outputs:  # run already: the root is built again around the rows it modified
        return _output(cx, path, names, types)
    by_parts = rel.op == WriteRel.WRITE_OP_DELETE and deletes_by_predicate(rel, names)
    pending = PendingStep(
        StepRelation.WRITE,
        WriteRel.WriteOp.Name(rel.op).removeprefix("WRITE_OP_"),
        path,
        tuple(rel.named_table.names),
        rel,
        tuple(names),
        tuple(types),
        tuple(nullable(t) for t in rel.table_schema.struct.types),
        outer=outer,
        plan_key=tuple(plan_key) if plan_key else None,
        records=RECORDS[rel.output],
    )
    if not by_parts:
        try:
            pending = replace(pending, input=cx.rel(rel.input, f"{path}.input", outer))
        except SubstraitSparkError as exc:
            cx.pending_steps.append(replace(pending, failure=exc))  # a run records the step failed
            raise
    cx.pending_steps.append(pending)
    return empty(cx, names, types)


def refuse(cx: SubstraitConsumer, path: str) -> None:
    """Steps are refused where nothing can run them (`SubstraitConsumer.steps_refused`): before anything else."""
    if cx.steps_refused is not None:
        raise TargetRefusedError(cx.steps_refused, path)


def deletes_by_predicate(rel: alg.WriteRel, names: Sequence[str]) -> bool:
    """The DELETE's input may be a filter over a plain read of its own target (the executor deletes by the
    predicate then, translating the filter's parts over the target it pins): decided from the plan's shape; the
    executor checks the read names the target."""
    inp = rel.input
    if inp.WhichOneof("rel_type") != "filter" or inp.filter.common.WhichOneof("emit_kind") == "emit":
        return False
    return plain_named_read(inp.filter.input, names) is not None


def plain_named_read(read: alg.Rel, names: Sequence[str]) -> alg.ReadRel | None:
    """`read` if it is a NamedTable read yielding its table's rows whole, with the columns `names` in that order
    (no projection, filter or emit of its own), else None: a step's input that is exactly its target's rows."""
    if read.WhichOneof("rel_type") != "read" or read.read.WhichOneof("read_type") != "named_table":
        return None
    body = read.read
    if any(body.HasField(f) for f in ("projection", "filter", "best_effort_filter")):
        return None
    if body.common.WhichOneof("emit_kind") == "emit":
        return None
    return body if [n.lower() for n in body.base_schema.names] == [n.lower() for n in names] else None


def ddl_step(cx: SubstraitConsumer, rel: alg.DdlRel, path: str, outer: Scope | None) -> Relation:
    """A DdlRel on a table or a view (`running/steps/ddl.py`, `view_ddl.py`); its output is no rows."""
    refuse(cx, path)
    kind = rel.WhichOneof("write_type")
    if kind != "named_object":
        raise (PlanInvalidError if kind is None else UnsupportedFeatureError)(f"DDL on {kind or 'nothing'}", path)
    if rel.object not in (DdlRel.DDL_OBJECT_TABLE, DdlRel.DDL_OBJECT_VIEW):
        raise PlanInvalidError(f"DDL object {rel.object}", f"{path}.object")
    schema = _struct(rel, path) if rel.op in SCHEMA_OPS else T.StructType([])
    names, types = [f.name for f in schema.fields], [f.dataType for f in schema.fields]
    view = rel.object == DdlRel.DDL_OBJECT_VIEW
    if rel.op not in DDL_OPS:
        raise PlanInvalidError(f"DDL op {rel.op}", f"{path}.op")
    if view and rel.HasField("table_defaults") and rel.table_defaults.fields:
        raise PlanInvalidError("a view has no column defaults (table_defaults is set)", f"{path}.table_defaults")
    if not view:
        refuse_defaults(rel, schema, path)
    if path in cx.step_outputs:
        return _output(cx, path, names, types)
    definition = ""
    if view and rel.op in SCHEMA_OPS:  # translated now: a definition that would not read is refused up front
        if not rel.HasField("view_definition"):
            raise PlanInvalidError("view DDL with no view_definition", f"{path}.view_definition")
        plan = view_defs.definition_plan(cx, rel, path)
        translated = cx.rel(rel.view_definition, f"{path}.view_definition")
        check_input(translated, names, types, f"{path}.view_definition")
        definition = view_defs.to_text(plan)
    cx.pending_steps.append(
        PendingStep(
            StepRelation.DDL,
            DdlRel.DdlOp.Name(rel.op).removeprefix("DDL_OP_"),
            path,
            tuple(rel.named_object.names),
            rel,
            tuple(names),
            tuple(types),
            tuple(f.nullable for f in schema.fields),
            object=StepObject.VIEW if view else StepObject.TABLE,
            outer=outer,
            definition=definition,
        )
    )
    return empty(cx, names, types)


def update_step(cx: SubstraitConsumer, rel: alg.UpdateRel, path: str, outer: Scope | None) -> Relation:
    """An UpdateRel (`running/steps/update.py`: its condition and values are translated over the table as the
    run pins it); its output is no rows with the table_schema's columns."""
    refuse(cx, path)
    if rel.WhichOneof("update_type") != "named_table":
        raise PlanInvalidError("update with no target table", path)
    if not rel.table_schema.names:
        raise PlanInvalidError("update with no table_schema", f"{path}.table_schema")
    names, types = schema_of(rel.table_schema, f"{path}.table_schema")
    if path in cx.step_outputs:
        return _output(cx, path, names, types)
    cx.pending_steps.append(
        PendingStep(
            StepRelation.UPDATE,
            "UPDATE",
            path,
            tuple(rel.named_table.names),
            rel,
            tuple(names),
            tuple(types),
            tuple(nullable(t) for t in rel.table_schema.struct.types),
            outer=outer,
        )
    )
    return empty(cx, names, types)


def _output(cx: SubstraitConsumer, path: str, names: Sequence[str], types: Sequence[T.DataType]) -> Relation:
    """A step's output once it ran: the rows it modified (the executor's), else no rows."""
    df = cx.step_outputs[path]
    return as_relation(cx, df) if df is not None else empty(cx, names, types)


def _struct(rel: alg.DdlRel, path: str) -> T.StructType:
    if not rel.table_schema.names:
        raise PlanInvalidError("DDL with no table_schema", f"{path}.table_schema")
    names, types = schema_of(rel.table_schema, f"{path}.table_schema")
    flags = [nullable(t) for t in rel.table_schema.struct.types]
    return T.StructType([T.StructField(n, t, f) for n, t, f in zip(names, types, flags, strict=True)])


# --- outputs -------------------------------------------------------------------------------------------------


def empty(cx: SubstraitConsumer, names: Sequence[str], types: Sequence[T.DataType]) -> Relation:
    """No rows, the table_schema's columns (NO_OUTPUT: producers name the table's columns at the root)."""
    fresh = [cx.names.fresh() for _ in names]
    # One NULL struct spread into its fields: a few DataFrame calls whatever the width (a cast per column costs
    # three JVM calls each), and one empty partition for the job that counts the root.
    record = T.StructType([T.StructField(n, t) for n, t in zip(fresh, types, strict=True)])
    df = cx.spark.range(0, numPartitions=1).select(F.lit(None).cast(record).alias("__empty")).select("__empty.*")
    cx.empty_frames.append(df)
    return Relation(df, fresh, list(types))


def as_relation(cx: SubstraitConsumer, df: DataFrame) -> Relation:
    fresh = [cx.names.fresh() for _ in df.columns]
    return Relation(df.toDF(*fresh), fresh)


def check_input(inp: Relation, names: Sequence[str], types: Sequence[T.DataType], path: str) -> None:
    """The input's columns must be the table_schema's, position by position (exit 2 otherwise)."""
    if len(inp.names) != len(names):
        raise PlanInvalidError(f"the input has {len(inp.names)} columns, table_schema {len(names)}", path)
    bad = [
        f"column {n!r}: input is {a.simpleString()}, table_schema says {d.simpleString()}"
        for n, a, d in zip(names, inp.types, types, strict=True)
        if not compatible(a, d) and not isinstance(a, T.NullType)
    ]
    if bad:
        raise PlanInvalidError("input does not fit the table_schema: " + "; ".join(bad), path)


# --- column defaults (DdlRel.table_defaults) -------------------------------------------------------------------

DEFAULTS_REFUSED = (
    "column default values other than NULL (DdlRel.table_defaults): Iceberg keeps defaults in format v3 tables "
    "only, and pyiceberg 0.12 writes no v3 table metadata"
)


def set_defaults(rel: alg.DdlRel) -> list[int]:
    """Positions of the columns `table_defaults` gives a value other than NULL (a NULL default is no default)."""
    return [i for i, lit in enumerate(rel.table_defaults.fields) if lit.WhichOneof("literal_type") != "null"]


def refuse_defaults(rel: alg.DdlRel, schema: T.StructType, path: str) -> None:
    """Defaults are refused, never dropped (see `running/steps/ddl.py`); before anything changes."""
    width, given = len(schema.fields), len(rel.table_defaults.fields)
    if given and width and given != width:
        raise PlanInvalidError(
            f"table_defaults has {given} values, table_schema {width} columns", f"{path}.table_defaults"
        )
    at = set_defaults(rel)
    if at:
        names = [schema.fields[i].name if i < width else f"#{i}" for i in at]
        raise UnsupportedFeatureError(
            f"{DEFAULTS_REFUSED} (column(s) {names})", f"{path}.table_defaults.fields[{at[0]}]"
        )


# --- the UPDATE write's key, as the plan names it -----------------------------------------------------------

UPDATE_KEY_FIELD = "substrait_spark.update_key"
STRUCT_TYPE_URL = "type.googleapis.com/google.protobuf.Struct"


def _key_struct(ext: AdvancedExtension) -> Struct | None:
    if ext.enhancement.type_url != STRUCT_TYPE_URL:
        return None
    out = Struct()
    try:
        out.ParseFromString(ext.enhancement.value)
    except DecodeError:
        return None
    return out


def is_update_key(ext: AdvancedExtension) -> bool:
    """The enhancement is this package's update key (whether well-formed is `plan_update_key`'s to say)."""
    if not ext.HasField("enhancement"):
        return False
    struct = _key_struct(ext)
    return struct is not None and UPDATE_KEY_FIELD in struct.fields


def consumed_enhancement(body: Any) -> bool:
    """A relation's `advanced_extension.enhancement` the consumer acts on instead of refusing it."""
    return isinstance(body, alg.WriteRel) and is_update_key(body.advanced_extension)


def plan_update_key(rel: alg.WriteRel, path: str) -> list[str] | None:
    """The key the WriteRel's enhancement names (None without one). `path` is the WriteRel's."""
    ext = rel.advanced_extension
    if not ext.HasField("enhancement"):
        return None
    at = f"{path}.advanced_extension.enhancement"
    if not is_update_key(ext):
        raise UnsupportedFeatureError("advanced extension enhancement", f"{path}.advanced_extension")
    if rel.op != alg.WriteRel.WRITE_OP_UPDATE:
        op = alg.WriteRel.WriteOp.Name(rel.op) if rel.op in alg.WriteRel.WriteOp.values() else str(rel.op)
        raise UnsupportedFeatureError(f"the {UPDATE_KEY_FIELD!r} enhancement on a {op} write (UPDATE only)", at)
    struct = _key_struct(ext)
    assert struct is not None
    others = sorted(set(struct.fields) - {UPDATE_KEY_FIELD})
    if others:
        raise UnsupportedFeatureError(f"field(s) {others} beside {UPDATE_KEY_FIELD!r} in the enhancement", at)
    value = struct.fields[UPDATE_KEY_FIELD]
    items = list(value.list_value.values) if value.WhichOneof("kind") == "list_value" else []
    names = [v.string_value for v in items if v.WhichOneof("kind") == "string_value" and v.string_value]
    if not items or len(names) != len(items):
        raise PlanInvalidError(f"{UPDATE_KEY_FIELD!r} must be a non-empty list of column names", at)
    return names


def enhancement(columns: Sequence[str]) -> AdvancedExtension:
    """The advanced extension a producer puts on an UPDATE WriteRel to name its key."""
    struct = Struct()
    struct.fields[UPDATE_KEY_FIELD].list_value.extend(list(columns))
    ext = AdvancedExtension()
    ext.enhancement.Pack(struct)
    return ext
