"""Static analysis of a plan, without Spark: which features it uses, and which of them we cannot translate.

`validate_plan` walks every message of the plan — each root and shared relation, every expression, the bodies
of subqueries inside expressions — and runs the checks of `CHECKS` on it, keyed by message type. A check
yields a `Finding` (feature, path) for each thing the consumer class would reject as unsupported, with the
path in the same style the translators use (`relations[0].root.input.filter.condition.scalar_function`).
What makes a plan malformed rather than unsupported (a relation or expression with nothing set, a function
reference to an undeclared anchor) raises `PlanInvalidError`, as translation would.

The checks read the consumer class they are given (its function tables, extension handlers and overridden
methods), so a subclass that adds functions or relation kinds validates as it translates.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from google.protobuf.message import Message
from substrait import algebra_pb2 as alg
from substrait import type_pb2 as tp
from substrait.extensions.extensions_pb2 import AdvancedExtension
from substrait.plan_pb2 import Plan

from ..errors import PlanInvalidError, UnsupportedFeatureError
from ..loading.extensions import Extensions, FunctionRef
from ..loading.loader import LoadedPlan
from ..loading.producers import Quirks
from ..plan_visitor import KINDS, SUBQUERY_BODY, KindTable, PlanVisitor, register, shared_relation, subquery_body
from ..translation import windows
from ..translation.consumer import FIELD_ROOTS, SubstraitConsumer
from ..translation.context_variables import unsupported_reason as context_variable_refusal
from ..translation.expressions import options_of, stray_rel_reference
from ..translation.functions import (
    AGGREGATE,
    AGGREGATE_OPTIONS,
    SCALAR,
    SCALAR_OPTIONS,
    SCALAR_RULES,
    OptionRule,
    StaticArgument,
    StaticCall,
    lookup,
    matched_key,
)
from ..translation.functions import UNKNOWN as UNKNOWN_VALUE
from ..translation.functions.argument_types import argument_type_refusal
from ..translation.literals import REFUSED_LITERALS
from ..translation.literals import python_value as literal_value
from ..translation.parameters import unbindable
from ..translation.registry import extension_handler
from ..translation.relations import expand, join, lateral, physical_join
from ..translation.relations import window as window_rel
from ..translation.relations.aggregate import COUNTS
from ..translation.relations.aggregate import function_refusals as aggregate_refusals
from ..translation.relations.filter import equality_key_position
from ..translation.relations.read import READ_METHODS, local_files_refusals
from ..translation.relations.sort import sort_refusals
from ..translation.steps import DEFAULTS_REFUSED, is_update_key, plan_update_key, set_defaults
from ..translation.subqueries import KEYED_PREDICATE, outputs_count, refuse_unmarked_correlation
from ..types import PlanTypes, schema_of, spark_type
from ..walk import (
    OPAQUE,
    children,
    conjunct_paths,
    contains,
    nodes,
    record_fields,
    reference_levels,
    value_args,
)
from .explain import UNKNOWN, PlanTree

Expression = alg.Expression
JoinRel = alg.JoinRel
Subquery = Expression.Subquery


@dataclass(frozen=True, order=True)
class Finding:
    """One feature of a plan the consumer cannot translate, and where it is."""

    feature: str
    path: str

    def to_dict(self) -> dict[str, str]:
        return {"feature": self.feature, "path": self.path}

    def __str__(self) -> str:
        return f"{self.feature} (at {self.path})"


# --- walking ------------------------------------------------------------------------------------------------

# --- context -----------------------------------------------------------------------------------------------


@dataclass
class Context:
    """What the checks read: the plan, its declarations, the consumer class, and per-relation caches."""

    plan: Plan
    consumer_class: type[SubstraitConsumer]
    extensions: Extensions
    quirks: Quirks
    _corr: dict[str, _Corr] = field(default_factory=dict)
    _records: _Records | None = None
    # Lateral joins met so far (the walk visits a relation before its inputs): path -> the anchor its right
    # input's `rel_reference` outer references name.
    laterals: dict[str, int] = field(default_factory=dict)

    def function(self, anchor: int, path: str) -> FunctionRef:
        return self.extensions.function(anchor, path)

    def argument_families(self, fn: Any, ref: FunctionRef, path: str) -> tuple[str | None, ...]:
        """The type families (`types.family`) of a call's value arguments as the plan states them — what the
        handler tells its overloads apart by — else as its signature names them; None where neither says."""
        stated = self.stated_families(fn, path)
        signature = [_family(_SIGNATURE_TYPES.get(s, s)) for s in ref.signature]
        if len(signature) != len(stated):
            signature = [None] * len(stated)
        return tuple(f or sig for f, sig in zip(stated, signature, strict=True))

    def stated_families(self, fn: Any, path: str) -> tuple[str | None, ...]:
        """The type families of a call's value arguments as the plan states them (None where it does not): the
        types the translator's arguments have."""
        if self._records is None:
            self._records = _Records(self.plan, self.extensions, self.quirks)
        return tuple(_family(t) for t in self._records.argument_types(fn, path))

    def sort_keys(self, sorts: Any, path: str) -> list[windows.SortKey]:
        """A window's sort keys as `windows.frame` reads them, from the types the plan states."""
        if self._records is None:
            self._records = _Records(self.plan, self.extensions, self.quirks)
        stated = self._records.types_at([s.expr for s in sorts], path)
        return [(_family(t), t.rstrip("?")) for t in stated]

    def overridden(self, method: str) -> bool:
        """Whether the consumer class replaces the base class's translator `method`."""
        return getattr(self.consumer_class, method, None) is not getattr(SubstraitConsumer, method, None)


