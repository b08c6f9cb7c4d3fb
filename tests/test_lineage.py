"""Column lineage from the plan alone (consumer/analysis/lineage): known facts of TPC-H plans from several producers,
hand-built plans for every relation and expression kind, writes/DDL/updates, the OpenLineage facet, the CLI.

No Spark session: lineage is computed over the protobuf messages only.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from plan_builder import (
    ASC_NULLS_FIRST,
    DESC_NULLS_LAST,
    AggregateFunction,
    DdlRel,
    Expr,
    JoinRel,
    PlanBuilder,
    Rel,
    SetRel,
    SortField,
    WriteRel,
    aggregate,
    boolean,
    cast,
    ddl,
    exists,
    field,
    filter_,
    fp64,
    i64,
    if_then,
    in_list,
    in_subquery,
    join,
    lit,
    measure,
    named,
    outer,
    param,
    project,
    reference,
    scalar_subquery,
    set_,
    sort,
    string,
    struct,
    switch,
    update,
    virtual,
    write,
)
from substrait import algebra_pb2 as alg
from substrait_spark.cli import main
from substrait_spark.consumer.analysis.analyze import validate_plan
from substrait_spark.consumer.analysis.lineage import LineageWalker, column_lineage
from substrait_spark.consumer.errors import PlanInvalidError, UnsupportedFeatureError
from substrait_spark.consumer.loading.loader import load_plan
from substrait_spark.consumer.walk import nodes

pytestmark = [pytest.mark.unit, pytest.mark.corpus]

IBM = "ibm-substrait-compliance-tpch"
SNAP = "consumer-testing-tpch-snapshots"
IBIS = "ibis-substrait-tpch"

# The same query from independent producers: IBM's Isthmus 0.80 (JSON and binary), 2025 Isthmus, DuckDB 1.1, ibis.
Q01 = [f"{IBM}/q01.json", f"{IBM}/q01.bin", f"{SNAP}/q01-isthmus_plan.json", f"{SNAP}/q01-duckdb_plan.json",
       f"{IBIS}/tpc_h01.json"]  # fmt: skip
Q03 = [f"{IBM}/q03.json", f"{SNAP}/q03-isthmus_plan.json", f"{SNAP}/q03-duckdb_plan.json", f"{IBIS}/tpc_h03.json"]
Q12 = [f"{IBM}/q12.json", f"{SNAP}/q12-isthmus_plan.json", f"{SNAP}/q12-duckdb_plan.json", f"{IBIS}/tpc_h12.json"]
Q14 = [f"{IBM}/q14.json", f"{SNAP}/q14-duckdb_plan.json", f"{IBIS}/tpc_h14.json"]


def view(sources) -> dict[tuple[str, str], set[str]]:
    """Sources as {(table, column): {"DIRECT/AGGREGATION", ...}}, names lower-cased (producers differ in case)."""
    return {(f.dataset.name.lower(), f.field.lower()): {str(t) for t in ts} for f, ts in sources.items()}


def lineage_of(corpus: Path, rel_path: str):
    return column_lineage(load_plan(corpus / rel_path))


def root(corpus: Path, rel_path: str):
    lin = lineage_of(corpus, rel_path)
    assert len(lin.roots) == 1
    return lin.roots[0]


# --- TPC-H facts ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("plan", Q01)
def test_q01_aggregates_filter_and_grouping(corpus, plan):
    r = root(corpus, plan)
    assert [n.lower() for n in r.names] == [
        "l_returnflag", "l_linestatus", "sum_qty", "sum_base_price", "sum_disc_price", "sum_charge", "avg_qty",
        "avg_price", "avg_disc", "count_order",
    ]  # fmt: skip
    assert view(r.field("sum_qty")) == {("lineitem", "l_quantity"): {"DIRECT/AGGREGATION"}}
    assert view(r.field("l_returnflag")) == {("lineitem", "l_returnflag"): {"DIRECT/IDENTITY"}}
    assert view(r.field("sum_charge")) == {
        ("lineitem", c): {"DIRECT/AGGREGATION"} for c in ("l_extendedprice", "l_discount", "l_tax")
    }
    assert view(r.field("count_order")) == {}  # count(*) reads no column
    dataset = view(r.indirect)
    assert dataset[("lineitem", "l_shipdate")] == {"INDIRECT/FILTER"}
    # grouped by, and ordered by (ORDER BY l_returnflag, l_linestatus)
    assert dataset[("lineitem", "l_returnflag")] == {"INDIRECT/GROUP_BY", "INDIRECT/SORT"}
    assert dataset[("lineitem", "l_linestatus")] == {"INDIRECT/GROUP_BY", "INDIRECT/SORT"}
    assert ("lineitem", "l_quantity") not in dataset
    # l_shipdate only filters: it is no column's direct input
    assert all(("lineitem", "l_shipdate") not in view(s) for _, s in r.columns)


@pytest.mark.parametrize("plan", Q03)
def test_q03_join_keys_are_indirect_join(corpus, plan):
    """JoinRel conditions (DuckDB) and WHERE predicates over a cross product (Isthmus, ibis) alike."""
    r = root(corpus, plan)
    dataset = view(r.indirect)
    keys = [("customer", "c_custkey"), ("orders", "o_custkey"), ("lineitem", "l_orderkey"), ("orders", "o_orderkey")]
    for key in keys:
        assert "INDIRECT/JOIN" in dataset[key], key
    assert dataset[("customer", "c_mktsegment")] == {"INDIRECT/FILTER"}
    assert "INDIRECT/JOIN" not in dataset[("lineitem", "l_shipdate")]
    # ORDER BY revenue DESC, o_orderdate: revenue's inputs order the rows
    assert "INDIRECT/SORT" in dataset[("lineitem", "l_extendedprice")]
    assert "INDIRECT/SORT" in dataset[("orders", "o_orderdate")]
    assert view(r.field("revenue")) == {
        ("lineitem", "l_extendedprice"): {"DIRECT/AGGREGATION"},
        ("lineitem", "l_discount"): {"DIRECT/AGGREGATION"},
    }
    assert view(r.field("o_orderdate")) == {("orders", "o_orderdate"): {"DIRECT/IDENTITY"}}


@pytest.mark.parametrize("plan", [f"{IBM}/q04.json", f"{SNAP}/q04-isthmus_plan.json"])
def test_q04_exists_subquery_columns_filter_the_count(corpus, plan):
    """`where exists (select * from lineitem where l_orderkey = o_orderkey and l_commitdate < l_receiptdate)`."""
    lin = lineage_of(corpus, plan)
    r = lin.roots[0]
    assert view(r.field("order_count")) == {}
    assert view(r.field("o_orderpriority")) == {("orders", "o_orderpriority"): {"DIRECT/IDENTITY"}}
    dataset = view(r.indirect)
    for col in ("l_commitdate", "l_receiptdate", "l_orderkey"):
        assert dataset[("lineitem", col)] == {"INDIRECT/FILTER"}, col
    assert dataset[("orders", "o_orderkey")] == {"INDIRECT/FILTER"}  # the outer reference of the correlation
    assert dataset[("orders", "o_orderdate")] == {"INDIRECT/FILTER"}
    assert dataset[("orders", "o_orderpriority")] == {"INDIRECT/GROUP_BY", "INDIRECT/SORT"}
    assert {i.dataset.name.lower() for i in lin.inputs} == {"orders", "lineitem"}


@pytest.mark.parametrize("plan", [f"{IBM}/q17.json", f"{SNAP}/q17-isthmus_plan.json"])
def test_q17_correlated_scalar_subquery(corpus, plan):
    """`l_quantity < (select 0.2 * avg(l_quantity) from lineitem where l_partkey = p_partkey)`."""
    r = root(corpus, plan)
    assert view(r.field("avg_yearly")) == {("lineitem", "l_extendedprice"): {"DIRECT/AGGREGATION"}}
    dataset = view(r.indirect)
    assert dataset[("lineitem", "l_quantity")] == {"INDIRECT/FILTER"}
    assert "INDIRECT/FILTER" in dataset[("part", "p_partkey")]  # through the subquery's outer reference
    assert dataset[("part", "p_brand")] == {"INDIRECT/FILTER"}


@pytest.mark.parametrize("plan", Q12)
def test_q12_case_when_conditions_are_conditional(corpus, plan):
    """`sum(case when o_orderpriority = '1-URGENT' or ... then 1 else 0 end)`: the priority picks the branch."""
    r = root(corpus, plan)
    for name in ("high_line_count", "low_line_count"):
        assert view(r.field(name)) == {("orders", "o_orderpriority"): {"INDIRECT/CONDITIONAL"}}, name
    assert view(r.field("l_shipmode")) == {("lineitem", "l_shipmode"): {"DIRECT/IDENTITY"}}
    assert "INDIRECT/CONDITIONAL" not in set().union(*view(r.indirect).values())  # per column, not dataset-wide


@pytest.mark.parametrize("plan", Q14)
def test_q14_case_inside_an_aggregate(corpus, plan):
    r = root(corpus, plan)
    assert view(r.field("promo_revenue")) == {
        ("part", "p_type"): {"INDIRECT/CONDITIONAL"},
        ("lineitem", "l_extendedprice"): {"DIRECT/AGGREGATION"},
        ("lineitem", "l_discount"): {"DIRECT/AGGREGATION"},
    }


def test_q08_transformation_and_conditional_in_one_query(corpus):
    r = root(corpus, f"{IBM}/q08.json")
    assert view(r.field("o_year")) == {("orders", "o_orderdate"): {"DIRECT/TRANSFORMATION"}}  # extract(year ...)
    assert view(r.field("mkt_share"))[("nation", "n_name")] == {"INDIRECT/CONDITIONAL"}


def test_datafusion_duckdb_isthmus_agree_on_group_by(corpus):
    """The same relation test (GROUP BY l_orderkey, l_linenumber with count(*)) from three producers."""
    base = "consumer-testing-function-relation-snapshots/relation/aggregate/aggregate_with_group_by"
    for producer in ("datafusion", "duckdb", "isthmus"):
        r = root(corpus, f"{base}-{producer}_plan.json")
        assert view(r.field("l_orderkey")) == {("lineitem", "l_orderkey"): {"DIRECT/IDENTITY"}}, producer
        assert view(r.columns[2][1]) == {}, producer
        assert view(r.indirect)[("lineitem", "l_linenumber")] >= {"INDIRECT/GROUP_BY"}, producer


def test_ibis_unmarked_correlation_is_refused_as_the_consumer_refuses_it(corpus):
    """ibis-substrait writes correlated columns as plain field references: which side is outer is unknowable."""
    plan = load_plan(corpus / IBIS / "tpc_h04.json")
    with pytest.raises(PlanInvalidError, match="plain field references inside a subquery") as lineage_error:
        column_lineage(plan)
    with pytest.raises(PlanInvalidError) as validate_error:
        validate_plan(plan)
    assert lineage_error.value.path == validate_error.value.path


def _tpch_plans(corpus: Path) -> list[Path]:
    return sorted([*(corpus / IBM).glob("q*.json"), *(corpus / SNAP).glob("q*.json"), *(corpus / IBIS).glob("*.json")])


def test_every_tpch_plan_has_consistent_lineage(corpus):
    """Over all TPC-H plans: lineage computes (or refuses exactly as validation does); roots keep the plan's
    names; every input column named in an output is a column some read of that dataset declares; the datasets
    read are exactly the plan's named tables."""
    checked = 0
    for path in _tpch_plans(corpus):
        loaded = load_plan(path)
        try:
            lin = column_lineage(loaded)
        except PlanInvalidError as exc:
            with pytest.raises(PlanInvalidError, match="plain field references"):
                validate_plan(loaded)
            assert "plain field references" in exc.message, path
            continue
        roots = [r.root for r in loaded.plan.relations if r.WhichOneof("rel_type") == "root"]
        assert [o.names for o in lin.roots] == [list(r.names) for r in roots], path
        declared = {(i.dataset, f) for i in lin.inputs for f in i.fields}
        for out in lin.outputs:
            for sources in [out.indirect, *(s for _, s in out.columns)]:
                for f in sources:
                    assert (f.dataset, f.field) in declared, (path, f)
        tables = {".".join(m.named_table.names) for m, _ in nodes(loaded.plan) if isinstance(m, alg.ReadRel)}
        tables.discard("")
        assert {i.dataset.name for i in lin.inputs} == tables, path
        checked += 1
    assert checked >= 60


