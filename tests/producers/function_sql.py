"""The SQL of consumer-testing's function tests (substrait-io/consumer-testing,
``substrait_consumer/functional/queries/sql/*_functions_sql.py``) of which the shared corpus
``consumer-testing-function-relation-snapshots`` holds a DataFusion 40 plan: the test set-up writes the same tests
with the pinned DataFusion. Tables are written as bare names. Each entry: the corpus test name, the SQL, and the
output positions of its ORDER BY keys.

Not generated, with the reason: ``function/approximation/approx_distinct`` (an approximate count: no exact
answer to compare with, and DuckDB has no function of that name).
"""

from __future__ import annotations

_ARITH = "SELECT PS_PARTKEY, PS_SUPPKEY, PS_PARTKEY {op} PS_SUPPKEY AS {name} FROM partsupp LIMIT 10"
_TRIG = "SELECT round({fn}(CAST({col} AS DOUBLE)), 2) AS {name} FROM {table} LIMIT 10"
_AGG = "SELECT {agg}(PS_SUPPLYCOST) AS {name} FROM partsupp"
_DEC_AGG = "SELECT {agg}(L_EXTENDEDPRICE) AS {name} FROM lineitem"
_DATES = "SELECT L_COMMITDATE, L_RECEIPTDATE, L_COMMITDATE {op} L_RECEIPTDATE FROM lineitem"
_LOG = "SELECT PS_SUPPLYCOST, round({fn}(PS_SUPPLYCOST), 2) AS {name} FROM partsupp LIMIT 10"
_NATION = "SELECT N_NAME, {expr} AS {name} FROM nation"

