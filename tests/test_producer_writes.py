"""Write plans from another producer, substrait-go, on real Iceberg tables: its own fixtures
(tests/data/producers/substrait_go, see the README there) run through the loader and the runner, the tables checked
through pyiceberg.

- delete_with_filter.json (`DELETE FROM main.employee_salaries WHERE contains(name, 'Alice')`) reads the bare name
  `employee_salaries`: it resolves to the same catalog table as the target `main.employee_salaries`, so the
  DELETE runs by predicate, reading one pinned snapshot.
- ctas_with_filter.json feeds a ProjectRel without emit (5 input columns + 5 expressions = 10 columns, by the spec
  and by substrait-go's own type model) into a 5-column table_schema: refused with a typed error (exit 2), nothing
  created. The same plan made spec-definite (the emit a conforming producer writes, the filter on `role` as
  substrait-go's open fix for its read projections writes it) creates exactly the Engineers.

The module has its own catalog (`golake`, namespace `main` as the fixtures name it); the tables are rebuilt for
each test.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from iceberg_stack import Lake
from plan_builder import sorted_rows
from substrait_spark.consumer.errors import PlanInvalidError
from substrait_spark.consumer.loading.loader import LoadedPlan, load_plan, parse_plan_bytes
from substrait_spark.consumer.running.runner import run_loaded
from substrait_spark.consumer.running.sinks import Sink
from substrait_spark.consumer.running.steps import writes
from substrait_spark.consumer.running.steps.log import KEY_PROPERTY
from substrait_spark.hooks.iceberg_spark import pyiceberg_catalog, register_catalog
from substrait_spark.hooks.iceberg_writes import WritableIcebergResolver

pytestmark = [pytest.mark.spark, pytest.mark.iceberg]

FIXTURES = Path(__file__).resolve().parent / "data" / "producers" / "substrait_go"
CATALOG = "golake"  # this module's own catalog: Spark keeps each catalog it loaded for the whole session
NS = "main"
WRITE = "relations[0].root.input.write"

EMPLOYEES = pa.schema(
    [
        pa.field("employee_id", pa.int32(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("department_id", pa.int32()),
        pa.field("salary", pa.decimal128(10, 2)),
        pa.field("role", pa.string()),
    ]
)
EMPLOYEE_ROWS = [
    (1, "Alice", 10, Decimal("120000.00"), "Software Engineer"),
    (2, "Bob", 20, Decimal("95000.50"), "Manager"),
    (3, "Carol", 10, Decimal("130000.00"), "Engineering Manager"),  # contains 'Engineer'
    (4, "Dan", None, None, "engineer"),  # contains is case-sensitive by default
    (5, "Erin", 30, Decimal("70000.00"), None),
    (6, "Frank", 10, Decimal("99999999.99"), "Engineer"),
]
ENGINEERS = [r for r in EMPLOYEE_ROWS if r[4] is not None and "Engineer" in r[4]]
CTAS_COLUMNS = ["employee_id", "name", "department_id", "salary", "role"]  # the fixture's table_schema

SALARIES = pa.schema([pa.field("name", pa.string()), pa.field("salary", pa.decimal128(10, 2))])
SALARY_ROWS = [
    ("Alice", Decimal("120000.00")),
    ("Alice Smith", Decimal("1.00")),
    ("Bob", Decimal("95000.50")),
    ("alice", Decimal("2.00")),
    ("Malice", Decimal("3.00")),
    (None, Decimal("4.00")),
    ("Alice", None),
]
ALICES = [r for r in SALARY_ROWS if r[0] is not None and "Alice" in r[0]]
OTHERS = [r for r in SALARY_ROWS if r not in ALICES]
PEOPLE = [("Alice", "Bob"), ("Bob", "Alice"), ("Carol", "Alice")]


@pytest.fixture(scope="module", name="golake")
def golake_fixture(iceberg_spark, tmp_path_factory) -> Lake:
    root = tmp_path_factory.mktemp("golake")
    settings = {"uri": root / "catalog.db", "warehouse": root / "warehouse"}
    register_catalog(iceberg_spark, CATALOG, **settings)
    return Lake(CATALOG, settings["uri"], settings["warehouse"], iceberg_spark, pyiceberg_catalog(CATALOG, **settings))


@pytest.fixture(name="go")
def go_fixture(golake: Lake) -> Lake:
    """`main.employees` and `main.employee_salaries` with their rows, nothing else: the fixtures read bare names,
    which are searched in every namespace, and write into `main`."""
    golake.catalog.create_namespace_if_not_exists(NS)
    for ident in golake.catalog.list_tables(NS):
        golake.catalog.drop_table(ident)
    put(golake, "employees", EMPLOYEES, EMPLOYEE_ROWS)
    put(golake, "employee_salaries", SALARIES, SALARY_ROWS)
    return golake


def put(lake: Lake, name: str, schema: pa.Schema, rows: list[tuple]) -> None:
    table = lake.catalog.create_table(f"{NS}.{name}", schema=schema)
    table.append(pa.Table.from_pylist([dict(zip(schema.names, r, strict=True)) for r in rows], schema=schema))


def fixture_plan(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def run(lake: Lake, plan: str | dict, run_key: str | None = None):
    """The fixture file through the real loader (or a plan derived from it), then the runner."""
    if isinstance(plan, str):
        loaded = load_plan(str(FIXTURES / plan))
    else:
        loaded = parse_plan_bytes(json.dumps(plan).encode(), uri="derived.json")
    assert isinstance(loaded, LoadedPlan) and loaded.producer == "substrait-go"
    resolver = WritableIcebergResolver(lake.catalogs())
    return run_loaded(loaded, lake.spark, resolver, sink=Sink("preview", max_rows=None), run_key=run_key)


def table(lake: Lake, name: str):
    return lake.catalog.load_table(f"{NS}.{name}")


def content(lake: Lake, name: str) -> list[tuple]:
    """The table's rows as pyiceberg reads its current snapshot, in its column order."""
    return sorted_rows(tuple(r.values()) for r in table(lake, name).scan().to_arrow().to_pylist())


