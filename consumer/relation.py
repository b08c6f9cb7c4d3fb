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
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

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
        if clash or any(n.startswith(self._prefix) and n[len(self._prefix) :].isdigit() for n in lowered):
            return False
        self._claimed.update(lowered)
        return True


@dataclass(frozen=True)
class Pending:
    """A correlated predicate pulled up out of a subquery body, applied where the subquery joins its host.

    `inner` names the body's columns it reads (they travel up as hidden columns); `equality` holds the inner
    column name when the predicate is `inner = <outer expression>`, which lets an aggregate absorb it as a key.
    """

    cond: Column
    inner: tuple[str, ...]
    equality: str | None = None


@dataclass
class Relation:
    """A DataFrame plus the positional list of its internal column names and Spark types.

    `hidden` columns ride along in the DataFrame without a position (correlation keys on their way up);
    `pending` are correlated predicates still to be applied (non-empty only inside subquery bodies).

    A relation may be *lazy*: `exprs` then maps some of its names (visible or hidden) to Columns over `frame`
    that have not been selected yet (a projection, a rename or an emit not applied), and `frame` may hold
    columns the relation does not have. In classic PySpark every DataFrame operation runs Spark's analyzer
    over the whole plan so far, so a projection is applied only when something needs the columns by name:
    `df` selects them (once). Translators that can take the pending expressions inline (filter, sort, fetch,
    aggregate, project, emit, cross and inner joins, the root) work on `frame` and `col(i)` instead.
    Build no Column from `col(i)` before reading `df` of the same relation: reading `df` applies the
    projection, after which the pending expressions no longer resolve (`materialized()` first). Pending
    correlated predicates refer to columns by name (`named()`): they are applied above, once the projection is.
    """

    frame: DataFrame
    names: list[str]
    types: list[T.DataType] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    pending: list[Pending] = field(default_factory=list)
    keyed: bool = False  # at most one row per correlation key (an aggregate absorbed the keys)
    count_bug: bool = False  # that aggregate counts: its value for a missing key would be 0, not NULL
    exprs: dict[str, Column] | None = None  # lazy: name -> Column over `frame` (other names: frame columns)
    frame_names: tuple[str, ...] = ()  # lazy: the names of `frame`'s columns (they need not be unique)

    def __post_init__(self) -> None:
        if not self.types:
            by_name = {f.name: f.dataType for f in self.frame.schema.fields}
            self.types = [by_name[n] for n in self.names]

    @property
    def df(self) -> DataFrame:
        """The DataFrame with exactly this relation's columns (and hidden ones), by name."""
        if self.exprs is not None:
            self.frame = self.frame.select(*self.named_cols([*self.names, *self.hidden]))
            self.exprs = None
            self.frame_names = ()
        return self.frame

    def materialized(self) -> Relation:
        """This relation with its pending projection applied (before Columns are built for code using `df`)."""
        self.df  # noqa: B018 - applies the projection
        return self

    def named(self) -> Relation:
        """A view of this relation whose columns are referred to by name (what `df` will hold)."""
        return Relation(self.frame, self.names, self.types) if self.exprs is not None else self

    def columns(self) -> tuple[str, ...]:
        """The names of `frame`'s columns."""
        return self.frame_names if self.exprs is not None else (*self.names, *self.hidden)

    def __len__(self) -> int:
        return len(self.names)

    def ref(self, name: str) -> Column:
        """A column of this relation by name, as an expression over `frame`."""
        expr = self.exprs.get(name) if self.exprs is not None else None
        return column(name) if expr is None else expr

    def named_cols(self, names: Sequence[str]) -> list[Column]:
        """The columns `names` over `frame`, each under its own name."""
        exprs = self.exprs or {}
        return [exprs[n].alias(n) if n in exprs else column(n) for n in names]

    def col(self, i: int) -> Column:
        return self.ref(self.names[i])

    def cols(self) -> list[Column]:
        return [self.col(i) for i in range(len(self.names))]

    def hidden_cols(self) -> list[Column]:
        return [column(n) for n in self.hidden]

    def with_df(self, df: DataFrame) -> Relation:
        """Same columns and correlation state over a new DataFrame (e.g. after a filter or sort of `df`)."""
        return Relation(df, self.names, self.types, self.hidden, self.pending, self.keyed, self.count_bug)

    def over(self, frame: DataFrame, pending: list[Pending] | None = None) -> Relation:
        """Same columns, pending expressions included, over a new frame made from `frame` by an operation
        that keeps its columns (filter, sort, limit); with `pending`, these correlated predicates instead."""
        out = Relation(frame, self.names, self.types, self.hidden, self.pending, self.keyed, self.count_bug)
        if pending is not None:
            out.pending = pending
            out.hidden = out.carried(self.names)
        if self.exprs is not None:
            out.exprs, out.frame_names = dict(self.exprs), self.frame_names
        return out

    def carried(self, visible: Sequence[str]) -> list[str]:
        """Columns pending predicates still need that `visible` does not hold: they travel as hidden."""
        need = dict.fromkeys(n for p in self.pending for n in p.inner)
        need.update(dict.fromkeys(self.hidden))
        return [n for n in need if n not in set(visible)]

    def derive(self, df: DataFrame, names: list[str], types: list[T.DataType], hidden: list[str]) -> Relation:
        """A relation computed from this one, keeping its correlation state."""
        return Relation(df, names, types, hidden, self.pending, self.keyed, self.count_bug)

    def correlated(self) -> bool:
        return bool(self.pending)

    def can_defer(self) -> bool:
        """Whether this relation may enter a join or emit with its projection pending: it is uncorrelated."""
        return not (self.pending or self.hidden)

    def project(self, names: list[str], types: list[T.DataType], exprs: dict[str, Column]) -> Relation:
        """A pending projection over this relation: `names`, with `exprs` for those that are not columns of
        this relation under the same name (the hidden columns are carried). No DataFrame operation."""
        hidden = self.carried(names)
        inherited = self.exprs or {}
        pending = {
            n: exprs[n] if n in exprs else inherited[n] for n in (*names, *hidden) if n in exprs or n in inherited
        }
        return Relation(
            self.frame, names, types, hidden, self.pending, self.keyed, self.count_bug, pending, self.columns()
        )

    def select_positions(self, positions: Sequence[int], names: NameSource) -> Relation:
        """Keep the given positions in order; repeated positions get fresh names so they stay distinct."""
        if not self.can_defer():
            self.materialized()
        seen: set[str] = set()
        out_names: list[str] = []
        renamed: dict[str, Column] = {}
        for p in positions:
            name = self.names[p]
            if name in seen:
                new = names.fresh()
                renamed[new] = self.col(p)
                out_names.append(new)
            else:
                seen.add(name)
                out_names.append(name)
        if out_names == self.names:
            return self
        types = [self.types[p] for p in positions]
        if self.can_defer():
            return self.project(out_names, types, renamed)
        hidden = self.carried(out_names)
        cols = [renamed[n].alias(n) if n in renamed else column(n) for n in out_names]
        df = self.df.select(*cols, *[column(n) for n in hidden])
        return self.derive(df, out_names, types, hidden)

    def renamed(self, names: NameSource) -> Relation:
        """The same rows with all-new column names: for a subtree used twice in one plan."""
        assert not self.hidden and not self.pending, "only uncorrelated relations are shared"
        new = [names.fresh() for _ in self.names]
        return self.project(new, list(self.types), {n: self.col(i) for i, n in enumerate(new)})


def side_by_side(left: Relation, right: Relation) -> tuple[Relation, Relation]:
    """Two uncorrelated relations whose frames can be joined: pending projections are applied (right first)
    while the frames share a column name, which Spark could not resolve (a table read twice keeps its own
    names in its frame until then)."""
    for rel in (right, left):
        if not {n.lower() for n in left.columns()} & {n.lower() for n in right.columns()}:
            break
        rel.materialized()
    return left, right


def beside(left: Relation, right: Relation, names: list[str], types: list[T.DataType], frame: DataFrame) -> Relation:
    """The relation over `frame`, a join of the two frames (see `side_by_side`), with both inputs' pending
    projections still pending."""
    if left.exprs is None and right.exprs is None:
        return Relation(frame, names, types)
    exprs = {**(left.exprs or {}), **(right.exprs or {})}
    return Relation(frame, names, types, exprs=exprs, frame_names=(*left.columns(), *right.columns()))
