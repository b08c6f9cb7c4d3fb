"""Result oracles for the corpus tests, and the comparison used against them.

Three kinds of expected result are used by ``test_tpch_corpus.py``:

* IBM's compliance-suite CSV files (``read_ibm_csv``): pipe-delimited, a typed header ``name:type``;
* SQL run by DuckDB over the same parquet files the engine reads (``DuckDBOracle``); the SQL may carry
  consumer-testing's ``'{lineitem}'`` table placeholders;
* nothing else: every oracle is data, never the engine under test.

``assert_same_result`` compares positionally (column names are not compared: producers name
differently), as multisets, and optionally in order on the ORDER BY key columns.
"""

from __future__ import annotations

import csv
import datetime as _dt
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

TPCH_TABLES = ("lineitem", "orders", "customer", "part", "partsupp", "supplier", "nation", "region")

# Output positions of the ORDER BY keys of each TPC-H query, in the standard column order.
# The key sequence must match in order (ties may come in any order); other columns only as a multiset.
TPCH_ORDER_KEYS: dict[int, tuple[int, ...]] = {
    1: (0, 1),  # l_returnflag, l_linestatus
    2: (0, 2, 1, 3),  # s_acctbal desc, n_name, s_name, p_partkey
    3: (1, 2),  # revenue desc, o_orderdate
    4: (0,),
    5: (1,),  # revenue desc
    7: (0, 1, 2),
    8: (0,),
    9: (0, 1),  # nation, o_year desc
    10: (2,),  # revenue desc
    11: (1,),  # value desc
    12: (0,),
    13: (1, 0),  # custdist desc, c_count desc
    15: (0,),
    16: (3, 0, 1, 2),  # supplier_cnt desc, p_brand, p_type, p_size
    18: (4, 3),  # o_totalprice desc, o_orderdate
    20: (0,),
    21: (1, 0),  # numwait desc, s_name
    22: (0,),
}
FREE_TEXT_SUFFIXES = ("address", "comment")
MASK = "<masked>"


@dataclass(frozen=True)
class Result:
    """An expected (or actual) result: column names and rows as tuples."""

    columns: list[str]
    rows: list[tuple]


# --------------------------------------------------------------------------------------------------
# IBM compliance-suite CSV
# --------------------------------------------------------------------------------------------------

_IBM_TYPES = {
    "string": str,
    "integer": int,
    "long": int,
    "bigint": int,
    "double": float,
    "float": float,
    "decimal": Decimal,
    "boolean": lambda s: s.strip().lower() == "true",
}


def read_ibm_csv(path: str | Path, type_overrides: dict[str, str] | None = None) -> Result:
    """Read an IBM ``expected/qNN.csv``: ``|``-delimited, header cells ``name:type``.

    Values are converted by the declared type; an empty cell of a non-string type is NULL.
    ``type_overrides`` (column name -> type) corrects a header that mis-declares a column (q22's
    ``cntrycode`` is a two-character string in TPC-H, the CSV says ``integer``).
    """
    path = Path(path)
    overrides = {k.lower(): v for k, v in (type_overrides or {}).items()}
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh, delimiter="|")
        header = next(reader)
        names: list[str] = []
        converters = []
        for cell in header:
            name, _, typ = cell.partition(":")
            typ = overrides.get(name.lower(), typ or "string").strip().lower()
            if typ not in _IBM_TYPES:
                raise ValueError(f"{path}: unknown column type {typ!r} in header cell {cell!r}")
            names.append(name)
            converters.append((typ, _IBM_TYPES[typ]))
        rows = []
        for lineno, raw in enumerate(reader, start=2):
            if not raw:
                continue
            if len(raw) != len(names):
                raise ValueError(f"{path}:{lineno}: {len(raw)} cells, header has {len(names)}")
            row = []
            for (typ, conv), cell in zip(converters, raw, strict=True):
                if typ == "string":
                    row.append(cell)
                elif cell == "":
                    row.append(None)
                else:
                    row.append(conv(cell))
            rows.append(tuple(row))
    return Result(names, rows)