Check = Callable[[Context, Any, str], Iterable[Finding]]


# --- relations ---------------------------------------------------------------------------------------------


def _rel_kind(cx: Context, rel: alg.Rel, path: str) -> Iterator[Finding]:
    yield from _kind(cx, rel, "rel_type", "relation", cx.consumer_class.refused_relations, path)
    kind = rel.WhichOneof("rel_type")
    refusals = cx.consumer_class.relation_refusals.get(kind or "")
    if refusals is not None and cx.consumer_class.handles("rel_type", kind or ""):
        # What the relation's translator refuses from the plan alone (checked before it runs).
        for feature, at in refusals(getattr(rel, kind or ""), f"{path}.{kind}"):
            yield Finding(feature, at)


def _kind(cx: Context, msg: Message, oneof: str, what: str, refused: dict[str, str], path: str) -> Iterator[Finding]:
    """A relation or expression kind the consumer class neither translates nor knows: as its translator says."""
    kind = msg.WhichOneof(oneof)
    if kind is None:
        raise PlanInvalidError(
            f"{what} with no type set" if what == "relation" else "expression with nothing set", path
        )
    if not cx.consumer_class.handles(oneof, kind):
        refusal = cx.consumer_class.refusal(what, kind, refused.get(kind), f"{path}.{kind}")
        yield Finding(refusal.message, refusal.path or path)


def _advanced_extension(cx: Context, ext: AdvancedExtension, path: str) -> Iterator[Finding]:
    """Enhancements change meaning: refused, but a WriteRel's update key (checked further by `_write`)."""
    if ext.HasField("enhancement") and not (path.endswith(".write.advanced_extension") and is_update_key(ext)):
        yield Finding("advanced extension enhancement", path)


def _extension_handler(cx: Context, detail: Any, what: str, path: str) -> Iterator[Finding]:
    if extension_handler(cx.consumer_class.extension_relations, detail.type_url) is None:
        yield Finding(f"{what} {detail.type_url or '(no type URL)'}", path)


def _extension_rel(cx: Context, rel: Any, path: str) -> Iterator[Finding]:
    yield from _extension_handler(cx, rel.detail, "extension relation", path)


def _extension_table(cx: Context, table: alg.ReadRel.ExtensionTable, path: str) -> Iterator[Finding]:
    if not cx.overridden("read_extension_table"):
        yield from _extension_handler(cx, table.detail, "extension table", path)


def _read(cx: Context, rel: alg.ReadRel, path: str) -> Iterator[Finding]:
    kind = rel.WhichOneof("read_type")
    if kind is None:
        raise PlanInvalidError("read with no source set", path)
    schema = rel.base_schema
    untyped = cx.quirks.untyped_base_schema and kind == "named_table" and schema.names and not schema.struct.types
    if not untyped:  # (as the read translator: such a producer's columns take the table's types)
        with contextlib.suppress(UnsupportedFeatureError):  # a type Spark lacks: the type check reports it
            schema_of(schema, f"{path}.base_schema")  # names that do not fit the types: PlanInvalidError
    width = len(schema.struct.types)
    if kind == "virtual_table" and width:  # without a base schema the first row's literals give the types
        for r, row in enumerate(rel.virtual_table.expressions):
            if len(row.fields) != width:
                raise PlanInvalidError(
                    f"row of {len(row.fields)} values for {width} columns", f"{path}.virtual_table.expressions[{r}]"
                )
    if kind == "iceberg_table" and rel.iceberg_table.WhichOneof("table_type") != "direct":
        raise PlanInvalidError("Iceberg table read with no metadata file", f"{path}.{kind}")
    return iter(())


def _local_files(cx: Context, files: alg.ReadRel.LocalFiles, path: str) -> Iterator[Finding]:
    if not cx.overridden("read_local_files"):
        for feature, at in local_files_refusals(files, path):
            yield Finding(feature, at)


def _reference(cx: Context, rel: alg.ReferenceRel, path: str) -> Iterator[Finding]:
    shared_relation(cx.plan, rel.subtree_ordinal, path)  # a dangling reference is invalid, as translation says
    return iter(())


def _fetch(cx: Context, rel: alg.FetchRel, path: str) -> Iterator[Finding]:
    if _correlation(cx, rel.input, f"{path}.input").pending:
        yield Finding("LIMIT/OFFSET inside a correlated subquery", path)


