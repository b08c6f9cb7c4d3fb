"""The TPC-H plan sets the plan comparison covers, one per producer, each with the SQL that states its query.

Which SQL text is a plan's query is decided once, by the corpus acceptance test (``tests/test_tpch_corpus.py``:
its ``CASES`` hold each plan with its oracle SQL and, where that SQL is not the set's usual text, why) and by the
DataFusion producer test (``tests/test_datafusion_producer.py``: the plans are written by DataFusion from
``tests/tpch_sql/standard``). The benchmarks read those choices here instead of keeping a second list, and
``common.verify_same_query`` checks again, on Spark SQL, that each text returns its plan's result.

* ``ibm`` — IBM's compliance suite (Isthmus 0.80), the set the translation and execution benchmarks use;
* ``isthmus`` — consumer-testing's 2025 Isthmus plans (21: Isthmus cannot plan q15's CREATE VIEW);
* ``duckdb`` — consumer-testing's DuckDB 1.1.3 plans (15: the snapshot holds no others);
* ``datafusion`` — DataFusion's plans at the version the ``test`` extra pins, generated into
  ``.data/producers/datafusion-<version>/`` from the standard SQL over the sf0.01 files (as the producer test does);
* ``ibis`` — ibis-substrait's plans (spec 0.56). Six of them the engine refuses by design (correlation written
  without outer references) and two are not TPC-H's query (a self-join defect): those are listed, not compared.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from pathlib import Path

from common import (
    CORPUS_DIR,
    QUERIES,
    SMALL_DIR,
    SQL_DIR,
    SQL_OVERRIDES,
    TESTS_DIR,
    plan_path,
    qname,
    split_top,
    sql_path,
)


class NullOrder(Enum):
    """Where a producer's ORDER BY puts nulls, which its plans state on every sort field (Spark SQL's defaults,
    ASC NULLS FIRST and DESC NULLS LAST, are no producer's here)."""

    HIGH = "high"  # nulls sort as the largest value: ASC NULLS LAST, DESC NULLS FIRST (Calcite, DataFusion)
    LAST = "last"  # NULLS LAST either way (DuckDB 1.1)
    FIRST = "first"  # NULLS FIRST either way (ibis-substrait)

    def clause(self, direction: str) -> str:
        first = {NullOrder.HIGH: direction == "desc", NullOrder.LAST: False, NullOrder.FIRST: True}[self]
        return "nulls first" if first else "nulls last"


_QUOTED_IDENTIFIER = re.compile(r'"([^"\n]+)"')
_KEY_DIRECTION = re.compile(r"\s+(asc|desc)\s*$", re.IGNORECASE)
# What ends an ORDER BY's key list at its own depth (besides the parenthesis that closes it): LIMIT, OFFSET, a
# window frame (ROWS/RANGE BETWEEN ...).
_WORD = re.compile(r"\b(order\s+by|limit|offset|rows|range)\b", re.IGNORECASE)


def order_by_lists(sql: str) -> list[tuple[int, int, int]]:
    """(depth, start, end) of the key list of every ORDER BY in `sql` — the query's, a subquery's, a window's
    (``OVER (PARTITION BY … ORDER BY …)``), in order of their ends; string literals are skipped."""
    depth, quoted, open_, spans = 0, False, [], []
    i = 0
    while i < len(sql):
        ch = sql[i]
        if ch == "'":
            quoted = not quoted
        elif quoted:
            pass
        elif ch in "()":
            if ch == ")":
                while open_ and open_[-1][0] == depth:
                    d, start = open_.pop()
                    spans.append((d, start, i))
            depth += 1 if ch == "(" else -1
        elif ch.isalpha() and (i == 0 or not (sql[i - 1].isalnum() or sql[i - 1] == "_")):
            m = _WORD.match(sql, i)
            if m:
                if open_ and open_[-1][0] == depth:
                    d, start = open_.pop()
                    spans.append((d, start, m.start()))
                if m.group(1).lower().startswith("order"):
                    open_.append((depth, m.end()))
                i = m.end()
                continue
        i += 1
    spans.extend((d, start, len(sql)) for d, start in reversed(open_))
    return spans


