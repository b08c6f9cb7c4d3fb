"""The SQL of consumer-testing's relation tests (substrait-io/consumer-testing,
``substrait_consumer/functional/queries/sql/relations/*.py``), for the tests of which the shared corpus
``consumer-testing-function-relation-snapshots`` holds a DataFusion 40 plan: the test set-up writes the same tests
with the pinned DataFusion. Tables are written as bare names (consumer-testing's ``'{lineitem}'`` placeholders
filled in). Each entry: the corpus test name, the SQL, and the output positions of its ORDER BY keys.

Not generated, with the reason: ``relation/join/cross_join`` (22.5 million rows at sf 0.01, compared by digest in
``test_function_relation_corpus``) and ``relation/ddl/create_table``, ``relation/ddl/drop_table`` (DDL: no
result to compare; the write/DDL steps have their own tests).
"""

from __future__ import annotations

_JOIN_COLUMNS = (
    "SELECT c.C_CUSTKEY, c.C_NAME, o.O_ORDERKEY FROM customer c {kind} JOIN orders o ON c.C_CUSTKEY = o.O_CUSTKEY"
)
_SINGLE = (
    "SELECT c1.C_CUSTKEY AS c1key, c1.C_NAME AS c1name, c1.C_NATIONKEY AS c1nationakey, c2.C_CUSTKEY AS c2key, "
    "c2.C_NAME AS c2name, c2.C_NATIONKEY AS c2nationakey FROM customer c1 {kind} JOIN customer c2 "
    "ON c1.C_NATIONKEY = c2.C_NATIONKEY AND c1.C_CUSTKEY <> c2.C_CUSTKEY"
)
_FILTER = "SELECT L_DISCOUNT, L_TAX FROM lineitem WHERE L_DISCOUNT {op} L_TAX ORDER BY L_DISCOUNT, L_TAX LIMIT 20"
_SORT = "SELECT PS_SUPPLYCOST, PS_AVAILQTY FROM partsupp ORDER BY {keys}"