# --- hand-built plans: relations and expressions ---------------------------------------------------------------

S_NAMES, S_TYPES = ["k", "v", "flag", "name"], [i64(), fp64(), boolean(), string()]
U_NAMES, U_TYPES = ["x", "y"], [i64(), fp64()]


def s() -> Rel:
    return named("s", S_NAMES, S_TYPES)


def u() -> Rel:
    return named(["db", "u"], U_NAMES, U_TYPES)


def one_root(plan):
    lin = column_lineage(plan)
    return lin.roots[0]


def test_project_emit_and_expression_kinds():
    b = PlanBuilder()
    exprs = [
        if_then([(b.call("gt", field(1), lit(0.0), out=boolean()), field(3))], lit("none")),  # 4
        switch(field(0), [(1, lit("one"))], field(3), type_=i64()),  # 5
        in_list(field(0), lit(1), lit(2)),  # 6
        cast(field(1), string()),  # 7
        lit(5),  # 8
        param(0, i64()),  # 9
        b.call("coalesce", field(3), lit("?"), out=string()),  # 10
        b.call("md5", field(3), out=string()),  # 11
    ]
    plan = b.plan(project(s(), *exprs, emit=[3, 4, 5, 6, 7, 8, 9, 10, 11]), [*"abcdefghi"])
    r = one_root(plan)
    assert r.names == [*"abcdefghi"]
    assert view(r.field("a")) == {("s", "name"): {"DIRECT/IDENTITY"}}
    assert view(r.field("b")) == {("s", "v"): {"INDIRECT/CONDITIONAL"}, ("s", "name"): {"DIRECT/TRANSFORMATION"}}
    assert view(r.field("c")) == {("s", "k"): {"INDIRECT/CONDITIONAL"}, ("s", "name"): {"DIRECT/TRANSFORMATION"}}
    assert view(r.field("d")) == {("s", "k"): {"DIRECT/TRANSFORMATION"}}
    assert view(r.field("e")) == {("s", "v"): {"DIRECT/TRANSFORMATION"}}
    assert view(r.field("f")) == {} and view(r.field("g")) == {}  # literal, dynamic parameter
    assert view(r.field("h")) == {("s", "name"): {"DIRECT/TRANSFORMATION", "INDIRECT/CONDITIONAL"}}
    assert view(r.field("i")) == {("s", "name"): {"DIRECT/TRANSFORMATION/masking"}}
    assert view(r.indirect) == {}


