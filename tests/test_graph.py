"""The plan picture (`substrait_spark.graph`): SVG that parses, every label escaped, one node per relation, the
run report's tables and steps shown; `substrait-spark explain --format svg|html`."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from substrait_spark.cli import main
from substrait_spark.consumer.errors import RunReportError
from substrait_spark.consumer.loading.loader import load_plan
from substrait_spark.graph import build_graph, esc, plan_html, plan_svg

pytestmark = [pytest.mark.unit, pytest.mark.corpus]

SVG = "{http://www.w3.org/2000/svg}"
ROOT = Path(__file__).resolve().parent.parent
BIG_ORDERS = ROOT / "dags_examples" / "plans" / "big_orders_pipeline.json"


def _nodes(svg: str) -> list[ET.Element]:
    tree = ET.fromstring(svg)
    return [g for g in tree.iter(f"{SVG}g") if "node" in (g.get("class") or "").split()]


def _kinds(svg: str) -> list[str]:
    return [g.get("data-kind") for g in _nodes(svg)]


def _texts(el: ET.Element) -> list[str]:
    return [t.text or "" for t in el.iter(f"{SVG}text")]


@pytest.mark.corpus
def test_tpch_q01_one_node_per_relation_and_its_lineage(corpus):
    plan = load_plan(corpus / "ibm-substrait-compliance-tpch" / "q01.json")
    svg = plan_svg(plan)
    kinds = _kinds(svg)
    # q01: root <- sort <- aggregate <- project <- filter <- read, and the one table read.
    assert {"sort", "aggregate", "project", "filter", "read"} <= set(kinds)
    assert kinds.count("root") == 1 and kinds.count("table") == 1
    assert len(kinds) == 7  # root, sort, aggregate, project, filter, read, table
    graph = build_graph(plan)
    assert len(graph.edges) == len(graph.nodes) - 1  # a tree: every node but the root feeds one user
    lineage = {(o, c.lower()): [x.lower() for x in srcs] for o, c, srcs in graph.lineage}  # IBM's names are upper
    assert any("lineitem.l_quantity (direct/aggregation)" in s for s in lineage[("root 0", "sum_qty")])
    all_rows = " ".join(lineage[("root 0", "(all rows)")])
    assert "l_shipdate (indirect/filter)" in all_rows and "l_returnflag (indirect/group_by, indirect/sort)" in all_rows


@pytest.mark.corpus
def test_tpch_correlated_subquery_bodies_are_drawn(corpus):
    plan = load_plan(corpus / "ibm-substrait-compliance-tpch" / "q04.json")
    graph = build_graph(plan)
    assert any("subquery" in e.label for e in graph.edges)
    assert {n.title.lower() for n in graph.nodes if n.cls == "table"} == {"table orders", "table lineitem"}
    ET.fromstring(render := plan_svg(plan))
    assert "EXISTS subquery" in render


def test_report_tables_and_steps_are_shown():
    report = {
        "plan_uri": "s3://plans/tpch/big_orders_pipeline.json",
        "plan_sha256": "ab" * 32,
        "status": "success",
        "tables_read": [{"name": "orders", "identity": "lake.tpch.orders", "format": "iceberg", "snapshot_id": 42}],
        "steps": [
            {"index": i, "kind": k, "target": "lake.demo.big_orders", "status": "committed", "rows": r, "path": ""}
            for i, (k, r) in enumerate([("ctas", 7), ("insert", 3), ("delete", 2)])
        ],
    }
    svg = plan_svg(load_plan(BIG_ORDERS), report)
    nodes = _nodes(svg)
    steps = [_texts(g) for g in nodes if g.get("data-kind") == "step"]
    assert [s[0] for s in steps] == ["step 0: ctas", "step 1: insert", "step 2: delete"]
    assert all("target: lake.demo.big_orders" in s and "status: committed" in s for s in steps)
    assert [s for s in steps[0] if s.startswith("rows")] == ["rows: 7"]
    orders = next(_texts(g) for g in nodes if g.get("data-kind") == "table" and "table orders" in _texts(g))
    assert "identity: lake.tpch.orders" in orders and "snapshot: 42" in orders
    assert sum(1 for k in _kinds(svg) if k == "write") == 3


def test_every_label_from_the_plan_is_escaped():
    from substrait import algebra_pb2 as alg
    from substrait import plan_pb2

    evil = "</text><script>alert(\"x\")</script>&<a b='c'>"
    plan = plan_pb2.Plan()
    root = plan.relations.add().root
    root.names.append(evil)
    read = root.input.read
    read.named_table.names.append(evil)
    read.base_schema.names.append(evil)
    read.base_schema.struct.types.add().i32.nullability = 1
    # Every free-text field of the report (status, kinds and numbers are typed: a report with other values is
    # refused, below).
    report = {"plan_sha256": evil, "plan_uri": evil, "status": "failed", "error": {"kind": evil, "message": evil}}
    report["tables_read"] = [{"name": evil, "identity": evil, "format": evil, "snapshot_id": 1}]
    report["steps"] = [{"index": 0, "kind": "ctas", "target": evil, "status": "failed", "reason": evil, "path": evil}]
    for typed in ("status", "kind"):
        odd = {**report, "steps": [{**report["steps"][0], typed: evil}]} if typed == "kind" else {**report, typed: evil}
        with pytest.raises(RunReportError, match="not a valid"):
            plan_svg(plan, odd)
    svg = plan_svg(plan, report)
    tree = ET.fromstring(svg)  # parses: nothing broke out of its element or attribute
    assert not list(tree.iter(f"{SVG}script")) and not list(tree.iter("script"))
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    page = plan_html(plan, report, title=evil)
    assert "<script>" not in page
    assert esc("a\"b'<&>") == "a&quot;b&#x27;&lt;&amp;&gt;"
    assert isinstance(alg.Rel(), alg.Rel)


def test_cli_explain_writes_svg_and_html(tmp_path, capsys):
    out = tmp_path / "big.svg"
    assert main(["explain", str(BIG_ORDERS), "--format", "svg", "--output", str(out)]) == 0
    kinds = _kinds(out.read_text())
    assert kinds.count("write") == 3 and kinds.count("root") == 3 and kinds.count("table") == 2
    report = tmp_path / "report.json"
    report.write_text(
        json.dumps(
            {
                "plan_sha256": load_plan(BIG_ORDERS).sha256,  # explain refuses another plan's report
                "steps": [{"index": 0, "kind": "ctas", "target": "t", "status": "failed", "reason": "boom"}],
            }
        )
    )
    assert main(["explain", str(BIG_ORDERS), "--format", "html", "--report", str(report)]) == 0
    page = capsys.readouterr().out
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "step 0: ctas" in page and "reason: boom" in page
    assert main(["explain", str(BIG_ORDERS), "--format", "svg", "--report", str(tmp_path / "missing.json")]) == 2
