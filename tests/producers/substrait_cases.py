"""Plans written by the `substrait` Python package (substrait-python) through its three front ends, each with the
SQL that asks the same question of DuckDB.

This module is imported on both sides: the test reads `CASES` (names and SQL) without the package; the producer's
own environment (see `producers.substrait_python`) runs it as a script to build the plans. The builders import
`substrait` inside the functions, so importing this module never needs the package.

The tables are the TPC-H ones, declared with the types `tpchgen-cli` writes (keys i64, quantities and prices
decimal(15,2), dates as date, text as string; every column required).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# TPC-H columns the cases read, with their tpchgen-cli types (names as the substrait.dataframe type shortcuts).
TPCH_COLUMNS: dict[str, dict[str, str | tuple[str, int, int]]] = {
    "lineitem": {
        "l_orderkey": "i64",
        "l_partkey": "i64",
        "l_suppkey": "i64",
        "l_linenumber": "i32",
        "l_quantity": ("decimal", 15, 2),
        "l_extendedprice": ("decimal", 15, 2),
        "l_discount": ("decimal", 15, 2),
        "l_tax": ("decimal", 15, 2),
        "l_returnflag": "string",
        "l_linestatus": "string",
        "l_shipdate": "date",
        "l_commitdate": "date",
        "l_receiptdate": "date",
        "l_shipinstruct": "string",
        "l_shipmode": "string",
        "l_comment": "string",
    },
    "orders": {
        "o_orderkey": "i64",
        "o_custkey": "i64",
        "o_orderstatus": "string",
        "o_totalprice": ("decimal", 15, 2),
        "o_orderdate": "date",
        "o_orderpriority": "string",
        "o_clerk": "string",
        "o_shippriority": "i32",
        "o_comment": "string",
    },
    "customer": {
        "c_custkey": "i64",
        "c_name": "string",
        "c_address": "string",
        "c_nationkey": "i64",
        "c_phone": "string",
        "c_acctbal": ("decimal", 15, 2),
        "c_mktsegment": "string",
        "c_comment": "string",
    },
    "nation": {"n_nationkey": "i64", "n_name": "string", "n_regionkey": "i64", "n_comment": "string"},
    "region": {"r_regionkey": "i64", "r_name": "string", "r_comment": "string"},
}


@dataclass(frozen=True)
class Case:
    name: str
    front_end: str  # "dataframe" | "builders" | "sql"
    sql: str  # the same question for DuckDB, over the same parquet files
    build: Callable[[], Any]  # returns a substrait Plan message (run only in the producer's environment)
    ordered: tuple[int, ...] = ()  # output positions of the ORDER BY keys, when the plan sorts


def _dtype(sub, spec):
    if isinstance(spec, tuple):
        _, precision, scale = spec
        return sub.decimal(scale, precision, nullable=False)  # the package's order: scale first
    return getattr(sub, spec).non_null


def _table(name: str):
    import substrait.dataframe as sub

    return sub.read_named_table(name, {c: _dtype(sub, t) for c, t in TPCH_COLUMNS[name].items()})


def _named_struct(name: str):
    """The table's schema for the low-level builders (substrait.builders.type)."""
    from substrait.builders import type as st

    types = []
    for spec in TPCH_COLUMNS[name].values():
        if isinstance(spec, tuple):
            types.append(st.decimal(spec[2], spec[1], nullable=False))  # scale, precision
        else:
            types.append(getattr(st, spec)(nullable=False))
    return st.named_struct(list(TPCH_COLUMNS[name]), st.struct(types, nullable=False))


# --------------------------------------------------------------------------------------------------
# substrait.dataframe
# --------------------------------------------------------------------------------------------------


def _df_filter_project():
    import substrait.dataframe as sub

    c = sub.col
    return (
        _table("lineitem")
        .filter((c("l_quantity") > 45) & (c("l_shipmode") == "AIR"))
        .select("l_orderkey", "l_linenumber")
        .to_plan()
    )


def _df_expressions():
    import substrait.dataframe as sub

    c = sub.col
    return (
        _table("lineitem")
        .filter(c("l_orderkey") < 20)
        .with_columns(
            net=c("l_extendedprice") * (1 - c("l_discount")),
            late=c("l_receiptdate") > c("l_commitdate"),
        )
        .select("l_orderkey", "l_linenumber", "net", "late")
        .to_plan()
    )