def _with_keys_null_order(keys_text: str, order: NullOrder) -> tuple[str, bool]:
    """The key list with the NULLS clause `order` gives each key that has none; whether any was added."""
    keys, added = [], False
    for key in split_top(keys_text):
        if re.search(r"\bnulls\s+(first|last)\b", key, re.IGNORECASE):
            keys.append(key)
            continue
        added = True
        m = _KEY_DIRECTION.search(key)
        direction = m.group(1).lower() if m else "asc"
        keys.append(f"{key} {order.clause(direction)}" if m else f"{key} asc {order.clause(direction)}")
    return ", ".join(keys), added


def with_null_order(sql: str, order: NullOrder, everywhere: bool = False) -> str:
    """`sql` with each key of its outermost ORDER BY followed by the NULLS clause `order` gives it (the TPC-H
    texts have one ORDER BY, at the end, before an optional LIMIT; a key with a NULLS clause is kept); with
    `everywhere`, each key of every ORDER BY (subqueries', windows': TPC-DS), as a producer that states its null
    order on every sort field writes them."""
    done: set[int] = set()  # starts of lists already rewritten (a list whose keys all state theirs is kept)
    while True:
        spans = order_by_lists(sql)
        todo = [s for s in spans if s[1] not in done] if everywhere else [s for s in spans if s[0] == 0][-1:]
        if not todo:
            return sql
        _, start, end = max(todo, key=lambda s: s[1])  # the last first: an earlier list's positions stay valid
        keys, added = _with_keys_null_order(sql[start:end], order)
        if added:
            sql = f"{sql[:start]} {keys}\n{sql[end:]}".rstrip()
        done.add(start)
        if not everywhere:
            return sql


class SetKey(StrEnum):
    IBM = "ibm"
    ISTHMUS = "isthmus"
    DUCKDB = "duckdb"
    DATAFUSION = "datafusion"
    IBIS = "ibis"


@dataclass(frozen=True)
class PlanSet:
    """One producer's plans of a benchmark's queries (TPC-H's by default) and, per query, the SQL file that is
    the plan's query."""

    key: str  # a SetKey for the TPC-H sets
    title: str
    plans: dict[int, Path]
    sql: dict[int, Path]
    # Where a query's SQL is not the set's usual text (or the plan is not compared), why.
    sql_notes: dict[int, str] = field(default_factory=dict)
    excluded: dict[int, str] = field(default_factory=dict)
    source: str = ""  # where the plans come from, for RESULTS.md
    null_order: NullOrder | None = None  # stated on the SQL's ORDER BY keys (None: the SQL text's own)
    # Stated on every ORDER BY's keys (subqueries', windows'), not only the query's: TPC-DS.
    null_order_everywhere: bool = False
    benchmark: str = "TPC-H"
    universe: tuple[int, ...] = QUERIES  # the benchmark's queries
    check_dir: Path = SMALL_DIR  # where each SQL is run next to its plan and the results compared

    @property
    def queries(self) -> list[int]:
        return sorted(self.plans)

    @property
    def absent(self) -> list[int]:
        """The benchmark's queries the producer wrote no plan for."""
        return [q for q in self.universe if q not in self.plans and q not in self.excluded]

    def plan_path(self, q: int) -> Path:
        return self.plans[q]

    def sql_text(self, q: int) -> str:
        """The SQL as Spark SQL runs it: consumer-testing's ``'{table}'`` placeholders made view names, standard
        double-quoted identifiers (``AS "value"``) Spark's backticks (Spark reads ``"value"`` as a string), comment
        lines and the trailing semicolon removed, and the ORDER BY keys with the null order the plans state."""
        from oracles import substitute_placeholders

        text = substitute_placeholders(self.sql[q].read_text(encoding="utf-8"))
        lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("--")]
        text = _QUOTED_IDENTIFIER.sub(r"`\1`", "\n".join(lines).strip().rstrip(";"))
        return with_null_order(text, self.null_order, self.null_order_everywhere) if self.null_order else text

    def load_plans(self, queries: list[int]) -> dict[int, object]:
        from substrait_spark.consumer import load_plan

        return {q: load_plan(str(self.plan_path(q))).plan for q in queries if q in self.plans}