def spark_rows(lake: Lake, name: str) -> list[tuple]:
    return sorted_rows(lake.spark.read.format("iceberg").load(f"{CATALOG}.{NS}.{name}").collect())


def history(lake: Lake, name: str) -> list[int]:
    return [s.snapshot_id for s in table(lake, name).snapshots()]


def only_step(report) -> dict:
    (step,) = report.to_dict()["steps"]
    return step


# --- DELETE ------------------------------------------------------------------------------------------------


def test_delete_fixture_removes_exactly_alices_rows_by_predicate(go, monkeypatch):
    def not_by_predicate(job):
        raise AssertionError("the DELETE took the general path: the read was not recognised as the target")

    monkeypatch.setattr(writes, "_delete_matching", not_by_predicate)
    before = table(go, "employee_salaries").current_snapshot().snapshot_id
    report = run(go, "delete_with_filter.json", run_key="dag/run-1/delete")
    assert content(go, "employee_salaries") == spark_rows(go, "employee_salaries") == sorted_rows(OTHERS)
    step = only_step(report)
    assert (step["kind"], step["target"], step["rows"], step["status"]) == (
        "delete",
        f"{CATALOG}.{NS}.employee_salaries",
        len(ALICES),
        "committed",
    )
    assert step["path"] == WRITE and step["snapshot_before"] == before
    last = table(go, "employee_salaries").current_snapshot()
    assert step["snapshot_after"] == last.snapshot_id and last.parent_snapshot_id == before
    assert last.summary.additional_properties[KEY_PROPERTY] == f"dag/run-1/delete/0/{report.plan_sha256[:12]}/step-0"
    # The bare name and the target are one table, pinned once: the rewrite keeps rows from the snapshot it read.
    assert [(t["name"], t["identity"], t["snapshot_id"]) for t in report.to_dict()["tables_read"]] == [
        ("employee_salaries", f"{CATALOG}.{NS}.employee_salaries", before)
    ]
    assert report.producer == "substrait-go" and report.spec_version == "0.29.0"
    assert report.outputs[0].rows == 0  # the root of a write without MODIFIED_RECORDS: no rows

    snaps = history(go, "employee_salaries")
    again = run(go, "delete_with_filter.json", run_key="dag/run-1/delete")
    step = only_step(again)
    assert step["status"] == "skipped" and "already committed" in step["reason"]
    assert history(go, "employee_salaries") == snaps
    assert content(go, "employee_salaries") == sorted_rows(OTHERS)


