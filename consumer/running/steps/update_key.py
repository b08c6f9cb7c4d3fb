"""The key an UPDATE write (WriteRel `WRITE_OP_UPDATE`) matches its after-images to the table's rows by, and
where it comes from; the first one found wins:

1. the caller's: `update_keys`, table name → columns (CLI `--update-key TABLE=col1,col2`, the Airflow operator's
   `update_keys`, `run_plan(update_keys=…)`, `run_loaded(update_keys=…)`). TABLE is the table's identity
   (`catalog.namespace.table`), the name the plan writes to, or the identity without its catalog; any case.
2. the plan's: the WriteRel's own `advanced_extension.enhancement`, a packed `google.protobuf.Struct` whose field
   `"substrait_spark.update_key"` (`UPDATE_KEY_FIELD`) is a list of column names. The consumer consumes this
   enhancement on UPDATE writes; any other enhancement, another field beside it in the Struct, or this one on
   another relation or write op is refused (an enhancement changes meaning: it is never ignored).
3. the table's Iceberg identifier fields.

With none of them the UPDATE is refused, naming the three ways to give a key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import DecodeError
from google.protobuf.struct_pb2 import Struct
from substrait import algebra_pb2 as alg
from substrait.extensions.extensions_pb2 import AdvancedExtension

from ...errors import PlanInvalidError, UnsupportedFeatureError

UPDATE_KEY_FIELD = "substrait_spark.update_key"
STRUCT_TYPE_URL = "type.googleapis.com/google.protobuf.Struct"

CALLER, PLAN, IDENTIFIER_FIELDS = "caller", "plan", "identifier fields"
HOW_TO_GIVE_ONE = (
    "name one with the caller's update_keys (CLI --update-key TABLE=col1,col2; the operator's update_keys), "
    f"or in the plan: an advanced_extension enhancement on the WriteRel, a google.protobuf.Struct whose field "
    f"{UPDATE_KEY_FIELD!r} lists the key columns, or give the table Iceberg identifier fields"
)


@dataclass(frozen=True)
class UpdateKey:
    """The key columns and where they came from (`CALLER`, `PLAN` or `IDENTIFIER_FIELDS`)."""

    columns: list[str]
    source: str


def _struct(ext: AdvancedExtension) -> Struct | None:
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
    struct = _struct(ext)
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
    struct = _struct(ext)
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


# --- the caller's keys ---------------------------------------------------------------------------------------


def caller_keys(mapping: Mapping[str, Sequence[str] | str] | None) -> dict[str, list[str]]:
    """`update_keys` normalised: table names lowercased, columns from a list or `"col1,col2"`; empty refused."""
    out: dict[str, list[str]] = {}
    for table, columns in (mapping or {}).items():
        names = columns.split(",") if isinstance(columns, str) else list(columns)
        names = [str(n).strip() for n in names]
        if not str(table).strip() or not names or not all(names):
            raise PlanInvalidError(f"update key for table {table!r}: expected column names, got {columns!r}")
        out[str(table).strip().lower()] = names
    return out


def parse_option(spec: str) -> tuple[str, list[str]]:
    """`TABLE=col1,col2` (the CLI's `--update-key`)."""
    table, sep, columns = spec.partition("=")
    names = [c.strip() for c in columns.split(",")]
    if not sep or not table.strip() or not all(names):
        raise PlanInvalidError(f"--update-key expects TABLE=col1,col2, got {spec!r}")
    return table.strip(), names


def caller_key(keys: Mapping[str, list[str]], identity: str, names: Sequence[str]) -> list[str] | None:
    """The caller's key for a table: by identity, by the plan's name for it, or by identity without catalog."""
    for name in (identity, ".".join(names), identity.partition(".")[2]):
        found = keys.get(name.lower())
        if found:
            return found
    return None