def _df_group_by():
    import substrait.dataframe as sub

    c, f = sub.col, sub.f
    return (
        _table("lineitem")
        .filter(c("l_shipdate") <= sub.lit(__import__("datetime").date(1998, 9, 2)))
        .group_by("l_returnflag", "l_linestatus")
        .agg(
            f.sum(c("l_quantity")).alias("sum_qty"),
            f.avg(c("l_extendedprice")).alias("avg_price"),
            f.count(c("l_orderkey")).alias("n"),
        )
        .sort("l_returnflag", "l_linestatus")
        .to_plan()
    )


def _df_join():
    import substrait.dataframe as sub

    c, f = sub.col, sub.f
    orders, customer = _table("orders"), _table("customer")
    return (
        orders.join(customer, on=c("o_custkey") == c("c_custkey"), how="inner")
        .filter(c("c_mktsegment") == "BUILDING")
        .group_by("c_nationkey")
        .agg(f.count(c("o_orderkey")).alias("orders"), f.sum(c("o_totalprice")).alias("total"))
        .sort("c_nationkey")
        .to_plan()
    )


def _df_sort_fetch():
    return (
        _table("orders")
        .select("o_orderkey", "o_totalprice")
        .sort("o_totalprice", descending=True)
        .limit(5, offset=2)
        .to_plan()
    )


def _df_string_functions():
    import substrait.dataframe as sub

    c, f = sub.col, sub.f
    return (
        _table("nation")
        .with_columns(
            upper_name=f.upper(c("n_name")),
            prefix=f.substring(c("n_name"), sub.lit(1, sub.i32()), sub.lit(3, sub.i32())),
            length=f.char_length(c("n_name")),
            starts_a=f.starts_with(c("n_name"), sub.lit("A")),
        )
        .select("n_nationkey", "upper_name", "prefix", "length", "starts_a")
        .to_plan()
    )


def _df_case_coalesce():
    import substrait.dataframe as sub

    c = sub.col
    return (
        _table("customer")
        .filter(c("c_custkey") <= 50)
        .with_columns(
            tier=sub.when(c("c_acctbal") > 5000).then("high").when(c("c_acctbal") > 0).then("mid").otherwise("low"),
        )
        .select("c_custkey", "tier")
        .to_plan()
    )


def _df_rollup():
    import substrait.dataframe as sub

    c, f = sub.col, sub.f
    return (
        _table("orders").rollup("o_orderstatus", "o_orderpriority").agg(f.count(c("o_orderkey")).alias("n")).to_plan()
    )


def _df_union_distinct():
    n = _table("nation").select("n_regionkey")
    r = _table("region").select("r_regionkey")
    return n.union(r, distinct=True).to_plan()


def _df_in_list_between():
    import substrait.dataframe as sub

    c = sub.col
    return (
        _table("nation")
        .filter(c("n_regionkey").is_in([1, 3]) & c("n_nationkey").between(5, 20))
        .select("n_nationkey", "n_name")
        .to_plan()
    )


def _df_exists():
    import substrait.dataframe as sub

    c = sub.col
    big = _table("orders").filter((c("o_custkey") == sub.outer("c_custkey")) & (c("o_totalprice") > 400000))
    return _table("customer").filter(sub.exists(big)).select("c_custkey").to_plan()


def _df_in_subquery():
    import substrait.dataframe as sub

    c = sub.col
    asia = _table("region").filter(c("r_name") == "ASIA").select("r_regionkey")
    return _table("nation").filter(c("n_regionkey").in_subquery(asia)).select("n_name").to_plan()


def _df_correlated_scalar_subquery():
    import substrait.dataframe as sub

    c, f = sub.col, sub.f
    same_nation = (
        _table("customer")
        .filter(c("c_nationkey") == sub.outer("c_nationkey"))
        .aggregate((), f.max(c("c_acctbal")).alias("top"))
    )
    return (
        _table("customer")
        .filter(c("c_acctbal") == sub.scalar_subquery(same_nation))
        .select("c_nationkey", "c_custkey")
        .to_plan()
    )


# --------------------------------------------------------------------------------------------------
# substrait.builders
# --------------------------------------------------------------------------------------------------


