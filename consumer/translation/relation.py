"""A translated relation: a DataFrame whose columns carry unique internal names.

Substrait is positional and Spark resolves by name. Every column a translation makes gets a name unique
in the whole plan (`_s<n>`), so joins of a table with itself, shared subtrees and outer references resolve
without ambiguity. The plan's own names are attached only at the root and at writes.
"""

from __future__ import annotations

import functools
import itertools
import operator
import weakref
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T


def quote(name: str) -> str:
    """Backtick-quote an identifier for Spark (names from plans are untrusted)."""
    return "`" + name.replace("`", "``") + "`"


# Column references by internal name. In classic PySpark every `F.col` costs JVM round trips (~1 ms); the
# internal names (`_s0`, `_s1`, ...) repeat from one translation to the next, and an unresolved column is
# valid in any DataFrame of its session, so each session keeps one reference per name.
_column_cache: ContextVar[dict[Hashable, Column] | None] = ContextVar("substrait_column_cache", default=None)
_session_columns: weakref.WeakKeyDictionary[object, dict[Hashable, Column]] = weakref.WeakKeyDictionary()


def cached(key: Hashable, build: Callable[[], Column]) -> Column:
    """A column that means the same in every DataFrame of the session (a name, a literal), built once."""
    cache = _column_cache.get()
    if cache is None:
        return build()
    col = cache.get(key)
    if col is None:
        col = cache[key] = build()
    return col


def column(name: str) -> Column:
    """`F.col` for an internal name, cached for the session of the current translation."""
    return cached(name, lambda: F.col(quote(name)))


def conjunction(conds: Sequence[Column]) -> Column | None:
    """The AND of the conditions; None for none."""
    return functools.reduce(operator.and_, conds) if conds else None


def all_of(conds: Sequence[Column]) -> Column:
    """The AND of one condition or more (a join's: none would make it a cross join)."""
    if not conds:
        raise ValueError("a join condition needs at least one conjunct")
    return functools.reduce(operator.and_, conds)


def union_all(a: DataFrame, b: DataFrame) -> DataFrame:
    """For `functools.reduce`. Bound methods, never `DataFrame.unionAll`: `pyspark.sql.DataFrame` is the classic
    class on 3.5 (its methods call the JVM) and an abstract base on 4.x, neither usable on a Connect DataFrame."""
    return a.unionAll(b)


@contextmanager
def column_cache(session: object) -> Iterator[None]:
    """Within this block, `column()` reuses the references made for `session` before."""
    try:
        cache = _session_columns.setdefault(session, {})
    except TypeError:  # a session object that cannot be weakly referenced: cache for this block only
        cache = {}
    token = _column_cache.set(cache)
    try:
        yield
    finally:
        _column_cache.reset(token)


class NameSource:
    """Hands out column names unique within one translation (Spark compares names case-insensitively)."""

    def __init__(self, prefix: str = "_s"):
        self._prefix = prefix
        self._counter = itertools.count()
        self._claimed: set[str] = set()

    def fresh(self) -> str:
        return f"{self._prefix}{next(self._counter)}"

    def claim(self, names: Sequence[str]) -> bool:
        """Reserve a table's own column names if no relation of this translation uses them yet.

        A read that keeps its names needs no renaming DataFrame operation, and its plan looks like the one
        Spark SQL makes. Names that could be taken for internal ones (`_s12`) are never claimed.
        """
        lowered = [n.lower() for n in names]
        clash = len(set(lowered)) != len(lowered) or any(n in self._claimed for n in lowered)
        if clash or any(self.internal(n) for n in lowered):
            return False
        self._claimed.update(lowered)
        return True

    def internal(self, name: str) -> bool:
        """Whether `name` could be taken for one `fresh` hands out (`_s12`)."""
        lowered = name.lower()
        return lowered.startswith(self._prefix) and lowered[len(self._prefix) :].isdigit()

    def reserve(self, names: Sequence[str]) -> None:
        """Names a table read from now on may not keep (the plan's output names, given below the root)."""
        self._claimed.update(n.lower() for n in names)


@dataclass(frozen=True)
class Pending:
    """A correlated predicate pulled up out of a subquery body, applied where the subquery joins its host.

    `inner` names the body's columns it reads (they travel up as hidden columns); `equality` holds the inner
    column name when the predicate is `inner = <outer expression>`, which lets an aggregate absorb it as a key.
    `comparison` is set when the predicate compares an inner column with an outer one, both plain columns of
    one type: then it can stand inside Spark's own EXISTS subquery (`subqueries.py`).
    """

    cond: Column
    inner: tuple[str, ...]
    equality: str | None = None
    comparison: ColumnComparison | None = None