def _join(cx: Context, rel: JoinRel, path: str) -> Iterator[Finding]:
    yield from _join_correlation(cx, rel, rel.type, path)
    if rel.type != JoinRel.JOIN_TYPE_INNER and rel.HasField("expression") and contains(rel.expression, Subquery):
        width = len(PlanTree(cx.plan, cx.extensions, cx.quirks, []).schema(rel.left, f"{path}.left", []))
        for c, p in conjunct_paths(cx.extensions.functions, rel.expression, f"{path}.expression"):
            fields = record_fields(c) if contains(c, Subquery) else set()
            if any(f < width for f in fields) and any(f >= width for f in fields):
                yield Finding(f"{join.TWO_SIDED_SUBQUERY} ({JoinRel.JoinType.Name(rel.type)})", p)


def _cross(cx: Context, rel: alg.CrossRel, path: str) -> Iterator[Finding]:
    yield from _join_correlation(cx, rel, JoinRel.JOIN_TYPE_INNER, path)


def _join_correlation(cx: Context, rel: Any, join_type: int, path: str) -> Iterator[Finding]:
    states = [_correlation(cx, rel.left, f"{path}.left"), _correlation(cx, rel.right, f"{path}.right")]
    if any(s.pending for s in states) and join_type != JoinRel.JOIN_TYPE_INNER:
        yield Finding("correlated input under a non-inner join in a subquery", path)
    elif any(s.keyed for s in states):
        yield Finding("join above a correlated aggregate inside a subquery", path)


def _lateral(cx: Context, rel: alg.LateralJoinRel, path: str) -> Iterator[Finding]:
    """What the decorrelating lateral join refuses, from its rebased right input's correlation (the escapes
    are `lateral.refusals`')."""
    cx.laterals[path] = rel.common.rel_anchor
    jt = lateral.checked_type(rel, path)
    if lateral.escapes_natively(rel, path):
        return
    right, _ = lateral.rebase(rel.right, rel.common.rel_anchor, f"{path}.right")
    if _correlation(cx, rel.left, f"{path}.left").pending:
        yield Finding(lateral.IN_CORRELATED, path)
    state = _correlation(replace(cx, _corr={}), right, f"{path}.right")  # (memoized by path: the rebased copy's own)
    for feature, at in lateral.decorrelation_refusals(jt, state.keyed, state.count_bug, path):
        yield Finding(feature, at)


def _physical_join(cx: Context, rel: Any, path: str) -> Iterator[Finding]:
    yield from _join_correlation(cx, rel, physical_join.join_type(rel, path), path)


def _dynamic_parameter(cx: Context, param: alg.DynamicParameter, path: str) -> Iterator[Finding]:
    """A parameter of a type no caller's value converts to, with no binding in the plan (as `Parameters.literal`)."""
    why = unbindable(param.type)
    if why and param.parameter_reference not in {b.parameter_anchor for b in cx.plan.parameter_bindings}:
        yield Finding(why, path)


def _context_variable(cx: Context, v: Expression.ExecutionContextVariable, path: str) -> Iterator[Finding]:
    reason = context_variable_refusal(cx.plan)
    if reason:
        yield Finding(reason, path)


def _expand(cx: Context, rel: alg.ExpandRel, path: str) -> Iterator[Finding]:
    if _correlation(cx, rel.input, f"{path}.input").pending:
        yield Finding(expand.CORRELATED, path)


def _set(cx: Context, rel: alg.SetRel, path: str) -> Iterator[Finding]:
    for i, r in enumerate(rel.inputs):
        if _correlation(cx, r, f"{path}.inputs[{i}]").pending:
            yield Finding("set operation inside a correlated subquery", f"{path}.inputs[{i}]")


def _project(cx: Context, rel: alg.ProjectRel, path: str) -> Iterator[Finding]:
    if not _correlation(cx, rel.input, f"{path}.input").pending:
        return
    for i, e in enumerate(rel.expressions):
        if reference_levels(e) - {0}:
            yield Finding("outer reference in a projection of a correlated subquery", f"{path}.expressions[{i}]")
        for p in windows.window_paths(e, f"{path}.expressions[{i}]"):
            yield Finding(windows.CORRELATED, p)


def _filter(cx: Context, rel: alg.FilterRel, path: str) -> Iterator[Finding]:
    if not rel.HasField("condition"):
        return
    p = f"{path}.condition"
    for c in _conjuncts(cx, rel.condition):
        levels = reference_levels(c) - {0}
        if not levels:
            continue
        if max(levels) > 1:
            yield Finding("outer reference more than one subquery level out from a correlated predicate", p)
        if contains(c, Subquery):
            yield Finding("subquery inside a correlated predicate", p)