def _builders_filter_aggregate():
    from substrait.builders import plan as bp
    from substrait.builders import type as st
    from substrait.builders.extended_expression import aggregate_function, column, literal, scalar_function

    cmp = "extension:io.substrait:functions_comparison"
    generic = "extension:io.substrait:functions_aggregate_generic"
    read = bp.read_named_table("nation", _named_struct("nation"))
    ten = literal(10, st.i64(nullable=False))
    filtered = bp.filter(read, scalar_function(cmp, "gte", [column("n_nationkey"), ten]))
    return bp.aggregate(
        filtered,
        grouping_expressions=[column("n_regionkey")],
        measures=[aggregate_function(generic, "count", [column("n_nationkey")], alias="n")],
    )(_registry())


def _builders_project_sort_fetch():
    from substrait import algebra_pb2 as alg
    from substrait.builders import plan as bp
    from substrait.builders import type as st
    from substrait.builders.extended_expression import column, literal, scalar_function

    arith = "extension:io.substrait:functions_arithmetic"
    read = bp.read_named_table("nation", _named_struct("nation"))
    two = literal(2, st.i64(nullable=False))
    projected = bp.project(read, [scalar_function(arith, "multiply", [column("n_nationkey"), two], alias="k2")])
    desc = alg.SortField.SORT_DIRECTION_DESC_NULLS_LAST
    sorted_ = bp.sort(projected, [(column("k2"), desc)])
    return bp.fetch(sorted_, offset=literal(1, st.i64()), count=literal(3, st.i64()))(_registry())


def _builders_join():
    from substrait import algebra_pb2 as alg
    from substrait.builders import plan as bp
    from substrait.builders.extended_expression import column, scalar_function

    cmp = "extension:io.substrait:functions_comparison"
    nation = bp.read_named_table("nation", _named_struct("nation"))
    region = bp.read_named_table("region", _named_struct("region"))
    joined = bp.join(
        nation,
        region,
        scalar_function(cmp, "equal", [column("n_regionkey"), column("r_regionkey")]),
        alg.JoinRel.JOIN_TYPE_INNER,
    )
    return bp.select(joined, [column("n_name"), column("r_name")])(_registry())


def _registry():
    from substrait.extension_registry import ExtensionRegistry

    return ExtensionRegistry(load_default_extensions=True)


# --------------------------------------------------------------------------------------------------
# substrait.sql
# --------------------------------------------------------------------------------------------------


def _from_sql(sql: str):
    def build():
        from substrait.sql.sql_to_substrait import convert

        return convert(sql, "generic", _named_struct, _registry())

    return build


SQL_GROUP_BY = (
    "SELECT l_returnflag, SUM(l_linenumber) AS total FROM lineitem WHERE l_orderkey > 100 GROUP BY l_returnflag"
)
SQL_JOIN = "SELECT n_name, r_name FROM nation INNER JOIN region ON n_regionkey = r_regionkey WHERE n_nationkey < 8"
SQL_ORDER_LIMIT = "SELECT o_orderkey, o_totalprice FROM orders WHERE o_custkey < 100 ORDER BY o_orderkey LIMIT 4"


