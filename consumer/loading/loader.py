"""Load a Substrait plan (binary protobuf, protobuf JSON or textproto) strictly.

Strict because a field the parser does not know would otherwise be dropped silently, and dropping a field
changes the query (GROUP BY keys, LIMITs). Input is parsed against ``superset`` (the bundled 0.108 schema
plus the deprecated fields 0.108 removed), old spellings with a known meaning are rewritten to their 0.108
form by ``legacy`` and recorded in ``LoadedPlan.notes``, and the result is re-read with the standard 0.108
classes. Everything else wrong with the input is a PlanInvalidError with one line of message and, where
known, the path in the plan.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple
from urllib.parse import urlparse
from urllib.request import url2pathname

from google.protobuf import json_format, text_format
from google.protobuf.internal import api_implementation
from google.protobuf.message import DecodeError, Message
from google.protobuf.unknown_fields import UnknownFieldSet
from substrait.plan_pb2 import Plan

from ..errors import PlanInvalidError, PlanNotFoundError
from . import legacy
from .legacy.fields import upgrade
from .limits import DEFAULT_LIMITS, DEFAULT_MAX_DEPTH, Limits, PlanTooLargeError, json_depth, text_depth
from .null_types import type_untyped_nulls
from .outer_references import resolve_rel_references
from .superset import SupersetPlan

# Message nesting allowed at most (`limits.py`). protobuf's default of 100 is too low for real plans (each
# relation adds two levels, each function call three; the corpus reaches 51) and, raised without a bound, deep
# input crashes the C parser, so every input is measured first (_nesting_depth, json_depth, text_depth).
MAX_DEPTH = DEFAULT_MAX_DEPTH
MAX_MESSAGE_CHARS = 300


@dataclass(frozen=True)
class LoadedPlan:
    """A parsed plan plus what a run report needs to identify it."""

    plan: Plan
    uri: str | None  # where it came from
    sha256: str  # of the raw bytes as read
    format: str  # "binary" | "json" | "textproto"
    producer: str | None  # plan.version.producer
    spec_version: str | None  # "0.80.0" from plan.version, None if absent
    notes: tuple[str, ...] = ()  # upgrades applied


class UnknownField(NamedTuple):
    """A field the parser did not know, found by iter_unknown_fields."""

    path: str  # e.g. "relations[0].root.input.filter"; "" is the message itself
    type_name: str  # full name of the message holding it, e.g. "substrait.FilterRel"
    number: int
    wire_type: int
    data: Any  # as google.protobuf.unknown_fields reports it (int, bytes or a nested set)


def load_plan(source: str | os.PathLike[str] | bytes, limits: Limits = DEFAULT_LIMITS) -> LoadedPlan:
    """Load a plan from a local path, a file:// URI or raw bytes."""
    if isinstance(source, bytes | bytearray | memoryview):
        return parse_plan_bytes(bytes(source), limits=limits)
    uri = os.fsdecode(os.fspath(source))
    return parse_plan_bytes(read_plan_bytes(uri, limits), uri=uri, limits=limits)


def read_plan_bytes(uri: str, limits: Limits = DEFAULT_LIMITS) -> bytes:
    """The bytes of a plan at a path or file:// URI, refused unread when larger than `limits` allow."""
    path = _local_path(uri)
    try:
        with open(path, "rb") as f:
            limits.check_size(os.fstat(f.fileno()).st_size, f"plan {path}")
            data = f.read(limits.max_plan_bytes + 1)  # a file growing meanwhile is still bounded
            limits.check_size(len(data), f"plan {path}")
            return data
    except FileNotFoundError:
        raise PlanNotFoundError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise PlanInvalidError(f"plan path is a directory: {path}") from None
    except OSError as e:
        raise PlanInvalidError(f"cannot read plan {path}: {e.strerror or e}") from None


def _local_path(uri: str) -> str:
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        if parsed.netloc not in ("", "localhost"):
            raise PlanInvalidError(f"file URI with a remote host is not supported: {uri}")
        return url2pathname(parsed.path)
    # One letter is a Windows drive; a file whose name merely contains ':' is still a path.
    if len(parsed.scheme) > 1 and not os.path.exists(uri):
        raise PlanInvalidError(f"unsupported plan URI scheme {parsed.scheme!r}: {uri}")
    return uri


