"""Dynamic parameters: bound by the caller (API, CLI `--param`) or by the plan's `parameter_bindings`.

A caller's value is typed as the plan declares the parameter; a value that is not of that type, a missing
value and a value for a parameter the plan does not have are each a clear exit-2 error, never a coercion.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json

import pytest
from google.protobuf import json_format
from plan_builder import (
    PlanBuilder,
    bind,
    boolean,
    date,
    decimal_,
    field,
    filter_,
    fp64,
    i8,
    i32,
    i64,
    named,
    param,
    precision_timestamp_tz,
    project,
    string,
    timestamp,
    tuples,
    view,
)
from substrait_spark.cli import main
from substrait_spark.consumer import to_dataframe
from substrait_spark.consumer.errors import PlanInvalidError, UnboundParameterError, UnsupportedFeatureError
from substrait_spark.consumer.records import plain
from substrait_spark.consumer.running.resolver import SessionCatalogResolver

pytestmark = [pytest.mark.spark]

ROWS = [(1, dt.date(2024, 1, 30)), (2, dt.date(2024, 1, 31)), (3, dt.date(2024, 2, 1)), (4, None)]


@pytest.fixture(scope="module", autouse=True)
def tables(spark):
    view(spark, "par_t", "k int, d date", ROWS)
    yield
    spark.catalog.dropTempView("par_t")


def daily_plan():
    """SELECT k FROM par_t WHERE d = $0 (a date): the shape of a daily report's filter."""
    b = PlanBuilder()
    rel = filter_(named("par_t", ["k", "d"], [i32(), date()]), b.call("equal", field(1), param(0, date())))
    return b.plan(project(rel, field(0), emit=[2]), ["k"])


def run(plan, spark, params=None):
    return tuples(to_dataframe(plan, spark, SessionCatalogResolver(), parameters=params).collect())


@pytest.mark.parametrize("name", [0, "0", "$0"])
def test_caller_binds_a_date_parameter_by_anchor(spark, name):
    assert run(daily_plan(), spark, {name: "2024-01-31"}) == [(2,)]


def test_python_date_value(spark):
    assert run(daily_plan(), spark, {0: dt.date(2024, 2, 1)}) == [(3,)]


def test_plan_binding_is_the_default_and_the_caller_overrides_it(spark):
    plan = bind(daily_plan(), 0, dt.date(2024, 1, 30))
    assert run(plan, spark) == [(1,)]
    assert run(plan, spark, {"$0": "2024-02-01"}) == [(3,)]


def test_null_value_is_sql_null(spark):
    assert run(daily_plan(), spark, {0: None}) == []


def test_missing_value_names_the_parameter_and_its_path(spark):
    with pytest.raises(PlanInvalidError, match=r"\$0 has no value") as exc:
        run(daily_plan(), spark)
    assert exc.value.exit_code == 2
    assert "dynamic_parameter" in exc.value.path