CASES: tuple[Case, ...] = (
    Case(
        "dataframe_filter_project",
        "dataframe",
        "SELECT l_orderkey, l_linenumber FROM lineitem WHERE l_quantity > 45 AND l_shipmode = 'AIR'",
        _df_filter_project,
    ),
    Case(
        "dataframe_expressions",
        "dataframe",
        "SELECT l_orderkey, l_linenumber, l_extendedprice * (1 - l_discount), l_receiptdate > l_commitdate "
        "FROM lineitem WHERE l_orderkey < 20",
        _df_expressions,
    ),
    Case(
        "dataframe_group_by",
        "dataframe",
        "SELECT l_returnflag, l_linestatus, sum(l_quantity), avg(l_extendedprice), count(l_orderkey) FROM lineitem "
        "WHERE l_shipdate <= DATE '1998-09-02' GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus",
        _df_group_by,
        (0, 1),
    ),
    Case(
        "dataframe_join",
        "dataframe",
        "SELECT c_nationkey, count(o_orderkey), sum(o_totalprice) FROM orders JOIN customer ON o_custkey = c_custkey "
        "WHERE c_mktsegment = 'BUILDING' GROUP BY c_nationkey ORDER BY c_nationkey",
        _df_join,
        (0,),
    ),
    Case(
        "dataframe_sort_fetch",
        "dataframe",
        "SELECT o_orderkey, o_totalprice FROM orders ORDER BY o_totalprice DESC LIMIT 5 OFFSET 2",
        _df_sort_fetch,
        (1,),
    ),
    Case(
        "dataframe_string_functions",
        "dataframe",
        "SELECT n_nationkey, upper(n_name), substring(n_name, 1, 3), length(n_name), starts_with(n_name, 'A') "
        "FROM nation",
        _df_string_functions,
    ),
    Case(
        "dataframe_case_coalesce",
        "dataframe",
        "SELECT c_custkey, CASE WHEN c_acctbal > 5000 THEN 'high' WHEN c_acctbal > 0 THEN 'mid' ELSE 'low' END "
        "FROM customer WHERE c_custkey <= 50",
        _df_case_coalesce,
    ),
    Case(
        "dataframe_rollup",
        "dataframe",
        "SELECT o_orderstatus, o_orderpriority, count(o_orderkey) FROM orders "
        "GROUP BY ROLLUP (o_orderstatus, o_orderpriority)",
        _df_rollup,
    ),
    Case(
        "dataframe_union_distinct",
        "dataframe",
        "SELECT n_regionkey FROM nation UNION SELECT r_regionkey FROM region",
        _df_union_distinct,
    ),
    Case(
        "dataframe_in_list_between",
        "dataframe",
        "SELECT n_nationkey, n_name FROM nation WHERE n_regionkey IN (1, 3) AND n_nationkey BETWEEN 5 AND 20",
        _df_in_list_between,
    ),
    Case(
        "dataframe_exists",
        "dataframe",
        "SELECT c_custkey FROM customer WHERE EXISTS "
        "(SELECT 1 FROM orders WHERE o_custkey = c_custkey AND o_totalprice > 400000)",
        _df_exists,
    ),
    Case(
        "dataframe_in_subquery",
        "dataframe",
        "SELECT n_name FROM nation WHERE n_regionkey IN (SELECT r_regionkey FROM region WHERE r_name = 'ASIA')",
        _df_in_subquery,
    ),
    Case(
        "dataframe_correlated_scalar_subquery",
        "dataframe",
        "SELECT c_nationkey, c_custkey FROM customer c1 WHERE c_acctbal = "
        "(SELECT max(c_acctbal) FROM customer c2 WHERE c2.c_nationkey = c1.c_nationkey)",
        _df_correlated_scalar_subquery,
    ),
    Case(
        "builders_filter_aggregate",
        "builders",
        "SELECT n_regionkey, count(n_nationkey) FROM nation WHERE n_nationkey >= 10 GROUP BY n_regionkey",
        _builders_filter_aggregate,
    ),
    Case(
        "builders_project_sort_fetch",
        "builders",
        "SELECT n_nationkey, n_name, n_regionkey, n_comment, n_nationkey * 2 AS k2 FROM nation "
        "ORDER BY k2 DESC LIMIT 3 OFFSET 1",
        _builders_project_sort_fetch,
        (4,),
    ),
    Case(
        "builders_join",
        "builders",
        "SELECT n_name, r_name FROM nation JOIN region ON n_regionkey = r_regionkey",
        _builders_join,
    ),
    Case("sql_group_by", "sql", SQL_GROUP_BY, _from_sql(SQL_GROUP_BY)),
    Case("sql_join", "sql", SQL_JOIN, _from_sql(SQL_JOIN)),
    Case("sql_order_limit", "sql", SQL_ORDER_LIMIT, _from_sql(SQL_ORDER_LIMIT), (0,)),
)


def main(out_dir: str, names: list[str]) -> int:
    """Build the named cases' plans into `out_dir/<name>.bin`; a case the package cannot build gets
    `<name>.error` holding the error's first line (the test names such cases)."""
    out = Path(out_dir)
    wanted = set(names) or {c.name for c in CASES}
    for case in CASES:
        if case.name not in wanted:
            continue
        try:
            blob = case.build().SerializeToString()
        except Exception as exc:  # recorded for the test, which decides whether it is expected
            lines = str(exc).strip().splitlines()
            (out / f"{case.name}.error").write_text(f"{type(exc).__name__}: {lines[0] if lines else ''}\n")
            continue
        (out / f"{case.name}.bin").write_bytes(blob)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
