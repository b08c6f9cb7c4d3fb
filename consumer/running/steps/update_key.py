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

from ...errors import PlanInvalidError
from ...translation.steps import (  # the plan's key is read at translation (and by `validate`)
    STRUCT_TYPE_URL,
    UPDATE_KEY_FIELD,
    consumed_enhancement,
    enhancement,
    is_update_key,
    plan_update_key,
)

__all__ = [
    "CALLER",
    "HOW_TO_GIVE_ONE",
    "IDENTIFIER_FIELDS",
    "PLAN",
    "STRUCT_TYPE_URL",
    "UPDATE_KEY_FIELD",
    "UpdateKey",
    "caller_key",
    "caller_keys",
    "consumed_enhancement",
    "enhancement",
    "is_update_key",
    "parse_option",
    "plan_update_key",
]

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