def free_text_positions(columns: Sequence[str], suffixes: Iterable[str] = FREE_TEXT_SUFFIXES) -> list[int]:
    """Positions of columns whose names end in one of ``suffixes`` (case-insensitive)."""
    suffixes = tuple(s.lower() for s in suffixes)
    return [i for i, c in enumerate(columns) if c.lower().endswith(suffixes)]


# --------------------------------------------------------------------------------------------------
# DuckDB SQL oracle
# --------------------------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"'\{(\w+)\}'")


def substitute_placeholders(sql: str) -> str:
    """consumer-testing writes tables as ``'{lineitem}'``; turn each into the bare view name."""
    return _PLACEHOLDER.sub(lambda m: m.group(1), sql)


class DuckDBOracle:
    """An in-memory DuckDB with one view per TPC-H table over ``<tables_dir>/<table>.parquet``."""

    def __init__(self, tables_dir: str | Path, tables: Iterable[str] = TPCH_TABLES):
        import duckdb

        self.tables_dir = Path(tables_dir)
        self.con = duckdb.connect(":memory:")
        for table in tables:
            file = self.tables_dir / f"{table}.parquet"
            if not file.exists():
                raise FileNotFoundError(f"TPC-H table file missing: {file}")
            literal = str(file).replace("'", "''")
            self.con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{literal}')")
        self._cache: dict[str, Result] = {}

    def run(self, sql: str) -> Result:
        sql = substitute_placeholders(sql).strip().rstrip(";")
        if sql not in self._cache:
            cur = self.con.execute(sql)
            columns = [d[0] for d in cur.description]
            self._cache[sql] = Result(columns, [tuple(r) for r in cur.fetchall()])
        return self._cache[sql]

    def run_file(self, path: str | Path) -> Result:
        return self.run(Path(path).read_text(encoding="utf-8"))

    def close(self) -> None:
        self.con.close()


# --------------------------------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------------------------------


def normalize_value(v: Any) -> Any:
    """Bring engine and oracle values to one representation.

    Dates/times become ISO strings (a CSV says ``1995-03-11``), numbers stay numbers (a Decimal is
    kept so its scale is known), strings stay strings, NULL stays None.
    """
    if v is None or isinstance(v, bool | str | int | float | Decimal):
        return v
    if isinstance(v, _dt.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, _dt.date | _dt.time):
        return v.isoformat()
    if isinstance(v, bytes | bytearray | memoryview):
        return bytes(v).hex()
    if isinstance(v, _dt.timedelta):
        return v.total_seconds()
    return repr(v)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float | Decimal) and not isinstance(v, bool)


def values_equal(actual: Any, expected: Any, rel_tol: float = 1e-6) -> bool:
    """Cell equality: NULL only equals NULL; numbers within ``rel_tol``; everything else by ``==``.

    A plan may declare a coarser decimal than the exact value (Isthmus and ibis declare
    ``avg(decimal(15,2))`` to return ``decimal(15,2)``; Spark's own avg gives scale + 4). So an actual
    Decimal also equals the expected number rounded (half a unit in its last place) or truncated
    toward zero to the actual's scale."""
    if actual is None or expected is None:
        return actual is None and expected is None
    if _is_number(actual) and _is_number(expected):
        fa, fe = float(actual), float(expected)
        if math.isnan(fa) or math.isnan(fe):
            return math.isnan(fa) and math.isnan(fe)
        if math.isclose(fa, fe, rel_tol=rel_tol, abs_tol=1e-9):
            return True
        if isinstance(actual, Decimal) and actual.is_finite():
            exponent = actual.as_tuple().exponent
            assert isinstance(exponent, int)
            ulp = 10.0**exponent
            diff = abs(fa - fe)
            rounded = diff <= 0.5 * ulp * (1 + 1e-9)
            truncated = diff < ulp and abs(fa) <= abs(fe) and (fa >= 0) == (fe >= 0)
            return rounded or truncated
        return False
    if _is_number(actual) != _is_number(expected):
        return False
    return actual == expected