FUNCTION_SQL: dict[str, tuple[str, tuple[int, ...]]] = {
    "function/arithmetic/abs": ("SELECT a, abs(a) AS ABS_A FROM t LIMIT 10", ()),
    "function/arithmetic/add": (_ARITH.format(op="+", name="ADD_KEY"), ()),
    "function/arithmetic/subtract": (_ARITH.format(op="-", name="SUBTRACT_KEY"), ()),
    "function/arithmetic/multiply": ("SELECT PS_PARTKEY, PS_PARTKEY * 10 AS MULTIPLY_KEY FROM partsupp LIMIT 10", ()),
    "function/arithmetic/divide": ("SELECT PS_PARTKEY, PS_PARTKEY / 10 AS DIVIDE_KEY FROM partsupp LIMIT 10", ()),
    # DuckDB's factorial takes an INTEGER, not n_nationkey's BIGINT: the cast is in the SQL both engines read.
    "function/arithmetic/factorial": (
        "SELECT N_NATIONKEY, factorial(CAST(N_NATIONKEY AS INTEGER)) AS FACTORIAL_KEY FROM nation "
        "WHERE N_NATIONKEY <= 10 LIMIT 100",
        (),
    ),
    "function/arithmetic/power": ("SELECT PS_PARTKEY, power(PS_PARTKEY, 2) AS POWER_KEY FROM partsupp LIMIT 10", ()),
    "function/arithmetic/sqrt": (
        "SELECT PS_PARTKEY, round(sqrt(CAST(PS_PARTKEY AS DOUBLE)), 2) AS SQRT_KEY FROM partsupp LIMIT 10",
        (),
    ),
    "function/arithmetic/exp": (
        "SELECT PS_PARTKEY, round(exp(CAST(PS_PARTKEY AS DOUBLE)), 2) AS EXP_KEY FROM partsupp LIMIT 10",
        (),
    ),
    "function/arithmetic/cos": (_TRIG.format(fn="cos", col="ps_supplycost", name="COS_SUPPLY", table="partsupp"), ()),
    "function/arithmetic/sin": (_TRIG.format(fn="sin", col="ps_supplycost", name="SIN_SUPPLY", table="partsupp"), ()),
    "function/arithmetic/tan": (_TRIG.format(fn="tan", col="ps_supplycost", name="TAN_SUPPLY", table="partsupp"), ()),
    "function/arithmetic/acos": (_TRIG.format(fn="acos", col="l_tax", name="ACOS_TAX", table="lineitem"), ()),
    "function/arithmetic/asin": (_TRIG.format(fn="asin", col="l_tax", name="ASIN_TAX", table="lineitem"), ()),
    "function/arithmetic/atan": (_TRIG.format(fn="atan", col="l_tax", name="ATAN_TAX", table="lineitem"), ()),
    "function/arithmetic/atan2": (
        "SELECT round(atan2(CAST(l_tax AS DOUBLE), CAST(l_tax AS DOUBLE)), 2) AS ATAN2_TAX FROM lineitem LIMIT 10",
        (),
    ),
    "function/arithmetic/sum": (_AGG.format(agg="sum", name="SUM_SUPPLYCOST"), ()),
    "function/arithmetic/count": (_AGG.format(agg="count", name="COUNT_SUPPLYCOST"), ()),
    "function/arithmetic/count_star": ("SELECT count(*) FROM partsupp", ()),
    "function/arithmetic/avg": ("SELECT round(avg(PS_SUPPLYCOST), 2) AS AVG_SUPPLYCOST FROM partsupp", ()),
    "function/arithmetic/min": (_AGG.format(agg="min", name="MIN_SUPPLYCOST"), ()),
    "function/arithmetic/max": (_AGG.format(agg="max", name="MAX_SUPPLYCOST"), ()),
    "function/arithmetic/median": (_AGG.format(agg="median", name="MEDIAN_SUPPLYCOST"), ()),
    "function/arithmetic_decimal/sum": (_DEC_AGG.format(agg="sum", name="SUM_EXTENDEDPRICE"), ()),
    "function/arithmetic_decimal/min": (_DEC_AGG.format(agg="min", name="MIN_EXTENDEDPRICE"), ()),
    "function/arithmetic_decimal/max": (_DEC_AGG.format(agg="max", name="MAX_EXTENDEDPRICE"), ()),
    "function/arithmetic_decimal/avg": ("SELECT round(avg(L_EXTENDEDPRICE), 2) AS AVG_EXTENDEDPRICE FROM lineitem", ()),
    "function/boolean/or": ("SELECT a FROM t WHERE a = 5 OR a = 7", ()),
    "function/boolean/and": ("SELECT a, b FROM t WHERE a < 5 AND b = 1", ()),
    "function/boolean/not": ("SELECT c FROM t WHERE NOT FALSE", ()),
    "function/boolean/bool_and": ("SELECT bool_and(c) AS bool_and_c FROM t", ()),
    "function/boolean/bool_or": ("SELECT bool_or(c) AS bool_or_c FROM t", ()),
    "function/comparison/between": ("SELECT a FROM t WHERE a BETWEEN 1 AND 5", ()),
    "function/comparison/equal": ("SELECT PS_AVAILQTY, PS_PARTKEY FROM partsupp WHERE PS_AVAILQTY = PS_PARTKEY", ()),
    "function/comparison/not_equal": ("SELECT N_NAME FROM nation WHERE NOT N_NAME = 'CANADA'", ()),
    "function/comparison/lt": ("SELECT PS_AVAILQTY FROM partsupp WHERE PS_AVAILQTY < 10", ()),
    "function/comparison/lte": ("SELECT PS_AVAILQTY FROM partsupp WHERE PS_AVAILQTY <= 10", ()),
    "function/comparison/gt": ("SELECT PS_AVAILQTY FROM partsupp WHERE PS_AVAILQTY > 9990 ORDER BY PS_AVAILQTY", (0,)),
    "function/comparison/gte": (
        "SELECT PS_AVAILQTY FROM partsupp WHERE PS_AVAILQTY >= 9990 ORDER BY PS_AVAILQTY",
        (0,),
    ),
    "function/comparison/is_nan": ("SELECT a, isnan(a) AS isnan_a FROM t", ()),
    "function/comparison/is_not_distinct_from": ("SELECT a FROM t WHERE a IS NOT DISTINCT FROM NULL", ()),
    "function/datetime/extract": ("SELECT L_SHIPDATE, extract(year FROM L_SHIPDATE) FROM lineitem", ()),
    "function/datetime/lt": (_DATES.format(op="<"), ()),
    "function/datetime/lte": (_DATES.format(op="<="), ()),
    "function/datetime/gt": (_DATES.format(op=">"), ()),
    "function/datetime/gte": (_DATES.format(op=">="), ()),
    "function/logarithmic/ln": (_LOG.format(fn="ln", name="LN_SUPPLY"), ()),
    "function/logarithmic/log10": (_LOG.format(fn="log10", name="LOG10_SUPPLY"), ()),
    "function/logarithmic/log2": (_LOG.format(fn="log2", name="LOG2_SUPPLY"), ()),
    "function/rounding/ceil": (
        "SELECT PS_SUPPLYCOST, ceil(CAST(PS_SUPPLYCOST AS DOUBLE)) AS CEIL_SUPPLYCOST FROM partsupp LIMIT 10",
        (),
    ),
    "function/rounding/floor": (
        "SELECT PS_SUPPLYCOST, floor(CAST(PS_SUPPLYCOST AS DOUBLE)) AS FLOOR_SUPPLYCOST FROM partsupp LIMIT 10",
        (),
    ),
    "function/rounding/round": (
        "SELECT L_EXTENDEDPRICE, round(CAST(L_EXTENDEDPRICE AS DOUBLE), 1) AS ROUND_EXTENDEDPRICE "
        "FROM lineitem LIMIT 10",
        (),
    ),
    "function/string/concat": (_NATION.format(expr="concat(N_NAME, N_COMMENT)", name="concat_nation"), ()),
    "function/string/concat_ws": ("SELECT concat_ws('.', N_NAME, N_COMMENT) FROM nation", ()),
    "function/string/like": ("SELECT N_NAME FROM nation WHERE N_NAME LIKE 'ALGERIA'", ()),
    "function/string/starts_with0": ("SELECT N_NAME FROM nation WHERE starts_with(N_NAME, 'A')", ()),
    "function/string/substring0": (_NATION.format(expr="substr(N_NAME, 1, 3)", name="substr_name"), ()),
    "function/string/contains": ("SELECT N_NAME FROM nation WHERE contains(N_NAME, 'IA')", ()),
    "function/string/strpos": (_NATION.format(expr="strpos(N_NAME, 'A')", name="strpos_name"), ()),
    "function/string/replace": (_NATION.format(expr="replace(N_NAME, 'A', 'a')", name="replace_name"), ()),
    "function/string/repeat": (_NATION.format(expr="repeat(N_NAME, 2)", name="repeated_N_NAME"), ()),
    "function/string/reverse": (_NATION.format(expr="reverse(N_NAME)", name="reversed_N_NAME"), ()),
    "function/string/lower": (_NATION.format(expr="lower(N_NAME)", name="lowercase_N_NAME"), ()),
    "function/string/upper": ("SELECT O_COMMENT, upper(O_COMMENT) AS uppercase_O_COMMENT FROM orders LIMIT 10", ()),
    "function/string/char_length": (_NATION.format(expr="length(N_NAME)", name="char_length_N_NAME"), ()),
    "function/string/bit_length": (_NATION.format(expr="bit_length(N_NAME)", name="bit_length_N_NAME"), ()),
    "function/string/ltrim": (_NATION.format(expr="ltrim(N_NAME, 'A')", name="ltrim_N_NAME"), ()),
    "function/string/rtrim": (_NATION.format(expr="rtrim(N_NAME, 'A')", name="rtrim_N_NAME"), ()),
    "function/string/trim": (_NATION.format(expr="trim(N_NAME, 'A')", name="trim_N_NAME"), ()),
    "function/string/lpad": (_NATION.format(expr="lpad(N_NAME, 10, ' ')", name="lpad_N_NAME"), ()),
    "function/string/rpad": (_NATION.format(expr="rpad(N_NAME, 10, ' ')", name="rpad_N_NAME"), ()),
    "function/string/left": (_NATION.format(expr="left(N_NAME, 2)", name="left_extract_N_NAME"), ()),
    "function/string/right": (_NATION.format(expr="right(N_NAME, 2)", name="right_extract_N_NAME"), ()),
}