def test_named_lambda_reference_and_invocation():
    """Regression (issue 14): lineage raised on a named lambda (`named_lambda_reference` had no handler) and read
    an invocation of one as an empty inline lambda. The plan test_lambdas runs: double(k) and
    transform(xs, double) — each column is a transformation of the column the lambda is applied to."""
    from test_lambdas import COLUMNS, TYPES, named_double

    b = PlanBuilder()
    exprs, add_named = named_double(b)
    plan = b.plan(project(named("lambda_arrays", COLUMNS, TYPES), *exprs, emit=[0, 3, 4]), ["k", "c0", "c1"])
    add_named(plan)
    r = one_root(plan)
    assert view(r.field("c0")) == {("lambda_arrays", "k"): {"DIRECT/TRANSFORMATION"}}
    assert view(r.field("c1")) == {("lambda_arrays", "xs"): {"DIRECT/TRANSFORMATION"}}
    assert validate_plan(plan) == []


def test_aggregate_grouping_sets_measure_filter_and_distinct():
    b = PlanBuilder()
    total = measure(b.agg("sum", field(1), out=fp64()), filter=field(2))
    distinct = b.agg("count", field(1), distinct=True, out=i64())
    agg = aggregate(s(), keys=[field(0), field(3)], sets=[[0], [1]], measures=[total, distinct])
    r = one_root(b.plan(agg, ["k", "name", "total", "n"]))  # the grouping-set index column is not named
    assert r.names == ["k", "name", "total", "n"]
    assert view(r.field("total")) == {("s", "v"): {"DIRECT/AGGREGATION"}, ("s", "flag"): {"INDIRECT/FILTER"}}
    assert view(r.field("n")) == {("s", "v"): {"DIRECT/AGGREGATION/masking"}}
    assert view(r.indirect) == {("s", "k"): {"INDIRECT/GROUP_BY"}, ("s", "name"): {"INDIRECT/GROUP_BY"}}