def test_an_unbound_parameter_says_how_the_caller_binds_it(spark, tmp_path, capsys):
    """Issue 28 item 12: each front end's own way to give the value — the CLI's `--param`, the Python API's
    `parameters=` (the operator's and Dagster's: test_airflow_e2e.py, test_dagster.py) — in its error and in the
    failed run's report, before Spark."""
    from substrait_spark.api import run_plan

    plan_file = tmp_path / "daily.json"
    plan_file.write_text(json.dumps(json_format.MessageToDict(daily_plan())))
    out_dir = tmp_path / "out"
    assert main(["run", str(plan_file), "--output-dir", str(out_dir)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"substrait-spark: {plan_file}: invalid plan: dynamic parameter $0 has no value: bind it with --param 0=VALUE "
    )
    [entry] = json.loads((out_dir / "summary.json").read_text())["plans"]
    assert "bind it with --param 0=VALUE" in entry["error"]["message"] and "CLI" not in entry["error"]["message"]

    with pytest.raises(UnboundParameterError) as exc:
        run_plan(daily_plan().SerializeToString(), None)
    assert exc.value.anchor == 0 and exc.value.exit_code == 2
    assert str(exc.value).startswith("dynamic parameter $0 has no value: bind it with parameters={0: VALUE}")
    assert exc.value.report.error.message == exc.value.message and exc.value.report.spark_application_id is None
    with pytest.raises(UnboundParameterError, match=r"bind it with parameters=\{0: VALUE\}"):
        run(daily_plan(), spark)  # to_dataframe takes parameters= too


def test_value_for_a_parameter_the_plan_lacks_is_refused(spark):
    with pytest.raises(PlanInvalidError, match=r"parameter \$3 is not used by the plan \(its parameters: \$0\)"):
        run(daily_plan(), spark, {0: "2024-01-31", 3: "x"})


@pytest.mark.parametrize("bad", ["2024-13-01", "yesterday", "2024-01-31T10:00:00"])
def test_value_not_of_the_declared_type_is_refused(spark, bad):
    with pytest.raises(PlanInvalidError, match="is not a valid date"):
        run(daily_plan(), spark, {0: bad})


def test_bad_parameter_name(spark):
    with pytest.raises(PlanInvalidError, match="expected a parameter anchor"):
        run(daily_plan(), spark, {"day": "2024-01-31"})


def _typed(spark, type_, value):
    b = PlanBuilder()
    rel = project(named("par_t", ["k", "d"], [i32(), date()]), param(0, type_), emit=[2])
    rows = tuples(
        to_dataframe(b.plan(rel, ["v"]), spark, SessionCatalogResolver(), parameters={0: value}).limit(1).collect()
    )
    return rows[0][0]


@pytest.mark.parametrize(
    ("type_", "value", "expected"),
    [
        (boolean(), "true", True),
        (boolean(), False, False),
        (i8(), "-128", -128),
        (i64(), "9007199254740993", 9007199254740993),
        (fp64(), "2.5", 2.5),
        (string(), "O'Brien; DROP TABLE x", "O'Brien; DROP TABLE x"),
        (decimal_(15, 2), "1234.50", decimal.Decimal("1234.50")),
        (timestamp(), "2024-01-31 06:30:00", dt.datetime(2024, 1, 31, 6, 30)),
    ],
)
def test_values_become_literals_of_the_declared_type(spark, type_, value, expected):
    got = _typed(spark, type_, value)
    assert got == expected and type(got) is type(expected)


def test_timestamp_with_zone_from_an_airflow_logical_date(spark):
    # Airflow renders {{ logical_date }} as '2024-01-31 00:00:00+00:00'; the session time zone is UTC.
    got = _typed(spark, precision_timestamp_tz(6), "2024-01-31 00:00:00+00:00")
    assert got == dt.datetime(2024, 1, 31, 0, 0)


@pytest.mark.parametrize(
    ("type_", "value", "why"),
    [
        (i8(), "128", "out of range"),
        (i32(), 1.5, "expected an integer"),
        (decimal_(5, 2), "1.234", "more than 2 digits"),
        (decimal_(5, 2), "12345", "does not fit"),
        (boolean(), "yes", "true or false"),
        (timestamp(), "2024-01-31T00:00:00+01:00", "without time zone"),
    ],
)
def test_values_that_do_not_fit_are_refused(spark, type_, value, why):
    with pytest.raises(PlanInvalidError, match=why):
        _typed(spark, type_, value)


def test_list_parameter_is_unsupported(spark):
    from plan_builder import list_

    with pytest.raises(UnsupportedFeatureError, match="only scalar types"):
        _typed(spark, list_(i32()), "[1]")


def test_cli_param(spark, tmp_path, capsys):
    plan_file = tmp_path / "daily.json"
    plan_file.write_text(json.dumps(json_format.MessageToDict(daily_plan())))
    assert main(["run", str(plan_file), "--param", "0=2024-02-01"]) == 0
    out = capsys.readouterr().out
    assert "(root 0, 1 row)" in out and "\n 3\n" in out
    assert main(["run", str(plan_file), "--param", "0=someday"]) == 2
    assert "is not a valid date" in capsys.readouterr().err
    assert main(["run", str(plan_file)]) == 2


# --- what ran is recorded: the bound values in the run report (the audit record: tests/test_audit.py) ---------


def two_parameter_plan():
    """SELECT k FROM par_t WHERE d = $0 AND k < $1: $0 a date, $1 a decimal(10,2) with a plan binding of 9.50."""
    b = PlanBuilder()
    cond = b.and_(
        b.call("equal", field(1), param(0, date())),
        b.call("lt", field(0), param(1, decimal_(10, 2)), out=boolean()),
    )
    plan = b.plan(project(filter_(named("par_t", ["k", "d"], [i32(), date()]), cond), field(0), emit=[2]), ["k"])
    return bind(plan, 1, decimal.Decimal("9.50"), decimal_(10, 2))


def test_run_plan_reports_each_bound_value_with_its_type_and_source(spark):
    from substrait_spark.api import run_plan

    report = run_plan(two_parameter_plan().SerializeToString(), spark, params={"$0": "2024-01-31"}, output="preview")
    assert report.outputs[0].preview == [[2]]
    assert plain(report.parameters) == [
        {"anchor": 0, "type": "date?", "value": "2024-01-31", "source": "caller"},
        {"anchor": 1, "type": "decimal<10,2>?", "value": "9.50", "source": "plan"},
    ]
    report = run_plan(two_parameter_plan().SerializeToString(), spark, params={0: dt.date(2024, 2, 1), 1: "2.25"})
    assert report.outputs[0].rows == 0  # k = 3 is not < 2.25
    assert plain(report.parameters) == [
        {"anchor": 0, "type": "date?", "value": "2024-02-01", "source": "caller"},
        {"anchor": 1, "type": "decimal<10,2>?", "value": "2.25", "source": "caller"},  # typed as the plan says
    ]


def test_run_plan_takes_parameters_as_to_dataframe_does_and_params_still_works_with_a_warning(spark):
    from substrait_spark.api import run_plan

    plan = two_parameter_plan().SerializeToString()
    report = run_plan(plan, spark, parameters={"$0": "2024-01-31"}, output="preview")
    with pytest.warns(DeprecationWarning, match="use parameters="):
        old = run_plan(plan, spark, params={"$0": "2024-01-31"}, output="preview")
    assert report.outputs[0].preview == old.outputs[0].preview == [[2]]
    assert report.parameters == old.parameters and report.parameters[0].source == "caller"
    with pytest.raises(TypeError, match="not also params="):
        run_plan(plan, spark, parameters={0: "2024-01-31"}, params={0: "2024-01-31"})


def test_run_plan_refuses_a_bad_value_before_asking_for_spark(spark):
    """The value is typed before a session is asked for: the failed report belongs to no Spark application (a run
    records the session's application id first thing)."""
    from substrait_spark.api import run_plan

    with pytest.raises(PlanInvalidError, match="is not a valid date") as exc:
        run_plan(two_parameter_plan().SerializeToString(), None, params={0: "someday"})
    report = exc.value.report
    assert report.status == "failed" and report.error.exit_code == 2 and report.spark_application_id is None


def test_cli_param_values_in_the_summary(spark, tmp_path, capsys):
    plan_file = tmp_path / "two.json"
    plan_file.write_text(json.dumps(json_format.MessageToDict(two_parameter_plan())))
    out = tmp_path / "out"
    assert main(["run", str(plan_file), "--param", "0=2024-01-30", "--output-dir", str(out)]) == 0, capsys.readouterr()
    (entry,) = json.loads((out / "summary.json").read_text())["plans"]
    assert entry["outputs"][0]["rows"] == 1
    assert entry["parameters"] == [
        {"anchor": 0, "type": "date?", "value": "2024-01-30", "source": "caller"},
        {"anchor": 1, "type": "decimal<10,2>?", "value": "9.50", "source": "plan"},
    ]
