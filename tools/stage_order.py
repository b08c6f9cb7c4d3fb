"""The engine's stages in its import graph (issue 29): loading < translation < analysis < running.

Each sub-folder of `consumer/` is a stage; modules directly in `consumer/` are shared by all (stage 0). A module may
import at module level (not inside a function, not under `if TYPE_CHECKING:`) only modules of its own or an earlier
stage, so each stage can be loaded, tested and reasoned about without the ones after it. This lists the imports that
point to a later stage and the import circles whose modules sit in different stages, and fails on any.

    python tools/stage_order.py [PROJECT]     # exit 1 on a violation; `make lint` runs it
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "consumer"
STAGES = {"loading": 1, "translation": 2, "analysis": 3, "running": 4}
STAGE_NAMES = {0: "shared", **{n: name for name, n in STAGES.items()}}
ABSOLUTE_PREFIX = "substrait_spark."  # the engine's import name is substrait_spark.consumer


def stage_of(module: str) -> int:
    """The stage of an engine module (`consumer.translation.scope` -> 2; `consumer.errors` -> 0)."""
    parts = module.split(".")
    return STAGES.get(parts[1], 0) if len(parts) > 1 else 0


@dataclass(frozen=True)
class Import:
    """One module-level import of an engine module by another."""

    path: str  # the importing file, relative to the project: consumer/translation/consumer.py
    line: int
    source: str  # consumer.translation.consumer
    target: str  # consumer.running.steps.ddl

    @property
    def upward(self) -> bool:
        return stage_of(self.target) > stage_of(self.source)

    def __str__(self) -> str:
        return (
            f"{self.path}:{self.line} imports {self.target} "
            f"({STAGE_NAMES[stage_of(self.source)]} -> {STAGE_NAMES[stage_of(self.target)]})"
        )


@dataclass
class Report:
    """What the check found: upward imports, circles across stages."""

    upward: list[Import] = field(default_factory=list)
    circles: list[list[str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.upward or self.circles)

    def lines(self) -> Iterator[str]:
        for imp in self.upward:
            yield str(imp)
        for circle in self.circles:
            yield "import circle across stages: " + " -> ".join(
                f"{m} ({STAGE_NAMES[stage_of(m)]})" for m in [*circle, circle[0]]
            )
        yield (
            f"{len(self.upward)} upward module-level imports between the engine's stages, "
            f"{len(self.circles)} import circles across stages"
        )


def module_name(rel: Path) -> str:
    """`consumer/translation/consumer.py` -> `consumer.translation.consumer`; a package's `__init__.py` -> its name."""
    parts = list(rel.with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _statements(stmts: Sequence[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements run when the module loads: not in functions or methods, not under
    `if TYPE_CHECKING:` (its `else:` does run)."""
    for node in stmts:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if "TYPE_CHECKING" not in ast.unparse(node.test):
                yield from _statements(node.body)
            yield from _statements(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                yield from _statements(block)
        elif isinstance(node, ast.With | ast.ClassDef):  # a class body runs at import; its methods' do not
            yield from _statements(node.body)


def imported_modules(node: ast.Import | ast.ImportFrom, package: str, modules: set[str]) -> Iterator[str]:
    """The engine modules an import statement names: `import a.b` and `from a.b import name` name a.b;
    `from a import b` names a.b when b is a module (a package's `__init__` loads with any of its modules: not
    counted, as for every parent package)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            parts = package.split(".")
            base = parts[: len(parts) - (node.level - 1)]
            start = ".".join(base + ([node.module] if node.module else []))
        else:
            start = node.module or ""
        subs = [f"{start}.{alias.name}" for alias in node.names]
        names = list(dict.fromkeys(sub if sub.removeprefix(ABSOLUTE_PREFIX) in modules else start for sub in subs))
    for name in names:
        name = name.removeprefix(ABSOLUTE_PREFIX)
        if name in modules:
            yield name


def engine_imports(project: Path) -> list[Import]:
    """Every module-level import of an engine module by an engine module, in file order."""
    files = sorted((project / PACKAGE).rglob("*.py"))
    rels = {module_name(f.relative_to(project)): f for f in files}
    modules = set(rels)
    out: list[Import] = []
    for source, path in rels.items():
        rel = path.relative_to(project)
        package = source if path.name == "__init__.py" else source.rpartition(".")[0]
        tree = ast.parse(path.read_text(), str(path))
        for node in _statements(tree.body):
            for target in imported_modules(node, package, modules):
                if target != source:
                    out.append(Import(rel.as_posix(), node.lineno, source, target))
    return out


def components(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of `graph` (Tarjan's algorithm, iterative): each a list of modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                found.append(sorted(component))
    return found


def check(project: Path = ROOT) -> Report:
    """The stage order of `project`'s engine."""
    imports = engine_imports(project)
    report = Report()
    graph: dict[str, set[str]] = {}
    for imp in imports:
        if imp.upward:
            report.upward.append(imp)
        graph.setdefault(imp.source, set()).add(imp.target)
        graph.setdefault(imp.target, set())
    report.circles = [c for c in components(graph) if len({stage_of(m) for m in c}) > 1]
    return report


def main(argv: Sequence[str]) -> int:
    report = check(Path(argv[0]) if argv else ROOT)
    for line in report.lines():
        print(line)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
