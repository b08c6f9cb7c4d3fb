"""A plan as a picture: relations, tables read, write/DDL steps and column lineage, as SVG (and an HTML page).

`substrait-spark explain PLAN --format svg|html` and the Airflow plugin page (`substrait_spark.graph_app`) draw
the same picture. Pure Python: the layout is layered by distance from the root (the root on top, its inputs
below, the tables read at the bottom of their branch), edges run from an input up to the relation using it.

Everything shown comes from the plan or the run report, both untrusted: every label is XML-escaped here
(`xml.sax.saxutils.escape` with quotes), nothing from them reaches markup unescaped.

    graph = build_graph(loaded_plan, report=report)   # report: a RunReport (or its dict), optional
    svg = render_svg(graph)
    page = render_html(graph, title="q01")
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape as _xml_escape

from substrait import algebra_pb2 as alg
from substrait_spark.consumer.analysis.explain import PlanTree
from substrait_spark.consumer.loading.extensions import Extensions
from substrait_spark.consumer.loading.producers import Quirks
from substrait_spark.consumer.running.report import RunReport, Step, StepStatus, TableRead

NODE_W = 340
LINE_H = 15
NODE_PAD = 8
H_GAP = 36
V_GAP = 46
MARGIN = 20
MAX_LINE_CHARS = 44
MAX_DETAIL_LINES = 4
MAX_LINEAGE_ROWS = 200


# Fill and stroke per node class.
_COLORS = {
    "root": ("#e8eefc", "#3b5bdb"),
    "rel": ("#ffffff", "#495057"),
    "write": ("#fff4e6", "#e8590c"),
    "table": ("#e6fcf5", "#0ca678"),
    "step": ("#fff9db", "#f08c00"),
    "failed": ("#fff5f5", "#e03131"),
    "unchanged": ("#f8f9fa", "#adb5bd"),  # a step that changed nothing: CTAS of an existing table, DROP of nothing
}


def esc(value: Any) -> str:
    """XML-escape text for element content and (double- or single-quoted) attribute values."""
    return _xml_escape(str(value), {'"': "&quot;", "'": "&#x27;"})


def _clip(text: str, n: int = MAX_LINE_CHARS) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


@dataclass
class Node:
    id: str
    cls: str  # root | rel | write | table | step | unchanged | failed
    title: str
    lines: list[str] = field(default_factory=list)
    depth: int = 0
    path: str = ""
    x: float = 0.0
    y: float = 0.0

    @property
    def height(self) -> float:
        return NODE_PAD * 2 + LINE_H * (1 + len(self.lines))


@dataclass
class Edge:
    src: str  # the input
    dst: str  # the relation using it
    label: str = ""


@dataclass
class Graph:
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    lineage: list[tuple[str, str, list[str]]] = field(default_factory=list)  # (output, column, sources)
    header: list[str] = field(default_factory=list)  # plan identity, run status

    def node(self, node_id: str) -> Node:
        return next(n for n in self.nodes if n.id == node_id)


class _GraphBuilder(PlanTree):
    """Reuses `explain`'s per-relation details and schemas; collects nodes and edges instead of lines."""

    def __init__(self, plan: Any, tables_read: list[TableRead], steps: list[Step]):
        super().__init__(plan, Extensions(plan), Quirks.of(plan), tables_read)
        self.graph = Graph()
        self.steps = steps
        self._used_steps: set[int] = set()
        self._writes = 0
        self._table_nodes: dict[str, str] = {}

    def _add(self, node: Node) -> Node:
        node.id = f"n{len(self.graph.nodes)}"
        self.graph.nodes.append(node)
        return node

    def build(self) -> Graph:
        for i, prel in enumerate(self.plan.relations):
            kind = prel.WhichOneof("rel_type")
            if kind == "root":
                names = ", ".join(prel.root.names)
                lines = _wrap(f"names=[{names}]")
                root = self._add(Node("", "root", f"root relations[{i}]", lines, 0, f"relations[{i}]"))
                self.outline(prel.root.input, f"relations[{i}].root.input", 1, [], root.id)
            elif kind == "rel":
                shared = self._add(Node("", "root", f"shared relation relations[{i}]", [], 0, f"relations[{i}]"))
                self.outline(prel.rel, f"relations[{i}].rel", 1, [], shared.id)
        # Steps the report has but no write node matched (a report of another plan version): shown unattached.
        for s in self.steps:
            if s.index not in self._used_steps:
                self._add(_step_node(s, 0))
        return self.graph

    def shape(
        self, rel: alg.Rel, kind: str | None, body: Any, path: str, depth: int, outer: list[list[str]], parent: Any,
        label: str,
    ) -> str:  # fmt: skip
        """The relation's node (details, emit, schema; its table, its steps), linked to `parent`; its id."""
        if kind is None:
            n = self._add(Node("", "rel", "(relation with no type set)", [], depth, path))
            self.graph.edges.append(Edge(n.id, parent, label))
            return n.id
        p = f"{path}.{kind}"
        try:
            details = getattr(self, f"_details_{kind}", lambda b, p: "")(body, p)
        except Exception as exc:  # a picture never fails on a detail
            details = f"(details unavailable: {type(exc).__name__})"
        try:
            schema = _schema_text(self.schema(rel, path, outer))
        except Exception:
            schema = "?"
        emit = self._emit(body)
        lines = _wrap(" ".join(x for x in (details, emit) if x))[:MAX_DETAIL_LINES]
        lines.append(_clip(f"-> {schema}"))
        cls = "write" if kind in ("write", "ddl", "update") else "rel"
        n = self._add(Node("", cls, kind, lines, depth, p))
        self.graph.edges.append(Edge(n.id, parent, label))
        if kind == "reference":
            ordinal = body.subtree_ordinal
            shared = next((x for x in self.graph.nodes if x.path == f"relations[{ordinal}]"), None)
            if shared is not None:
                self.graph.edges.append(Edge(shared.id, n.id, "reference"))
        if kind == "read" and body.WhichOneof("read_type") == "named_table":
            self._table(".".join(body.named_table.names), depth + 1, n.id)
        if cls == "write":
            self._attach_steps(n, path, p, depth)
        return n.id

    def record_of(self, body: Any, kind: str, p: str, outer: list[list[str]]) -> list[str]:
        try:
            return self._record(body, kind, p, outer)
        except Exception:  # a picture never fails on a schema
            return []

    def _table(self, name: str, depth: int, read_id: str) -> None:
        key = name.lower()
        if key not in self._table_nodes:
            found = self.tables.get(key)
            lines = [_clip(f"name: {name}")]
            if found is not None and found.identity:
                lines += _wrap(f"identity: {found.identity}")[:2]
            if found is not None and found.snapshot_id is not None:
                lines.append(_clip(f"snapshot: {found.snapshot_id}"))
            if found is not None and found.format:
                lines.append(_clip(f"format: {found.format}"))
            self._table_nodes[key] = self._add(Node("", "table", f"table {name}", lines, depth)).id
        self.graph.edges.append(Edge(self._table_nodes[key], read_id, "reads"))

    def _attach_steps(self, n: Node, path: str, p: str, depth: int) -> None:
        matched = [s for s in self.steps if s.path in (path, p) and s.index not in self._used_steps]
        if not matched and self._writes < len(self.steps):  # fall back on plan order
            s = self.steps[self._writes]
            matched = [s] if s.index not in self._used_steps else []
        self._writes += 1
        for s in matched:
            self._used_steps.add(s.index)
            step = self._add(_step_node(s, depth))
            self.graph.edges.append(Edge(n.id, step.id, "step"))

    def _details_write(self, r: alg.WriteRel, path: str) -> str:
        target = ".".join(r.named_table.names) if r.HasField("named_table") else "(extension table)"
        ops = alg.WriteRel.WriteOp
        op = ops.Name(r.op).removeprefix("WRITE_OP_") if r.op in ops.values() else r.op
        parts = [f"{op} {target}"]
        if r.create_mode:
            parts.append(alg.WriteRel.CreateMode.Name(r.create_mode).removeprefix("CREATE_MODE_"))
        return " ".join(str(x) for x in parts)

    def _details_ddl(self, r: alg.DdlRel, path: str) -> str:
        target = ".".join(r.named_object.names) if r.HasField("named_object") else "(extension object)"
        op = alg.DdlRel.DdlOp.Name(r.op).removeprefix("DDL_OP_") if r.op in alg.DdlRel.DdlOp.values() else r.op
        obj = (
            alg.DdlRel.DdlObject.Name(r.object).removeprefix("DDL_OBJECT_")
            if r.object in alg.DdlRel.DdlObject.values()
            else r.object
        )
        return f"{op} {obj} {target}"

    def _details_update(self, r: alg.UpdateRel, path: str) -> str:
        target = ".".join(r.named_table.names)
        cond = f" where {self.expr(r.condition)}" if r.HasField("condition") else ""
        return f"UPDATE {target} set {len(r.transformations)} column(s){cond}"