def _aggregate(cx: Context, rel: alg.AggregateRel, path: str) -> Iterator[Finding]:
    keys_and_measures: list[Message] = [*rel.grouping_expressions, *rel.groupings, *rel.measures]
    if any(_changes_scope(m) for m in keys_and_measures):
        yield Finding("subquery inside an aggregate's keys or measures", path)
    written = cx.quirks.as_written(rel)  # (as the translator: the producer's grouping id of each set)
    sets = [list(g.expression_references) for g in written.groupings]
    refusal = cx.quirks.grouping_id_refusal(sets, len(written.grouping_expressions))
    if refusal:
        yield Finding(refusal, path)
    state = _correlation(cx, rel.input, f"{path}.input")
    if state.pending:
        if not all(state.pending):
            yield Finding("aggregate over a non-equality correlated predicate (cannot be decorrelated)", path)
        if len(rel.groupings) > 1:
            yield Finding("grouping sets inside a correlated subquery", path)


def _conjuncts(cx: Context, e: Expression) -> list[Expression]:
    return [c for c, _ in conjunct_paths(cx.extensions.functions, e, "")]


def _changes_scope(msg: Message) -> bool:
    """A subquery translated as a join with the host (a predicate, or a correlated scalar subquery)."""
    if isinstance(msg, Subquery):
        kind = msg.WhichOneof("subquery_type")
        return kind != "scalar" or bool(reference_levels(msg.scalar.input) - {0})
    return any(_changes_scope(m) for m, _ in children(msg, ""))


# --- correlation (mirrors how the translators pull correlated predicates up to the subquery's host) ---------


@dataclass(frozen=True)
class _Corr:
    """Pending correlated predicates of a relation (True: an equality usable as a key), as the translators
    track them: `keyed` after an aggregate absorbed the keys without grouping keys of its own, `count_bug`
    when that aggregate counts."""

    pending: tuple[bool, ...] = ()
    keyed: bool = False
    count_bug: bool = False


_NONE = _Corr()


def _correlation(cx: Context, rel: alg.Rel, path: str) -> _Corr:
    """The correlation state of the relation at `path` (memoized by path: protobuf wrappers are transient)."""
    if path not in cx._corr:
        cx._corr[path] = _compute_correlation(cx, rel, path)
    return cx._corr[path]


def _compute_correlation(cx: Context, rel: alg.Rel, path: str) -> _Corr:
    kind = rel.WhichOneof("rel_type")
    if kind is None:
        return _NONE
    body = getattr(rel, kind)  # the relation message, of the kinds tested below
    p = f"{path}.{kind}"
    if kind in ("project", "sort", "fetch", "exchange", "top_n"):
        return _correlation(cx, body.input, f"{p}.input")
    if kind == "filter":
        inner = _correlation(cx, body.input, f"{p}.input")
        extra = tuple(
            equality_key_position(cx, c) is not None
            for c in (_conjuncts(cx, body.condition) if body.HasField("condition") else [])
            if reference_levels(c) - {0}
        )
        return _Corr(inner.pending + extra, inner.keyed, inner.count_bug)
    if kind in ("join", "cross", "hash_join", "merge_join", "nested_loop_join"):
        left, right = _correlation(cx, body.left, f"{p}.left"), _correlation(cx, body.right, f"{p}.right")
        return _Corr(left.pending + right.pending)
    if kind == "aggregate":
        inner = _correlation(cx, body.input, f"{p}.input")
        if not inner.pending:
            return _NONE
        has_keys = bool(len(body.grouping_expressions))
        counts = any(
            (ref := cx.extensions.functions.get(m.measure.function_reference)) is not None and ref.base in COUNTS
            for m in body.measures
        )
        return _Corr(inner.pending, keyed=not has_keys, count_bug=counts)
    return _NONE


# --- static types of function arguments (what the handlers tell overloads apart by) ---------------------------


class _Records(PlanTree):
    """The record (column types) each relation's own expressions see, by the relation's path, and the subquery
    records outside it: explain's static schemas, for the argument types of function calls."""

    def __init__(self, plan: Plan, extensions: Extensions, quirks: Quirks):
        super().__init__(plan, extensions, quirks, [])
        self.records: dict[str, tuple[list[str], list[list[str]]]] = {}
        self.render()

    def shape(
        self, rel: alg.Rel, kind: str | None, body: Any, path: str, depth: int, outer: list[list[str]], parent: Any,
        label: str,
    ) -> None:  # fmt: skip
        if kind is not None:
            p = f"{path}.{kind}"
            self.records[p] = (self._record(body, kind, p, outer), outer)

    def record_of(self, body: Any, kind: str, p: str, outer: list[list[str]]) -> list[str]:
        return self.records[p][0]

    def argument_types(self, fn: Any, path: str) -> list[str]:
        """The stated types of a call's value arguments at `path` (UNKNOWN where the plan does not state one)."""
        return self.types_at(value_args(fn), path)

    def types_at(self, exprs: Iterable[Expression], path: str) -> list[str]:
        """The stated types of expressions standing at `path` (UNKNOWN where the plan does not state one)."""
        at = max((p for p in self.records if path.startswith(p + ".")), key=len, default=None)
        record, outer = self.records[at] if at is not None else ([], [])
        return [self.expr_type(e, record, outer) for e in exprs]