def parse_plan_bytes(data: bytes, uri: str | None = None, limits: Limits = DEFAULT_LIMITS) -> LoadedPlan:
    """Detect the format of raw plan bytes, parse them strictly and apply legacy upgrades — refused before any
    parsing when larger or nested deeper than `limits`."""
    limits.check_size(len(data))
    data = bytes(data)
    plan, fmt, notes = _parse(data, limits)
    if not plan.relations:
        raise PlanInvalidError(f"plan has no relations (read as {fmt})")
    version = plan.version
    numbers = (version.major_number, version.minor_number, version.patch_number)
    return LoadedPlan(
        plan=plan,
        uri=uri,
        sha256=hashlib.sha256(data).hexdigest(),
        format=fmt,
        producer=version.producer or None,
        spec_version=".".join(map(str, numbers)) if any(numbers) else None,
        notes=tuple(notes),
    )


Parser = Callable[[], tuple[Plan, list[str]]]


def _upgraded(old: Message, notes: list[str]) -> tuple[Plan, list[str]]:
    """Rewrite a superset plan's removed fields and re-read it with the standard classes.

    Nothing unknown may be left: a removed field without a rule here would otherwise vanish in the re-read.
    """
    field_notes = upgrade(old)
    plan = Plan()
    data = old.SerializeToString()
    try:
        plan.ParseFromString(data)
    except (DecodeError, RecursionError):  # deeper than protobuf's default; bounded by the first parse
        with _depth_limit_lifted():
            plan.ParseFromString(data)
    for u in iter_unknown_fields(plan):
        raise PlanInvalidError(f"field {u.number} of {u.type_name} has no Substrait 0.108 form", path=u.path or None)
    behavior = []
    if plan.HasField("execution_behavior"):
        behavior = [legacy.execution_behavior_note(plan.execution_behavior.variable_eval_mode)]
    return plan, behavior + notes + field_notes + resolve_rel_references(plan) + type_untyped_nulls(plan)


def _parse(data: bytes, limits: Limits) -> tuple[Plan, str, list[str]]:
    """Try the plausible formats in order; report the first one's error if none parses.

    Binary plans often start with bytes that are also text ("\\n" is field 1), so a failed text parse
    falls back to binary and vice versa; which goes first depends on whether the bytes look like text.
    """
    if not data.strip():
        raise PlanInvalidError("empty plan")
    binary: tuple[str, Parser] = ("binary", lambda: _parse_binary(data, limits))
    text = _decode_text(data)
    if text is None:
        order = [binary]
    else:
        body = _blank_leading_comments(text)
        if not body.strip():
            raise PlanInvalidError("empty plan (only comment lines)")
        textual: tuple[str, Parser]
        if body.lstrip()[0] in "{[" or _is_json(body):
            textual = ("json", lambda: _parse_json(body, limits))
        else:
            textual = ("textproto", lambda: _parse_textproto(body, limits))
        order = [textual, binary] if _looks_textual(text) else [binary, textual]
    first_error: PlanInvalidError | None = None
    for fmt, parse in order:
        try:
            plan, notes = parse()
        except PlanTooLargeError:
            raise  # a bound, not a format mismatch: no other format is tried
        except PlanInvalidError as e:
            first_error = first_error or e
            continue
        return plan, fmt, notes
    assert first_error is not None
    raise first_error


def _is_json(body: str) -> bool:
    """A JSON scalar is the wrong shape for a plan, but it is JSON: say so rather than a textproto error."""
    try:
        json.loads(body)
    except (ValueError, RecursionError):
        return False
    return True


def _decode_text(data: bytes) -> str | None:
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return None


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _looks_textual(text: str) -> bool:
    return _CONTROL.search(text) is None