@dataclass(frozen=True)
class ColumnComparison:
    """`left op right` over two columns by name, one of them the enclosing query's (`outer`)."""

    left: str
    op: str  # a Spark SQL comparison operator
    right: str
    outer: str

    def sql(self) -> str:
        return f"{quote(self.left)} {self.op} {quote(self.right)}"


@dataclass(frozen=True)
class Correlation:
    """Where a subquery body stands in its decorrelation (empty outside subquery bodies).

    `pending` are correlated predicates still to be applied where the body joins its host; `hidden` are columns
    that ride along in the frame without a position (what those predicates read, on their way up); `keyed`: at
    most one row per correlation key (an aggregate absorbed the keys); `count_bug`: that aggregate counts, so its
    value for a key without rows would be 0, not the join's NULL.
    """

    pending: tuple[Pending, ...] = ()
    hidden: tuple[str, ...] = ()
    keyed: bool = False
    count_bug: bool = False

    def carried(self, visible: Sequence[str]) -> tuple[str, ...]:
        """Columns the pending predicates still need that `visible` does not hold: they travel as hidden."""
        need = dict.fromkeys(n for p in self.pending for n in p.inner)
        need.update(dict.fromkeys(self.hidden))
        shown = set(visible)
        return tuple(n for n in need if n not in shown)


UNCORRELATED = Correlation()


