"""Benchmark (c): are the physical plans of our DataFrame and of Spark SQL the same?

For each TPC-H query the initial physical plan (``queryExecution().executedPlan()``; with AQE on, the plan
under ``AdaptiveSparkPlan isFinalPlan=false``, i.e. what the optimizer and planner chose from the statistics,
before runtime re-optimisation) of both paths is parsed into an operator tree and compared at three levels:

* **identical** — the whole plan text is equal once expression ids (``#123``), attribute and alias names
  (``_s12`` vs ``l_quantity``; a Project item that only renames, ``a#1 AS A#2``, counts as the column),
  ``plan_id``s and subquery ids are normalised away. This is the top verdict, reported per query. Expressions
  must match too (a ``1.00`` vs ``1`` literal or a NULLS FIRST/LAST sort option makes a difference here).
* **same shape** — the operator trees are equal node for node, comparing per node: the operator name;
  for joins the join type and build side (``Cross`` with equi-join keys counts as ``Inner``: it is the same
  join once keys are extracted); for scans the file, the pushed filters and the columns read; for exchanges the
  partitioning kind; for aggregates the number of grouping keys and the aggregate function names; for sorts
  the directions; for limits the limit. Filter and Project conditions and lists are not compared.
* **same shape except Project** — as above with Project nodes removed (a Project that only renames or
  reorders columns costs nothing after whole-stage code generation).

Otherwise **different**, with the first differing node of the pre-order walk.

    .venv/bin/python bench/plans.py [--tables-dir .data/tpch/sf1] [--queries 1-22] [--show q05]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))

import tpcds
from common import (
    SF1_DIR,
    SMALL_DIR,
    first_line,
    parse_queries,
    qname,
    register_views,
    repo_relative,
    resolver_for,
    spark_session,
    split_top,
    sql_text,
    translated,
    verify_same_query,
)
from plan_sets import PlanSet, SetKey, plan_set

# --------------------------------------------------------------------------------------------------
# Plan text -> tree
# --------------------------------------------------------------------------------------------------


@dataclass
class Node:
    text: str  # the node's line, without the tree-drawing prefix
    depth: int
    children: list[Node] = field(default_factory=list)

    @property
    def name(self) -> str:
        m = re.match(r"[A-Za-z][\w]*", self.text)
        return m.group(0) if m else self.text.split(" ", 1)[0]


_PREFIX = re.compile(r"^[ :|+\-]*")
_CODEGEN = re.compile(r"^\*\(\d+\)\s*")


def parse_tree(plan_text: str) -> Node | None:
    """Spark's ``TreeNode.treeString`` -> nodes; depth is the column of the node text (3 per level)."""
    root: Node | None = None
    stack: list[Node] = []
    for line in plan_text.splitlines():
        if not line.strip():
            continue
        prefix = _PREFIX.match(line)
        start = prefix.end() if prefix else 0
        text = _CODEGEN.sub("", line[start:]).strip()
        node = Node(text, start)
        while stack and stack[-1].depth >= start:
            stack.pop()
        if stack:
            stack[-1].children.append(node)
        elif root is None:
            root = node
        else:  # a second top-level line: keep it under the root
            root.children.append(node)
        stack.append(node)
    return root


# --------------------------------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------------------------------

_ATTR = re.compile(r"\b[A-Za-z_][\w$]*(?:#\d+)+L?\b")  # l_quantity#12, _s3#55L, sum#304, k#52#125 (a key Spark
# SQL's decorrelation names after the attribute it stands for)
# A name Spark generates from an expression's text (HAVING sum(l_quantity) > 300: `sum(l_quantity#12)#707`, once
# the attributes inside are erased; an unaliased scalar subquery's `max(total_revenue)#29076`,
# `(0.5 * sum(l_quantity))#436`, `CAST((CAST(sum(...) ...) AS DECIMAL(38,12))#662`): a name like any other. Only
# such a name has `#<id>` right after a closing parenthesis; it starts at the matching one (or the function name
# before it).
_GENERATED_END = re.compile(r"\)#\d+L?\b")
_NAME_CHAR = re.compile(r"[\w$]")