RELATION_SQL: dict[str, tuple[str, tuple[int, ...]]] = {
    "relation/aggregate/single_measure_aggregate": ("SELECT COUNT(L_PARTKEY) FROM lineitem", ()),
    "relation/aggregate/multiple_measure_aggregate": (
        "SELECT MIN(O_TOTALPRICE), MAX(O_TOTALPRICE), AVG(O_TOTALPRICE) FROM orders",
        (),
    ),
    "relation/aggregate/aggregate_with_computation": ("SELECT AVG(O_TOTALPRICE) * 10 FROM orders", ()),
    "relation/aggregate/compute_within_aggregate": ("SELECT AVG(O_TOTALPRICE * 10) FROM orders", ()),
    "relation/aggregate/computation_between_aggregates": (
        "SELECT AVG(O_TOTALPRICE) + MAX(O_TOTALPRICE) FROM orders",
        (),
    ),
    "relation/aggregate/aggregate_in_subquery": (
        "SELECT O_TOTALPRICE FROM orders WHERE O_TOTALPRICE <= (SELECT AVG(O_TOTALPRICE) FROM orders)",
        (),
    ),
    "relation/aggregate/aggregate_with_group_by": (
        "SELECT L_ORDERKEY, L_LINENUMBER, count(*) FROM lineitem GROUP BY L_ORDERKEY, L_LINENUMBER "
        "ORDER BY L_ORDERKEY, L_LINENUMBER",
        (0, 1),
    ),
    "relation/aggregate/aggregate_with_group_by_rollup": (
        "SELECT L_ORDERKEY, L_LINENUMBER, count(*) FROM lineitem GROUP BY ROLLUP(L_ORDERKEY, L_LINENUMBER) "
        "ORDER BY L_ORDERKEY, L_LINENUMBER",
        (0, 1),
    ),
    "relation/aggregate/aggregate_with_grouping_set": (
        "SELECT SUM(L_EXTENDEDPRICE), L_LINENUMBER, L_ORDERKEY FROM lineitem "
        "GROUP BY GROUPING SETS ((L_LINENUMBER), (L_ORDERKEY)) ORDER BY L_LINENUMBER",
        (1,),
    ),
    # consumer-testing writes FETCH NEXT n ROWS ONLY, which DataFusion 55's SQL parser refuses ("FETCH clause is not
    # supported yet"): the same limits in LIMIT/OFFSET syntax.
    "relation/fetch/fetch": ("SELECT O_ORDERKEY FROM orders LIMIT 1", ()),
    "relation/fetch/fetch_with_offset": ("SELECT O_ORDERKEY FROM orders LIMIT 5 OFFSET 5", ()),
    "relation/filter/where_equal_multi_col": (
        "SELECT L_DISCOUNT, L_TAX FROM lineitem WHERE L_DISCOUNT = L_TAX ORDER BY L_DISCOUNT LIMIT 20",
        (0,),
    ),
    "relation/filter/where_not_equal_multi_col": (_FILTER.format(op="!="), (0, 1)),
    "relation/filter/where_gt_multi_col": (_FILTER.format(op=">"), (0, 1)),
    "relation/filter/where_gte_multi_col": (_FILTER.format(op=">="), (0, 1)),
    "relation/filter/where_lt_multi_col": (_FILTER.format(op="<"), (0, 1)),
    "relation/filter/where_lte_multi_col": (_FILTER.format(op="<="), (0, 1)),
    "relation/filter/where_like": (
        "SELECT L_SHIPINSTRUCT, L_ORDERKEY FROM lineitem WHERE L_SHIPINSTRUCT LIKE '%DELIVER IN PERSON%' "
        "ORDER BY L_ORDERKEY LIMIT 20",
        (1,),
    ),
    "relation/filter/where_between": (
        "SELECT L_ORDERKEY FROM lineitem WHERE L_ORDERKEY BETWEEN 20 AND 50 LIMIT 20",
        (),
    ),
    "relation/filter/where_in": ("SELECT L_ORDERKEY FROM lineitem WHERE L_ORDERKEY IN (1, 2, 3)", ()),
    "relation/filter/where_or": (
        "SELECT L_ORDERKEY, L_SHIPINSTRUCT FROM lineitem WHERE L_ORDERKEY = 2 OR L_ORDERKEY = 3",
        (),
    ),
    "relation/filter/where_and": (
        "SELECT L_ORDERKEY, L_SHIPINSTRUCT FROM lineitem WHERE L_ORDERKEY = 2 AND L_SHIPINSTRUCT = 'TAKE BACK RETURN'",
        (),
    ),
    "relation/filter/having": (
        "SELECT L_QUANTITY, COUNT(*) FROM lineitem GROUP BY L_QUANTITY HAVING COUNT(*) > 12100 ORDER BY L_QUANTITY",
        (0,),
    ),
    "relation/join/inner_join": (_JOIN_COLUMNS.format(kind="INNER"), ()),
    "relation/join/left_join": (_JOIN_COLUMNS.format(kind="LEFT"), ()),
    "relation/join/right_join": (_JOIN_COLUMNS.format(kind="RIGHT"), ()),
    "relation/join/full_join": (_JOIN_COLUMNS.format(kind="FULL"), ()),
    "relation/join/left_semi_join": (
        "SELECT c.C_CUSTKEY, c.C_NAME FROM customer c WHERE EXISTS "
        "(SELECT 1 FROM orders o WHERE o.O_CUSTKEY = c.C_CUSTKEY)",
        (),
    ),
    "relation/join/right_semi_join": (
        "SELECT o.O_ORDERKEY, o.O_CUSTKEY FROM orders o WHERE EXISTS "
        "(SELECT 1 FROM customer c WHERE c.C_CUSTKEY = o.O_CUSTKEY)",
        (),
    ),
    "relation/join/left_anti_join": (
        "SELECT c.C_CUSTKEY, c.C_NAME FROM customer c WHERE NOT EXISTS "
        "(SELECT 1 FROM orders o WHERE o.O_CUSTKEY = c.C_CUSTKEY)",
        (),
    ),
    "relation/join/right_anti_join": (
        "SELECT o.O_ORDERKEY, o.O_CUSTKEY FROM orders o WHERE NOT EXISTS "
        "(SELECT 1 FROM lineitem l WHERE l.L_ORDERKEY = o.O_ORDERKEY)",
        (),
    ),
    "relation/join/left_single_join": (_SINGLE.format(kind="LEFT"), ()),
    "relation/join/right_single_join": (_SINGLE.format(kind="RIGHT"), ()),
    "relation/project/project_single_col": ("SELECT * FROM lineitem", ()),
    "relation/project/project_multi_col": ("SELECT L_DISCOUNT, L_TAX FROM lineitem", ()),
    "relation/project/project_all_col": ("SELECT * FROM region", ()),
    "relation/project/extended_project": ("SELECT L_QUANTITY, L_EXTENDEDPRICE*10 AS MULTI_PRICE FROM lineitem", ()),
    "relation/project/subquery_in_project": (
        "SELECT C_CUSTKEY, (SELECT SUM(O_TOTALPRICE) FROM orders WHERE C_CUSTKEY = O_CUSTKEY) AS total_price "
        "FROM customer",
        (),
    ),
    "relation/project/distinct_in_project": ("SELECT DISTINCT L_LINESTATUS FROM lineitem", ()),
    "relation/project/count_distinct_in_project": ("SELECT COUNT(DISTINCT L_EXTENDEDPRICE) FROM lineitem", ()),
    "relation/read/read_named_table": ("SELECT PS_PARTKEY FROM partsupp", ()),
    "relation/read/datafusion_read_virtual_table": ("SELECT * FROM (VALUES (10))", ()),
    "relation/set/union_distinct": (
        "SELECT C_NATIONKEY FROM customer UNION SELECT N_NATIONKEY FROM nation ORDER BY C_NATIONKEY",
        (0,),
    ),
    "relation/set/union_all": ("SELECT C_NATIONKEY FROM customer UNION ALL SELECT N_NATIONKEY FROM nation", ()),
    "relation/set/intersect": ("SELECT C_NATIONKEY FROM customer INTERSECT SELECT N_NATIONKEY FROM nation", ()),
    "relation/set/except": ("SELECT o_totalprice FROM orders EXCEPT SELECT c_acctbal FROM customer", ()),
    "relation/sort/single_col_default_sort": ("SELECT PS_AVAILQTY FROM partsupp ORDER BY PS_AVAILQTY", (0,)),
    "relation/sort/single_col_asc": ("SELECT PS_SUPPLYCOST FROM partsupp ORDER BY PS_SUPPLYCOST ASC", (0,)),
    "relation/sort/single_col_desc": ("SELECT PS_SUPPLYCOST FROM partsupp ORDER BY PS_SUPPLYCOST DESC", (0,)),
    "relation/sort/multi_col_asc": (_SORT.format(keys="PS_SUPPLYCOST ASC"), (0,)),
    "relation/sort/multi_col_desc": (_SORT.format(keys="PS_SUPPLYCOST DESC"), (0,)),
    "relation/sort/multi_col_asc_desc": (_SORT.format(keys="PS_SUPPLYCOST ASC, PS_AVAILQTY DESC"), (0, 1)),
    "relation/sort/multi_col_desc_asc": (_SORT.format(keys="PS_SUPPLYCOST DESC, PS_AVAILQTY ASC"), (0, 1)),
    "relation/sort/order_by_col_number": (_SORT.format(keys="1"), (0,)),
}