@dataclass(frozen=True)
class Projection:
    """A projection not applied yet (see `Relation`): `exprs` maps some of the relation's names (visible or
    hidden) to Columns over its frame, the others being frame columns of that name; `frame_names` are the
    frame's own columns (they need not be unique). `bound` are the (lower-case) frame columns that `exprs` and
    the relation refer to only through DataFrame-bound columns (`df[name]`, by attribute id, never by name): a
    frame beside another holding the same names still resolves them (a table read twice, `side_by_side`).
    `renames` maps those of `exprs` that only give a frame column a new name to that frame column: SQL over the
    frame itself can read them without the renaming Project (`subqueries.spark_exists`)."""

    exprs: Mapping[str, Column]
    frame_names: tuple[str, ...]
    bound: frozenset[str] = frozenset()
    renames: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Relation:
    """A DataFrame plus the positional names and Spark types of its columns: what a translator sees.

    Immutable: an operation makes a new relation. `correlation` is the decorrelation state of a subquery body
    (`Correlation`; empty elsewhere): its `hidden` columns ride in the frame after the positional ones.

    A relation may carry a `projection` not applied yet (`Projection`): its columns are then expressions over
    `frame`, which may hold columns the relation does not have. In classic PySpark every DataFrame operation runs
    Spark's analyzer over the whole plan so far, so a projection is applied only when something needs the
    columns by name: `materialized()` returns the relation with it applied (one `select`), and `df` is only for
    a relation without one. Translators that can take the pending expressions inline (filter, sort, fetch,
    aggregate, project, emit, cross and inner joins, the root) work on `frame` and `col(i)` instead. Columns from
    `col(i)` belong to this relation's frame: build them from the materialized relation when `df` is used.
    Pending correlated predicates refer to columns by name (`named()`): they are applied above, once the
    projection is.
    """

    frame: DataFrame
    names: Sequence[str]  # a tuple (a list given is copied)
    types: Sequence[T.DataType] = ()  # a tuple; when none are given, the frame's types of `names` (a schema read)
    correlation: Correlation = UNCORRELATED
    projection: Projection | None = None

    def __post_init__(self) -> None:
        # Lists are accepted (and copied): the relation never changes, whoever holds the list.
        object.__setattr__(self, "names", tuple(self.names))
        if not self.types and self.names:  # no columns (count(*)'s input, VALUES of no column): no schema read
            by_name = {f.name: f.dataType for f in self.frame.schema.fields}
            object.__setattr__(self, "types", tuple(by_name[n] for n in self.names))
        else:
            object.__setattr__(self, "types", tuple(self.types))

    @property
    def df(self) -> DataFrame:
        """The DataFrame with exactly this relation's columns (and hidden ones), by name."""
        if self.projection is not None:
            raise AssertionError("a relation with a pending projection has no `df`: use `materialized()` first")
        return self.frame

    @property
    def hidden(self) -> tuple[str, ...]:
        return self.correlation.hidden

    @property
    def pending(self) -> tuple[Pending, ...]:
        return self.correlation.pending

    @property
    def keyed(self) -> bool:
        return self.correlation.keyed

    @property
    def count_bug(self) -> bool:
        return self.correlation.count_bug

    def materialized(self) -> Relation:
        """This relation with its pending projection applied: one `select` (none if there is none)."""
        if self.projection is None:
            return self
        frame = self.frame.select(*self.named_cols([*self.names, *self.hidden]))
        return Relation(frame, self.names, self.types, self.correlation)

    def named(self) -> Relation:
        """A view of this relation whose columns are referred to by name (what `materialized()` will hold)."""
        return Relation(self.frame, self.names, self.types) if self.projection is not None else self

    def columns(self) -> tuple[str, ...]:
        """The names of `frame`'s columns."""
        return self.projection.frame_names if self.projection is not None else (*self.names, *self.hidden)

    def __len__(self) -> int:
        return len(self.names)

    def ref(self, name: str) -> Column:
        """A column of this relation by name, as an expression over `frame`."""
        expr = self.projection.exprs.get(name) if self.projection is not None else None
        return column(name) if expr is None else expr

    def named_cols(self, names: Sequence[str]) -> list[Column]:
        """The columns `names` over `frame`, each under its own name."""
        exprs = _exprs(self)
        return [exprs[n].alias(n) if n in exprs else column(n) for n in names]

    def frame_column(self, name: str) -> str | None:
        """The column of `frame` that this relation's column `name` is, unchanged (None when it is computed)."""
        if self.projection is None:
            return name
        if name in self.projection.renames:
            return self.projection.renames[name]
        return name if name not in self.projection.exprs and name in self.projection.frame_names else None

    def col(self, i: int) -> Column:
        return self.ref(self.names[i])

    def cols(self) -> list[Column]:
        return [self.col(i) for i in range(len(self.names))]

    def hidden_cols(self) -> list[Column]:
        return [column(n) for n in self.hidden]

    def with_df(self, df: DataFrame) -> Relation:
        """Same columns and correlation state over a new DataFrame (e.g. after a filter or sort of `df`)."""
        return Relation(df, self.names, self.types, self.correlation)

    def widened(self, df: DataFrame, added: Sequence[str]) -> Relation:
        """Same columns over `df`, this relation's frame joined with `added` columns, which ride as hidden ones
        (what a subquery expression over this relation reads)."""
        return self.derive(df, self.names, self.types, [*self.hidden, *added])

    def over(self, frame: DataFrame, pending: Sequence[Pending] | None = None) -> Relation:
        """Same columns, pending expressions included, over a new frame made from `frame` by an operation
        that keeps its columns (filter, sort, limit); with `pending`, these correlated predicates instead."""
        correlation = self.correlation
        if pending is not None:
            correlation = replace(correlation, pending=tuple(pending))
            correlation = replace(correlation, hidden=correlation.carried(self.names))
        return Relation(frame, self.names, self.types, correlation, self.projection)

    def carried(self, visible: Sequence[str]) -> tuple[str, ...]:
        """Columns pending predicates still need that `visible` does not hold: they travel as hidden."""
        return self.correlation.carried(visible)

    def derive(
        self, df: DataFrame, names: Sequence[str], types: Sequence[T.DataType], hidden: Sequence[str]
    ) -> Relation:
        """A relation computed from this one, keeping its correlation state (with these hidden columns)."""
        return Relation(df, tuple(names), tuple(types), replace(self.correlation, hidden=tuple(hidden)))

    def correlated(self) -> bool:
        return bool(self.pending)

    def can_defer(self) -> bool:
        """Whether this relation may enter a join or emit with its projection pending: it is uncorrelated."""
        return not (self.pending or self.hidden)

    def project(self, names: Sequence[str], types: Sequence[T.DataType], exprs: Mapping[str, Column]) -> Relation:
        """A pending projection over this relation: `names`, with `exprs` for those that are not columns of
        this relation under the same name (the hidden columns are carried). No DataFrame operation."""
        hidden = self.carried(names)
        inherited = _exprs(self)
        pending = {
            n: exprs[n] if n in exprs else inherited[n] for n in (*names, *hidden) if n in exprs or n in inherited
        }
        correlation = replace(self.correlation, hidden=hidden)
        kept = {n: frame_name for n, frame_name in _renames(self).items() if n in pending and n not in exprs}
        projection = Projection(pending, self.columns(), _bound(self), kept)
        return Relation(self.frame, tuple(names), tuple(types), correlation, projection)

    def select_positions(self, positions: Sequence[int], names: NameSource) -> Relation:
        """Keep the given positions in order; repeated positions get fresh names so they stay distinct."""
        rel = self if self.can_defer() else self.materialized()
        seen: set[str] = set()
        out_names: list[str] = []
        renamed: dict[str, Column] = {}
        for p in positions:
            name = rel.names[p]
            if name in seen:
                new = names.fresh()
                renamed[new] = rel.col(p)
                out_names.append(new)
            else:
                seen.add(name)
                out_names.append(name)
        if tuple(out_names) == rel.names:
            return rel
        types = [rel.types[p] for p in positions]
        if rel.can_defer():
            return rel.project(out_names, types, renamed)
        hidden = rel.carried(out_names)
        cols = [renamed[n].alias(n) if n in renamed else column(n) for n in out_names]
        df = rel.df.select(*cols, *[column(n) for n in hidden])
        return rel.derive(df, out_names, types, hidden)

    def renamed(self, names: NameSource) -> Relation:
        """The same rows with all-new column names: for a subtree used twice in one plan."""
        assert not self.hidden and not self.pending, "only uncorrelated relations are shared"
        new = [names.fresh() for _ in self.names]
        out = self.project(new, self.types, {n: self.col(i) for i, n in enumerate(new)})
        # The same frame (the same attribute ids) twice: bound columns would not tell the two uses apart.
        assert out.projection is not None
        return replace(out, projection=replace(out.projection, bound=frozenset()))


