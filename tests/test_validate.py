"""`validate` (consumer/analysis/analyze.py): static feature analysis agrees with translation.

* every plan of the 548-plan function/relation corpus is either supported or reported (unsupported features
  with their paths, or a clean invalid-plan error for a known producer defect) — never a crash;
* every IBM, consumer-testing and DuckDB TPC-H plan validates as supported (they all run, see
  test_tpch_corpus.py);
* for each unsupported feature the analysis knows, a plan edited from IBM q06 gets a finding at exactly the
  path where translation raises UnsupportedFeatureError;
* a consumer subclass with more functions or extension relations validates as it translates.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from substrait_spark.consumer.analysis.analyze import (
    AGGREGATE_CHECKS,
    Finding,
    _no_distinct,
    features_used,
    validate_plan,
)
from substrait_spark.consumer.errors import PlanInvalidError, UnsupportedFeatureError
from substrait_spark.consumer.loading.loader import load_plan, parse_plan_bytes
from substrait_spark.consumer.translation.consumer import SubstraitConsumer

# Each test carries its tier: `unit` (pure Python) or `spark`.
pytestmark = [pytest.mark.corpus]

CLI = str(Path(sys.executable).parent / "substrait-spark")
FUNCTION_RELATION = "consumer-testing-function-relation-snapshots"
IBM = "ibm-substrait-compliance-tpch"
CT = "consumer-testing-tpch-snapshots"
IBIS = "ibis-substrait-tpch"

# Producer defects that make a corpus plan malformed (exit 2), not unsupported. Each pattern names one.
# (DataFusion 40's untyped base_schema and DuckDB 1.1's VALUES without a base_schema are read with their
# evident meaning, see consumer/loading/producers.py and the VALUES reader, so they validate as supported.)
KNOWN_INVALID = {
    "DuckDB 1.1 writes an untyped NULL literal": r"type has no kind set \(at .*\.literal\.null\)",
}
EMPTY_URL = "type.googleapis.com/google.protobuf.Empty"
IBIS_UNMARKED = "ibis-substrait plan compares two plain field references inside a subquery"

# Paths in IBM q06.
ROOT = "relations[0].root.input"
AGG = f"{ROOT}.aggregate"
PROJECT = f"{AGG}.input.project"
FILTER = f"{PROJECT}.input.filter"
READ = f"{FILTER}.input.read"


# --------------------------------------------------------------------------------------------------
# helpers: IBM q06 as JSON, edited
# --------------------------------------------------------------------------------------------------


def q06_json(corpus: Path) -> dict[str, Any]:
    text = (corpus / IBM / "q06.json").read_text()
    return json.loads("\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//")))


def plan_of(doc: dict[str, Any]):
    return parse_plan_bytes(json.dumps(doc).encode())


def root_input(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["relations"][0]["root"]["input"]


def wrap_root(doc: dict[str, Any], kind: str, **fields: Any) -> None:
    """Put a new relation of `kind` on top of the root's input."""
    root = doc["relations"][0]["root"]
    root["input"] = {kind: {"input": root["input"], **fields}}


def q06_filter(doc: dict[str, Any]) -> dict[str, Any]:
    return root_input(doc)["aggregate"]["input"]["project"]["input"]["filter"]


def q06_read(doc: dict[str, Any]) -> dict[str, Any]:
    return q06_filter(doc)["input"]["read"]


def q06_measure(doc: dict[str, Any]) -> dict[str, Any]:
    return root_input(doc)["aggregate"]["measures"][0]["measure"]


def q06_project_expression(doc: dict[str, Any], expression: dict[str, Any]) -> None:
    root_input(doc)["aggregate"]["input"]["project"]["expressions"][0] = expression


def declare(doc: dict[str, Any], anchor: int, name: str) -> None:
    doc["extensions"].append(
        {"extensionFunction": {"extensionUriReference": 2, "functionAnchor": anchor, "name": name}}
    )


def field_ref(i: int) -> dict[str, Any]:
    return {"selection": {"directReference": {"structField": {"field": i}}, "rootReference": {}}}


def rename_function(doc: dict[str, Any], anchor: int, name: str) -> None:
    for e in doc["extensions"]:
        if e["extensionFunction"]["functionAnchor"] == anchor:
            e["extensionFunction"]["name"] = name


# --------------------------------------------------------------------------------------------------
# the 548-plan function/relation corpus
# --------------------------------------------------------------------------------------------------


@pytest.mark.unit
def test_function_relation_corpus_validates_without_crashing(corpus):
    plans = sorted((corpus / FUNCTION_RELATION).rglob("*.json"))
    assert len(plans) == 548
    supported, unsupported, invalid = [], {}, {}
    features: Counter[str] = Counter()
    for path in plans:
        loaded = load_plan(path)
        try:
            findings = validate_plan(loaded)
        except PlanInvalidError as exc:
            invalid[path] = exc
            continue
        if findings:
            unsupported[path] = findings
            features.update(f.feature for f in findings)
        else:
            supported.append(path)
        for f in findings:
            assert isinstance(f, Finding) and f.feature
            assert f.path.startswith("relations["), f
    defects: Counter[str] = Counter()
    for path, exc in invalid.items():
        reason = next((k for k, pattern in KNOWN_INVALID.items() if re.search(pattern, str(exc))), None)
        assert reason, f"{path.relative_to(corpus)}: unexpected invalid-plan error: {exc}"
        assert exc.path and exc.path.startswith("relations["), exc
        defects[reason] += 1

    print(
        f"\n548 function/relation plans: {len(supported)} supported, {len(unsupported)} unsupported, "
        f"{len(invalid)} invalid"
    )
    for feature, n in features.most_common(20):
        print(f"  unsupported: {n:4d}  {feature}")
    for reason, n in defects.most_common():
        print(f"  invalid:     {n:4d}  {reason}")
    assert len(supported) + len(unsupported) + len(invalid) == 548
    assert len(supported) >= 545  # 547 when written: all but the untyped NULL literal


