"""Does Spark's physical plan hold a cartesian product the Substrait plan does not ask for?

Two halves, compared by column (the invariant plugin, `plan_invariants.py`, runs them on every plan a test runs):

* `equi_links(plan)`, from the Substrait plan alone: for each JoinRel, and each FilterRel over a tree of
  CrossRels, the equality conjuncts (`equal`, `is_not_distinct_from`) whose two sides read different inputs of
  that join or cross tree — the input columns each side derives from, found with the column lineage walker
  (`consumer/analysis/lineage`), so projections, aggregates and subquery bodies in between are seen through. A MARK
  join's condition is no such link: its NULLs count, so an equality in it is not a join key.
* `offences(links, physical)`, over the text of Spark's physical plan (`explain`): every CartesianProduct and
  BroadcastNestedLoopJoin whose two inputs read the two sides of one link — a scan under one input outputs a
  column of one side and none of the other, and the other input the other way round — is an offence: Spark SQL
  would have joined them on that equality.

Scans are matched by column name: Spark's scans output the table's own column names, whatever the plan renames
them to, but a table read twice cannot be told from itself. So an input holding both sides of a link (a
nested loop join of two aggregates over the same joined tables, DuckDB's TPC-H q11) proves nothing about it,
and a join of a table with itself on one column (both sides of the link have the same names) is not checked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from substrait import algebra_pb2 as alg
from substrait.plan_pb2 import Plan
from substrait_spark.consumer.analysis.lineage import LineageWalker, RelLineage
from substrait_spark.consumer.translation.subqueries import conjunct_paths
from substrait_spark.consumer.walk import contains, local_fields, reference_levels, value_args

JoinRel = alg.JoinRel
NESTED_LOOPS = ("CartesianProduct", "BroadcastNestedLoopJoin")
_EQUALITIES = ("equal", "is_not_distinct_from")
_SUBQUERY_NODES = ("Subquery", "ReusedSubquery", "SubqueryBroadcast")
_ATTRIBUTE = re.compile(r"([^\s,\[\]]+?)#\d+L?")


@dataclass(frozen=True)
class Link:
    """An equality conjunct of the plan joining two inputs: where it is, and the input columns of each side."""

    path: str
    left: frozenset[str]  # "<column>" names (lower case) the left side of the equality derives from
    right: frozenset[str]
    text: str

    def __str__(self) -> str:
        return f"{self.text} at {self.path}"


# --- the Substrait side -------------------------------------------------------------------------------------


class _LinkWalker(LineageWalker):
    """The lineage walker, noting each relation's lineage by path and the equi-join links it passes."""

    def __init__(self, plan: Plan):
        super().__init__(plan)
        self.seen: dict[str, RelLineage] = {}
        self.links: list[Link] = []

    def rel(self, rel: alg.Rel, path: str, outer=None) -> RelLineage:
        out = super().rel(rel, path, outer)
        self.seen[path] = out
        kind = rel.WhichOneof("rel_type")
        if kind == "join" and rel.join.HasField("expression") and rel.join.type not in _MARK_TYPES:
            p = f"{path}.join"
            inputs = [self.seen[f"{p}.left"], self.seen[f"{p}.right"]]
            self._links(rel.join.expression, f"{p}.expression", inputs)
        elif kind == "filter" and rel.filter.HasField("condition") and _is_cross(rel.filter.input):
            p = f"{path}.filter"
            inputs = [self.seen[q] for q in _cross_inputs(rel.filter.input, f"{p}.input")]
            self._links(rel.filter.condition, f"{p}.condition", inputs)
        return out

    def _links(self, condition: alg.Expression, path: str, inputs: list[RelLineage]) -> None:
        owners = [i for i, rel in enumerate(inputs) for _ in rel.columns]  # record position -> input
        columns = [c for rel in inputs for c in rel.columns]
        for c, p in conjunct_paths(self, condition, path):  # type: ignore[arg-type]  # needs .extensions
            sides = _equality_sides(self, c)
            if sides is None:
                continue
            fields = [local_fields(s) for s in sides]
            if not all(fields) or any(f >= len(owners) for fs in fields for f in fs):
                continue
            owner = [{owners[f] for f in fs} for fs in fields]
            if len(owner[0]) != 1 or len(owner[1]) != 1 or owner[0] == owner[1]:
                continue
            names = [frozenset(src.field.lower() for f in fs for src in columns[f].sources) for fs in fields]
            if all(names):
                self.links.append(Link(p, names[0], names[1], _text(self, c)))


_MARK_TYPES = (JoinRel.JOIN_TYPE_LEFT_MARK, JoinRel.JOIN_TYPE_RIGHT_MARK)


def _is_cross(rel: alg.Rel) -> bool:
    return rel.WhichOneof("rel_type") == "cross"