def _erase_generated(text: str) -> str:
    while (m := _GENERATED_END.search(text)) is not None:
        depth, i = 0, m.start()
        while i >= 0:
            depth += {")": 1, "(": -1}.get(text[i], 0)
            if depth == 0:
                break
            i -= 1
        if i < 0:  # unbalanced: leave the rest as it is
            return text
        while i > 0 and _NAME_CHAR.match(text[i - 1]):
            i -= 1
        text = text[:i] + "#" + text[m.end() :]
    return text


_IDS = [
    (re.compile(r"plan_id=\d+"), "plan_id=?"),
    (re.compile(r"\[id=#\d+\]"), "[id=?]"),
    (re.compile(r"(scalar-subquery|subquery|dynamicpruning)#\d+"), r"\1#?"),
    (re.compile(r"\bAS\s+#"), "AS #"),
]


# An item of a Project list that only renames a column (`l_orderkey#1 AS L_ORDERKEY#9` once normalised): names.
_RENAME = re.compile(r"(?<=[\[ ])# AS #(?=[,\]])")


# An alias whose name is not a word (`AS promotional_sales.promotions / all_sales.total * Int64(100)#12`, a name
# DataFusion writes for an unaliased expression): the name runs from `AS ` to its `#id`, its parentheses balanced
# (`CAST(sum(l_quantity) AS DOUBLE))#436` is the end of a name Spark generates, `_erase_generated`'s).
_ODD_ALIAS = re.compile(r"\bAS ([^#\[\],]*?[^\w#\[\],][^#\[\],]*?)#\d+L?\b")


def _erase_odd_alias(m: re.Match[str]) -> str:
    name = m.group(1)
    return "AS #" if name.count("(") == name.count(")") else m.group(0)


# Spark merges scalar subqueries over the same relation into one (MergeScalarSubqueries): the fields of the struct it
# builds are named after the aggregates' aliases, `named_struct(count(1), …)` read as `[id=#7].count(1)`: names.
_SUBQUERY_FIELD = re.compile(r"(\[id=\?\])\.[\w$]+(?:\((?:[^()]|\([^()]*\))*\))?")


def _erase_struct_names(text: str) -> str:
    """`named_struct(k1, v1, k2, v2)` with its field names (every other argument) erased."""
    out, i = [], 0
    while (j := text.find("named_struct(", i)) >= 0:
        start = j + len("named_struct(")
        depth, k = 1, start
        while k < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[k], 0)
            k += 1
        args = split_top(text[start : k - 1])
        args = ["#" if n % 2 == 0 else a for n, a in enumerate(args)]
        out.append(text[i:start] + ", ".join(args) + ")")
        i = k
    return "".join(out) + text[i:]


def normalise_text(text: str) -> str:
    """Expression ids and attribute/alias names erased (a rename is a name too, and so are the fields of a merged
    scalar subquery); everything else kept."""
    for pattern, repl in _IDS:
        text = pattern.sub(repl, text)
    text = _ODD_ALIAS.sub(_erase_odd_alias, text)
    text = _RENAME.sub("#", _erase_generated(_ATTR.sub("#", text)))
    return _SUBQUERY_FIELD.sub(r"\1.#", _erase_struct_names(text))


def _bracket(text: str, key: str) -> str | None:
    """The content of ``key[...]`` (balanced), or None."""
    i = text.find(key + "[")
    if i < 0:
        return None
    i += len(key) + 1
    depth, j = 1, i
    while j < len(text) and depth:
        if text[j] == "[":
            depth += 1
        elif text[j] == "]":
            depth -= 1
        j += 1
    return text[i : j - 1]


_JOIN_TYPES = ("LeftSemi", "LeftAnti", "LeftOuter", "RightOuter", "FullOuter", "ExistenceJoin", "Inner", "Cross")