def _tests_on_path() -> None:
    if str(TESTS_DIR) not in sys.path:
        sys.path.insert(0, str(TESTS_DIR))


def _ibm() -> PlanSet:
    return PlanSet(
        SetKey.IBM,
        "IBM compliance suite (Isthmus 0.80)",
        {q: plan_path(q) for q in QUERIES},
        {q: sql_path(q) for q in QUERIES},
        {q: why for q, (_, why) in SQL_OVERRIDES.items()},
        source=f"corpus/{plan_path(1).parent.name}/qNN.json",
    )


def _from_corpus_cases(
    key: SetKey, title: str, prefix: str, source: str, excluded: dict[int, str], null_order: NullOrder
) -> PlanSet:
    """A corpus set as test_tpch_corpus.CASES lists it: plan, oracle SQL and the oracle's note."""
    _tests_on_path()
    import test_tpch_corpus as corpus_test

    cases = [c for c in corpus_test.CASES if c.id.startswith(prefix)]
    return PlanSet(
        key,
        title,
        {c.query: CORPUS_DIR / c.plan for c in cases},
        {c.query: c.oracle.resolve(CORPUS_DIR) for c in cases},
        {c.query: c.oracle.note for c in cases if c.oracle.note},
        excluded,
        source,
        null_order,
    )


def _ibis() -> PlanSet:
    _tests_on_path()
    import test_tpch_corpus as corpus_test

    excluded = {
        q: "refused by design: the plan correlates without outer references (test_tpch_corpus)"
        for q in corpus_test.IBIS_REFUSED_UNMARKED_CORRELATION
    }
    excluded.update(
        {
            q: "not TPC-H's query: a self-joined nation read with the other table's column indexes (test_tpch_corpus)"
            for q in corpus_test.IBIS_SELF_JOIN_DEFECT
        }
    )
    return _from_corpus_cases(
        SetKey.IBIS,
        "ibis-substrait (spec 0.56)",
        "ibis-",
        "corpus/ibis-substrait-tpch/tpc_hNN.json",
        excluded,
        NullOrder.FIRST,
    )


def datafusion_plan_files(tables_dir: Path = SMALL_DIR) -> dict[int, Path]:
    """DataFusion's plans of the standard SQL, from the producer cache (written now when missing or stale)."""
    _tests_on_path()
    from producers import datafusion_plans
    from test_datafusion_producer import TPCH_SQL, tpch_name

    sqls = {tpch_name(q): (TPCH_SQL / f"{qname(q)}.sql").read_text() for q in QUERIES}
    made = datafusion_plans.plans(tables_dir, sqls)
    errors = {name: g.error for name, g in made.items() if g.plan is None}
    if errors:
        raise RuntimeError(f"DataFusion did not write every TPC-H plan: {errors}")
    return {q: made[tpch_name(q)].plan for q in QUERIES}  # type: ignore[misc]