def _blank_leading_comments(text: str) -> str:
    """Blank leading `//` and `#` lines (IBM's JSON plans have them); blanking keeps error line numbers."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped and not stripped.startswith(("//", "#")):
            break
        lines[i] = ""
    return "\n".join(lines)


def _one_line(message: str) -> str:
    line = message.strip().split("\n", 1)[0].strip()
    return line if len(line) <= MAX_MESSAGE_CHARS else line[: MAX_MESSAGE_CHARS - 3] + "..."


# --- JSON -------------------------------------------------------------------------------------------


class _DuplicateKeyError(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKeyError(key)
        result[key] = value
    return result


_JSON_KINDS = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}


def _parse_json(body: str, limits: Limits) -> tuple[Plan, list[str]]:
    try:
        js = json.loads(body, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as e:
        raise PlanInvalidError(f"invalid plan JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except _DuplicateKeyError as e:
        raise PlanInvalidError(f'invalid plan JSON: duplicate key "{e}"') from None
    except RecursionError:  # deeper than the interpreter's recursion limit, far beyond any bound
        raise limits.too_deep() from None
    if not isinstance(js, dict):
        raise PlanInvalidError(f"plan JSON must be an object, not {_JSON_KINDS.get(type(js), 'a number')}")
    limits.check_depth(json_depth(js, limits.max_depth))  # before the legacy rewrite walks it
    notes = legacy.upgrade_json(js)
    plan = SupersetPlan()
    try:
        json_format.ParseDict(js, plan, max_recursion_depth=MAX_DEPTH)
    except (json_format.ParseError, ValueError, TypeError, AttributeError) as e:
        message, path = _shorten_json_error(str(e))
        raise PlanInvalidError(f"invalid plan JSON: {message}", path=path) from None
    except RecursionError:
        raise limits.too_deep() from None
    return _upgraded(plan, notes)


_JSON_CHAIN = re.compile(r"Failed to parse (\w+) field: ")
_JSON_AT = re.compile(r' at "?Plan\.?([^"\s]*)"?')


def _shorten_json_error(raw: str) -> tuple[str, str | None]:
    """json_format nests "Failed to parse X field: ..." and sometimes appends 'at "Plan.a[0].b"': keep the
    innermost message and the most precise path, in proto field names."""
    line = raw.strip().split("\n", 1)[0]
    chain = _JSON_CHAIN.findall(line)
    core = _JSON_CHAIN.split(line)[-1] if chain else line
    path = ".".join(chain) or None
    at = _JSON_AT.search(core)
    if at:
        core = core[: at.start()]
        path = at.group(1).rstrip(".") or path
    if path:
        path = ".".join(legacy.snake(part) for part in path.split("."))
        if len(path) > MAX_MESSAGE_CHARS:
            path = "..." + path[3 - MAX_MESSAGE_CHARS :]
    return _one_line(core.rstrip(". ") or line), path


# --- textproto --------------------------------------------------------------------------------------


_TEXT_ERROR = re.compile(r"^(\d+):(\d+) : (.*)$", re.S)


def _parse_textproto(body: str, limits: Limits) -> tuple[Plan, list[str]]:
    limits.check_depth(text_depth(body, limits.max_depth))  # before the recursive text parser
    text, notes = legacy.upgrade_textproto(body)
    plan = SupersetPlan()
    try:
        text_format.Parse(text, plan)
    except text_format.ParseError as e:
        raise PlanInvalidError(f"invalid plan textproto: {_shorten_text_error(str(e))}") from None
    except RecursionError:
        raise limits.too_deep() from None
    return _upgraded(plan, notes)


def _shorten_text_error(raw: str) -> str:
    m = _TEXT_ERROR.match(raw.strip())
    if not m:
        return _one_line(raw)
    rest = m.group(3)
    if rest.startswith("'") and "': " in rest:  # text_format sometimes quotes the whole offending line
        rest = rest[rest.rindex("': ") + 3 :]
    return _one_line(f"line {m.group(1)} column {m.group(2)}: {rest.rstrip('.')}")


# --- binary -----------------------------------------------------------------------------------------


def _parse_binary(data: bytes, limits: Limits) -> tuple[Plan, list[str]]:
    plan = SupersetPlan()
    try:
        plan.ParseFromString(data)
    except DecodeError as e:
        _parse_deep_binary(plan, data, f"truncated or corrupt protobuf: {_one_line(str(e))}", limits)
    except RecursionError:  # pure-Python protobuf backend
        raise limits.too_deep() from None
    else:
        if limits.max_depth < _PROTOBUF_DEPTH:  # parsed within protobuf's own limit; a policy may ask for less
            with contextlib.suppress(_CorruptError):
                limits.check_depth(_nesting_depth(memoryview(data), SupersetPlan.DESCRIPTOR, 1, limits.max_depth))
    try:
        unknown = next(iter_unknown_fields(plan), None)
    except RecursionError:
        raise limits.too_deep() from None
    if unknown is not None:
        where = f"in {unknown.type_name}" + ("" if unknown.path else " (top level)")
        raise PlanInvalidError(
            f"unknown field {unknown.number} (wire type {unknown.wire_type}) {where}: "
            "not in Substrait 0.108, perhaps written by a newer producer",
            path=unknown.path or None,
        )
    return _upgraded(plan, [])


class _CorruptError(Exception):
    pass


# protobuf's own nesting limit (upb and pure Python): deeper binary input fails to parse and is measured.
_PROTOBUF_DEPTH = 100


def _parse_deep_binary(plan: Message, data: bytes, error: str, limits: Limits) -> None:
    """Parse again with protobuf's nesting limit lifted, if the failure was depth and the depth is bounded."""
    try:
        depth = _nesting_depth(memoryview(data), SupersetPlan.DESCRIPTOR, 1, limits.max_depth)
    except _CorruptError:
        raise PlanInvalidError(error) from None
    limits.check_depth(depth)
    with _depth_limit_lifted():
        try:
            plan.ParseFromString(data)
        except DecodeError:
            raise PlanInvalidError(error) from None
        except RecursionError:
            raise limits.too_deep() from None