def _sort_key(row: tuple) -> tuple:
    """Rows ordered by their values rounded to 6 significant digits (so values equal within the tolerance sort
    together), ties broken by the exact values (so distinct values the rounding merges, 100761.10 and 100761.33,
    pair up in the same order on both sides)."""
    key, exact = [], []
    for v in row:
        if v is None:
            key.append((0, 0.0, ""))
            exact.append((0, 0.0, ""))
        elif _is_number(v) or isinstance(v, bool):
            f = float(v)
            key.append((1, 0.0 if math.isnan(f) else float(f"{f:.6g}"), ""))
            exact.append((1, 0.0 if math.isnan(f) else f, ""))
        else:
            key.append((2, 0.0, str(v)))
            exact.append((2, 0.0, str(v)))
    return (*key, *exact)


def _rows_equal(a: tuple, e: tuple, rel_tol: float) -> bool:
    return len(a) == len(e) and all(values_equal(x, y, rel_tol) for x, y in zip(a, e, strict=True))


def _fmt_row(row: tuple, limit: int = 240) -> str:
    text = "(" + ", ".join(repr(v) for v in row) + ("," if len(row) == 1 else "") + ")"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _differing_cells(a: tuple, e: tuple, rel_tol: float, columns: Sequence[str] | None) -> str:
    parts = []
    for i, (x, y) in enumerate(zip(a, e, strict=False)):
        if not values_equal(x, y, rel_tol):
            name = f" {columns[i]}" if columns and i < len(columns) else ""
            parts.append(f"[{i}{name}] {x!r} != {y!r}")
    return "; ".join(parts)


def _prepare(rows: Iterable[Sequence[Any]], masked: set[int]) -> list[tuple]:
    out = []
    for r in rows:
        vals = tuple(r)
        out.append(tuple(MASK if i in masked else normalize_value(v) for i, v in enumerate(vals)))
    return out