def test_delete_fixture_over_a_table_storing_its_columns_in_another_order(go, monkeypatch):
    """The table holds (salary, name): the read binds the plan's columns by name and renames them lazily."""
    monkeypatch.setattr(writes, "_delete_matching", None)  # must not be reached
    go.catalog.drop_table(f"{NS}.employee_salaries")
    swapped = pa.schema([SALARIES.field("salary"), SALARIES.field("name")])
    put(go, "employee_salaries", swapped, [(s, n) for n, s in SALARY_ROWS])
    report = run(go, "delete_with_filter.json")
    assert content(go, "employee_salaries") == sorted_rows((s, n) for n, s in OTHERS)
    assert only_step(report)["rows"] == len(ALICES)


def test_delete_whose_read_filters_deletes_only_the_rows_of_its_input(go):
    """A read filter narrows the input; rows it drops are not the DELETE's (they stay), so the predicate path,
    which rewrites the table from the read, must not be taken."""
    plan = fixture_plan("delete_with_filter.json")
    plan["extensionUris"].append({"extensionUriAnchor": 2, "uri": "urn:substrait:functions_comparison"})
    plan["extensions"].append(
        {"extensionFunction": {"extensionUriReference": 2, "functionAnchor": 2, "name": "is_not_null:any"}}
    )
    read = plan["relations"][0]["root"]["input"]["write"]["input"]["filter"]["input"]["read"]
    salary = {"selection": {"directReference": {"structField": {"field": 1}}, "rootReference": {}}}
    read["filter"] = {
        "scalarFunction": {
            "functionReference": 2,
            "outputType": {"bool": {"nullability": "NULLABILITY_REQUIRED"}},
            "arguments": [{"value": salary}],
        }
    }
    report = run(go, plan)
    doomed = [r for r in ALICES if r[1] is not None]
    assert content(go, "employee_salaries") == sorted_rows(r for r in SALARY_ROWS if r not in doomed)
    assert only_step(report)["rows"] == len(doomed)


def test_delete_reading_columns_in_another_order_than_its_table_schema(go):
    """The input's columns are positional to the table_schema: a read of (last, first) under a (first, last)
    table_schema gives other rows than the table's, so the input is matched row by row (the predicate path would
    write each `last` into `first`)."""
    strings = {
        "names": ["first", "last"],
        "struct": {"types": [{"string": {"nullability": "NULLABILITY_NULLABLE"}}] * 2},
    }
    put(go, "people", pa.schema([("first", pa.string()), ("last", pa.string())]), PEOPLE)
    plan = fixture_plan("delete_with_filter.json")
    write = plan["relations"][0]["root"]["input"]["write"]
    write["namedTable"]["names"], write["tableSchema"] = [NS, "people"], strings
    read = write["input"]["filter"]["input"]["read"]
    read["namedTable"]["names"], read["baseSchema"] = ["people"], {**strings, "names": ["last", "first"]}
    report = run(go, plan)  # the input: ("Alice", "Bob"), ("Alice", "Carol") as (first, last)
    assert content(go, "people") == [("Bob", "Alice"), ("Carol", "Alice")]
    assert only_step(report)["rows"] == 1


# --- CTAS --------------------------------------------------------------------------------------------------


