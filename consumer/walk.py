"""Generic walks over plan messages: field references with their subquery depth, nested messages."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from google.protobuf.message import Message
from substrait import algebra_pb2 as alg
from substrait import type_pb2 as tp

from .errors import PlanInvalidError

FieldReference = alg.Expression.FieldReference
# Messages taken as a whole by `nodes`: their inner messages are not visited one by one (a struct's field types).
OPAQUE: tuple[type[Message], ...] = (tp.Type,)


def _is_repeated(fd: Any) -> bool:
    flag = getattr(fd, "is_repeated", None)  # protobuf 6; older releases only have `label`
    return flag if isinstance(flag, bool) else fd.label == fd.LABEL_REPEATED


_NESTED: dict[Any, tuple[bool, bool]] = {}  # field descriptor -> (holds messages, not map entries; repeated)


def _nested(fd: Any) -> tuple[bool, bool]:
    """Whether a field holds plan messages (not scalars, not map entries) and whether it is a list; read once per
    field (walks visit thousands of messages per plan: `descendants` is on the translation's path)."""
    known = _NESTED.get(fd)
    if known is None:
        known = _NESTED[fd] = (
            fd.message_type is not None and not fd.message_type.GetOptions().map_entry,
            _is_repeated(fd),
        )
    return known


def children(msg: Message, path: str) -> Iterator[tuple[Message, str]]:
    """The messages directly inside `msg` with their plan paths (proto field names, `[i]` for lists); none inside a
    scalar kind (`detached_rel_ordinal`)."""
    if not isinstance(msg, Message):
        return
    for fd, value in msg.ListFields():
        holds, repeated = _nested(fd)
        if not holds:
            continue
        p = f"{path}.{fd.name}" if path else fd.name
        if repeated:
            for i, item in enumerate(value):
                yield item, f"{p}[{i}]"
        else:
            yield value, p


def messages(msg: Message) -> Iterator[Message]:
    """Every message directly inside `msg` (map entries skipped)."""
    if not isinstance(msg, Message):
        return
    for fd, value in msg.ListFields():
        holds, repeated = _nested(fd)
        if holds:
            if repeated:
                yield from value
            else:
                yield value


def nodes(msg: Message, path: str = "") -> Iterator[tuple[Message, str]]:
    """Every message in `msg` (itself first), depth-first in field order, with its path; OPAQUE ones whole."""
    stack = [(msg, path)]
    while stack:
        m, p = stack.pop()
        yield m, p
        if isinstance(m, OPAQUE):
            continue
        stack.extend(reversed(list(children(m, p))))


M = TypeVar("M", bound=Message)


def descendants(msg: Message, kind: type[M] = Message) -> Iterator[M]:  # type: ignore[assignment]  # default: all
    """Every message of type `kind` inside `msg` (not `msg` itself), depth first (a stack, not nested generators:
    a deep plan would pay its depth on every message)."""
    stack = list(messages(msg))
    stack.reverse()
    while stack:
        m = stack.pop()
        if isinstance(m, kind):
            yield m
        inner = list(messages(m))
        inner.reverse()
        stack.extend(inner)


def field_references(msg: Message, depth: int = 0) -> Iterator[tuple[alg.Expression.FieldReference, int]]:
    """Field references in an expression with the number of subquery boundaries crossed to reach them."""
    if isinstance(msg, FieldReference):
        yield msg, depth
        if msg.WhichOneof("root_type") == "expression":
            yield from field_references(msg.expression, depth)
        return
    inner = depth + 1 if isinstance(msg, alg.Expression.Subquery) else depth
    for child in messages(msg):
        yield from field_references(child, inner)


def reference_levels(msg: Message) -> set[int]:
    """Which queries an expression reads: 0 = its own input, k = k subquery boundaries out."""
    levels: set[int] = set()
    for ref, depth in field_references(msg):
        root = ref.WhichOneof("root_type")
        if root == "outer_reference" and ref.outer_reference.steps_out > depth:
            levels.add(ref.outer_reference.steps_out - depth)
        elif depth == 0 and root in ("root_reference", None):
            levels.add(0)
    return levels


def local_fields(msg: Message) -> list[int]:
    """Input positions an expression reads directly at its own level."""
    return [
        ref.direct_reference.struct_field.field
        for ref, depth in field_references(msg)
        if depth == 0 and ref.WhichOneof("root_type") in ("root_reference", None) and ref.HasField("direct_reference")
    ]


def plain_field(e: alg.Expression) -> int | None:
    """The position `e` reads when it is a plain field of the input record (no nesting, no outer reference)."""
    if e.WhichOneof("rex_type") != "selection":
        return None
    sel = e.selection
    ref = sel.direct_reference
    if (
        sel.WhichOneof("root_type") not in ("root_reference", None)
        or ref.WhichOneof("reference_type") != "struct_field"
    ):
        return None
    return None if ref.struct_field.HasField("child") else ref.struct_field.field


def record_fields(msg: Message) -> set[int]:
    """Positions of the record an expression stands over that it reads: its own field references, and the outer
    references of subqueries inside it that reach back to its level."""
    return {ref.direct_reference.struct_field.field for ref in _record_references(msg)}


def shift_record_fields(e: alg.Expression, delta: int) -> alg.Expression:
    """A copy of `e` reading position p + delta wherever it read position p of its record (`record_fields`)."""
    return map_record_fields(e, lambda p: p + delta)


def map_record_fields(e: alg.Expression, position: Callable[[int], int]) -> alg.Expression:
    """A copy of `e` reading `position(p)` wherever it read position p of its record (`record_fields`)."""
    out = alg.Expression()
    out.CopyFrom(e)
    for ref in _record_references(out):
        ref.direct_reference.struct_field.field = position(ref.direct_reference.struct_field.field)
    return out


def _record_references(msg: Message, depth: int = 0) -> Iterator[alg.Expression.FieldReference]:
    """The struct-field references into the record at `depth` 0 (a subquery's needles and compared value stand at
    its host's level; its relation one level in)."""
    if isinstance(msg, FieldReference):
        root = msg.WhichOneof("root_type")
        direct = msg.direct_reference.WhichOneof("reference_type") == "struct_field"
        here = depth == 0 and root in ("root_reference", None)
        reaching = root == "outer_reference" and depth > 0 and msg.outer_reference.steps_out == depth
        if direct and (here or reaching):
            yield msg
        if root == "expression":
            yield from _record_references(msg.expression, depth)
        return
    if isinstance(msg, alg.Expression.Subquery):
        for part in messages(msg):  # the kind of subquery it is
            for child in messages(part):
                yield from _record_references(child, depth + 1 if isinstance(child, alg.Rel) else depth)
        return
    for child in messages(msg):
        yield from _record_references(child, depth)


def contains(msg: Message, kind: type[Message]) -> bool:
    """Whether a message of type `kind` occurs anywhere inside `msg` (without recursion: a plan may nest as deep
    as the loader's bound, `loading/limits.py`)."""
    stack = [msg]
    while stack:
        m = stack.pop()
        if isinstance(m, kind):
            return True
        stack.extend(messages(m))
    return False


def value_args(fn: Any) -> list[alg.Expression]:
    """A function call's value arguments (enum and type arguments skipped); `fn` is any message with
    `arguments` (scalar, aggregate or window function)."""
    return [a.value for a in fn.arguments if a.WhichOneof("arg_type") == "value"]


def value_args_at(fn: Any, path: str) -> list[tuple[alg.Expression, str]]:
    """A call's value arguments with their paths (enum and type arguments carry no value); an argument with
    nothing set is invalid."""
    out = []
    for i, a in enumerate(fn.arguments):
        kind = a.WhichOneof("arg_type")
        if kind is None:
            raise PlanInvalidError("function argument with nothing set", f"{path}.arguments[{i}]")
        if kind == "value":
            out.append((a.value, f"{path}.arguments[{i}].value"))
    return out


def conjunct_paths(functions: Mapping[int, Any], e: alg.Expression, path: str) -> list[tuple[alg.Expression, str]]:
    """A condition split on its top-level AND calls (`functions`: the plan's declared functions by anchor), with
    each conjunct's path."""
    if e.WhichOneof("rex_type") == "scalar_function":
        fn = e.scalar_function
        ref = functions.get(fn.function_reference)
        if ref is not None and ref.base == "and":
            args = value_args_at(fn, f"{path}.scalar_function")
            return [c for a, p in args for c in conjunct_paths(functions, a, p)]
    return [(e, path)]


def named_lambda(plan: Message, anchor: int, path: str) -> alg.Expression.Lambda:
    """The definition of `Plan.named_lambdas[*]` with this anchor (the translator's and lineage's one lookup)."""
    for nl in getattr(plan, "named_lambdas", ()):
        if nl.lambda_anchor == anchor:
            return getattr(nl, "lambda")
    raise PlanInvalidError(f"named lambda {anchor} is not defined in the plan's named_lambdas", path)


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
    """Top-level (name, type) pairs of a NamedStruct (nested names are skipped over)."""
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


def update_transformations(rel: alg.UpdateRel, width: int, path: str) -> Iterator[tuple[int, alg.Expression, str]]:
    """An UpdateRel's (column position, new value, its path), each checked: a column of the table, a value set."""
    for i, t in enumerate(rel.transformations):
        at = f"{path}.transformations[{i}]"
        if not 0 <= t.column_target < width:
            raise PlanInvalidError(f"column_target {t.column_target} out of range", f"{at}.column_target")
        if not t.HasField("transformation"):
            raise PlanInvalidError("transformation with no expression", at)
        yield t.column_target, t.transformation, f"{at}.transformation"


def emit_mapping(body: Message, width: int, path: str) -> list[int] | None:
    """A relation's emit positions, each checked against its `width` output columns; None for direct output."""
    common = getattr(body, "common", None)
    if common is None or common.WhichOneof("emit_kind") != "emit":
        return None
    mapping = list(common.emit.output_mapping)
    for m in mapping:
        if not 0 <= m < width:
            raise PlanInvalidError(
                f"emit position {m} out of range: the relation has {width} columns", f"{path}.common.emit"
            )
    return mapping