def assert_same_result(
    actual_rows: Iterable[Sequence[Any]],
    expected_rows: Iterable[Sequence[Any]],
    *,
    ordered_keys: Sequence[int] | None = None,
    masked_columns: Iterable[int] = (),
    rel_tol: float = 1e-6,
    actual_columns: Sequence[str] | None = None,
    expected_columns: Sequence[str] | None = None,
    context: str = "",
    max_report: int = 5,
) -> None:
    """Assert that two results hold the same rows.

    * column count must match (names are only used in messages);
    * rows are compared as multisets (both sides sorted by all columns, None-safe);
    * with ``ordered_keys`` (output positions of the ORDER BY keys), the sequence of those key
      values must also be the same in both results — ties keep any order;
    * ``masked_columns`` (positions) are not compared (free text that depends on the data generator).
    """
    masked = set(masked_columns)
    actual = _prepare(actual_rows, masked)
    expected = _prepare(expected_rows, masked)
    head = f"{context}: " if context else ""
    names = ""
    if actual_columns is not None or expected_columns is not None:
        names = (
            f"\n  actual columns:   {list(actual_columns or [])}\n  expected columns: {list(expected_columns or [])}"
        )

    # ---- columns
    n_actual_cols = len(actual_columns) if actual_columns is not None else (len(actual[0]) if actual else None)
    n_expected_cols = (
        len(expected_columns) if expected_columns is not None else (len(expected[0]) if expected else None)
    )
    widths = {len(r) for r in actual} | ({n_actual_cols} if n_actual_cols is not None else set())
    if len(widths) > 1:
        raise AssertionError(f"{head}actual rows have differing widths {sorted(widths)}{names}")
    if n_actual_cols is not None and n_expected_cols is not None and n_actual_cols != n_expected_cols:
        raise AssertionError(
            f"{head}column count differs: actual {n_actual_cols}, expected {n_expected_cols}{names}\n"
            f"  first actual rows:   {[_fmt_row(r) for r in actual[:3]]}\n"
            f"  first expected rows: {[_fmt_row(r) for r in expected[:3]]}"
        )

    # ---- multiset
    a_sorted = sorted(actual, key=_sort_key)
    e_sorted = sorted(expected, key=_sort_key)
    problems: list[str] = []
    if len(actual) != len(expected):
        problems.append(f"row count differs: actual {len(actual)}, expected {len(expected)}")
        problems.extend(_unmatched_report(a_sorted, e_sorted, rel_tol, max_report))
    else:
        diffs = [
            (i, a, e) for i, (a, e) in enumerate(zip(a_sorted, e_sorted, strict=True)) if not _rows_equal(a, e, rel_tol)
        ]
        if diffs:
            problems.append(
                f"{len(diffs)} of {len(actual)} rows differ (both sides sorted by all columns); first ones:"
            )
            for i, a, e in diffs[:max_report]:
                cols = list(actual_columns or expected_columns or [])
                problems.append(
                    f"  sorted row {i}:\n    actual   {_fmt_row(a)}\n    expected {_fmt_row(e)}\n"
                    f"    differs at {_differing_cells(a, e, rel_tol, cols)}"
                )

    # ---- order on the ORDER BY keys
    if not problems and ordered_keys:
        keys = list(ordered_keys)
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            ak = tuple(a[k] for k in keys)
            ek = tuple(e[k] for k in keys)
            if not _rows_equal(ak, ek, rel_tol):
                lo = max(0, i - 2)
                problems.append(
                    f"same rows but wrong order: at row {i} the ORDER BY key columns {keys} are "
                    f"{_fmt_row(ak)} in actual, {_fmt_row(ek)} expected\n"
                    f"  actual rows {lo}..{i + 2}:   {[_fmt_row(r) for r in actual[lo : i + 3]]}\n"
                    f"  expected rows {lo}..{i + 2}: {[_fmt_row(r) for r in expected[lo : i + 3]]}"
                )
                break

    if problems:
        raise AssertionError(
            f"{head}results differ ({len(actual)} actual rows, {len(expected)} expected){names}\n" + "\n".join(problems)
        )


def _unmatched_report(a_sorted: list[tuple], e_sorted: list[tuple], rel_tol: float, max_report: int) -> list[str]:
    """Rows of each side that find no equal partner on the other (greedy matching)."""
    if len(a_sorted) * len(e_sorted) > 4_000_000:
        return [
            f"  first actual rows (sorted):   {[_fmt_row(r) for r in a_sorted[:max_report]]}",
            f"  first expected rows (sorted): {[_fmt_row(r) for r in e_sorted[:max_report]]}",
        ]
    used = [False] * len(a_sorted)
    missing = []
    for e in e_sorted:
        for j, a in enumerate(a_sorted):
            if not used[j] and _rows_equal(a, e, rel_tol):
                used[j] = True
                break
        else:
            missing.append(e)
    unexpected = [a for j, a in enumerate(a_sorted) if not used[j]]
    out = []
    if missing:
        out.append(f"  {len(missing)} expected rows missing from actual, first ones:")
        out.extend(f"    {_fmt_row(r)}" for r in missing[:max_report])
    if unexpected:
        out.append(f"  {len(unexpected)} actual rows not expected, first ones:")
        out.extend(f"    {_fmt_row(r)}" for r in unexpected[:max_report])
    return out


TPCH_Q01_SQL = Path(__file__).resolve().parent / "tpch_sql" / "ibm" / "q01.sql"


def tpch_q01_until(tpch_dir: str | Path, cutoff: str) -> Result:
    """TPC-H q1 with `cutoff` as its shipping-date cut-off: what the example daily report gives for that day."""
    sql = TPCH_Q01_SQL.read_text().replace("date '1998-09-01'", f"date '{cutoff}'")
    assert f"date '{cutoff}'" in sql
    db = DuckDBOracle(tpch_dir, ["lineitem"])
    try:
        return db.run(sql)
    finally:
        db.close()