def test_window_function_expression_and_window_relation():
    b = PlanBuilder()
    rank = Expr.WindowFunction(
        function_reference=b.fn("rank"),
        partitions=[field(3)],
        sorts=[SortField(expr=field(1), direction=DESC_NULLS_LAST)],
        output_type=i64(),
    )
    running = alg.ConsistentPartitionWindowRel(
        input=s(),
        window_functions=[
            alg.ConsistentPartitionWindowRel.WindowRelFunction(
                function_reference=b.fn("sum"), arguments=[alg.FunctionArgument(value=field(1))], output_type=fp64()
            )
        ],
        partition_expressions=[field(0)],
        sorts=[SortField(expr=field(2), direction=ASC_NULLS_FIRST)],
    )
    plan = b.plan(project(Rel(window=running), Expr(window_function=rank), emit=[0, 4, 5]), ["k", "running", "rk"])
    r = one_root(plan)
    assert view(r.field("running")) == {
        ("s", "v"): {"DIRECT/AGGREGATION"},
        ("s", "k"): {"INDIRECT/WINDOW"},
        ("s", "flag"): {"INDIRECT/WINDOW"},
    }
    assert view(r.field("rk")) == {("s", "name"): {"INDIRECT/WINDOW"}, ("s", "v"): {"INDIRECT/WINDOW"}}
    assert view(r.field("k")) == {("s", "k"): {"DIRECT/IDENTITY"}}  # windows neither filter nor reorder rows
    assert view(r.indirect) == {}


def test_subqueries_in_projections_and_filters():
    b = PlanBuilder()
    positive = filter_(u(), b.call("gt", field(1), lit(0.0), out=boolean()))
    biggest = aggregate(positive, measures=[b.agg("max", field(0))])
    with_scalar = project(s(), scalar_subquery(biggest), emit=[0, 4])
    in_filter = filter_(with_scalar, in_subquery([field(0)], project(u(), field(0), emit=[2])))
    r = one_root(b.plan(in_filter, ["k", "biggest"]))
    # the scalar subquery's own filter concerns that column only
    assert view(r.field("biggest")) == {("db.u", "x"): {"DIRECT/AGGREGATION"}, ("db.u", "y"): {"INDIRECT/FILTER"}}
    assert view(r.field("k")) == {("s", "k"): {"DIRECT/IDENTITY"}}
    assert view(r.indirect) == {("s", "k"): {"INDIRECT/FILTER"}, ("db.u", "x"): {"INDIRECT/FILTER"}}


def test_a_value_used_indirectly_makes_its_inputs_indirect_of_that_kind():
    """Filtering on a CASE column, or on an IN over a grouped subquery: the inputs FILTER (not CONDITIONAL, not
    GROUP_BY) the rows; the CASE column itself keeps its condition CONDITIONAL."""
    b = PlanBuilder()
    case = project(s(), if_then([(field(2), field(1))], lit(0.0)), emit=[0, 4])
    grouped = aggregate(u(), keys=[field(0)])
    rel = filter_(filter_(case, b.call("gt", field(1), lit(1.0), out=boolean())), in_subquery([field(0)], grouped))
    r = one_root(b.plan(rel, ["k", "c"]))
    assert view(r.field("c")) == {("s", "flag"): {"INDIRECT/CONDITIONAL"}, ("s", "v"): {"DIRECT/TRANSFORMATION"}}
    assert view(r.indirect) == {
        ("s", "flag"): {"INDIRECT/FILTER"},
        ("s", "v"): {"INDIRECT/FILTER"},
        ("s", "k"): {"INDIRECT/FILTER"},
        ("db.u", "x"): {"INDIRECT/FILTER"},
    }


