"""One traversal of a plan for every reader of it: the translator, validate, lineage and explain/graph.

The kinds a plan can hold are the oneofs of the installed protobuf (`KINDS`: relation, expression, read,
literal, subquery and field-reference root kinds). Every reader declares, per oneof, which kinds it handles and
which it refuses with a reason (`KindTable`); a kind it does neither is a `TypeError` when its module is imported
(`PlanVisitor` subclasses: when the class is created), and `tests/test_plan_kinds.py` holds every reader's tables
against the protobuf — a new kind in a new protobuf release fails there, not in production.

`PlanVisitor` is the walk of relations the translator (`SubstraitConsumer`) and lineage (`LineageWalker`) share:
dispatch on the relation and expression kind through their tables, the relation's `emit`, ReferenceRel sharing
(each shared subtree visited once, a cycle refused) and plan paths. What several readers need to know about a
kind lives here once: which field of a subquery holds its relation, which relation a ReferenceRel names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, Generic, TypeVar

from google.protobuf.message import Message
from substrait import algebra_pb2 as alg

from .errors import PlanInvalidError, UnsupportedFeatureError

Expression = alg.Expression
Subquery = Expression.Subquery
R = TypeVar("R")


def _oneof(message: type[Message], name: str) -> tuple[str, ...]:
    return tuple(f.name for f in message.DESCRIPTOR.oneofs_by_name[name].fields)


# The oneof each reader dispatches on -> its kinds, as the installed protobuf defines them.
KINDS: dict[str, tuple[str, ...]] = {
    "rel_type": _oneof(alg.Rel, "rel_type"),
    "rex_type": _oneof(Expression, "rex_type"),
    "read_type": _oneof(alg.ReadRel, "read_type"),
    "literal_type": _oneof(Expression.Literal, "literal_type"),
    "subquery_type": _oneof(Subquery, "subquery_type"),
    "root_type": _oneof(Expression.FieldReference, "root_type"),
}

# What a message of each dispatched oneof with no kind set is (a malformed plan).
NOTHING_SET = {"rel_type": "relation with no type set", "rex_type": "expression with nothing set"}
# Kinds that stand for something outside the plan: an ordinal into a list the plan does not carry.
DETACHED = "a detached ordinal (a reference into a list outside the plan)"

# Which field of each subquery kind holds its relation, and how explain labels the kind.
SUBQUERY_BODY: dict[str, str] = {
    "scalar": "input",
    "in_predicate": "haystack",
    "set_predicate": "tuples",
    "set_comparison": "right",
}
SUBQUERY_LABEL: dict[str, str] = {
    "scalar": "scalar",
    "in_predicate": "IN",
    "set_predicate": "EXISTS",
    "set_comparison": "ANY/ALL",
}


class JoinOutput(StrEnum):
    """Which columns a join outputs (the spec's layouts; SINGLE joins output both sides, MARK joins add a
    nullable boolean to the side they keep)."""

    BOTH = "both"
    LEFT = "left"
    RIGHT = "right"
    LEFT_MARK = "left+mark"
    RIGHT_MARK = "right+mark"


JoinRel = alg.JoinRel
JOIN_OUTPUT: dict[int, JoinOutput] = {
    **dict.fromkeys(
        (
            JoinRel.JOIN_TYPE_INNER,
            JoinRel.JOIN_TYPE_OUTER,
            JoinRel.JOIN_TYPE_LEFT,
            JoinRel.JOIN_TYPE_RIGHT,
            JoinRel.JOIN_TYPE_LEFT_SINGLE,
            JoinRel.JOIN_TYPE_RIGHT_SINGLE,
        ),
        JoinOutput.BOTH,
    ),
    JoinRel.JOIN_TYPE_LEFT_SEMI: JoinOutput.LEFT,
    JoinRel.JOIN_TYPE_LEFT_ANTI: JoinOutput.LEFT,
    JoinRel.JOIN_TYPE_RIGHT_SEMI: JoinOutput.RIGHT,
    JoinRel.JOIN_TYPE_RIGHT_ANTI: JoinOutput.RIGHT,
    JoinRel.JOIN_TYPE_LEFT_MARK: JoinOutput.LEFT_MARK,
    JoinRel.JOIN_TYPE_RIGHT_MARK: JoinOutput.RIGHT_MARK,
}


def logical_join_type(body: Any) -> int:
    """A join's type as a JoinRel join type: the physical joins list the same names numbered differently; a cross
    join (no type) is an inner join; a value no enum names is returned as it is."""
    enum = getattr(type(body), "JoinType", None)
    if enum is None or enum is JoinRel.JoinType or body.type not in enum.values():
        return getattr(body, "type", JoinRel.JOIN_TYPE_INNER)
    return JoinRel.JoinType.Value(enum.Name(body.type))


def subquery_body(sq: alg.Expression.Subquery, path: str) -> tuple[str, alg.Rel, str]:
    """A subquery's kind, its relation and that relation's path; a subquery with nothing set is invalid."""
    kind = sq.WhichOneof("subquery_type")
    if kind is None:
        raise PlanInvalidError("subquery with nothing set", path)
    field = SUBQUERY_BODY[kind]
    return kind, getattr(getattr(sq, kind), field), f"{path}.{kind}.{field}"


def shared_relation(plan: Any, ordinal: int, path: str) -> alg.Rel:
    """The shared subtree a ReferenceRel names (`plan.relations[ordinal].rel`), checked."""
    if not 0 <= ordinal < len(plan.relations):
        raise PlanInvalidError(f"reference to relation {ordinal}, the plan has {len(plan.relations)}", path)
    target = plan.relations[ordinal]
    if target.WhichOneof("rel_type") != "rel":
        raise PlanInvalidError(f"reference to relation {ordinal}, which is a root, not a shared subtree", path)
    return target.rel


@dataclass(frozen=True)
class KindTable:
    """Which kinds of one oneof a reader handles and which it refuses (kind -> the reason)."""

    reader: str
    oneof: str
    handled: frozenset[str]
    refused: Mapping[str, str]

    @classmethod
    def of(cls, reader: str, oneof: str, handled: Any, refused: Mapping[str, str] | None = None) -> KindTable:
        """The table of `reader`, checked: raises TypeError for a kind neither handled nor refused."""
        table = cls(reader, oneof, frozenset(handled), dict(refused or {}))
        table.check()
        return table

    def missing(self) -> list[str]:
        """Kinds of the protobuf this reader neither handles nor refuses."""
        return [k for k in KINDS[self.oneof] if k not in self.handled and k not in self.refused]

    def check(self) -> None:
        problems = []
        if missing := self.missing():
            problems.append(f"neither handles nor refuses {', '.join(missing)}")
        if both := sorted(self.handled & set(self.refused)):
            problems.append(f"both handles and refuses {', '.join(both)}")
        if unknown := sorted((self.handled | set(self.refused)) - set(KINDS[self.oneof])):
            problems.append(f"names kinds the protobuf lacks: {', '.join(unknown)}")
        if problems:
            raise TypeError(f"{self.reader} ({self.oneof}): {'; '.join(problems)}")


# Every reader's tables, by reader name (filled as readers are defined; the kinds test reads it).
READERS: dict[str, list[KindTable]] = {}


def register(*tables: KindTable) -> None:
    for t in tables:
        READERS.setdefault(t.reader, []).append(t)


# A handler: the name of a method of the visitor, or a function taking the visitor first.
Handler = str | Callable[..., Any]


class PlanVisitor(Generic[R]):
    """The walk of relations and expressions one reader does, with its result type R per relation.

    A subclass sets `relation_handlers` and `expression_handlers` (kind -> method name or function(visitor,
    message, path, outer|scope)) and `refused_relations` / `refused_expressions` (kind -> reason); a kind in
    neither is a TypeError when the class is created. `rel` dispatches, applies `emit`; `shared` visits a
    ReferenceRel's subtree once.
    """

    reader: ClassVar[str] = "plan visitor"
    relation_handlers: ClassVar[Mapping[str, Handler]] = {}
    refused_relations: ClassVar[Mapping[str, str]] = {}
    expression_handlers: ClassVar[Mapping[str, Handler]] = {}
    refused_expressions: ClassVar[Mapping[str, str]] = {}
    plan: Any

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        KindTable.of(cls.reader, "rel_type", cls.relation_handlers, cls.refused_relations)
        KindTable.of(cls.reader, "rex_type", cls.expression_handlers, cls.refused_expressions)

    @classmethod
    def kind_tables(cls) -> list[KindTable]:
        return [
            KindTable.of(cls.reader, "rel_type", cls.relation_handlers, cls.refused_relations),
            KindTable.of(cls.reader, "rex_type", cls.expression_handlers, cls.refused_expressions),
        ]

    # --- relations ---------------------------------------------------------------------------------------

    def rel(self, rel: alg.Rel, path: str, outer: Any = None) -> R:
        """Visit any relation, then apply its `emit`."""
        kind = rel.WhichOneof("rel_type")
        if kind is None:
            raise PlanInvalidError(NOTHING_SET["rel_type"], path)
        body, p = getattr(rel, kind), f"{path}.{kind}"
        handler = self._handler(self.relation_handlers, self.refused_relations, "relation", kind, p)
        return self.emit(kind, body, self.visit_relation(kind, handler, body, p, outer), p)

    def visit_relation(self, kind: str, handler: Callable[..., R], body: Message, path: str, outer: Any) -> R:
        """Run the relation's handler (a reader wraps it here: checks before, errors named after)."""
        return handler(body, path, outer)

    def emit(self, kind: str, body: Message, out: R, path: str) -> R:
        """The relation's output through its `common.emit` (a reader's own column selection)."""
        return out

    @classmethod
    def refusal(cls, what: str, kind: str, reason: str | None, path: str) -> UnsupportedFeatureError:
        """The error for a kind this reader does not handle (at `path`, the kind's own path)."""
        return UnsupportedFeatureError(f"{kind} {what}" + (f": {reason}" if reason else ""), path)

    @classmethod
    def handles(cls, oneof: str, kind: str) -> bool:
        """Whether this reader has a handler for `kind` (a method name must name a method of the class)."""
        table = cls.relation_handlers if oneof == "rel_type" else cls.expression_handlers
        handler = table.get(kind)
        return handler is not None and (not isinstance(handler, str) or hasattr(cls, handler))

    def refused(self, what: str, kind: str, reason: str | None, path: str) -> Callable[..., Any]:
        """What the walk does with a kind this reader does not handle: raise its refusal (explain, which describes
        any plan, returns a handler that answers "not known" instead)."""
        raise self.refusal(what, kind, reason, path)

    def _handler(
        self, handlers: Mapping[str, Handler], refused: Mapping[str, str], what: str, kind: str, path: str
    ) -> Callable[..., Any]:
        handler = handlers.get(kind)
        if handler is None:
            return self.refused(what, kind, refused.get(kind), path)
        if isinstance(handler, str):
            return getattr(self, handler)
        return lambda *args: handler(self, *args)

    # --- shared subtrees ----------------------------------------------------------------------------------

    def shared(self, ordinal: int, path: str, outer: Any = None) -> R:
        """A subtree shared by ReferenceRels (`plan.relations[i].rel`), visited once; a cycle is invalid."""
        target = shared_relation(self.plan, ordinal, path)
        done: dict[int, R] = self.__dict__.setdefault("_shared_results", {})
        walking: set[int] = self.__dict__.setdefault("_shared_walking", set())
        if ordinal not in done:
            if ordinal in walking:
                raise PlanInvalidError(f"relation {ordinal} refers to itself", path)
            walking.add(ordinal)
            try:
                done[ordinal] = self.rel(target, f"relations[{ordinal}].rel", outer)
            finally:
                walking.discard(ordinal)
        return done[ordinal]

    # --- expressions -------------------------------------------------------------------------------------

    def expression(self, e: alg.Expression, scope: Any, path: str) -> Any:
        """Visit any expression (at `path.<kind>`)."""
        kind = e.WhichOneof("rex_type")
        if kind is None:
            raise PlanInvalidError(NOTHING_SET["rex_type"], path)
        p = f"{path}.{kind}"
        handler = self._handler(self.expression_handlers, self.refused_expressions, "expression", kind, p)
        return handler(getattr(e, kind), scope, p)


def subquery_relations(body: Message, path: str) -> Iterator[tuple[alg.Expression.Subquery, str]]:
    """Subqueries in a relation's own expressions (not in its inputs, not nested in other subqueries)."""
    from .walk import children

    for child, cpath in children(body, path):
        if isinstance(child, alg.Rel):
            continue
        if isinstance(child, Subquery):
            yield child, cpath
        else:
            yield from subquery_relations(child, cpath)


__all__ = [
    "DETACHED",
    "JOIN_OUTPUT",
    "KINDS",
    "NOTHING_SET",
    "READERS",
    "SUBQUERY_BODY",
    "SUBQUERY_LABEL",
    "JoinOutput",
    "KindTable",
    "PlanVisitor",
    "logical_join_type",
    "register",
    "shared_relation",
    "subquery_body",
    "subquery_relations",
]