def _step_node(s: Step, depth: int) -> Node:
    status, cls = _step_status(s)
    lines = [_clip(f"target: {s.target}"), _clip(f"status: {status}")]
    if s.rows is not None:
        lines.append(f"rows: {s.rows}")
    if s.snapshot_before is not None or s.snapshot_after is not None:
        before, after = s.snapshot_before, s.snapshot_after
        lines.append(_clip(f"snapshot: {'—' if before is None else before} → {'—' if after is None else after}"))
    if s.reason:
        lines += _wrap(f"reason: {s.reason}")[:2]
    return Node("", cls, f"step {s.index}: {s.kind.value}", lines, depth, s.path)


def _step_status(s: Step) -> tuple[str, str]:
    """A step's status text (with the kind of skip) and node class: a step that changed nothing is drawn
    `unchanged`."""
    text = s.status.value + (f" ({s.skip.value.replace('_', ' ')})" if s.skip else "")
    return text, "failed" if s.status is StepStatus.FAILED else "unchanged" if s.skip and not s.changed else "step"


def _schema_text(types: list[str]) -> str:
    from substrait_spark.consumer.analysis.explain import schema_str

    return schema_str(types)


def _wrap(text: str, width: int = MAX_LINE_CHARS) -> list[str]:
    """Hard-wraps `text` into lines of at most `width` characters (the last one clipped by the caller)."""
    if not text:
        return []
    lines = [text[i : i + width] for i in range(0, len(text), width)]
    if len(lines) > MAX_DETAIL_LINES:
        lines = lines[:MAX_DETAIL_LINES]
        lines[-1] = lines[-1][:-1] + "…"
    return lines