def test_outer_references_reach_through_nested_subqueries():
    """EXISTS (... EXISTS (... w.a = s.k two levels out ...)): s.k decides which s rows remain."""
    b = PlanBuilder()
    w = named("w", ["a"], [i64()])
    inner = exists(filter_(w, b.eq(field(0), outer(0, steps_out=2))))
    middle = exists(filter_(u(), b.and_(b.eq(field(0), outer(3)), inner)))
    r = one_root(b.plan(filter_(s(), middle), S_NAMES))
    assert view(r.indirect) == {
        ("s", "k"): {"INDIRECT/FILTER"},
        ("s", "name"): {"INDIRECT/FILTER"},
        ("db.u", "x"): {"INDIRECT/FILTER"},
        ("w", "a"): {"INDIRECT/FILTER"},
    }
    with pytest.raises(PlanInvalidError, match="steps_out=3 has no enclosing query"):
        column_lineage(b.plan(filter_(s(), exists(filter_(u(), b.eq(field(0), outer(0, steps_out=3))))), S_NAMES))


def test_joins_sets_sort_and_shared_relations():
    b = PlanBuilder()
    shared = filter_(s(), field(2))
    inner = join(reference(0), u(), JoinRel.JOIN_TYPE_INNER, b.eq(field(0), field(4)), post=b.call(
        "gt", field(5), field(1), out=boolean()))  # fmt: skip
    semi = join(reference(0), u(), JoinRel.JOIN_TYPE_LEFT_SEMI, b.eq(field(0), field(4)))
    mark = join(u(), s(), JoinRel.JOIN_TYPE_LEFT_MARK, b.eq(field(0), field(2)))
    union = set_(SetRel.SET_OP_UNION_ALL, project(u(), emit=[0]), project(reference(0), emit=[0]))
    minus = set_(SetRel.SET_OP_MINUS_PRIMARY, project(u(), emit=[0]), project(s(), emit=[0]))
    plan = b.plan(
        sort(inner, (field(3), ASC_NULLS_FIRST)),
        [*S_NAMES, *U_NAMES],
        shared=[shared],
        more=[(semi, S_NAMES), (mark, ["x", "y", "m"]), (union, ["x"]), (minus, ["x"])],
    )
    lin = column_lineage(plan)
    r_inner, r_semi, r_mark, r_union, r_minus = lin.roots
    assert view(r_inner.field("y")) == {("db.u", "y"): {"DIRECT/IDENTITY"}}
    assert view(r_inner.indirect) == {
        ("s", "flag"): {"INDIRECT/FILTER"},  # the shared subtree's filter
        ("s", "k"): {"INDIRECT/JOIN"},
        ("db.u", "x"): {"INDIRECT/JOIN"},
        ("db.u", "y"): {"INDIRECT/FILTER"},  # post-join filter
        ("s", "v"): {"INDIRECT/FILTER"},
        ("s", "name"): {"INDIRECT/SORT"},
    }
    assert r_semi.names == S_NAMES and view(r_semi.indirect)[("db.u", "x")] == {"INDIRECT/JOIN"}
    assert view(r_mark.field("m")) == {("db.u", "x"): {"DIRECT/TRANSFORMATION"}, ("s", "k"): {"DIRECT/TRANSFORMATION"}}
    assert view(r_union.field("x")) == {("db.u", "x"): {"DIRECT/IDENTITY"}, ("s", "k"): {"DIRECT/IDENTITY"}}
    assert view(r_minus.field("x")) == {("db.u", "x"): {"DIRECT/IDENTITY"}}
    assert view(r_minus.indirect) == {("s", "k"): {"INDIRECT/FILTER"}}


def test_read_filter_projection_and_virtual_tables():
    b = PlanBuilder()
    read = named("s", S_NAMES, S_TYPES)
    read.read.filter.CopyFrom(b.call("gt", field(1), lit(1.0), out=boolean()))
    read.read.projection.select.struct_items.add(field=3)
    read.read.projection.select.struct_items.add(field=0)
    values = virtual(["a", "b"], [i64(), string()], [(1, "x")])
    lin = column_lineage(b.plan(read, ["name", "k"], more=[(values, ["a", "b"])]))
    r, v = lin.roots
    assert view(r.field("name")) == {("s", "name"): {"DIRECT/IDENTITY"}}
    assert view(r.indirect) == {("s", "v"): {"INDIRECT/FILTER"}}
    assert view(v.field("b")) == {("values", "b"): {"DIRECT/IDENTITY"}}
    assert {(i.dataset.name, i.kind) for i in lin.inputs} == {("s", "named_table"), ("values", "virtual_table")}