def shape_token(node: Node) -> str:
    """What the shape comparison looks at for one node."""
    name, text = node.name, node.text
    if name.endswith("Join"):
        jt = next((t for t in _JOIN_TYPES if re.search(rf"\b{t}\b", text)), "?")
        keyed = name in ("BroadcastHashJoin", "ShuffledHashJoin", "SortMergeJoin")
        if jt == "Cross" and keyed:
            jt = "Inner"
        build = re.search(r"\bBuild(Left|Right)\b", text)
        return f"{name}({jt}{', Build' + build.group(1) if build else ''})"
    if name == "FileScan":
        loc = re.search(r"Location: \w+\([^)]*\)\[([^\]]*)\]", text)
        table = Path(loc.group(1).split(",")[0]).name if loc else "?"
        pushed = sorted(split_top(_bracket(text, "PushedFilters: ") or ""))  # order is not significant
        schema = re.search(r"ReadSchema: struct<(.*?)>(?:,|$)", text)
        read = sorted(split_top(schema.group(1))) if schema else ["?"]
        return f"FileScan({table}; pushed=[{', '.join(pushed)}]; read=<{','.join(read)}>)"
    if name in ("Exchange", "ShuffleExchange"):
        m = re.match(r"Exchange\s+(\w+)", text)
        return f"Exchange({m.group(1) if m else '?'})"
    if name.endswith("Aggregate"):
        keys = _bracket(text, "keys=") or ""
        funcs = _bracket(text, "functions=") or ""
        fnames = [re.match(r"[\w]+", f).group(0) if re.match(r"[\w]+", f) else f for f in split_top(funcs)]
        return f"{name}(keys={len(split_top(keys))}, functions={fnames})"
    if name == "Sort":
        dirs = re.findall(r"\b(ASC|DESC)\b", text.split("]", 1)[0])
        return f"Sort({','.join(dirs)})"
    if name == "TakeOrderedAndProject":
        m = re.search(r"limit=(\d+)", text)
        order = _bracket(text, "orderBy=") or ""
        dirs = re.findall(r"\b(ASC|DESC)\b", order)
        return f"TakeOrderedAndProject(limit={m.group(1) if m else '?'}, {','.join(dirs)})"
    if name in ("GlobalLimit", "LocalLimit", "CollectLimit"):
        m = re.search(r"\d+", text[len(name) :])
        return f"{name}({m.group(0) if m else '?'})"
    if name == "Union":
        return "Union"
    return name


def flatten(node: Node | None, token, drop=frozenset(), depth: int = 0) -> list[tuple[int, str, str]]:
    """Pre-order (depth, token, original text); nodes named in ``drop`` are spliced out."""
    if node is None:
        return []
    if node.name in drop:
        out = []
        for c in node.children:
            out.extend(flatten(c, token, drop, depth))
        return out
    out = [(depth, token(node), node.text)]
    for c in node.children:
        out.extend(flatten(c, token, drop, depth + 1))
    return out


def _scan_parts(token: str) -> tuple[str, set[str], set[str]]:
    m = re.match(r"FileScan\((.*?); pushed=\[(.*)\]; read=<(.*)>\)$", token)
    if not m:
        return token, set(), set()
    return m.group(1), set(split_top(m.group(2))), set(split_top(m.group(3)))


def _token_difference(x: str, y: str) -> str:
    """A short description of how two differing tokens differ (scans: which filters/columns)."""
    if x.startswith("FileScan(") and y.startswith("FileScan("):
        ta, pa, ra = _scan_parts(x)
        tb, pb, rb = _scan_parts(y)
        if ta == tb:
            parts = []
            if pa != pb:
                parts.append(f"pushed filters ours only {sorted(pa - pb)}, sql only {sorted(pb - pa)}")
            if ra != rb:
                parts.append(f"columns read ours only {sorted(ra - rb)}, sql only {sorted(rb - ra)}")
            return f"scan of {ta}: " + "; ".join(parts)
    return ""


def _first_difference(a: list[tuple[int, str, str]], b: list[tuple[int, str, str]]) -> str:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x[:2] != y[:2]:
            detail = _token_difference(x[1], y[1]) if x[0] == y[0] else ""
            if detail:
                return f"node {i + 1}: {detail}"
            return f"node {i + 1}: ours `{_short(x)}` vs sql `{_short(y)}`"
    if len(a) != len(b):
        longer, who = (a, "ours") if len(a) > len(b) else (b, "sql")
        extra = longer[min(len(a), len(b))]
        return f"{who} has {abs(len(a) - len(b))} more node(s), first `{_short(extra)}`"
    return ""