def _lineage_rows(plan: Any) -> tuple[list[tuple[str, str, list[str]]], str | None]:
    """(output, column, ["dataset.field (TYPE/SUBTYPE, ...)"]) per output column; never raises."""
    try:
        from substrait_spark.consumer.analysis.lineage import column_lineage

        lineage = column_lineage(plan)
    except Exception as exc:
        return [], f"column lineage unavailable: {type(exc).__name__}: {exc}"
    rows: list[tuple[str, str, list[str]]] = []
    for out in lineage.outputs:
        name = (
            f"root {out.index}"
            if out.kind == "root"
            else f"{out.operation or out.kind} {out.dataset.name if out.dataset else '?'}"
        )
        for col, sources in out.columns:
            srcs = [
                f"{f.dataset.name}.{f.field} ({', '.join(sorted(str(t) for t in ts))})"
                for f, ts in sorted(sources.items())
            ]
            rows.append((name, col, srcs))
        if out.indirect:
            srcs = [
                f"{f.dataset.name}.{f.field} ({', '.join(sorted(str(t) for t in ts))})"
                for f, ts in sorted(out.indirect.items())
            ]
            rows.append((name, "(all rows)", srcs))
    return rows, None


def build_graph(plan: Any, report: RunReport | Mapping[str, Any] | None = None) -> Graph:
    """The picture's content: `plan` a LoadedPlan or a `substrait.plan_pb2.Plan`; `report` a run report (or its
    dict: a report that does not parse is a `RunReportError`)."""
    loaded = plan if hasattr(plan, "plan") and hasattr(plan, "sha256") else None
    proto = loaded.plan if loaded is not None else plan
    run = RunReport.of(report) if report is not None else None
    builder = _GraphBuilder(proto, run.tables_read if run else [], run.steps if run else [])
    graph = builder.build()
    uri = (run and run.plan_uri) or (loaded.uri if loaded is not None else None)
    sha = (run and run.plan_sha256) or (loaded.sha256 if loaded is not None else None)
    producer = (run and run.producer) or (loaded.producer if loaded is not None else None)
    graph.header = [f"plan: {uri or '(inline)'}", f"sha256: {sha or '?'}  producer: {producer or '?'}"]
    if run is not None:
        text = f"run: {run.status.value}"
        if run.duration_s is not None:
            text += f" in {run.duration_s:.1f}s"
        if run.error is not None:
            text += f" — {run.error.describe()}"
        graph.header.append(text)
    graph.lineage, note = _lineage_rows(proto)
    if note:
        graph.header.append(note)
    _layout(graph)
    return graph