def test_files_iceberg_physical_joins_exchange_expand_and_nested_values():
    b = PlanBuilder()
    files = named("x", U_NAMES, U_TYPES)
    files.read.ClearField("named_table")
    files.read.local_files.items.add(uri_file="file:///d/a.parquet").parquet.SetInParent()
    files.read.local_files.items.add(uri_file="file:///d/b.parquet").parquet.SetInParent()
    ice = named("x", U_NAMES, U_TYPES)
    ice.read.ClearField("named_table")
    ice.read.iceberg_table.direct.metadata_uri = "s3://wh/t/metadata/v3.metadata.json"
    key = alg.ComparisonJoinKey()
    key.left.CopyFrom(field(0).selection)
    key.right.CopyFrom(field(1).selection)
    hashed = alg.HashJoinRel(left=files, right=ice, keys=[key], type=alg.HashJoinRel.JOIN_TYPE_INNER)
    exchanged = Rel(exchange=alg.ExchangeRel(input=Rel(hash_join=hashed)))
    loop = alg.NestedLoopJoinRel(left=exchanged, right=s(), expression=b.eq(field(0), field(4)))
    loop.type = alg.NestedLoopJoinRel.JOIN_TYPE_LEFT_SEMI
    expand = alg.ExpandRel(input=Rel(nested_loop_join=loop))
    pair = Expr(nested=Expr.Nested(struct=Expr.Nested.Struct(fields=[field(0), field(3)])))
    expand.fields.add().consistent_field.CopyFrom(pair)
    expand.fields.add().switching_field.duplicates.extend([field(1), lit(None, fp64())])
    # Spec output: the two fields, the input columns past them (the Iceberg side's x, y), the unnamed ordinal.
    r = one_root(b.plan(Rel(expand=expand), ["p", "q", "x2", "y2"]))
    a, bb = ("file:///d/a.parquet", "x"), ("file:///d/b.parquet", "x")
    assert view(r.field("p")) == {a: {"DIRECT/TRANSFORMATION"}, bb: {"DIRECT/TRANSFORMATION"},
                                  ("s3://wh/t/metadata/v3.metadata.json", "y"): {"DIRECT/TRANSFORMATION"}}  # fmt: skip
    assert view(r.field("q")) == {("file:///d/a.parquet", "y"): {"DIRECT/IDENTITY"},
                                  ("file:///d/b.parquet", "y"): {"DIRECT/IDENTITY"}}  # fmt: skip
    assert view(r.indirect) == {
        a: {"INDIRECT/JOIN"},
        bb: {"INDIRECT/JOIN"},
        ("s3://wh/t/metadata/v3.metadata.json", "y"): {"INDIRECT/JOIN"},
        ("s", "k"): {"INDIRECT/JOIN"},
    }


def test_nested_output_names_follow_column_types():
    """Root names include a struct column's field names; the columns after it keep their own names."""
    b = PlanBuilder()
    t = named("t", ["p", "q"], [struct(i64(), string()), i64()])
    r = one_root(b.plan(t, ["p", "p_0", "p_1", "q"]))
    assert r.names == ["p", "q"]
    assert view(r.field("q")) == {("t", "q"): {"DIRECT/IDENTITY"}}


def test_duckdb_projects_output_their_expressions_only():
    b = PlanBuilder()
    plan = b.plan(project(s(), b.call("negate", field(1), out=fp64())), ["minus_v"])
    plan.version.producer, plan.version.minor_number = "DuckDB", 53
    r = one_root(plan)
    assert view(r.field("minus_v")) == {("s", "v"): {"DIRECT/TRANSFORMATION"}}


def test_deprecated_args_and_inline_grouping_expressions():
    """Removed in Substrait 0.108; the loader reads them as arguments and AggregateRel.grouping_expressions."""
    from substrait_spark.consumer.loading.loader import parse_plan_bytes
    from substrait_spark.consumer.loading.superset import SupersetPlan

    b = PlanBuilder()
    fn = AggregateFunction(function_reference=b.fn("sum"), output_type=fp64())
    agg = alg.AggregateRel(input=s(), measures=[alg.AggregateRel.Measure(measure=fn)])
    old = SupersetPlan.FromString(b.plan(Rel(aggregate=agg), ["name", "total"]).SerializeToString())
    old_agg = old.relations[0].root.input.aggregate
    old_agg.measures[0].measure.args.add().ParseFromString(field(1).SerializeToString())
    for _ in range(2):  # same key in both sets: one key column
        old_agg.groupings.add().grouping_expressions.add().ParseFromString(field(3).SerializeToString())
    r = one_root(parse_plan_bytes(old.SerializeToString()).plan)
    assert view(r.field("total")) == {("s", "v"): {"DIRECT/AGGREGATION"}}
    assert view(r.indirect) == {("s", "name"): {"INDIRECT/GROUP_BY"}}