# Substrait type names (as `explain.type_str` writes them, and signature abbreviations) -> `types.family`.
_FAMILIES = {
    **dict.fromkeys(("i8", "i16", "i32", "i64"), "int"),
    **dict.fromkeys(("fp32", "fp64"), "float"),
    "decimal": "decimal",
    **dict.fromkeys(("string", "varchar", "fixed_char"), "string"),
    "boolean": "bool",
    "date": "date",
    **dict.fromkeys(("timestamp", "timestamp_tz", "precision_timestamp", "precision_timestamp_tz"), "timestamp"),
    "interval_year": "interval_year",
    "interval_day": "interval_day",
    **dict.fromkeys(("binary", "fixed_binary"), "binary"),
}
_SIGNATURE_TYPES = {
    "dec": "decimal", "str": "string", "vchar": "varchar", "fchar": "fixed_char", "bool": "boolean",
    "ts": "timestamp", "tstz": "timestamp_tz", "pts": "precision_timestamp", "ptstz": "precision_timestamp_tz",
    "iyear": "interval_year", "iday": "interval_day", "vbin": "binary", "fbin": "fixed_binary",
}  # fmt: skip


def _family(type_name: str) -> str | None:
    """`decimal<15,2>?` -> decimal; None for a type not stated (`?`) or of no family."""
    if type_name == UNKNOWN:
        return None
    return _FAMILIES.get(type_name.rstrip("?").partition("<")[0])


# --- expressions -------------------------------------------------------------------------------------------


def _expression_kind(cx: Context, e: Expression, path: str) -> Iterator[Finding]:
    yield from _kind(cx, e, "rex_type", "expression", cx.consumer_class.refused_expressions, path)


def _field_reference(cx: Context, ref: Expression.FieldReference, path: str) -> Iterator[Finding]:
    root = ref.WhichOneof("root_type")
    if root is not None and root not in FIELD_ROOTS:
        yield Finding(f"{root} field reference", path)
    outer = ref.outer_reference
    # As the translator: the lateral join naming a relation rewrites references to it in its right input only.
    taken = any(path.startswith(f"{at}.right.") and a == outer.rel_reference for at, a in cx.laterals.items())
    if root == "outer_reference" and outer.WhichOneof("outer_reference_type") == "rel_reference" and not taken:
        yield Finding(stray_rel_reference(outer.rel_reference), f"{path}.outer_reference")
    if ref.WhichOneof("reference_type") == "masked_reference":
        yield Finding("masked field reference in an expression", path)


def _if_then(cx: Context, e: Expression.IfThen, path: str) -> Iterator[Finding]:
    """A clause missing its condition or result is invalid, as the translator finds it; but a simple CASE's operand
    clause (`Quirks.case_operand`)."""
    if not e.ifs:
        raise PlanInvalidError("if-then with no clauses", path)
    operand = cx.quirks.case_operand(e)
    for i, clause in enumerate(e.ifs):
        for part in ("if", "then"):
            if not clause.HasField(part) and not (operand and i == 0 and part == "then"):
                raise PlanInvalidError("expression with nothing set", f"{path}.ifs[{i}].{part}")
    return iter(())


def _subquery(cx: Context, sq: Subquery, path: str) -> Iterator[Finding]:
    kind, body, body_path = subquery_body(sq, path)
    if kind == "set_predicate" and sq.set_predicate.predicate_op != Subquery.SetPredicate.PREDICATE_OP_EXISTS:
        yield Finding("UNIQUE subquery predicate", f"{path}.set_predicate")
    refuse_unmarked_correlation(cx, body, body_path)
    if kind != "scalar" and _correlation(cx, body, body_path).keyed:
        yield Finding(KEYED_PREDICATE, f"{path}.{kind}")
    if kind == "scalar":
        state = _correlation(cx, body, f"{path}.scalar.input")
        # As the translator: a keyed COUNT output is fixed up (0 for no rows); anything computed over one is not.
        if state.pending and state.count_bug and not (state.keyed and outputs_count(cx, body)):
            yield Finding(
                "correlated scalar subquery computing over COUNT (its empty-group value is not NULL)", f"{path}.scalar"
            )


# Literals whose value decides whether they translate: user-defined ones (the mapped unsigned integers translate,
# others name their type), timestamps and intervals finer than microseconds (whole microseconds translate) and
# compound intervals (those with months or days/seconds only translate).
_CHECKED_LITERALS = frozenset(
    {"user_defined", "precision_timestamp", "precision_timestamp_tz", "interval_day_to_second", "interval_compound"}
)


def _literal(cx: Context, lit: Expression.Literal, path: str) -> Iterator[Finding]:
    kind = lit.WhichOneof("literal_type")
    if kind is None:
        raise PlanInvalidError("literal has no value set", path)
    if kind in REFUSED_LITERALS:
        yield Finding(REFUSED_LITERALS[kind], path)
    elif kind in _CHECKED_LITERALS:  # the translator's own conversion decides (one rule)
        try:
            literal_value(lit, path)
        except UnsupportedFeatureError as exc:
            yield Finding(exc.message, exc.path or path)


