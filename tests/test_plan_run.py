"""The composition root (`hooks/plan_run.py`): what every front end's run is built from. Plans are checked before a
session is asked for (the session factory proves it), the sha256 pin is checked on the bytes read, table maps
stack in one documented order, the catalogs' Spark settings reach the session factory, and one set of defaults
holds. The front ends' own runs through it: tests/test_cli.py, test_parameters.py (run_plan), test_airflow_e2e.py."""

from __future__ import annotations

import hashlib

import pytest
from substrait_spark.consumer.errors import UnsupportedFeatureError
from substrait_spark.hooks.plan_run import PlanRunner, RunSettings
from substrait_spark.hooks.plan_store import PlanChangedError
from test_cli import IBM, unsupported_window_plan

# Each test carries its tier: `unit` (pure Python) or `spark`, `iceberg`.
pytestmark = [pytest.mark.corpus]


def no_session(catalog_conf):
    raise AssertionError("a Spark session was asked for")


@pytest.mark.unit
def test_defaults_are_one_set():
    runner = PlanRunner()
    assert runner.settings == RunSettings()
    assert (runner.catalogs, runner.targets, runner.audit) == (None, None, None)
    s = RunSettings()
    assert (s.tables, s.tables_dir, s.tables_file, s.master, s.expected_sha256, s.audit_log) == ({}, *[None] * 5)
    assert (s.audit_strict, s.cast_to_plan_types, s.update_keys) == (False, False, {})


@pytest.mark.unit
def test_a_plan_is_read_pinned_and_checked_before_any_session(corpus, tmp_path):
    plan = corpus / IBM / "q06.json"
    digest = hashlib.sha256(plan.read_bytes()).hexdigest()
    pinned = PlanRunner(RunSettings(expected_sha256=digest), session=no_session)
    checked = pinned.check(str(plan))
    assert (checked.loaded.sha256, checked.source.sha256, checked.source.uri) == (digest, digest, str(plan))

    with pytest.raises(PlanChangedError, match="changed: expected sha256 000000000000"):
        PlanRunner(RunSettings(expected_sha256="0" * 64), session=no_session).check(str(plan))

    bad = unsupported_window_plan(corpus, tmp_path)
    with pytest.raises(UnsupportedFeatureError) as info:
        PlanRunner(session=no_session).check(str(bad))
    assert info.value.report.status == "failed" and info.value.report.plan_uri == str(bad)


@pytest.mark.unit
def test_table_maps_stack_in_one_order_and_a_later_one_wins_a_name(tmp_path):
    (tmp_path / "orders.parquet").mkdir()
    (tmp_path / "lineitem.parquet").mkdir()
    table_file = tmp_path / "tables.json"
    table_file.write_text('{"part": "/data/part_from_file.csv"}')
    settings = RunSettings(
        tables_dir=str(tmp_path),
        tables={"lineitem": "/data/lineitem_from_arg.orc", "part": "/data/part_from_arg.json"},
        tables_file=str(table_file),
    )
    runner = PlanRunner(settings, base_tables=lambda: {"orders": "/data/orders_conn", "lineitem": "/data/li_conn"})
    static, session_catalog = runner.resolver.resolvers
    got = {name: (b.uri, b.format) for name, b in static.tables.items()}
    assert got == {
        "orders": ("/data/orders_conn", "parquet"),  # the connection's map over the directory
        "lineitem": ("/data/lineitem_from_arg.orc", "orc"),  # the caller's map over the connection's
        "part": ("/data/part_from_file.csv", "csv"),  # the file over the caller's map
    }
    assert type(session_catalog).__name__ == "SessionCatalogResolver"


@pytest.mark.spark
@pytest.mark.iceberg
def test_the_catalogs_spark_settings_reach_the_session_factory(lake):
    asked = []

    def factory(catalog_conf):
        asked.append(catalog_conf(()))
        return lake.spark

    runner = PlanRunner(catalogs=lake.catalogs(), session=factory)
    assert runner.spark is lake.spark and runner.spark is lake.spark  # asked once (and checked: it has the catalog)
    [conf] = asked
    assert conf["spark.sql.extensions"].endswith("IcebergSparkSessionExtensions")
    assert conf[f"spark.sql.catalog.{lake.name}"] == "org.apache.iceberg.spark.SparkCatalog"
    assert type(runner.targets).__name__ == "IcebergWriteTargets"
    assert runner.audit.location == f"{lake.name}.substrait_spark.audit_log"  # the default, with catalogs