def test_malformed_and_unknown_plans_are_refused_with_a_path():
    b = PlanBuilder()
    with pytest.raises(PlanInvalidError, match="field reference 7 out of range") as err:
        column_lineage(b.plan(filter_(s(), field(7)), S_NAMES))
    assert err.value.path == "relations[0].root.input.filter.condition.selection"
    with pytest.raises(PlanInvalidError, match="emit position 9 out of range"):
        column_lineage(b.plan(project(s(), emit=[9]), ["x"]))
    with pytest.raises(PlanInvalidError, match="2 output names for 4 columns"):
        column_lineage(b.plan(s(), ["a", "b"]))
    with pytest.raises(PlanInvalidError, match="relation 0 refers to itself"):
        column_lineage(b.plan(reference(0), S_NAMES, shared=[filter_(reference(0), field(2))]))
    ext = Rel(extension_single=alg.ExtensionSingleRel(input=s()))
    ext.extension_single.detail.type_url = "type.example.com/Dedupe"
    with pytest.raises(UnsupportedFeatureError, match=r"extension relation type\.example\.com/Dedupe"):
        column_lineage(b.plan(ext, S_NAMES))

    class Walker(LineageWalker):  # a caller who knows the extension: it keeps its input's rows and columns
        extension_relations = {"type.example.com/Dedupe": lambda w, detail, inputs, path: inputs[0]}

    r = column_lineage(b.plan(ext, S_NAMES), walker_class=Walker).roots[0]
    assert view(r.field("v")) == {("s", "v"): {"DIRECT/IDENTITY"}}


# --- writes, DDL, updates ----------------------------------------------------------------------------------------

T_NAMES, T_TYPES = ["id", "name", "amount"], [i64(), string(), fp64()]


def test_write_ctas_delete_update_and_view_lineage():
    b = PlanBuilder()
    doubled = b.call("multiply", field(1), lit(2.0), out=fp64())
    rows = project(filter_(s(), field(2)), field(0), field(3), doubled, emit=[4, 5, 6])
    insert = write(["lake", "t"], rows, T_NAMES, T_TYPES, output=WriteRel.OUTPUT_MODE_MODIFIED_RECORDS)
    ctas = write(["lake", "c"], sort(rows, (field(0), ASC_NULLS_FIRST)), T_NAMES, T_TYPES, op=WriteRel.WRITE_OP_CTAS)
    t = named(["lake", "t"], T_NAMES, T_TYPES)
    doomed = filter_(t, b.eq(field(0), lit(1, i64())))
    delete = write(["lake", "t"], doomed, T_NAMES, T_TYPES, op=WriteRel.WRITE_OP_DELETE)
    upd = update(["lake", "t"], T_NAMES, T_TYPES, b.eq(field(1), lit("x")), {2: b.call("negate", field(2), out=fp64())})
    view_def = project(s(), emit=[0, 3])
    create_view = ddl(["lake", "v"], DdlRel.DDL_OP_CREATE, DdlRel.DDL_OBJECT_VIEW, ["k", "name"], [i64(), string()],
                      view_def)  # fmt: skip
    create_table = ddl(["lake", "e"], DdlRel.DDL_OP_CREATE, names=["a"], types=[i64()])
    plan = b.plan(
        insert,
        T_NAMES,
        more=[(ctas, T_NAMES), (delete, T_NAMES), (upd, T_NAMES), (create_view, ["k", "name"]), (create_table, ["a"])],
    )
    lin = column_lineage(plan, names=lambda parts: ("iceberg://lake", ".".join(parts[1:]) if parts[0] == "lake" else
                                                    ".".join(parts)))  # fmt: skip
    assert [(o.kind, o.operation, o.dataset and o.dataset.name) for o in lin.written] == [
        ("write", "insert", "t"),
        ("write", "ctas", "c"),
        ("write", "delete", "t"),
        ("update", "update", "t"),
        ("ddl", "create_view", "v"),
        ("ddl", "create_table", "e"),
    ]
    ins = lin.written[0]
    assert ins.dataset.namespace == "iceberg://lake"
    assert view(ins.field("id")) == {("s", "k"): {"DIRECT/IDENTITY"}}
    assert view(ins.field("amount")) == {("s", "v"): {"DIRECT/TRANSFORMATION"}}
    assert view(ins.indirect) == {("s", "flag"): {"INDIRECT/FILTER"}}
    assert view(lin.roots[0].field("amount")) == view(ins.field("amount"))  # MODIFIED_RECORDS: the rows written
    assert view(lin.output("c").indirect) == {("s", "flag"): {"INDIRECT/FILTER"}, ("s", "k"): {"INDIRECT/SORT"}}
    deleted = lin.written[2]
    assert view(deleted.field("amount")) == {("t", "amount"): {"DIRECT/IDENTITY"}}  # the rows that remain
    assert view(deleted.indirect)[("t", "id")] == {"INDIRECT/FILTER"}
    updated = lin.written[3]
    assert view(updated.field("amount")) == {
        ("t", "amount"): {"DIRECT/IDENTITY", "DIRECT/TRANSFORMATION"},
        ("t", "name"): {"INDIRECT/CONDITIONAL"},
    }
    assert view(updated.field("id")) == {("t", "id"): {"DIRECT/IDENTITY"}}
    assert view(lin.output("v").field("name")) == {("s", "name"): {"DIRECT/IDENTITY"}}
    assert lin.output("e").names == ["a"] and view(lin.output("e").field("a")) == {}
    assert view(lin.roots[1].field("amount")) == {}  # NO_OUTPUT: the root has no rows
    assert {i.dataset.name: i.kind for i in lin.inputs} == {"s": "named_table", "t": "named_table"}