@pytest.mark.unit
def test_validate_cli_over_a_handful_of_plans(corpus, tmp_path):
    root = corpus / FUNCTION_RELATION
    good = [
        root / "function/arithmetic/add-isthmus_plan.json",
        root / "relation/join/inner_join-duckdb_plan.json",
        root / "relation/aggregate/aggregate_with_group_by_rollup-isthmus_plan.json",
        corpus / IBM / "q06.bin",
    ]
    for p in good:
        assert p.is_file(), p
    proc = subprocess.run([CLI, "validate", *map(str, good)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.count(": supported") == len(good)

    doc = q06_json(corpus)
    _extension_single(doc)
    rename_function(doc, 1, "frobnicate:bool")
    unsupported = tmp_path / "unsupported.json"
    unsupported.write_text(json.dumps(doc))
    invalid = root / "function/comparison/is_not_distinct_from-duckdb_plan.json"  # an untyped NULL literal
    proc = subprocess.run(
        [CLI, "validate", "--json", str(good[0]), str(unsupported), str(invalid)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 3, proc.stderr  # the highest exit code wins: unsupported over invalid
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and "invalid plan" in proc.stderr and "literal.null" in proc.stderr
    results = {Path(r["plan"]).name: r for r in json.loads(proc.stdout)}
    assert results[good[0].name]["unsupported"] == []
    assert results["unsupported.json"]["unsupported"] == [
        {"feature": f"extension relation {EMPTY_URL}", "path": "relations[0].root.input.extension_single"},
        {
            "feature": "scalar function frobnicate:bool",
            "path": "relations[0].root.input.extension_single.input.aggregate.input.project.input.filter.condition"
            ".scalar_function",
        },
    ]
    assert results[invalid.name]["exit_code"] == 2


# --------------------------------------------------------------------------------------------------
# TPC-H: validate agrees with translation (every one of these plans runs)
# --------------------------------------------------------------------------------------------------


def _tpch_plans(corpus: Path) -> list[Path]:
    plans = sorted((corpus / IBM).glob("q*.json")) + sorted((corpus / IBM).glob("q*.bin"))
    plans += sorted((corpus / CT).glob("q*_plan.json"))
    return plans


@pytest.mark.unit
def test_tpch_plans_validate_as_supported(corpus):
    plans = _tpch_plans(corpus)
    assert len(plans) == 22 + 22 + 21 + 21 + 15
    problems = {p.name: validate_plan(load_plan(p)) for p in plans}
    assert {k: v for k, v in problems.items() if v} == {}


@pytest.mark.unit
def test_ibis_tpch_plans_are_supported_or_refused_as_translation_refuses_them(corpus):
    outcomes = {}
    for p in sorted((corpus / IBIS).glob("tpc_h*.json")):
        try:
            outcomes[p.name] = validate_plan(load_plan(p))
        except PlanInvalidError as exc:
            assert IBIS_UNMARKED in exc.message and ".subquery." in (exc.path or ""), exc
            outcomes[p.name] = "refused"
    assert len(outcomes) == 22
    assert all(v in ([], "refused") for v in outcomes.values()), outcomes
    # q02, q04, q17, q20, q21, q22: correlated subqueries without outer references (see subqueries.py)
    assert sum(v == "refused" for v in outcomes.values()) == 6


# --------------------------------------------------------------------------------------------------
# each check: the finding's path is where translation fails
# --------------------------------------------------------------------------------------------------

Edit = Callable[[dict[str, Any]], None]


def _unknown_function(doc):
    rename_function(doc, 1, "frobnicate:bool")


def _phase(doc):
    q06_measure(doc)["phase"] = "AGGREGATION_PHASE_INITIAL_TO_INTERMEDIATE"


def _median_distinct(doc):
    rename_function(doc, 8, "median:dec")
    q06_measure(doc)["invocation"] = "AGGREGATION_INVOCATION_DISTINCT"


def _window_rel(doc):
    wrap_root(doc, "window", sorts=[{"expr": field_ref(0), "comparisonFunctionReference": 1}])


def _dwrf(doc):
    read = q06_read(doc)
    del read["namedTable"]
    read["localFiles"] = {"items": [{"uriFile": "file:///data/lineitem.dwrf", "dwrf": {}}]}


def _byte_range(doc):
    read = q06_read(doc)
    del read["namedTable"]
    read["localFiles"] = {"items": [{"uriFile": "file:///data/l.parquet", "parquet": {}, "length": "100"}]}


def _sort_comparison(doc):
    wrap_root(doc, "sort", sorts=[{"expr": field_ref(0), "comparisonFunctionReference": 1}])


def _fetch_expression(doc):
    wrap_root(doc, "fetch", countExpr=field_ref(0))


def _type_argument(doc):
    multiply = root_input(doc)["aggregate"]["input"]["project"]["expressions"][0]["scalarFunction"]
    multiply["arguments"].append({"type": {"i32": {}}})


def _unknown_function_in_a_conjunct(doc):
    rename_function(doc, 2, "frobnicate:date_date")  # gte, the first conjunct of the filter's AND


def _window_function(doc):
    q06_project_expression(
        doc,
        {
            "windowFunction": {
                "functionReference": 8,
                "arguments": [{"value": field_ref(5)}],
                "outputType": {"fp64": {}},
                "phase": "AGGREGATION_PHASE_INITIAL_TO_INTERMEDIATE",
            }
        },
    )


def _extract_component(doc):
    declare(doc, 9, "extract:req_date")
    q06_project_expression(
        doc,
        {
            "scalarFunction": {
                "functionReference": 9,
                "outputType": {"i64": {}},
                "arguments": [{"enum": "US_WEEK"}, {"value": field_ref(10)}],
            }
        },
    )


def _time_cast(doc):
    q06_project_expression(doc, {"cast": {"input": field_ref(10), "type": {"precisionTime": {"precision": 6}}}})


def _wide_decimal(doc):
    q06_project_expression(doc, {"cast": {"input": field_ref(5), "type": {"decimal": {"precision": 40, "scale": 2}}}})


def _unique_subquery(doc):
    body = copy.deepcopy(q06_filter(doc)["input"])
    q06_filter(doc)["condition"] = {
        "subquery": {"setPredicate": {"predicateOp": "PREDICATE_OP_UNIQUE", "tuples": body}}
    }


def _enhancement(doc):
    q06_filter(doc)["advancedExtension"] = {"enhancement": {"@type": EMPTY_URL}}


def _extension_single(doc):
    wrap_root(doc, "extensionSingle", detail={"@type": EMPTY_URL})


CASES: list[tuple[str, Edit, str, str]] = [
    (
        "unknown scalar function",
        _unknown_function,
        "scalar function frobnicate:bool",
        f"{FILTER}.condition.scalar_function",
    ),
    (
        "aggregation phase",
        _phase,
        "aggregation phase AGGREGATION_PHASE_INITIAL_TO_INTERMEDIATE",
        f"{AGG}.measures[0].measure.phase",
    ),
    ("DISTINCT median", _median_distinct, "median:dec: DISTINCT invocation", f"{AGG}.measures[0].measure"),
    ("window relation", _window_rel, "sort by a custom comparison function", f"{ROOT}.window.sorts[0]"),
    ("dwrf files", _dwrf, "local files in dwrf format", f"{READ}.local_files.items[0]"),
    ("byte-range slice", _byte_range, "byte-range slices", f"{READ}.local_files.items[0]"),
    (
        "sort by comparison function",
        _sort_comparison,
        "sort by a custom comparison function",
        f"{ROOT}.sort.sorts[0]",
    ),
    (
        "fetch count expression",
        _fetch_expression,
        "fetch offset/count computed by an expression",
        f"{ROOT}.fetch.count_expr",
    ),
    (
        "unknown function in a filter conjunct",
        _unknown_function_in_a_conjunct,
        "scalar function frobnicate",
        f"{FILTER}.condition.scalar_function.arguments[0].value.scalar_function",
    ),
    (
        "type argument",
        _type_argument,
        "type arguments",
        f"{PROJECT}.expressions[0].scalar_function.arguments[2]",
    ),
    (
        "window function",
        _window_function,
        "aggregation phase AGGREGATION_PHASE_INITIAL_TO_INTERMEDIATE",
        f"{PROJECT}.expressions[0].window_function.phase",
    ),
    (
        "extract component",
        _extract_component,
        "extract:req_date: extract component US_WEEK",
        f"{PROJECT}.expressions[0].scalar_function",
    ),
    ("time type", _time_cast, "type precision_time", f"{PROJECT}.expressions[0].cast.type"),
    ("decimal precision", _wide_decimal, "decimal precision 40", f"{PROJECT}.expressions[0].cast.type"),
    (
        "UNIQUE subquery",
        _unique_subquery,
        "UNIQUE subquery predicate",
        f"{FILTER}.condition.subquery.set_predicate",
    ),
    ("advanced extension", _enhancement, "advanced extension enhancement", f"{FILTER}.advanced_extension"),
    ("extension relation", _extension_single, f"extension relation {EMPTY_URL}", f"{ROOT}.extension_single"),
]


@pytest.fixture(scope="module")
def tpch_resolver(tpch_dir):
    from substrait_spark.consumer.running.resolver import TableMapResolver

    return TableMapResolver.from_tables_dir(str(tpch_dir))


def translate(spark, loaded, resolver, consumer_class=SubstraitConsumer):
    consumer = consumer_class(spark, loaded.plan, resolver)
    try:
        return consumer.root(0)
    finally:
        consumer.close()


@pytest.mark.spark
@pytest.mark.parametrize(("edit", "feature", "path"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_finding_is_where_translation_fails(corpus, spark, tpch_resolver, edit, feature, path):
    doc = q06_json(corpus)
    edit(doc)
    loaded = plan_of(doc)
    findings = validate_plan(loaded)
    assert [f for f in findings if f.path == path and feature in f.feature], findings
    with pytest.raises(UnsupportedFeatureError) as info:
        translate(spark, loaded, tpch_resolver)
    assert info.value.path == path
    assert any(
        f.feature.startswith(info.value.message[:20]) or info.value.message in f.feature
        for f in findings
        if f.path == path
    ), (info.value.message, findings)


@pytest.mark.unit
def test_unedited_q06_has_no_findings_and_counts_its_features(corpus):
    loaded = plan_of(q06_json(corpus))
    assert validate_plan(loaded) == []
    used = features_used(loaded)
    assert {k: used[k] for k in ("relation:read", "relation:filter", "relation:project", "relation:aggregate")} == {
        "relation:read": 1,
        "relation:filter": 1,
        "relation:project": 1,
        "relation:aggregate": 1,
    }
    assert used["read:named_table"] == 1
    assert used["aggregate:sum"] == 1 and used["scalar:multiply"] == 1 and used["scalar:and"] == 1
    assert used["scalar:gte"] == 2 and used["scalar:lt"] == 2 and used["scalar:lte"] == 1
    assert used["expression:scalar_function"] == 7


@pytest.mark.spark
def test_an_unreadable_file_format_is_not_also_counted_as_a_mix(corpus, spark, tpch_resolver):
    """[dwrf, parquet]: the reader refuses the dwrf item and counts no format for it, so validate lists that
    item alone, not a second "mixed formats" finding at the parquet one."""
    doc = q06_json(corpus)
    _dwrf(doc)
    q06_read(doc)["localFiles"]["items"].append({"uriFile": "file:///data/l.parquet", "parquet": {}})
    loaded = plan_of(doc)
    findings = validate_plan(loaded)
    assert [(f.feature, f.path) for f in findings] == [("local files in dwrf format", f"{READ}.local_files.items[0]")]
    with pytest.raises(UnsupportedFeatureError) as info:
        translate(spark, loaded, tpch_resolver)
    assert info.value.path == f"{READ}.local_files.items[0]"


@pytest.mark.unit
def test_all_findings_are_listed_not_only_the_first(corpus):
    doc = q06_json(corpus)
    _unknown_function(doc)
    _phase(doc)
    _extension_single(doc)
    paths = [f.path for f in validate_plan(plan_of(doc))]
    assert paths == [  # in plan order: depth-first, fields in proto order (an aggregate's input first)
        f"{ROOT}.extension_single",
        f"{ROOT}.extension_single.input.aggregate.input.project.input.filter.condition.scalar_function",
        f"{ROOT}.extension_single.input.aggregate.measures[0].measure.phase",
    ]


@pytest.mark.unit
def test_subquery_bodies_and_shared_relations_are_walked(corpus):
    doc = q06_json(corpus)
    _unknown_function(doc)
    body = copy.deepcopy(q06_filter(doc))  # its condition calls frobnicate
    q06_filter(doc)["condition"] = {
        "subquery": {"setPredicate": {"predicateOp": "PREDICATE_OP_EXISTS", "tuples": {"filter": body}}}
    }
    doc["relations"].insert(0, {"rel": {"filter": copy.deepcopy(body)}})
    paths = [f.path for f in validate_plan(plan_of(doc))]
    assert paths == [
        "relations[0].rel.filter.condition.scalar_function",
        "relations[1].root.input.aggregate.input.project.input.filter.condition.subquery.set_predicate.tuples"
        ".filter.condition.scalar_function",
    ]


# --------------------------------------------------------------------------------------------------
# malformed plans raise (exit 2); they are not findings
# --------------------------------------------------------------------------------------------------


@pytest.mark.unit
def test_dangling_function_anchor_is_an_invalid_plan(corpus):
    doc = q06_json(corpus)
    q06_measure(doc)["functionReference"] = 99
    with pytest.raises(PlanInvalidError) as info:
        validate_plan(plan_of(doc))
    assert info.value.path == f"{AGG}.measures[0].measure.function_reference"
    assert "99" in info.value.message


@pytest.mark.unit
def test_relation_with_no_type_is_an_invalid_plan(corpus):
    doc = q06_json(corpus)
    q06_filter(doc)["input"] = {}
    with pytest.raises(PlanInvalidError) as info:
        validate_plan(plan_of(doc))
    assert info.value.path == f"{FILTER}.input"


# --------------------------------------------------------------------------------------------------
# subclasses validate as they translate
# --------------------------------------------------------------------------------------------------


class FrobnicatingConsumer(SubstraitConsumer):
    scalar_functions = {
        **SubstraitConsumer.scalar_functions,
        "frobnicate": SubstraitConsumer.scalar_functions["and"],
    }


class PassThroughConsumer(SubstraitConsumer):
    extension_relations = {EMPTY_URL: lambda cx, detail, inputs, path: inputs[0]}


@pytest.mark.spark
def test_a_subclass_with_more_functions_validates_as_it_translates(corpus, spark, tpch_resolver):
    doc = q06_json(corpus)
    _unknown_function(doc)
    loaded = plan_of(doc)
    assert [f.feature for f in validate_plan(loaded)] == ["scalar function frobnicate:bool"]
    assert validate_plan(loaded, FrobnicatingConsumer) == []
    assert translate(spark, loaded, tpch_resolver, FrobnicatingConsumer).columns == ["REVENUE"]


@pytest.mark.spark
def test_a_subclass_with_an_extension_relation_validates_as_it_translates(corpus, spark, tpch_resolver):
    doc = q06_json(corpus)
    _extension_single(doc)
    loaded = plan_of(doc)
    assert [f.feature for f in validate_plan(loaded)] == [f"extension relation {EMPTY_URL}"]
    assert validate_plan(loaded, PassThroughConsumer) == []
    assert translate(spark, loaded, tpch_resolver, PassThroughConsumer).columns == ["REVENUE"]


@pytest.mark.spark
def test_default_function_checks_match_the_function_handlers(spark):
    """AGGREGATE_CHECKS lists exactly the aggregates whose handler refuses a one-argument DISTINCT call.

    The checks are keyed by base name; extension-specific entries (`unsigned_integers/sum`) check their own
    argument types, so they are called here only to see that they build or refuse cleanly."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
    from substrait_spark.consumer.loading.extensions import FunctionRef
    from substrait_spark.consumer.translation.functions import AGGREGATE, Call
    from substrait_spark.consumer.translation.scope import Typed

    refusing, broken = set(), {}
    for name, handler in AGGREGATE.items():
        call = Call(FunctionRef.parse(1, name, ""), [Typed(F.col("x"), T.DoubleType())], path="p")
        if name == "string_agg":
            call.arguments.append(Typed(F.lit(","), T.StringType()))
        try:
            handler(call, True)
        except UnsupportedFeatureError:
            if "/" not in name:
                refusing.add(name)
        except Exception as exc:  # a handler that cannot build its column at all
            broken[name] = f"{type(exc).__name__}: {exc}"
    declared = {name for name, checks in AGGREGATE_CHECKS.items() if _no_distinct in checks}
    assert declared == refusing
    assert broken == {}


# --------------------------------------------------------------------------------------------------
# the spec's tutorial plan: supported, so it must translate (over empty tables of the plan's own schemas)
# --------------------------------------------------------------------------------------------------


class PlanSchemaResolver:
    """Every table the plan reads, as an empty DataFrame of the read's declared base schema."""

    def __init__(self, plan):
        from substrait import algebra_pb2 as alg
        from substrait_spark.consumer.types import schema_of
        from substrait_spark.consumer.walk import nodes

        self.schemas = {}
        for msg, path in nodes(plan):
            if isinstance(msg, alg.ReadRel) and msg.WhichOneof("read_type") == "named_table":
                names, types = schema_of(msg.base_schema, path)
                self.schemas[".".join(msg.named_table.names).lower()] = list(zip(names, types, strict=True))

    def resolve(self, spark, names):
        from pyspark.sql import types as T
        from substrait_spark.consumer.tables import ResolvedTable

        columns = self.schemas[".".join(names).lower()]
        schema = T.StructType([T.StructField(n, t) for n, t in columns])
        return ResolvedTable(spark.createDataFrame([], schema), "empty:" + ".".join(names), "memory")


@pytest.mark.spark
def test_spec_tutorial_plan_validates_and_translates(corpus, spark):
    loaded = load_plan(corpus / "substrait-spec-examples" / "final_plan.json")
    assert validate_plan(loaded) == []
    df = translate(spark, loaded, PlanSchemaResolver(loaded.plan))
    assert len(df.columns) == len(loaded.plan.relations[0].root.names)


# --- plans run executes are never refused by validate (run checks with validate before Spark) -----------------


def _lambda_plan():
    """transform(xs, x -> x + 1) and transform(xs, NULL::func<i32 -> i32>): a lambda parameter reference and a
    null function value."""
    from plan_builder import PlanBuilder, field, i32, list_, lit, named, project
    from substrait import algebra_pb2 as alg
    from substrait import type_pb2 as tp
    from test_lambdas import lambda_, param

    b = PlanBuilder()
    plus_one = lambda_(b.call("add", param(0), lit(1, i32()), out=i32()), i32())
    no_function = tp.Type()
    no_function.func.parameter_types.append(i32())
    no_function.func.return_type.CopyFrom(i32())
    no_function.func.nullability = tp.Type.NULLABILITY_NULLABLE
    null_function = alg.Expression(literal=alg.Expression.Literal(null=no_function))
    source = named("validate_arrays", ["k", "xs"], [i32(), list_(i32())])
    rel = project(
        source,
        b.call("transform", field(1), plus_one, out=list_(i32())),
        b.call("transform", field(1), null_function, out=list_(i32())),
        emit=[0, 2, 3],
    )
    return b.plan(rel, ["k", "plus_one", "none"])


def _keyed_count_plan():
    """SELECT id, (SELECT count(*) FROM emp e WHERE e.dept = d.id) FROM dept d: a correlated COUNT the translator
    fixes up (0 for a department without employees)."""
    from plan_builder import PlanBuilder, aggregate, field, filter_, i32, i64, named, outer, project, scalar_subquery

    b = PlanBuilder()
    emp = named("validate_emp", ["id", "dept"], [i32(), i32()])
    count = aggregate(filter_(emp, b.eq(field(1), outer(0))), measures=[b.agg("count", out=i64())])
    return b.plan(project(named("validate_dept", ["id"], [i32()]), scalar_subquery(count), emit=[0, 1]), ["id", "n"])


@pytest.mark.spark
def test_validate_accepts_what_run_executes_lambdas_null_functions_and_a_keyed_count(spark):
    """Found by validating every plan the suite translates: validate refused lambda parameter references, null
    function literals and a correlated COUNT the translator handles — and `run` now checks with validate first."""
    from substrait_spark.api import run_plan
    from substrait_spark.consumer import to_dataframe
    from substrait_spark.consumer.running.resolver import SessionCatalogResolver

    spark.sql("SELECT * FROM VALUES (1, array(1, 2)), (2, array()) AS t(k, xs)").createOrReplaceTempView(
        "validate_arrays"
    )
    spark.sql("SELECT * FROM VALUES (1, 10), (2, 10), (3, 20) AS t(id, dept)").createOrReplaceTempView("validate_emp")
    spark.sql("SELECT * FROM VALUES (10), (20), (30) AS t(id)").createOrReplaceTempView("validate_dept")
    try:
        lambdas, counts = _lambda_plan(), _keyed_count_plan()
        assert validate_plan(lambdas) == [] and validate_plan(counts) == []
        report = run_plan(lambdas.SerializeToString(), spark)
        assert report.status == "success" and report.outputs[0].rows == 2
        got = to_dataframe(lambdas, spark, SessionCatalogResolver()).collect()
        want = spark.sql("SELECT k, transform(xs, x -> x + 1), CAST(NULL AS ARRAY<INT>) FROM validate_arrays")
        assert sorted(map(tuple, got)) == sorted(map(tuple, want.collect()))
        expected = spark.sql(
            "SELECT d.id, (SELECT count(*) FROM validate_emp e WHERE e.dept = d.id) FROM validate_dept d"
        ).collect()
        report = run_plan(counts.SerializeToString(), spark, output="preview")
        assert sorted(report.outputs[0].preview) == sorted([list(r) for r in expected]) == [[10, 2], [20, 1], [30, 0]]
    finally:
        for view in ("validate_arrays", "validate_emp", "validate_dept"):
            spark.catalog.dropTempView(view)


# --- function options: validate reads the options each handler declares (functions.*_OPTIONS) ------------------

OPTIONS_VIEW = "validate_option_values"
# (function, argument columns of OPTIONS_VIEW, output type): every overload family the option tables tell apart.
_NUMERIC_BINARY = ("add", "subtract", "multiply", "divide", "modulus", "power")
_STRING_CALLS = {
    "like": ("s", "s"), "contains": ("s", "s"), "starts_with": ("s", "s"), "strpos": ("s", "s"),
    "replace": ("s", "s", "s"), "substring": ("s", "i", "i"), "center": ("s", "i"), "concat": ("s", "s"),
    "upper": ("s",), "initcap": ("s",), "regexp_replace": ("s", "s", "s"), "regexp_count_substring": ("s", "s"),
}  # fmt: skip


def _option_cases() -> list[tuple[str, str, tuple[str, ...]]]:
    """(kind, function, argument columns): each function whose handler reads options, over each family."""
    cases = [("scalar", f, cols) for f in _NUMERIC_BINARY for cols in (("i", "j"), ("f", "g"), ("d", "e"))]
    cases += [("scalar", f, (c,)) for f in ("negate", "abs") for c in ("i", "f", "d")]
    cases += [("scalar", f, ("f",)) for f in ("sqrt", "exp", "ln", "asin", "round")]
    cases += [("scalar", "logb", ("f", "g")), ("scalar", "atan2", ("f", "g")), ("scalar", "factorial", ("i",))]
    cases += [("scalar", f, cols) for f, cols in _STRING_CALLS.items()]
    cases += [("aggregate", f, (c,)) for f in ("sum", "sum0", "avg", "product") for c in ("i", "f", "d")]
    cases += [("aggregate", f, ("f",)) for f in ("std_dev", "variance")] + [("aggregate", "corr", ("f", "g"))]
    return cases


def _declared_option_names() -> list[str]:
    """Every option name a handler declares (the option tables' Option values)."""
    from substrait_spark.consumer.translation.functions import (
        aggregate,
        arithmetic,
        decimal,
        lists,
        options,
        regex,
        strings,
    )
    from substrait_spark.consumer.translation.functions.call import Option

    found = {v.name for m in (aggregate, arithmetic, decimal, lists, options, regex, strings) for v in vars(m).values()
             if isinstance(v, Option)}  # fmt: skip
    return sorted(found)


def _option_plan(kind: str, name: str, cols: tuple[str, ...], option: str, value: str):
    from plan_builder import PlanBuilder, aggregate, decimal_, field, fp64, i64, named, project, string

    types = {
        "i": i64(),
        "j": i64(),
        "f": fp64(),
        "g": fp64(),
        "d": decimal_(15, 2),
        "e": decimal_(15, 2),
        "s": string(),
    }
    names = list(types)
    source = named(OPTIONS_VIEW, names, list(types.values()))
    b = PlanBuilder()
    args = [field(names.index(c)) for c in cols]
    out = {"s": string(), "d": decimal_(38, 2)}.get(cols[0], fp64() if cols[0] == "f" else i64())
    if name in ("strpos", "regexp_count_substring"):
        out = i64()
    if name in ("like", "contains", "starts_with"):
        from plan_builder import boolean

        out = boolean()
    opts = {option: [value]}
    if kind == "aggregate":
        rel = aggregate(source, measures=[b.agg(name, *args, out=out, options=opts)])
        return b.plan(rel, ["v"])
    return b.plan(project(source, b.call(name, *args, out=out, options=opts), emit=[len(names)]), ["v"])


@pytest.mark.spark
def test_validate_refuses_exactly_the_options_the_handlers_refuse(spark):
    """validate ⇔ translation on function options: for every function whose handler reads options, over every
    argument family the handlers tell apart, and every option name any handler declares, given a value no handler
    supports: validate lists it iff translating the plan (no validate first: `SubstraitConsumer.root`) raises
    UnsupportedFeatureError, with the same message and path. An option the overload does not read (`rounding` on
    integer `add`) is ignored by both."""
    from substrait_spark.consumer.running.resolver import SessionCatalogResolver

    spark.sql(
        "SELECT 1L AS i, 2L AS j, 1.5D AS f, 2.5D AS g, CAST(1.25 AS DECIMAL(15,2)) AS d, "
        "CAST(2.5 AS DECIMAL(15,2)) AS e, 'ab' AS s"
    ).createOrReplaceTempView(OPTIONS_VIEW)
    checked = refused = 0
    try:
        for kind, name, cols in _option_cases():
            for option in _declared_option_names():
                plan = _option_plan(kind, name, cols, option, "NOT_A_VALUE")
                findings = [f for f in validate_plan(plan) if "option" in f.feature]
                consumer = SubstraitConsumer(spark, plan, SessionCatalogResolver())
                try:
                    consumer.root(0)
                    raised = None
                except UnsupportedFeatureError as exc:
                    raised = Finding(exc.message, exc.path)
                finally:
                    consumer.close()
                where = f"{kind} {name}{cols} option {option}"
                assert findings == ([raised] if raised else []), where
                checked += 1
                refused += raised is not None
    finally:
        spark.catalog.dropTempView(OPTIONS_VIEW)
    assert checked == len(_option_cases()) * len(_declared_option_names())
    assert refused > len(_option_cases())  # every case reads at least one option (most several)


@pytest.mark.spark
def test_validate_refuses_a_float_rounding_run_refuses(spark):
    """Regression (issue 14): `add:fp64_fp64` with `rounding=[TRUNCATE]` validated clean (exit 0) while run
    refused it (exit 3): the static option checks covered three functions. The CLI agrees with itself now; integer
    add has no rounding option and runs."""
    from plan_builder import PlanBuilder, field, fp64, i64, named, project

    def plan(sig: str, t):
        b = PlanBuilder()
        call = b.call(f"add:{sig}", field(0), field(1), out=t, options={"rounding": ["TRUNCATE"]})
        return b.plan(project(named("validate_add", ["a", "b"], [t, t]), call, emit=[2]), ["s"])

    floats, ints = plan("fp64_fp64", fp64()), plan("i64_i64", i64())
    path = "relations[0].root.input.project.expressions[0].scalar_function"
    feature = "add:fp64_fp64: option rounding=TRUNCATE (supported: TIE_TO_EVEN)"
    assert validate_plan(floats) == [Finding(feature, path)]
    assert validate_plan(ints) == []
    spark.sql("SELECT 1.5D AS a, 2.25D AS b").createOrReplaceTempView("validate_add")
    try:
        from substrait_spark.api import run_plan

        with pytest.raises(UnsupportedFeatureError, match="option rounding=TRUNCATE") as exc:
            run_plan(floats.SerializeToString(), spark)
        assert exc.value.exit_code == 3 and exc.value.path == path
        spark.sql("SELECT 1L AS a, 2L AS b").createOrReplaceTempView("validate_add")
        report = run_plan(ints.SerializeToString(), spark, output="preview")
        assert report.outputs[0].preview == [[3]]
    finally:
        spark.catalog.dropTempView("validate_add")


# --------------------------------------------------------------------------------------------------
# The refusals validate once missed (the plan plugin's KNOWN_DISAGREEMENTS, now gone): each is declared as data
# next to its translator and read by validate.
# --------------------------------------------------------------------------------------------------

FORMER_DISAGREEMENT_VIEWS = {
    "vd_s": "SELECT 'banana' AS s",
    "vd_d": "SELECT 1 AS k, DATE'2024-01-01' AS d",
    "vd_l": "SELECT 1 AS k, 'a' AS a",
    "vd_r": "SELECT 1 AS k, 'b' AS b",
    "vd_ts": "SELECT TIMESTAMP_NTZ'2024-01-31 06:30:00' AS t",
}


def _former_disagreements() -> dict[str, tuple[Any, str, str]]:
    """name -> (plan, the refused feature, its path)."""
    from physical_builder import lateral_join, lateral_ref
    from plan_builder import (
        ASC_NULLS_LAST,
        PlanBuilder,
        aggregate,
        date,
        field,
        filter_,
        i32,
        i64,
        list_,
        lit,
        named,
        param,
        precision_timestamp,
        project,
        string,
    )
    from substrait import algebra_pb2 as alg
    from window_builder import RANGE, current_row, preceding, window

    root = "relations[0].root.input"
    expr = f"{root}.project.expressions[0]"
    s = named("vd_s", ["s"], [string()])
    lr = named("vd_l", ["k", "a"], [i32(), string()]), named("vd_r", ["k", "b"], [i32(), string()])
    cases = {}

    b = PlanBuilder()
    e = b.call("regexp_replace", field(0), lit("a"), field(0), lit(1, i64()), lit(2, i64()), out=string())
    cases["regexp_replace"] = (
        b.plan(project(s, e, emit=[1]), ["r"]),
        "regexp_replace: replacing one occurrence needs a literal occurrence and a literal replacement",
        f"{expr}.scalar_function",
    )
    b = PlanBuilder()
    e = window(b, "count", sorts=[(field(1), ASC_NULLS_LAST)], bounds=RANGE, lower=preceding(1), upper=current_row())
    cases["range_over_date"] = (
        b.plan(project(named("vd_d", ["k", "d"], [i32(), date()]), e, emit=[2]), ["w"]),
        "RANGE window bound with an offset over a date sort key (Spark's DataFrame API takes numeric range offsets "
        "only)",
        f"{expr}.window_function",
    )
    b = PlanBuilder()
    counted = aggregate(filter_(lr[1], b.eq(field(0), lateral_ref(0, anchor=1))), measures=[b.agg("count", out=i64())])
    cases["lateral_count"] = (
        b.plan(lateral_join(lr[0], counted, alg.JoinRel.JOIN_TYPE_INNER, anchor=1), ["k", "a", "n"]),
        "lateral join over a counting aggregate of the correlated rows (a left row without matches would need a "
        "count of 0, not NULL)",
        f"{root}.lateral_join.right",
    )
    b = PlanBuilder()
    cases["stray_rel_reference"] = (
        b.plan(filter_(lr[1], b.eq(field(0), lateral_ref(0, anchor=9))), ["k", "b"]),
        "outer reference to relation 9 outside a lateral join's right input",
        f"{root}.filter.condition.scalar_function.arguments[1].value.selection.outer_reference",
    )
    b = PlanBuilder()
    e = b.call("strftime", field(0), lit("%Y %Q", string()), out=string())
    cases["strftime"] = (
        b.plan(project(named("vd_ts", ["t"], [precision_timestamp()]), e, emit=[1]), ["f"]),
        "strftime: strftime conversion %Q",
        f"{expr}.scalar_function",
    )
    b = PlanBuilder()
    cases["list_parameter"] = (
        b.plan(project(s, param(0, list_(i32())), emit=[1]), ["p"]),
        "dynamic parameter of type list: only scalar types can be bound",
        f"{expr}.dynamic_parameter",
    )
    return cases


@pytest.mark.spark
@pytest.mark.parametrize("name", list(_former_disagreements()))
def test_validate_lists_what_translation_refuses_former_disagreements(name, spark, tmp_path, capsys):
    """Regression (issue 14 item 2): for each refusal the plan plugin once tolerated as a known disagreement,
    validate lists the feature at translation's path (CLI exit 3), `run` exits 3, and translating the plan —
    without validate, over views of the tables it reads — raises that feature at that path."""
    from google.protobuf import json_format
    from plan_builder import translation_refusal
    from substrait_spark.cli import main

    plan, feature, path = _former_disagreements()[name]
    assert Finding(feature, path) in validate_plan(plan)
    plan_file = tmp_path / f"{name}.json"
    plan_file.write_text(json_format.MessageToJson(plan))
    capsys.readouterr()
    assert main(["validate", str(plan_file)]) == 3
    assert f"  - {feature} (at {path})" in capsys.readouterr().out.splitlines()
    assert main(["run", str(plan_file)]) == 3
    assert feature in capsys.readouterr().err
    for view, sql in FORMER_DISAGREEMENT_VIEWS.items():
        spark.sql(sql).createOrReplaceTempView(view)
    try:
        error = translation_refusal(plan, spark)
        assert (error.message, error.path, error.exit_code) == (feature, path, 3)
    finally:
        for view in FORMER_DISAGREEMENT_VIEWS:
            spark.catalog.dropTempView(view)


@pytest.mark.spark
def test_validate_lists_a_subquery_in_a_window_relation_and_a_correlated_expand(spark):
    """Two refusals of relation translators that depend on what the plan's expressions do (a subquery joined in
    where a window relation's expressions stand; an expand over correlated rows): validate lists each at the
    translator's path, with its words, and translation raises it (exit 3)."""
    from physical_builder import expand
    from plan_builder import (
        PlanBuilder,
        exists,
        field,
        filter_,
        i32,
        i64,
        in_subquery,
        named,
        outer,
        project,
        string,
        translation_refusal,
    )
    from window_builder import window_rel, window_rel_function

    left, right = named("vw_l", ["k", "a"], [i32(), string()]), named("vw_r", ["k", "b"], [i32(), string()])
    keys = project(right, field(0), emit=[2])
    b = PlanBuilder()
    windowed = window_rel(
        left, [window_rel_function(b, "row_number", out=i64())], partitions=[in_subquery([field(0)], keys)]
    )
    b2 = PlanBuilder()
    correlated = expand(filter_(right, b2.eq(field(0), outer(0))), [field(1), field(1)])
    cases = [
        (b.plan(windowed, ["k", "a", "n"]), "subquery inside a window relation's expressions",
         "relations[0].root.input.window"),
        (b2.plan(filter_(left, exists(correlated)), ["k", "a"]), "expand inside a correlated subquery",
         "relations[0].root.input.filter.condition.subquery.set_predicate.tuples.expand"),
    ]  # fmt: skip
    spark.sql("SELECT 1 AS k, 'a' AS a").createOrReplaceTempView("vw_l")
    spark.sql("SELECT 1 AS k, 'b' AS b").createOrReplaceTempView("vw_r")
    try:
        for plan, feature, path in cases:
            assert Finding(feature, path) in validate_plan(plan), feature
            error = translation_refusal(plan, spark)
            assert (error.message, error.path, error.exit_code) == (feature, path, 3)
    finally:
        spark.catalog.dropTempView("vw_l")
        spark.catalog.dropTempView("vw_r")
