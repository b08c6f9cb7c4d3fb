"""What an expression is translated against: the input record, and the records of enclosing queries."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import Column
from pyspark.sql import types as T

from .relation import Relation


@dataclass(frozen=True)
class Typed:
    """A translated expression: the Spark column, its Spark type, and the Python value if it is a literal."""

    col: Column
    type: T.DataType
    value: Any = None
    is_literal: bool = False


def literal(col: Column, type_: T.DataType, value: Any) -> Typed:
    return Typed(col, type_, value, True)


@dataclass(frozen=True)
class Widened:
    """A projected column that casts an integer column to fp64: the cast as the projection holds it, and the
    integer it reads (avg reads the integer: `relations/aggregate.py`)."""

    cast: Column
    integer: Typed


class Truth(enum.Enum):
    """How much of a boolean's three-valued answer the place it stands in reads.

    A filter or join condition keeps a row only when it is TRUE, and so does a CASE WHEN test: there, a
    predicate under AND/OR alone may answer NULL as FALSE (`TRUE`), and one under a NOT may answer NULL as TRUE
    (`NOT_FALSE`) — the outcome is the same (Kleene logic). Anywhere else the exact value counts (`VALUE`).
    A predicate subquery needs one join for TRUE or NOT_FALSE, and two for VALUE (`marks.py`).
    """

    VALUE = "value"
    TRUE = "true"
    NOT_FALSE = "not_false"

    def negated(self) -> Truth:
        """The truth the operand of a NOT stands in."""
        return _NEGATED_TRUTH[self]


_NEGATED_TRUTH = {Truth.VALUE: Truth.VALUE, Truth.TRUE: Truth.NOT_FALSE, Truth.NOT_FALSE: Truth.TRUE}


@dataclass(frozen=True)
class Hosted:
    """What translating a subquery over a host relation builds: the host widened by the joins the answer reads
    (its leading positions unchanged, the added columns hidden), and the answer, a column over it."""

    rel: Relation
    col: Column


@dataclass
class Scope:
    """The record an expression sees.

    `rel` is the input relation. Subquery and mark translators return the relation they widen (`Hosted`); an
    expression holding subqueries is translated in one pass over its scope, so the one place that adopts what they
    built is `took`: what is translated next over the scope (a sibling subquery) sees the widened relation, and
    the caller (the filter, projection or join translator) reads it back from `rel` when the expression is done.
    `outer` is the scope of the query enclosing a subquery, reached by outer references (`steps_out`). `lambdas`
    holds the parameters of the enclosing lambdas, innermost last (lambda parameter references count `steps_out`
    from the end).
    `native`: outer references to this scope are Spark 4 outer references (`Column.outer()`), which Spark
    resolves itself (a lateral join's left row), instead of correlated predicates pulled up into a join.
    `truth` says, by plan path of each predicate subquery, how much of its answer is read (default VALUE).
    """

    rel: Relation
    outer: Scope | None = None
    lambdas: tuple[tuple[Typed, ...], ...] = ()
    native: bool = False
    truth: Mapping[str, Truth] = field(default_factory=dict)

    def host(self) -> Relation:
        """The input relation with its pending projection applied, as a subquery join needs it; `rel` becomes
        that relation, so what is built next over this scope sees the frame the join extends."""
        self.rel = self.rel.materialized()
        return self.rel

    def took(self, built: Hosted) -> Column:
        """The answer of a subquery translated over this scope; `rel` becomes the relation its joins widened."""
        self.rel = built.rel
        return built.col

    def native_levels(self, levels: set[int]) -> bool:
        """Whether every enclosing scope an expression reads (`levels` > 0) takes Spark 4 outer references."""
        ups = [self.up(level) for level in levels if level > 0]
        return bool(ups) and all(s is not None and s.native for s in ups)

    def up(self, steps: int) -> Scope | None:
        s: Scope | None = self
        for _ in range(steps):
            s = s.outer if s else None
        return s
