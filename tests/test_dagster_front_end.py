"""The Dagster front end's shape (issue 29): a translator as the one override point of how a plan's tables look as
assets (keys and groups of the assets, their deps, their checks and their materializations), one read and one
parse of each plan per definitions load (the example definitions and the `dg` component), and a materialization's
metadata from the plan the run read (not the definitions' copy).
"""

from __future__ import annotations

import hashlib
import runpy
from collections import Counter
from pathlib import Path

import pytest

dagster = pytest.importorskip("dagster", reason="the dagster extra is not installed (make venv installs it)")

from dagster import AssetCheckKey, AssetKey, AssetSelection, AssetSpec, Definitions, materialize  # noqa: E402
from google.protobuf import json_format  # noqa: E402
from plan_builder import PlanBuilder, WriteRel, decimal_, field, i64, named, project, write  # noqa: E402
from substrait_spark.dagster import (  # noqa: E402
    IcebergCatalogsResource,
    PlanAssets,
    SparkSubmitPipes,
    SubstraitSparkResource,
    SubstraitTable,
    SubstraitTranslator,
    substrait_asset_checks,
    substrait_asset_specs,
    substrait_assets,
)
from substrait_spark.dagster import metadata as md  # noqa: E402

pytestmark = [pytest.mark.spark, pytest.mark.iceberg, pytest.mark.dagster]

ROOT = Path(__file__).resolve().parent.parent
DEFINITIONS = ROOT / "dags_examples" / "dagster" / "definitions.py"
PROJECT = ROOT / "dags_examples" / "dagster" / "substrait_project"
ORDERS = ["o_orderkey", "o_custkey", "o_totalprice"]
ORDER_TYPES = [i64(), i64(), decimal_(15, 2)]


def lineage_deps(materialization) -> list[tuple[AssetKey, str]]:
    lineage = materialization.metadata[md.COLUMN_LINEAGE].value
    return [(d.asset_key, d.column_name) for deps in lineage.deps_by_column.values() for d in deps]


def plan_file(path: Path, rel, names: list[str]) -> str:
    path.write_text(json_format.MessageToJson(PlanBuilder().plan(rel, names)))
    return str(path)


class Warehouse(SubstraitTranslator):
    """Every table under `warehouse/<table>`; the tables a plan writes in the group `warehouse`."""

    def get_asset_spec(self, table: SubstraitTable) -> AssetSpec:
        spec = super().get_asset_spec(table)
        key = AssetKey(["warehouse", table.identity[-1]])
        return spec.replace_attributes(key=key, group_name="warehouse" if table.written else None)