def _layout(graph: Graph) -> None:
    """Layers by depth; within a layer, nodes keep the order they were found (depth first), left to right."""
    layers: dict[int, list[Node]] = {}
    for n in graph.nodes:
        layers.setdefault(n.depth, []).append(n)
    width = max((len(ns) for ns in layers.values()), default=1) * (NODE_W + H_GAP)
    y: float = MARGIN + LINE_H * (len(graph.header) + 1)
    for depth in sorted(layers):
        ns = layers[depth]
        row_w = len(ns) * (NODE_W + H_GAP) - H_GAP
        x = MARGIN + (width - H_GAP - row_w) / 2
        for n in ns:
            n.x, n.y = x, y
            x += NODE_W + H_GAP
        y += max(n.height for n in ns) + V_GAP


def _size(graph: Graph) -> tuple[float, float, float]:
    """(width, height, top of the lineage section)."""
    w = max((n.x + NODE_W for n in graph.nodes), default=NODE_W) + MARGIN
    h = max((n.y + n.height for n in graph.nodes), default=0) + V_GAP
    lineage_rows = min(len(graph.lineage), MAX_LINEAGE_ROWS)
    total = h + (LINE_H * (lineage_rows + 2) if graph.lineage else 0) + MARGIN
    longest = max((len(_lineage_line(r)) for r in graph.lineage[:MAX_LINEAGE_ROWS]), default=0)
    return max(w, 2 * MARGIN + longest * 6.6, 600), total, h


def _lineage_line(row: tuple[str, str, list[str]]) -> str:
    out, col, srcs = row
    return f"{out} · {col} ← {'; '.join(srcs) if srcs else '(no input column)'}"