def _cross_inputs(rel: alg.Rel, path: str) -> Iterator[str]:
    """The paths of the inputs of a tree of CrossRels (a cross with an emit is an input itself)."""
    if rel.WhichOneof("rel_type") == "cross" and rel.cross.common.WhichOneof("emit_kind") != "emit":
        yield from _cross_inputs(rel.cross.left, f"{path}.cross.left")
        yield from _cross_inputs(rel.cross.right, f"{path}.cross.right")
    else:
        yield path


def _equality_sides(w: LineageWalker, c: alg.Expression) -> tuple[alg.Expression, alg.Expression] | None:
    if c.WhichOneof("rex_type") != "scalar_function" or contains(c, alg.Expression.Subquery):
        return None
    ref = w.extensions.functions.get(c.scalar_function.function_reference)
    args = value_args(c.scalar_function)
    if ref is None or ref.base not in _EQUALITIES or len(args) != 2 or reference_levels(c) - {0}:
        return None
    return args[0], args[1]


def _text(w: LineageWalker, c: alg.Expression) -> str:
    ref = w.extensions.functions.get(c.scalar_function.function_reference)
    fields = [sorted(local_fields(a)) for a in value_args(c.scalar_function)]
    return f"{ref.base if ref else '?'}({', '.join('$' + ',$'.join(map(str, f)) for f in fields)})"


@dataclass
class Analysis:
    links: list[Link] = field(default_factory=list)
    error: str | None = None  # why the plan could not be analysed (its lineage is unknown)


def equi_links(plan: Plan) -> Analysis:
    """The plan's equi-join links (see the module docstring), or why they cannot be known."""
    walker = _LinkWalker(plan)
    try:
        for i, r in enumerate(plan.relations):
            if r.WhichOneof("rel_type") == "root":  # shared subtrees are walked where they are referenced
                walker.rel(r.root.input, f"relations[{i}].root.input")
    except Exception as exc:  # an extension relation without lineage, a malformed plan
        return Analysis(walker.links, f"{type(exc).__name__}: {exc}")
    return Analysis(walker.links)


# --- the Spark side -----------------------------------------------------------------------------------------


@dataclass
class Node:
    """One operator line of a physical plan's tree text, with the lines nested under it."""

    text: str
    children: list[Node] = field(default_factory=list)

    @property
    def name(self) -> str:
        text = re.sub(r"^\*\(\d+\) ", "", self.text)  # whole-stage codegen's "*(3) " prefix
        return text.split(" ", 1)[0].split("[", 1)[0].split("(", 1)[0]

    def inputs(self) -> list[Node]:
        """The operator's inputs, without the subqueries its expressions hold (printed among them)."""
        return [c for c in self.children if c.name not in _SUBQUERY_NODES]

    def walk(self) -> Iterator[Node]:
        yield self
        for c in self.children:
            yield from c.walk()

    def scan_columns(self) -> set[str]:
        """Column names the scans under this operator output (not those inside subqueries)."""
        inputs = self.inputs()
        if not inputs:
            bracket = re.search(r"\[([^\]]*)\]", self.text)
            return {m.group(1).lower() for m in _ATTRIBUTE.finditer(bracket.group(1))} if bracket else set()
        return set().union(*(c.scan_columns() for c in inputs))


def parse_physical(text: str) -> list[Node]:
    """The operator trees of `explain` output (its `== Physical Plan ==` section)."""
    roots: list[Node] = []
    stack: list[tuple[int, Node]] = []
    started = False
    for line in text.splitlines():
        if line.startswith("== "):
            started = line.startswith("== Physical Plan")
            continue
        if not started or not line.strip():
            continue
        start = len(line) - len(line.lstrip(" :+-|"))
        node = Node(line[start:])
        depth = start // 3
        while stack and stack[-1][0] >= depth:
            stack.pop()
        (stack[-1][1].children if stack else roots).append(node)
        stack.append((depth, node))
    return roots


@dataclass(frozen=True)
class Offence:
    operator: str  # the physical operator's line
    link: Link

    def __str__(self) -> str:
        return f"{self.operator[:160]} joins the inputs of {self.link}"


def offences(links: Iterable[Link], physical: str) -> list[Offence]:
    """The nested-loop joins of `physical` between the two sides of one of `links`."""
    links = list(links)
    found = []
    for root in parse_physical(physical):
        for node in root.walk():
            if node.name not in NESTED_LOOPS or len(node.inputs()) != 2:
                continue
            a, b = (c.scan_columns() for c in node.inputs())
            for link in links:
                if _splits(link.left, link.right, a, b) or _splits(link.right, link.left, a, b):
                    found.append(Offence(node.text, link))
                    break
    return found


def _splits(one: frozenset[str], other: frozenset[str], a: set[str], b: set[str]) -> bool:
    """Input `a` reads one side of a link and not the other, input `b` the other way round."""
    return bool(one & a and not other & a and other & b and not one & b)