def side_by_side(left: Relation, right: Relation) -> tuple[Relation, Relation]:
    """Two uncorrelated relations whose frames can be joined: pending projections are applied (right first)
    while the frames share a column name, which Spark could not resolve (a table read twice keeps its own
    names in its frame until then) — unless the right one refers to the shared names only by attribute
    (`Projection.bound`, a table read again as a new relation): then the left one is bound too and neither needs
    a renaming Project, as Spark SQL tells two reads of one table apart by attribute id alone."""
    clash = _clash(left, right)
    if clash and clash <= _bound(right):
        bound = _bind(left, clash)
        if bound is None:  # the left one's pending expressions name them: its own columns instead
            bound = left.materialized()
        if not _clash(bound, right) or _clash(bound, right) <= _bound(bound):
            return bound, right
    if clash:
        right = right.materialized()
        if _clash(left, right):
            left = left.materialized()
    return left, right


def _bind(rel: Relation, clash: frozenset[str]) -> Relation | None:
    """`rel` with its columns among `clash` referred to by attribute (`Projection.bound`); None if it refers to
    one of them by name in a pending expression that is more than a rename (which cannot be rewritten)."""
    if clash <= _bound(rel):
        return rel
    renames = _renames(rel)
    if any(n not in renames for n in _exprs(rel)) or _bound(rel):
        return None
    frame = [c.lower() for c in rel.columns()]
    exprs = dict(_exprs(rel))
    for n in (*rel.names, *rel.hidden):
        f = renames.get(n, n)
        if f.lower() in clash:
            if frame.count(f.lower()) != 1:
                return None
            exprs[n] = rel.frame[quote(f)]
    return Relation(rel.frame, rel.names, rel.types, rel.correlation, Projection(exprs, rel.columns(), clash, renames))


def _exprs(rel: Relation) -> Mapping[str, Column]:
    return rel.projection.exprs if rel.projection is not None else {}


def _renames(rel: Relation) -> Mapping[str, str]:
    return rel.projection.renames if rel.projection is not None else {}


def _bound(rel: Relation) -> frozenset[str]:
    return rel.projection.bound if rel.projection is not None else frozenset()


def _clash(left: Relation, right: Relation) -> frozenset[str]:
    return frozenset({n.lower() for n in left.columns()} & {n.lower() for n in right.columns()})


def beside(
    left: Relation, right: Relation, names: Sequence[str], types: Sequence[T.DataType], frame: DataFrame
) -> Relation:
    """The relation over `frame`, a join of the two frames (see `side_by_side`), with both inputs' pending
    projections still pending."""
    if left.projection is None and right.projection is None:
        return Relation(frame, names, types)
    exprs = {**_exprs(left), **_exprs(right)}
    bound = _bound(left) | _bound(right)
    renames = {**_renames(left), **_renames(right)}
    projection = Projection(exprs, (*left.columns(), *right.columns()), bound, renames)
    return Relation(frame, names, types, projection=projection)