def render_svg(graph: Graph) -> str:
    """A standalone SVG document (also embeddable inline in HTML)."""
    width, height, lineage_top = _size(graph)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="substrait-graph" width="{width:.0f}" height="{height:.0f}"'
        f' viewBox="0 0 {width:.0f} {height:.0f}" font-family="monospace" font-size="12">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7"'
        ' orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#868e96"/></marker></defs>',
        f'<rect width="{width:.0f}" height="{height:.0f}" fill="#f8f9fa"/>',
    ]
    for i, line in enumerate(graph.header):
        out.append(f'<text class="header" x="{MARGIN}" y="{MARGIN + LINE_H * i + 10}">{esc(line)}</text>')
    by_id = {n.id: n for n in graph.nodes}
    out.append('<g class="edges">')
    for e in graph.edges:
        a, b = by_id.get(e.src), by_id.get(e.dst)
        if a is None or b is None:
            continue
        x1, x2 = a.x + NODE_W / 2, b.x + NODE_W / 2
        if a.y > b.y:  # input below its user: from the input's top to the user's bottom
            y1, y2 = a.y, b.y + b.height
        else:
            y1, y2 = a.y + a.height, b.y
        out.append(
            f'<path class="edge" data-src="{esc(e.src)}" data-dst="{esc(e.dst)}" d="M {x1:.0f} {y1:.0f} '
            f'C {x1:.0f} {(y1 + y2) / 2:.0f}, {x2:.0f} {(y1 + y2) / 2:.0f}, {x2:.0f} {y2:.0f}" fill="none" '
            'stroke="#868e96" stroke-width="1.3" marker-end="url(#arrow)"/>'
        )
        if e.label and e.label not in ("reads", "step"):
            out.append(
                f'<text class="edge-label" x="{(x1 + x2) / 2 + 4:.0f}" y="{(y1 + y2) / 2:.0f}" fill="#5c7cfa"'
                f' font-size="11">{esc(_clip(e.label, 40))}</text>'
            )
    out.append("</g>")
    out.append('<g class="nodes">')
    for n in graph.nodes:
        fill, stroke = _COLORS.get(n.cls, _COLORS["rel"])
        out.append(
            f'<g class="node {esc(n.cls)}" id="{esc(n.id)}" data-kind="{esc(n.title.split(" ")[0])}"'
            f' data-path="{esc(n.path)}">'
        )
        out.append(f"<title>{esc(n.path + chr(10) if n.path else '')}{esc(chr(10).join([n.title, *n.lines]))}</title>")
        out.append(
            f'<rect x="{n.x:.0f}" y="{n.y:.0f}" width="{NODE_W}" height="{n.height:.0f}" rx="6" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>'
        )
        ty = n.y + NODE_PAD + 11
        out.append(
            f'<text class="label" x="{n.x + NODE_PAD:.0f}" y="{ty:.0f}" font-weight="bold" fill="{stroke}">'
            f"{esc(_clip(n.title))}</text>"
        )
        for line in n.lines:
            ty += LINE_H
            out.append(f'<text class="detail" x="{n.x + NODE_PAD:.0f}" y="{ty:.0f}">{esc(line)}</text>')
        out.append("</g>")
    out.append("</g>")
    if graph.lineage:
        y = lineage_top
        out.append('<g class="lineage">')
        out.append(f'<text class="lineage-title" x="{MARGIN}" y="{y:.0f}" font-weight="bold">column lineage</text>')
        for row in graph.lineage[:MAX_LINEAGE_ROWS]:
            y += LINE_H
            out.append(
                f'<text class="lineage-row" x="{MARGIN}" y="{y:.0f}" data-output="{esc(row[0])}"'
                f' data-column="{esc(row[1])}">{esc(_lineage_line(row))}</text>'
            )
        if len(graph.lineage) > MAX_LINEAGE_ROWS:
            out.append(f'<text x="{MARGIN}" y="{y + LINE_H:.0f}">… {len(graph.lineage) - MAX_LINEAGE_ROWS} more</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def render_html(graph: Graph, title: str = "Substrait plan") -> str:
    """An HTML page with the SVG inline and the column lineage as a table (no scripts, no external resources)."""
    rows = "\n".join(
        f"<tr><td>{esc(o)}</td><td>{esc(c)}</td><td>{'<br>'.join(esc(s) for s in srcs) or '—'}</td></tr>"
        for o, c, srcs in graph.lineage
    )
    lineage = (
        '<h2>Column lineage</h2>\n<table class="lineage"><thead><tr><th>output</th><th>column</th>'
        f"<th>derived from</th></tr></thead>\n<tbody>\n{rows}\n</tbody></table>"
        if graph.lineage
        else ""
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)}</title>\n<style>"
        "body{font-family:system-ui,sans-serif;margin:16px;background:#fff;color:#212529}"
        ".graph{overflow:auto;border:1px solid #dee2e6}"
        "table.lineage{border-collapse:collapse;font-family:monospace;font-size:12px}"
        "table.lineage td,table.lineage th{border:1px solid #dee2e6;padding:3px 6px;text-align:left;vertical-align:top}"
        "</style></head>\n<body>\n"
        f'<h1>{esc(title)}</h1>\n<div class="graph">\n{render_svg(graph)}</div>\n{lineage}\n</body></html>\n'
    )


def plan_svg(plan: Any, report: RunReport | Mapping[str, Any] | None = None) -> str:
    return render_svg(build_graph(plan, report))


def plan_html(plan: Any, report: RunReport | Mapping[str, Any] | None = None, title: str = "Substrait plan") -> str:
    return render_html(build_graph(plan, report), title=title)


__all__ = ["Edge", "Graph", "Node", "build_graph", "esc", "plan_html", "plan_svg", "render_html", "render_svg"]