def _short(item: tuple[int, str, str], limit: int = 110) -> str:
    depth, tok, _ = item
    text = f"{tok} @depth {depth}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass
class PlanComparison:
    query: int
    verdict: str = ""  # identical | same shape | same shape except Project | different | error
    note: str = ""
    ours_nodes: int = 0
    sql_nodes: int = 0
    ours_plan: str = ""
    sql_plan: str = ""


def _is_empty_input_total(node: Node) -> bool:
    """Our grouping-set aggregate's row for the empty set (consumer/translation/relations/grouping_sets.py):
    `Project [null AS …]` over a cross join of the aggregate's empty-set row (0 or 1 rows, counted) with the
    measures over no rows (an aggregate over `LocalTableScan <empty>`)."""
    join = node.children[0] if node.name == "Project" and len(node.children) == 1 else None
    if join is None or not join.text.startswith("BroadcastNestedLoopJoin") or len(join.children) != 2:
        return False
    chain, n = [], join.children[1]
    while n is not None:
        chain.append(n.text)
        n = n.children[0] if len(n.children) == 1 else None
    return chain[-1].startswith("LocalTableScan <empty>") and any(t.startswith("HashAggregate(keys=[]") for t in chain)


# The test that keeps the empty set's row out of the aggregate's branch: `CASE WHEN <id>_any THEN NOT (<id> = n)`.
_TOTAL_TEST = re.compile(r"^Filter CASE WHEN (\S+) THEN NOT \((\S+) = \d+\) (?:ELSE false )?END$")


def _without_total_test(node: Node) -> Node:
    """The aggregate's branch without the test, the `Project` right above it (which drops the measure the test
    reads; without the test Spark merges it into the aggregate), and that `max(true)` measure (final and partial)."""
    below = node.children[0] if node.name == "Project" and len(node.children) == 1 else node
    if below.name == "Filter" and len(below.children) == 1:
        test = _TOTAL_TEST.match(below.text)
        if test:  # the grouping id is the aggregate's output for the test only where the Project drops it
            flag, grouping_id = test.group(1), test.group(2)
            used = below is not node and grouping_id in node.text
            return _without_flag(below.children[0], (flag,) if used else (flag, grouping_id))
    return Node(node.text, node.depth, [_without_total_test(c) for c in node.children])


def _without_flag(node: Node, test_reads: tuple[str, ...]) -> Node:
    """`node`'s tree with the `max(true)` measure out of the aggregates (final and partial), and the attributes
    only the test reads out of the final one's output."""
    text = node.text
    if node.name == "HashAggregate":
        functions, output = _bracket(text, "functions="), _bracket(text, "output=")
        items = split_top(functions or "")
        if items and items[-1] in ("max(true)", "partial_max(true)"):
            partial = items[-1].startswith("partial_")
            text = text.replace(f"functions=[{functions}]", f"functions=[{', '.join(items[:-1])}]", 1)
            if output is not None:  # the final one's named `flag`; the partial one's buffer is the last
                out = split_top(output)
                out = out[:-1] if partial else [o for o in out if o not in test_reads]
                text = text.replace(f"output=[{output}]", f"output=[{', '.join(out)}]", 1)
    return Node(text, node.depth, [_without_flag(c, test_reads) for c in node.children])


def without_empty_input_totals(node: Node | None) -> tuple[Node | None, int]:
    """The tree with each `Union` of an aggregate and its empty-input total replaced by the aggregate, and how
    many were taken out: Spark SQL's GROUP BY ROLLUP/CUBE/GROUPING SETS gives no row over no input, SQL and
    Substrait one (the empty set's)."""
    if node is None:
        return None, 0
    if node.name == "Union" and len(node.children) == 2 and _is_empty_input_total(node.children[1]):
        inner, n = without_empty_input_totals(_without_total_test(node.children[0]))
        return inner, n + 1
    total, children = 0, []
    for child in node.children:
        c, n = without_empty_input_totals(child)
        children.append(c)
        total += n
    return Node(node.text, node.depth, [c for c in children if c is not None]), total