def test_ctas_fixture_is_refused_with_the_first_problem_it_has(go):
    """No producer quirk: substrait-go's ProjectRel outputs its input columns and then its expressions, as the
    spec says (see consumer/loading/producers.py). Read by the spec, its filter calls contains:str_str on `employee_id`
    (an i32: the read's projection puts `role` first, substrait-go types reads without it), and its project
    hands 10 columns to a 5-column table_schema. The first is refused (Spark would cast the integer silently)."""
    filter_call = f"{WRITE}.input.project.input.filter.condition.scalar_function"
    for _ in range(2):  # the same run key again: still refused, still nothing applied
        with pytest.raises(PlanInvalidError, match=r"contains:str_str: a string function given \['int'\]") as info:
            run(go, "ctas_with_filter.json", run_key="dag/run-1/ctas")
        assert info.value.exit_code == 2 and info.value.path == filter_call
        report = info.value.report
        assert report.status == "failed" and report.error.path == filter_call
        step = only_step(report)
        assert (step["kind"], step["target"], step["status"], step["rows"]) == (
            "ctas",
            f"{CATALOG}.{NS}.filtered_employees",
            "failed",
            None,
        )
        assert step["snapshot_after"] is None
        assert not any("substrait-go" in n or "expressions only" in n for n in report.notes)
        assert not go.catalog.table_exists(f"{NS}.filtered_employees")
    assert content(go, "employees") == sorted_rows(EMPLOYEE_ROWS)


def test_ctas_fixture_with_the_filter_on_role_is_refused_for_its_width(go):
    """With the filter on `role` (field 0, as substrait-go's open fix writes it) the project's 10 columns still
    do not fit the 5-column table_schema."""
    doc = fixture_plan("ctas_with_filter.json")
    condition = doc["relations"][0]["root"]["input"]["write"]["input"]["project"]["input"]["filter"]["condition"]
    condition["scalarFunction"]["arguments"][0]["value"]["selection"]["directReference"]["structField"]["field"] = 0
    with pytest.raises(PlanInvalidError, match="the input has 10 columns, table_schema 5") as info:
        run(go, doc, run_key="dag/run-1/ctas-role")
    assert info.value.path == f"{WRITE}.input"
    assert not go.catalog.table_exists(f"{NS}.filtered_employees")


def spec_definite_ctas() -> dict:
    """ctas_with_filter.json as a producer following the spec writes it: the project emits only its expressions
    (fields 5-9), and the filter tests `role`, field 0 of the read's projection [4, 0, 1, 2, 3] (as the
    fixture's version at 1a7a92cc, and substrait-go's open fix for read projections, PR #325, write it)."""
    plan = fixture_plan("ctas_with_filter.json")
    project = plan["relations"][0]["root"]["input"]["write"]["input"]["project"]
    project["common"] = {"emit": {"outputMapping": [5, 6, 7, 8, 9]}}
    arg = project["input"]["filter"]["condition"]["scalarFunction"]["arguments"][0]
    arg["value"]["selection"]["directReference"]["structField"]["field"] = 0
    return plan


def test_ctas_made_spec_definite_creates_exactly_the_engineers(go):
    report = run(go, spec_definite_ctas(), run_key="dag/run-1/ctas")
    created = table(go, "filtered_employees")
    assert [f.name for f in created.schema().fields] == CTAS_COLUMNS
    assert not any(f.required for f in created.schema().fields)  # the table_schema's columns are nullable
    assert content(go, "filtered_employees") == spark_rows(go, "filtered_employees") == sorted_rows(ENGINEERS)
    step = only_step(report)
    assert (step["kind"], step["target"], step["rows"], step["status"]) == (
        "ctas",
        f"{CATALOG}.{NS}.filtered_employees",
        len(ENGINEERS),
        "committed",
    )
    assert step["snapshot_before"] is None and step["snapshot_after"] == created.current_snapshot().snapshot_id

    snaps = history(go, "filtered_employees")
    again = run(go, spec_definite_ctas(), run_key="dag/run-1/ctas")
    step = only_step(again)
    assert step["status"] == "skipped" and "already committed" in step["reason"]
    assert history(go, "filtered_employees") == snaps
    assert content(go, "filtered_employees") == sorted_rows(ENGINEERS)