def _type(cx: Context, t: tp.Type, path: str) -> Iterator[Finding]:
    if path.endswith(".literal.null") and t.WhichOneof("kind") == "func":
        return  # a null function value, for a higher-order function (as the translator: `lambdas.null_function`)
    try:
        spark_type(t, path)
    except UnsupportedFeatureError as exc:
        yield Finding(exc.message, exc.path or path)


# --- functions ---------------------------------------------------------------------------------------------


def _function_argument(cx: Context, arg: alg.FunctionArgument, path: str) -> Iterator[Finding]:
    kind = arg.WhichOneof("arg_type")
    if kind is None:
        raise PlanInvalidError("function argument with nothing set", path)
    if kind == "type":
        yield Finding("type arguments", path)


def _scalar_function(cx: Context, fn: Expression.ScalarFunction, path: str) -> Iterator[Finding]:
    ref = cx.function(fn.function_reference, f"{path}.function_reference")
    handler = lookup(cx.consumer_class.scalar_functions, ref)
    if handler is None:
        yield Finding(f"scalar function {ref.name}", path)
        return
    if not cx.overridden("call_scalar"):  # the translator's own check of the argument types (one rule)
        why = argument_type_refusal(ref, cx.stated_families(fn, path))
        if why:
            raise PlanInvalidError(why, path)
    yield from _options(cx, cx.consumer_class.scalar_functions, SCALAR, SCALAR_OPTIONS, ref, fn, path)
    key = matched_key(cx.consumer_class.scalar_functions, ref)
    rule = SCALAR_RULES.get(key) if key is not None and handler is SCALAR.get(key) else None
    if rule is not None and (why := rule(_static_call(fn))):
        yield Finding(f"{ref.name}: {why}", path)


def _static_call(fn: Any) -> StaticCall:
    """A call's arguments as the plan states them, for the handlers' argument rules."""
    values = []
    for a in fn.arguments:
        kind = a.WhichOneof("arg_type")
        if kind != "value":
            continue
        e = a.value
        if e.WhichOneof("rex_type") == "literal":
            try:
                value = literal_value(e.literal, "")[0]
            except (UnsupportedFeatureError, PlanInvalidError):  # the literal's own check reports it
                value = UNKNOWN_VALUE
            values.append(StaticArgument(True, value))
        else:  # a dynamic parameter is a constant bound at run time
            values.append(StaticArgument(e.WhichOneof("rex_type") == "dynamic_parameter", UNKNOWN_VALUE))
    return StaticCall(tuple(values), tuple(a.enum for a in fn.arguments if a.WhichOneof("arg_type") == "enum"))


def _aggregate_function(cx: Context, fn: alg.AggregateFunction, path: str) -> Iterator[Finding]:
    ref = cx.function(fn.function_reference, f"{path}.function_reference")
    for feature, at in aggregate_refusals(ref, fn, path):
        yield Finding(feature, at)
    handler = lookup(cx.consumer_class.aggregate_functions, ref)
    if handler is None:
        yield Finding(f"aggregate function {ref.name}", path)
        return
    yield from _options(cx, cx.consumer_class.aggregate_functions, AGGREGATE, AGGREGATE_OPTIONS, ref, fn, path)
    for check in AGGREGATE_CHECKS.get(ref.base, ()) if handler is AGGREGATE.get(ref.base) else ():
        yield from check(ref, fn, path)


def _window_function(cx: Context, fn: Expression.WindowFunction, path: str) -> Iterator[Finding]:
    ref = cx.function(fn.function_reference, f"{path}.function_reference")  # dangling anchors are still invalid
    for feature, at in windows.static_findings(cx.consumer_class, ref, fn, cx.sort_keys(fn.sorts, path), path):
        yield Finding(feature, at)
    for feature, at in sort_refusals(fn.sorts, f"{path}.sorts"):
        yield Finding(feature, at)


def _window_rel(cx: Context, rel: alg.ConsistentPartitionWindowRel, path: str) -> Iterator[Finding]:
    if _correlation(cx, rel.input, f"{path}.input").pending:
        yield Finding(windows.CORRELATED, path)
    if any(_changes_scope(m) for m in [*rel.partition_expressions, *rel.sorts, *rel.window_functions]):
        yield Finding(window_rel.SUBQUERY_INSIDE, path)
    for feature, at in sort_refusals(rel.sorts, f"{path}.sorts"):
        yield Finding(feature, at)
    sort_keys = cx.sort_keys(rel.sorts, f"{path}.sorts")
    for i, fn in enumerate(rel.window_functions):
        p = f"{path}.window_functions[{i}]"
        ref = cx.function(fn.function_reference, f"{p}.function_reference")
        for feature, at in windows.static_findings(cx.consumer_class, ref, fn, sort_keys, p):
            yield Finding(feature, at)