@contextmanager
def _depth_limit_lifted() -> Iterator[None]:
    """Lift protobuf's process-wide nesting limit for one parse (upb: up to 65535; pure Python: MAX_DEPTH)."""
    if api_implementation.Type() == "upb":
        from google._upb import _message as upb  # only present with the upb backend

        upb.SetAllowOversizeProtos(True)
        try:
            yield
        finally:
            upb.SetAllowOversizeProtos(False)
    else:
        from google.protobuf.internal import decoder

        decoder.SetRecursionLimit(MAX_DEPTH + 1)
        try:
            yield
        finally:
            decoder.SetRecursionLimit(decoder.DEFAULT_RECURSION_LIMIT)


def _nesting_depth(data: memoryview, desc: Any, level: int, stop: int = MAX_DEPTH) -> int:  # Any: pure-Python/upb
    """Deepest message nesting in serialized data, following the fields desc declares as messages.

    Stops at `stop` + 1, so it recurses no further than the limit; malformed wire data is _CorruptError.
    """
    if level > stop:
        return level
    deepest, pos, end = level, 0, len(data)
    while pos < end:
        tag, pos = _varint(data, pos)
        wire = tag & 7
        if wire == 0:
            _, pos = _varint(data, pos)
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        elif wire == 2:
            size, pos = _varint(data, pos)
            if pos + size > end:
                raise _CorruptError
            field = desc.fields_by_number.get(tag >> 3)
            if field is not None and field.message_type is not None:
                inner = _nesting_depth(data[pos : pos + size], field.message_type, level + 1, stop)
                deepest = max(deepest, inner)
                if deepest > stop:
                    return deepest
            pos += size
        else:  # groups: Substrait has none
            raise _CorruptError
    if pos > end:
        raise _CorruptError
    return deepest


def _varint(data: memoryview, pos: int) -> tuple[int, int]:
    result = shift = 0
    while pos < len(data) and shift < 70:
        byte = data[pos]
        result |= (byte & 0x7F) << shift
        pos += 1
        if not byte & 0x80:
            return result, pos
        shift += 7
    raise _CorruptError


def iter_unknown_fields(msg: Message, path: str = "") -> Iterator[UnknownField]:
    """Yield every field the parser did not know, in msg and all messages below it, with its plan path."""
    unknown = UnknownFieldSet(msg)
    for f in (unknown[i] for i in range(len(unknown))):  # iterable, but types-protobuf declares no __iter__
        yield UnknownField(path, msg.DESCRIPTOR.full_name, f.field_number, f.wire_type, f.data)
    for fd, value in msg.ListFields():
        if fd.message_type is None:
            continue
        sub = f"{path}.{fd.name}" if path else fd.name
        if isinstance(value, Message):
            yield from iter_unknown_fields(value, sub)
        elif fd.message_type.GetOptions().map_entry:
            if fd.message_type.fields_by_name["value"].message_type is not None:
                for key, item in value.items():
                    yield from iter_unknown_fields(item, f"{sub}[{key!r}]")
        else:
            for i, item in enumerate(value):
                yield from iter_unknown_fields(item, f"{sub}[{i}]")