def compare(ours_text: str, sql_text_: str) -> tuple[str, str]:
    """The verdict on our physical plan against Spark SQL's; our grouping sets' empty-input total rows (which
    Spark SQL's plan lacks, see `without_empty_input_totals`) are left out and named in the note."""
    a, totals = without_empty_input_totals(parse_tree(ours_text))
    verdict, note = _compare_trees(a, parse_tree(sql_text_))
    if totals:
        note = f"{note}; " if note else ""
        note += f"{totals} empty-input total(s) of ours left out (Spark SQL's grouping sets drop that row)"
    return verdict, note


def _compare_trees(a: Node | None, b: Node | None) -> tuple[str, str]:
    strict_a = flatten(a, lambda n: normalise_text(n.text))
    strict_b = flatten(b, lambda n: normalise_text(n.text))
    if [x[:2] for x in strict_a] == [y[:2] for y in strict_b]:
        return "identical", ""
    shape_a, shape_b = flatten(a, shape_token), flatten(b, shape_token)
    if [x[:2] for x in shape_a] == [y[:2] for y in shape_b]:
        return "same shape", "expressions differ: " + _first_difference(strict_a, strict_b)
    core_a = flatten(a, shape_token, frozenset({"Project"}))
    core_b = flatten(b, shape_token, frozenset({"Project"}))
    n_proj = sum(1 for x in shape_a if x[1] == "Project") - sum(1 for y in shape_b if y[1] == "Project")
    if [x[:2] for x in core_a] == [y[:2] for y in core_b]:
        return "same shape except Project", f"Project nodes: ours {n_proj:+d}"
    return "different", _first_difference(core_a, core_b) + " (Project nodes ignored)"


def physical_plan(df) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def run(
    spark, queries: list[int], plans: dict, tables_dir: Path, sql_for: Callable[[int], str] = sql_text
) -> list[PlanComparison]:
    """Compare our plan of each query with Spark SQL's for ``sql_for(q)`` (IBM's SQL by default)."""
    register_views(spark, tables_dir)
    resolver = resolver_for(tables_dir)
    out = []
    for q in queries:
        r = PlanComparison(q)
        try:
            r.sql_plan = physical_plan(spark.sql(sql_for(q)))
        except Exception as exc:
            r.verdict, r.note = "error", f"SQL: {first_line(exc)}"
            out.append(r)
            continue
        try:
            with translated(spark, plans[q], resolver) as df:
                r.ours_plan = physical_plan(df)
        except Exception as exc:
            r.verdict, r.note = "error", f"ours: {first_line(exc)}"
            out.append(r)
            continue
        r.ours_nodes = len(flatten(parse_tree(r.ours_plan), shape_token))
        r.sql_nodes = len(flatten(parse_tree(r.sql_plan), shape_token))
        r.verdict, r.note = compare(r.ours_plan, r.sql_plan)
        print(f"[bench] plans {qname(q)}: {r.verdict} {r.note}", file=sys.stderr, flush=True)
        out.append(r)
    return out


VERDICTS = ("identical", "same shape", "same shape except Project", "different", "error")


def counts(results: list[PlanComparison]) -> dict[str, int]:
    return {v: sum(1 for r in results if r.verdict == v) for v in VERDICTS}


def markdown(results: list[PlanComparison]) -> str:
    c = counts(results)
    lines = [
        f"Identical physical plan (the whole text, expression ids and names normalised): **{c['identical']} of "
        f"{len(results)}**. The others: same shape, expressions differ: {c['same shape']}; same shape except "
        f"Project nodes: {c['same shape except Project']}; different: {c['different']}; errors: {c['error']}.",
        "",
        "| query | verdict | nodes ours / sql | first difference |",
        "|---|---|---:|---|",
    ]
    for r in results:
        note = r.note.replace("|", "\\|")
        lines.append(f"| {qname(r.query)} | {r.verdict} | {r.ours_nodes} / {r.sql_nodes} | {note} |")
    return "\n".join(lines)