def _options(
    cx: Context,
    table: dict[str, Any],
    defaults: dict[str, Any],
    rules: dict[str, OptionRule],
    ref: FunctionRef,
    fn: Any,
    path: str,
) -> Iterator[Finding]:
    """The options the call's handler reads (declared next to it: `functions.*_OPTIONS`) that it would refuse.
    Checked only while the consumer class keeps the default handler for that key."""
    given = options_of(fn.options, ref, path)  # (a contradiction with the name's own options is invalid)
    key = matched_key(table, ref)
    rule = rules.get(key) if key is not None and table[key] is defaults.get(key) else None
    if rule is None:
        return
    for option in rule(cx.argument_families(fn, ref, path)):
        prefs = given.get(option.name.lower()) or []
        if option.choose(prefs) is None:
            yield Finding(option.refusal(ref.name, prefs), path)


# What the default function handlers refuse beyond their name and options (enum values, DISTINCT). Each entry is
# checked only while the consumer class keeps the default handler for that name.
FunctionCheck = Callable[[FunctionRef, Any, str], Iterable[Finding]]


def _no_distinct(ref: FunctionRef, fn: Any, path: str) -> Iterator[Finding]:
    if fn.invocation == alg.AggregateFunction.AGGREGATION_INVOCATION_DISTINCT:
        yield Finding(f"{ref.name}: DISTINCT invocation", path)


def _count_arguments(ref: FunctionRef, fn: Any, path: str) -> Iterator[Finding]:
    n = len([a for a in fn.arguments if a.WhichOneof("arg_type") == "value"])
    distinct = fn.invocation == alg.AggregateFunction.AGGREGATION_INVOCATION_DISTINCT
    if n == 0 and distinct:
        yield Finding(f"{ref.name}: count(DISTINCT *)", path)
    elif n > 1 and not distinct:
        yield Finding(f"{ref.name}: count over several arguments without DISTINCT", path)


AGGREGATE_CHECKS: dict[str, tuple[FunctionCheck, ...]] = {
    "corr": (_no_distinct,),
    "median": (_no_distinct,),
    "mode": (_no_distinct,),
    "product": (_no_distinct,),
    "std_dev": (_no_distinct,),
    "variance": (_no_distinct,),
    "count": (_count_arguments,),
}


def _write(cx: Context, rel: alg.WriteRel, path: str) -> Iterator[Finding]:
    """What a write step refuses from the plan (`translation/steps.py`; errors only a catalog can tell aside)."""
    if rel.WhichOneof("write_type") == "extension_table":
        yield Finding("write to an extension_table", f"{path}.extension_table")
    if is_update_key(rel.advanced_extension):
        try:
            plan_update_key(rel, path)
        except UnsupportedFeatureError as exc:
            yield Finding(exc.message, exc.path or path)


def _ddl(cx: Context, rel: alg.DdlRel, path: str) -> Iterator[Finding]:
    """What a DDL step refuses from the plan (`translation/steps.py`): extension objects, column defaults other than
    NULL."""
    if rel.WhichOneof("write_type") == "extension_object":
        yield Finding("DDL on an extension_object", f"{path}.extension_object")
    at = set_defaults(rel)
    if at:
        yield Finding(DEFAULTS_REFUSED, f"{path}.table_defaults.fields[{at[0]}]")


# --- the table of checks ------------------------------------------------------------------------------------

CHECKS: dict[type[Message], tuple[Check, ...]] = {
    alg.Rel: (_rel_kind,),
    AdvancedExtension: (_advanced_extension,),
    alg.ReadRel: (_read,),
    alg.ReadRel.ExtensionTable: (_extension_table,),
    alg.ReadRel.LocalFiles: (_local_files,),
    alg.ExtensionSingleRel: (_extension_rel,),
    alg.ExtensionMultiRel: (_extension_rel,),
    alg.ExtensionLeafRel: (_extension_rel,),
    alg.ReferenceRel: (_reference,),
    alg.FilterRel: (_filter,),
    alg.ProjectRel: (_project,),
    alg.FetchRel: (_fetch,),
    alg.AggregateRel: (_aggregate,),
    alg.JoinRel: (_join,),
    alg.CrossRel: (_cross,),
    alg.HashJoinRel: (_physical_join,),
    alg.MergeJoinRel: (_physical_join,),
    alg.NestedLoopJoinRel: (_physical_join,),
    alg.LateralJoinRel: (_lateral,),
    Expression.ExecutionContextVariable: (_context_variable,),
    alg.DynamicParameter: (_dynamic_parameter,),
    alg.SetRel: (_set,),
    alg.ExpandRel: (_expand,),
    alg.WriteRel: (_write,),
    alg.DdlRel: (_ddl,),
    Expression: (_expression_kind,),
    Expression.FieldReference: (_field_reference,),
    Expression.IfThen: (_if_then,),
    Expression.Literal: (_literal,),
    Expression.ScalarFunction: (_scalar_function,),
    Expression.WindowFunction: (_window_function,),
    alg.ConsistentPartitionWindowRel: (_window_rel,),
    Subquery: (_subquery,),
    alg.AggregateFunction: (_aggregate_function,),
    alg.FunctionArgument: (_function_argument,),
    tp.Type: (_type,),
}


# --- entry points ------------------------------------------------------------------------------------------


