"""The run report's records that every stage makes (stage 0): the tables a plan reads (translation), its bound
parameters (translation), the typed error a run stops with (errors.py), and the one serialiser and reader of every
record. `running/report.py` holds the run's own records (steps, outputs, the report) and re-exports these.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import Enum, StrEnum
from typing import Any, TypeVar

R = TypeVar("R")


class ParameterSource(StrEnum):
    """Where a parameter's value came from."""

    CALLER = "caller"  # CLI --param, the operator's `parameters`, run_plan(params=)
    PLAN = "plan"  # the plan's own parameter_bindings


def _not_direct(read: Any) -> bool:
    return read.catalog is not None or read.metadata_location is None


@dataclass
class TableRead:
    """A table (or view) the run read, as resolved: its identity, format, and the version pinned for the run.
    `catalog` and `metadata_location` are recorded for catalog tables, `view_version` for views, and a direct
    read of an Iceberg metadata file has its `metadata_location` and `as_of_timestamp_ms` (the time travel asked
    for, if any) but no catalog."""

    name: str  # as the plan names it
    identity: str
    format: str | None = None
    snapshot_id: int | None = None
    as_of_timestamp_ms: int | None = field(default=None, metadata={"omit_if": _not_direct})
    catalog: str | None = field(default=None, metadata={"omit_if_none": True})
    metadata_location: str | None = field(default=None, metadata={"omit_if_none": True})
    view_version: int | None = field(default=None, metadata={"omit_if_none": True})


@dataclass
class BoundParameter:
    """A dynamic parameter the plan uses and the value bound to it (`parameters.Parameters.bound`)."""

    anchor: int
    type: str  # Substrait notation
    value: Any  # JSON: dates, timestamps, decimals as text
    source: ParameterSource


@dataclass
class RunError:
    """The typed error a run stopped with (`errors.SubstraitSparkError.record`)."""

    kind: str
    message: str
    path: str | None = None
    exit_code: int = 1

    def describe(self) -> str:
        """The one line every front end shows: `kind: message (at path)` (`SubstraitSparkError.describe`)."""
        return described(self.kind, f"{self.message} (at {self.path})" if self.path else self.message)


def described(kind: str, text: str) -> str:
    """An error's one line: its kind, then what it says. Messages do not start with their kind, so it is said
    once (a plan not found is `plan not found: s3://b/k: no key 'k' in bucket 'b'`)."""
    return f"{kind}: {text}"


# --------------------------------------------------------------------------------------------------
# The one serialiser and the one reader of every record
# --------------------------------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """Plain JSON values of a record (recursively): enums as their values, a field left out where its
    `omit_if(record)` holds or, with `omit_if_none`, when it is None."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in fields(value) if not _omitted(value, f)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def _omitted(record: Any, f: dataclasses.Field[Any]) -> bool:
    omit_if = f.metadata.get("omit_if")
    if omit_if is not None and omit_if(record):
        return True
    return bool(f.metadata.get("omit_if_none")) and getattr(record, f.name) is None


def record_of(cls: type[R], d: Mapping[str, Any], *, json_text: bool = False) -> R:
    """The record `cls` (a dataclass) of a plain dict: nested records, lists and enums built from their
    annotations; unknown keys ignored; missing ones get the field's default (a required field: its type's empty
    value — a step of an early report had no path). `json_text`: `Any` values are JSON text (an audit row)."""
    if not isinstance(d, Mapping):
        raise TypeError(f"{cls.__name__}: expected an object, got {type(d).__name__}")
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in fields(cls):  # type: ignore[arg-type]
        if f.name in d:
            values[f.name] = _value(hints[f.name], d[f.name], json_text)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            values[f.name] = _empty(hints[f.name])
    return cls(**values)


def _value(hint: Any, value: Any, json_text: bool) -> Any:
    """`value` as the annotation `hint` has it."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return None if value is None else _value(args[0], value, json_text)
    if value is None:
        return None
    if hint is Any:
        return json.loads(value) if json_text and isinstance(value, str) else value
    if typing.get_origin(hint) is list:
        return [_value(args[0], v, json_text) for v in value]
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return record_of(hint, value, json_text=json_text)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint(value)
    if hint is str and isinstance(value, dt.datetime):  # an audit row's timestamp
        return value.isoformat()
    if hint is float and isinstance(value, int):
        return float(value)
    return value


def _empty(hint: Any) -> Any:
    """A required field's value when a record of an earlier version lacks it."""
    args = typing.get_args(hint)
    if type(None) in args:
        return None
    return {int: 0, str: ""}.get(hint) if hint in (int, str) else [] if typing.get_origin(hint) is list else None