_ISTHMUS_TYPED = (1, 3, 5, 6, 7, 8, 9, 10, 11, 14, 17, 19)
_CALCITE_TYPES = "the plan's decimal literals and casts to the decimal types it declares (Calcite's)"
_DATAFUSION_SWAPS = "l_commitdate < l_receiptdate written with its operands swapped"
# DuckDB 1.1.3's plans are its optimizer's output: the plan's query is that, not the TPC-H text.
_DUCKDB_JOINS = "DuckDB's join order and sides, as explicit JOIN ... ON"
_DUCKDB_BOUND = "c_custkey <= 14999 (a bound DuckDB took from o_custkey's statistics at sf0.01)"
_DUCKDB_TYPES = "the decimal types DuckDB declares (1.00 - l_discount decimal(16,2), the product decimal(18,4))"
_DUCKDB_SCALAR_JOIN = "the scalar subquery as DuckDB writes it: an inner join with the one row of any_value(...)"
# Where a plan's own query is not the text the corpus test (or the DataFusion test) runs as its oracle, in what the
# physical plan shows though not in the result at sf0.01 (a type the plan declares, a literal's form, NOT IN
# written as an anti join, an operand order, a filter the producer derived and wrote into the plan): the SQL stating
# the plan's query (under tests/tpch_sql; each file's header says how it differs from the text), and why. As
# SQL_OVERRIDES for IBM's set. Never a difference our translation introduces: that is fixed in the translation.
PLAN_QUERY_SQL: dict[SetKey, dict[int, tuple[str, str]]] = {
    SetKey.ISTHMUS: {
        **{q: (f"consumer-testing/isthmus-{qname(q)}.sql", _CALCITE_TYPES) for q in _ISTHMUS_TYPED},
        12: ("consumer-testing/isthmus-q12.sql", f"{_CALCITE_TYPES}; IN for an OR of equalities"),
        18: ("consumer-testing/isthmus-q18.sql", "an alias for the unnamed sum(l_quantity) output (the plan names it)"),
        20: ("consumer-testing/isthmus-q20.sql", _CALCITE_TYPES),
        22: ("consumer-testing/isthmus-q22.sql", _CALCITE_TYPES),
    },
    SetKey.DUCKDB: {
        **{
            q: (f"consumer-testing/duckdb-{qname(q)}.sql", f"{_DUCKDB_JOINS}; {_DUCKDB_BOUND}; {_DUCKDB_TYPES}")
            for q in (5, 7, 8, 10)
        },
        3: (
            "consumer-testing/duckdb-q03.sql",
            f"{_DUCKDB_JOINS}; {_DUCKDB_BOUND}; grouped by o_orderkey; {_DUCKDB_TYPES}",
        ),
        6: ("consumer-testing/duckdb-q06.sql", "the decimal(18,4) DuckDB declares; the filter's conjuncts as written"),
        9: ("consumer-testing/duckdb-q09.sql", f"{_DUCKDB_JOINS} (the last on l_suppkey = s_suppkey); {_DUCKDB_TYPES}"),
        11: (
            "consumer-testing/duckdb-q11.sql",
            f"{_DUCKDB_SCALAR_JOIN} on value > threshold; {_DUCKDB_JOINS}; {_DUCKDB_TYPES}",
        ),
        12: (
            "consumer-testing/duckdb-q12.sql",
            "orders JOIN lineitem; the date bounds DuckDB carried over to l_shipdate "
            "and l_commitdate; IN for an OR of equalities; the sums' decimal(38,0)",
        ),
        14: (
            "consumer-testing/duckdb-q14.sql",
            f"the share as the plan's fp64 division after the aggregate; {_DUCKDB_TYPES}",
        ),
        15: (
            "consumer-testing/duckdb-q15.sql",
            f"{_DUCKDB_SCALAR_JOIN} on equal revenue; {_DUCKDB_JOINS}; {_DUCKDB_TYPES}",
        ),
        18: (
            "consumer-testing/duckdb-q18.sql",
            f"{_DUCKDB_JOINS} (orders LEFT SEMI JOIN the large orders, as IN); {_DUCKDB_BOUND}",
        ),
        19: (
            "consumer-testing/duckdb-q19.sql",
            "lineitem JOIN part; the lower bounds l_quantity >= 1 and p_size >= 1 "
            f"DuckDB's statistics dropped; l_shipinstruct and l_shipmode filtered on lineitem; {_DUCKDB_TYPES}",
        ),
    },
    SetKey.IBIS: {
        **{
            q: (f"ibis/typed-{qname(q)}.sql", "the decimal(15,2) ibis declares for every decimal result")
            for q in (1, 3, 5, 10, 11, 14, 19)
        },
        6: (
            "ibis/typed-q06.sql",
            "the discount bounds as the fp64 literals ibis writes; the decimal(15,2) it declares",
        ),
        12: ("ibis/case-q12.sql", "each priority count a CASE with one WHEN per value, as ibis writes it"),
    },
    SetKey.DATAFUSION: {
        4: ("datafusion/q04.sql", _DATAFUSION_SWAPS),
        7: ("datafusion/q07.sql", "the filter DataFusion derives on each nation read (an IN list to us)"),
        12: ("datafusion/q12.sql", f"IN for an OR of equalities; {_DATAFUSION_SWAPS}"),
        15: ("datafusion/q15.sql", "an alias for the unnamed max(total_revenue) (the plan names it)"),
        16: (
            "datafusion/q16.sql",
            "NOT IN written as a plain LEFT ANTI join: NOT EXISTS; count(distinct) written as two aggregates; "
            "part's conditions in the plan's order",
        ),
        19: (
            "datafusion/q19.sql",
            "the conjuncts DataFusion factors out of the OR, and the filters it derives per input, as it writes them",
        ),
        20: ("datafusion/q20.sql", "the correlated threshold in fp64, as DataFusion computes and compares it"),
    },
}