def set_markdown(ps: PlanSet, results: list[PlanComparison], verified: dict[int, str]) -> str:
    """One producer's section: identical N of the plans compared, what is absent or not compared and why, which
    SQL states which plan's query, and the per-query table with the sf0.01 result check."""
    c = counts(results)
    lines = [
        f"Identical optimized physical plan (modulo names/ids): **{c['identical']} of {len(results)}** compared "
        f"({len(ps.plans)} of {len(ps.universe)} {ps.benchmark} queries have a plan here that is compared); "
        "same shape, expressions differ: "
        f"{c['same shape']}; same shape except Project nodes: {c['same shape except Project']}; "
        f"different: {c['different']}; errors: {c['error']}.",
        "",
        f"Plans: `{ps.source}`.",
    ]
    if ps.absent:
        lines.append(f"No plan: {', '.join(qname(q) for q in ps.absent)}.")
    lines += [f"Not compared, {qname(q)}: {why}." for q, why in sorted(ps.excluded.items())]
    if ps.null_order is not None:
        lines.append(
            f"ORDER BY keys: with the null order these plans state on every sort field ({ps.null_order.value}: "
            f"ASC {ps.null_order.clause('asc')}, DESC {ps.null_order.clause('desc')}; "
            "tests/test_bench_plan_sets.py checks it against the plans), not Spark SQL's default."
        )
    folders = ", ".join(sorted({f"`{repo_relative(p.parent)}`" for p in ps.sql.values()}))
    notes = "; ".join(f"{qname(q)} `{repo_relative(ps.sql[q])}` ({why})" for q, why in sorted(ps.sql_notes.items()))
    lines.append(f"SQL: {folders}; where the SQL is not the set's usual text: {notes or 'none'}.")
    lines += [
        "",
        f"| query | same result as SQL ({ps.check_dir.name}) | verdict | nodes ours / sql | first difference |",
        "|---|---|---|---:|---|",
    ]
    for r in results:
        note = r.note.replace("|", "\\|")
        ok = verified.get(r.query, "not checked").replace("|", "/")
        lines.append(f"| {qname(r.query)} | {ok} | {r.verdict} | {r.ours_nodes} / {r.sql_nodes} | {note} |")
    return "\n".join(lines)


def compare_set(spark, ps: PlanSet, queries: list[int], tables_dir: Path) -> tuple[list[PlanComparison], dict]:
    """Check each SQL returns its plan's result on the set's small data (TPC-H sf0.01), then compare the plans at
    `tables_dir`."""
    queries = [q for q in queries if q in ps.plans]
    plans = ps.load_plans(queries)
    verified = verify_same_query(spark, queries, plans, ps.check_dir, ps.sql_text)
    return run(spark, queries, plans, tables_dir, ps.sql_text), verified


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables-dir", type=Path, default=SF1_DIR if SF1_DIR.is_dir() else SMALL_DIR)
    ap.add_argument("--queries", help="e.g. 1,3,5-7 (default: all 22)")
    ap.add_argument("--show", help="print both physical plans of these queries, e.g. 5,21")
    ap.add_argument(
        "--set",
        dest="sets",
        action="append",
        choices=[k.value for k in SetKey] + [tpcds.KEY],
        help=f"the producer's plan set (repeatable; default ibm; {tpcds.KEY}: TPC-DS at sf1, bench/tpcds.py)",
    )
    ap.add_argument("--dump", type=Path, help="write both physical plans of each query into this folder")
    args = ap.parse_args(argv)
    show = set(parse_queries(args.show, tpcds.QUERIES)) if args.show else set()
    spark = spark_session()
    try:
        for key in args.sets or [SetKey.IBM.value]:
            is_tpcds = key == tpcds.KEY
            ps = tpcds.plan_set() if is_tpcds else plan_set(key)
            queries = parse_queries(args.queries, ps.universe)
            tables_dir = tpcds.TPCDS_SF1 if is_tpcds else args.tables_dir
            results, verified = compare_set(spark, ps, queries, tables_dir)
            if args.dump:
                args.dump.mkdir(parents=True, exist_ok=True)
                for r in results:
                    (args.dump / f"{key}-{qname(r.query)}.ours.txt").write_text(r.ours_plan)
                    (args.dump / f"{key}-{qname(r.query)}.sql.txt").write_text(r.sql_plan)
            for r in results:
                if r.query in show:
                    print(f"==== {key} {qname(r.query)} ours\n{r.ours_plan}\n==== {qname(r.query)} sql\n{r.sql_plan}\n")
            print(f"### {ps.title}\n\n{set_markdown(ps, results, verified)}\n")
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