def _plan_of(plan: LoadedPlan | Plan) -> Plan:
    return plan.plan if isinstance(plan, LoadedPlan) else plan


class Validator(PlanVisitor[None]):
    """validate's walk of a plan: relations and expressions through the walk every reader shares (`PlanVisitor`:
    dispatch on the kind, plan paths), every other message in field order; each message's checks (`CHECKS`) run
    when it is reached, so findings come in plan order. Which kinds are supported is the consumer class's to say
    (`_rel_kind`, `_expression_kind`: its tables, its translators' refusals), so this walk visits every kind:
    what it finds inside a refused one is listed too. Shared relations are checked where the plan holds them."""

    reader = "validate"
    relation_handlers = dict.fromkeys(KINDS["rel_type"], "_body")
    expression_handlers = dict.fromkeys(KINDS["rex_type"], "_expression_body")

    def __init__(self, cx: Context):
        self.cx = cx
        self.plan = cx.plan
        self.findings: list[Finding] = []
        self._seen: set[Finding] = set()

    def visit(self, msg: Message, path: str) -> None:
        """Check `msg`, then what is inside it (a relation or an expression through the shared walk)."""
        for check in CHECKS.get(type(msg), ()):
            for f in check(self.cx, msg, path):
                if f not in self._seen:
                    self._seen.add(f)
                    self.findings.append(f)
        if isinstance(msg, alg.Rel):
            self.rel(msg, path)
        elif isinstance(msg, Expression):
            self.expression(msg, None, path)
        elif not isinstance(msg, OPAQUE):
            for child, cpath in children(msg, path):
                self.visit(child, cpath)

    def _body(self, body: Any, path: str, outer: Any) -> None:
        """Any relation's body (a scalar kind, such as a detached ordinal, holds nothing)."""
        if isinstance(body, Message):
            self.visit(body, path)

    def _expression_body(self, body: Any, scope: Any, path: str) -> None:
        """Any expression's body (as a relation's)."""
        self._body(body, path, scope)


def analyze(plan: LoadedPlan | Plan, consumer_class: type[SubstraitConsumer] = SubstraitConsumer) -> list[Finding]:
    """Every unsupported feature of the plan, in plan order. Raises PlanInvalidError for a malformed plan."""
    p = _plan_of(plan)
    validator = Validator(Context(p, consumer_class, Extensions(p), Quirks.of(p)))
    with PlanTypes.of(p).active():  # user-defined types and type aliases, for spark_type
        validator.visit(p, "")
    return validator.findings


def validate_plan(
    loaded: LoadedPlan | Plan, consumer_class: type[SubstraitConsumer] = SubstraitConsumer
) -> list[Finding]:
    """What `substrait-spark validate` reports: no findings iff the consumer class can translate the plan."""
    return analyze(loaded, consumer_class)


def features_used(plan: LoadedPlan | Plan) -> Counter[str]:
    """How often the plan uses each relation kind, read source, expression kind, subquery kind and function.

    Keys are `relation:<kind>`, `read:<source>`, `expression:<kind>`, `subquery:<kind>`, and
    `scalar:<name>` / `aggregate:<name>` / `window:<name>` by base name (`#<anchor>` if undeclared).
    """
    p = _plan_of(plan)
    try:
        functions = Extensions(p).functions
    except PlanInvalidError:
        functions = {}

    def fname(anchor: int) -> str:
        ref = functions.get(anchor)
        return ref.base if ref else f"#{anchor}"

    used: Counter[str] = Counter()
    for msg, _ in nodes(p):
        if isinstance(msg, alg.Rel):
            used[f"relation:{msg.WhichOneof('rel_type')}"] += 1
        elif isinstance(msg, alg.ReadRel):
            used[f"read:{msg.WhichOneof('read_type')}"] += 1
        elif isinstance(msg, Expression):
            used[f"expression:{msg.WhichOneof('rex_type')}"] += 1
        elif isinstance(msg, Subquery):
            used[f"subquery:{msg.WhichOneof('subquery_type')}"] += 1
        elif isinstance(msg, Expression.ScalarFunction):
            used[f"scalar:{fname(msg.function_reference)}"] += 1
        elif isinstance(msg, alg.AggregateFunction):
            used[f"aggregate:{fname(msg.function_reference)}"] += 1
        elif isinstance(msg, Expression.WindowFunction):
            used[f"window:{fname(msg.function_reference)}"] += 1
    return used


# validate asks the consumer class about relation and expression kinds and mirrors the translator on the rest.
register(
    *(KindTable.of("validate", t.oneof, t.handled, t.refused) for t in SubstraitConsumer.kind_tables()),
    KindTable.of("validate", "read_type", READ_METHODS),
    KindTable.of("validate", "literal_type", set(KINDS["literal_type"]) - set(REFUSED_LITERALS), REFUSED_LITERALS),
    KindTable.of("validate", "subquery_type", SUBQUERY_BODY),
    KindTable.of("validate", "root_type", FIELD_ROOTS),
)

__all__ = ["CHECKS", "Finding", "analyze", "features_used", "nodes", "validate_plan"]