def test_write_input_must_fit_the_table_schema():
    b = PlanBuilder()
    with pytest.raises(PlanInvalidError, match="the input has 4 columns, table_schema 3"):
        column_lineage(b.plan(write("t", s(), T_NAMES, T_TYPES), T_NAMES))


# --- the OpenLineage facet, purity -------------------------------------------------------------------------------


def test_openlineage_facet_shape(corpus):
    r = root(corpus, f"{IBM}/q01.json")
    facet = r.facet()
    assert facet["_schemaURL"].startswith("https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json")
    assert facet["fields"]["SUM_QTY"] == {
        "inputFields": [
            {
                "namespace": "substrait",
                "name": "LINEITEM",
                "field": "L_QUANTITY",
                "transformations": [{"type": "DIRECT", "subtype": "AGGREGATION", "description": "", "masking": False}],
            }
        ]
    }
    assert "COUNT_ORDER" not in facet["fields"]  # no input column
    shipdate = [d for d in facet["dataset"] if d["field"] == "L_SHIPDATE"]
    assert shipdate == [
        {
            "namespace": "substrait",
            "name": "LINEITEM",
            "field": "L_SHIPDATE",
            "transformations": [{"type": "INDIRECT", "subtype": "FILTER", "description": "", "masking": False}],
        }
    ]
    legacy = r.facet(dataset_lineage=False)  # dataset-level lineage repeated in every field
    assert legacy["dataset"] == []
    assert {f["field"] for f in legacy["fields"]["COUNT_ORDER"]["inputFields"]} == {
        "L_SHIPDATE", "L_RETURNFLAG", "L_LINESTATUS"
    }  # fmt: skip
    json.dumps(column_lineage(load_plan(corpus / IBM / "q01.json")).to_dict())  # JSON-serialisable


def test_lineage_needs_no_spark(corpus):
    code = (
        "import sys; from substrait_spark.consumer.loading.loader import load_plan;"
        "from substrait_spark.consumer.analysis.lineage import column_lineage;"
        f"lin = column_lineage(load_plan({str(corpus / IBM / 'q04.json')!r}));"
        "print(len(lin.roots), sorted(m for m in ('pyspark', 'py4j') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1 []"


# --- the CLI -----------------------------------------------------------------------------------------------------


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_lineage_prints_json(corpus, capsys, tmp_path):
    code, out, err = cli(capsys, "lineage", str(corpus / IBM / "q03.json"))
    assert code == 0, err
    doc = json.loads(out)
    assert doc["plan"]["producer"] and len(doc["plan"]["sha256"]) == 64
    assert {i["name"] for i in doc["inputs"]} == {"CUSTOMER", "ORDERS", "LINEITEM"}
    (r,) = doc["outputs"]
    assert r["kind"] == "root" and r["columns"] == ["L_ORDERKEY", "REVENUE", "O_ORDERDATE", "O_SHIPPRIORITY"]
    dataset = r["columnLineage"]["dataset"]
    joins = {d["field"] for d in dataset if any(t["subtype"] == "JOIN" for t in d["transformations"])}
    assert joins == {"C_CUSTKEY", "O_CUSTKEY", "L_ORDERKEY", "O_ORDERKEY"}

    target = tmp_path / "lineage.json"
    code, out, err = cli(capsys, "lineage", str(corpus / IBM / "q01.bin"), "--output", str(target))
    assert (code, out, err) == (0, "", "")
    fields = json.loads(target.read_text())["outputs"][0]["columnLineage"]["fields"]
    assert [f["field"] for f in fields["SUM_QTY"]["inputFields"]] == ["L_QUANTITY"]


def test_cli_lineage_exit_codes(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"relations": [{"root": {"input": {"filter": {"input": {}}}}}]}')
    code, out, err = cli(capsys, "lineage", str(bad))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "relation with no type set" in err and "relations[0].root.input.filter.input" in err

    b = PlanBuilder()
    ext = Rel(extension_leaf=alg.ExtensionLeafRel())
    ext.extension_leaf.detail.type_url = "type.example.com/Source"
    unsupported = tmp_path / "ext.bin"  # binary: protobuf JSON cannot hold an Any of an unknown type
    unsupported.write_bytes(b.plan(ext, []).SerializeToString())
    code, out, err = cli(capsys, "lineage", str(unsupported))
    assert code == 3 and out == "" and "type.example.com/Source" in err

    code, out, err = cli(capsys, "lineage", str(tmp_path / "missing.json"))
    assert code == 2 and "not found" in err