def test_a_translator_keys_and_groups_the_assets_their_checks_and_their_materializations(lake, tpch_dir, tmp_path):
    ns = "dagster_translated"
    lake.catalog.create_namespace_if_not_exists(ns)
    copy = write(
        [ns, "orders_copy"],
        project(named("orders", ORDERS, ORDER_TYPES), field(0), field(2), emit=[3, 4]),
        ["o_orderkey", "o_totalprice"],
        [i64(), decimal_(15, 2)],
        op=WriteRel.WRITE_OP_CTAS,
        create_mode=WriteRel.CREATE_MODE_REPLACE_IF_EXISTS,
    )
    uri = plan_file(tmp_path / "copy.json", copy, ["o_orderkey", "o_totalprice"])
    config = lake.write_config(tmp_path / "catalogs.yaml")
    resource = SubstraitSparkResource(
        catalogs=IcebergCatalogsResource(config_path=str(config)), tables_dir=str(tpch_dir)
    )
    plan = PlanAssets.load(uri, resource)
    written, orders = AssetKey(["warehouse", "orders_copy"]), AssetKey(["warehouse", "orders"])

    # The default: keyed by catalog identifier, depending on the table map's `orders`.
    [default] = substrait_asset_specs(plan, resource)
    assert default.key == AssetKey(["lake", ns, "orders_copy"]) and {d.asset_key for d in default.deps} == {
        AssetKey(["orders"])
    }
    # The translator's keys and group; an explicit group_name still wins.
    [spec] = substrait_asset_specs(plan, resource, translator=Warehouse())
    assert (spec.key, spec.group_name, {d.asset_key for d in spec.deps}) == (written, "warehouse", {orders})
    [grouped] = substrait_asset_specs(plan, resource, translator=Warehouse(), group_name="mine")
    assert grouped.group_name == "mine"

    assets = substrait_assets(plan, resource=resource, translator=Warehouse())
    checks = substrait_asset_checks(plan, resource=resource, translator=Warehouse())
    defs = Definitions(assets=[assets], asset_checks=checks, resources={"substrait": resource})
    graph = defs.resolve_asset_graph()
    assert set(graph.get_all_asset_keys()) >= {written, orders}
    assert set(graph.asset_check_keys) == {
        AssetCheckKey(written, "plan_valid"),
        AssetCheckKey(orders, "copy_schema_matches"),
    }

    # The run reports under the translator's keys: the materialization and its column lineage.
    result = materialize(
        [assets, *checks],
        resources={"substrait": resource},
        selection=AssetSelection.all() | AssetSelection.all_asset_checks(),
    )
    assert result.success
    [m] = result.asset_materializations_for_node(assets.op.name)
    assert m.asset_key == written
    assert lineage_deps(m) == [(orders, "o_orderkey"), (orders, "o_totalprice")]
    ran = {AssetCheckKey(e.asset_key, e.check_name): e.passed for e in result.get_asset_check_evaluations()}
    assert ran == {AssetCheckKey(written, "plan_valid"): True, AssetCheckKey(orders, "copy_schema_matches"): True}

    # A remote driver reports the default keys: a translator changing them is refused when the definitions load.
    with pytest.raises(ValueError, match=r"remote run reports table lake\.dagster_translated\.orders_copy"):
        substrait_assets(plan, resource=resource, translator=Warehouse(), remote=SparkSubmitPipes())


@pytest.fixture
def counted(monkeypatch):
    """How often each plan is read from the plan store and parsed (our functions, wrapped)."""
    from substrait_spark.consumer.loading import loader
    from substrait_spark.hooks.plan_store import PlanStore

    reads: Counter[str] = Counter()
    parses: Counter[str] = Counter()
    read, parse = PlanStore.read, loader.parse_plan_bytes

    def counting_read(self, uri, *args, **kwargs):
        reads[str(uri)] += 1
        return read(self, uri, *args, **kwargs)

    def counting_parse(data, uri=None, *args, **kwargs):
        parses[str(uri)] += 1
        return parse(data, uri, *args, **kwargs)

    monkeypatch.setattr(PlanStore, "read", counting_read)
    monkeypatch.setattr(loader, "parse_plan_bytes", counting_parse)
    return reads, parses


def test_each_plan_is_read_and_parsed_once_per_definitions_load(counted, tmp_path, tpch_dir, monkeypatch):
    """The example definitions and the `dg` component build a plan's assets and its schema checks from one read."""
    from dagster.components.testing import get_component_defs_within_project

    reads, parses = counted
    monkeypatch.setenv("SUBSTRAIT_DAGSTER_LAKE", str(tmp_path / "lake"))
    monkeypatch.setenv("SUBSTRAIT_TABLES_DIR", str(tpch_dir))
    monkeypatch.setenv("SUBSTRAIT_REPORTS_DIR", str(tmp_path / "reports"))
    defs = runpy.run_path(str(DEFINITIONS))["defs"]
    assert defs.resolve_asset_graph().asset_check_keys  # the checks are there, from the same read
    plans = ROOT / "dags_examples" / "plans"
    once = {str(plans / "daily_pricing_summary.json"): 1, str(plans / "big_orders_pipeline.json"): 1}
    assert (dict(reads), dict(parses)) == (once, once)

    reads.clear()
    parses.clear()
    monkeypatch.setenv("SUBSTRAIT_CATALOG_CONFIG", str(tmp_path / "lake" / "catalogs.yaml"))  # the example's lake
    monkeypatch.syspath_prepend(str(PROJECT / "src"))
    for component in ("daily_report", "table_pipeline"):
        _, defs = get_component_defs_within_project(project_root=PROJECT, component_path=component)
        assert defs.resolve_asset_graph().asset_check_keys
    resolved = {str(Path(u).resolve()): n for u, n in reads.items()}
    assert (resolved, {str(Path(u).resolve()): n for u, n in parses.items()}) == (once, once)