def _datafusion() -> PlanSet:
    _tests_on_path()
    from producers import datafusion_plans

    version = datafusion_plans.version()
    return PlanSet(
        SetKey.DATAFUSION,
        f"DataFusion {version}",
        datafusion_plan_files(),
        {q: SQL_DIR / "standard" / f"{qname(q)}.sql" for q in QUERIES},
        source=f".data/producers/datafusion-{version}/tpch-qNN.bin (from tests/tpch_sql/standard at sf0.01)",
        null_order=NullOrder.HIGH,
    )


_BUILDERS: dict[SetKey, Callable[[], PlanSet]] = {
    SetKey.IBM: _ibm,
    SetKey.ISTHMUS: lambda: _from_corpus_cases(
        SetKey.ISTHMUS,
        "consumer-testing Isthmus (2025)",
        "ct-isthmus-",
        "corpus/consumer-testing-tpch-snapshots/qNN-isthmus_plan.json (21: Isthmus cannot plan q15's CREATE VIEW)",
        {},
        NullOrder.HIGH,
    ),
    SetKey.DUCKDB: lambda: _from_corpus_cases(
        SetKey.DUCKDB,
        "consumer-testing DuckDB 1.1.3",
        "ct-duckdb-",
        "corpus/consumer-testing-tpch-snapshots/qNN-duckdb_plan.json (15: the snapshot holds no others)",
        {},
        NullOrder.LAST,
    ),
    SetKey.DATAFUSION: _datafusion,
    SetKey.IBIS: _ibis,
}


def plan_set(key: SetKey | str) -> PlanSet:
    """The plan set named `key`, with excluded queries removed from its plans."""
    built = _BUILDERS[SetKey(key)]()
    plans = {q: p for q, p in built.plans.items() if q not in built.excluded}
    overrides = PLAN_QUERY_SQL.get(built.key, {})
    sql = {**built.sql, **{q: SQL_DIR / rel for q, (rel, _) in overrides.items()}}
    notes = {**built.sql_notes, **{q: why for q, (_, why) in overrides.items()}}
    notes = {q: why for q, why in notes.items() if q in plans}
    return dataclasses.replace(built, plans=plans, sql=sql, sql_notes=notes)