def test_a_materializations_lineage_is_the_plan_the_run_read(spark, tpch_dir, tmp_path):
    """The plan object changes between the definitions load and the run (no pin): the materialization's lineage
    and sha256 are those of the plan the run read and ran."""
    path = tmp_path / "keys.json"
    source = named("orders", ORDERS, ORDER_TYPES)
    plan_file(path, project(source, field(0), emit=[3]), ["k"])  # k is o_orderkey
    resource = SubstraitSparkResource(tables_dir=str(tpch_dir))
    assets = substrait_assets(str(path), resource=resource, root_asset=["keys"])

    plan_file(path, project(source, field(1), emit=[3]), ["k"])  # now k is o_custkey
    result = materialize([assets], resources={"substrait": resource})
    assert result.success
    [m] = result.asset_materializations_for_node(assets.op.name)
    assert lineage_deps(m) == [(AssetKey(["orders"]), "o_custkey")]
    assert m.metadata[md.PLAN_SHA256].value == hashlib.sha256(path.read_bytes()).hexdigest()


WAREHOUSE_COMPONENT = """
from dagster import AssetKey
from substrait_spark.dagster import SubstraitPlansComponent, SubstraitTranslator


class Warehouse(SubstraitTranslator):
    def get_asset_spec(self, table):
        return super().get_asset_spec(table).replace_attributes(key=AssetKey(["warehouse", table.identity[-1]]))


class WarehouseComponent(SubstraitPlansComponent):
    def translator(self):
        return Warehouse()
"""


def test_a_component_subclass_gives_the_translator_of_its_plans(tmp_path, tpch_dir, monkeypatch):
    """A `dg` component subclass overriding `translator()` (as dagster-dbt's): its plans' deps and schema checks
    are keyed by it."""
    import shutil

    from dagster.components.testing import get_component_defs_within_project

    project = tmp_path / "warehouse_project"
    shutil.copytree(PROJECT, project)
    (project / "src" / "substrait_project").rename(project / "src" / "warehouse_project")
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("substrait_project", "warehouse_project"))
    (project / "src" / "warehouse_component.py").write_text(WAREHOUSE_COMPONENT)
    defs_yaml = project / "src" / "warehouse_project" / "defs" / "daily_report" / "defs.yaml"
    text = defs_yaml.read_text().replace(
        "substrait_spark.dagster.SubstraitPlansComponent", "warehouse_component.WarehouseComponent"
    )
    defs_yaml.write_text(text.replace("../../../../../../plans", str(ROOT / "dags_examples" / "plans")))
    monkeypatch.setenv("SUBSTRAIT_TABLES_DIR", str(tpch_dir))
    monkeypatch.setenv("SUBSTRAIT_REPORTS_DIR", str(tmp_path / "reports"))
    monkeypatch.syspath_prepend(str(project / "src"))

    component, defs = get_component_defs_within_project(project_root=project, component_path="daily_report")
    assert type(component).__name__ == "WarehouseComponent"
    graph = defs.resolve_asset_graph()
    lineitem, report = AssetKey(["warehouse", "lineitem"]), AssetKey(["reports", "pricing_summary"])
    assert graph.get(report).parent_keys == {lineitem}
    assert set(graph.asset_check_keys) == {
        AssetCheckKey(report, "plan_valid"),
        AssetCheckKey(lineitem, "pricing_summary_schema_matches"),
    }
