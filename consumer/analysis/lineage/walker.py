"""The lineage walker: one pass over a plan's roots, dispatching on the relation and expression kind.

Dispatch is by the protobuf oneof name through the tables `RELATIONS` (relations.py, writes.py) and
`EXPRESSIONS` (expressions.py), as the consumer's REL_METHODS / EXPR_METHODS. Subclass `LineageWalker` (or
copy its tables) to add kinds; `extension_relations` / `extension_tables` (Any type URL -> handler) give
extension relations and extension tables a lineage, which they otherwise refuse (their meaning is unknown).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from google.protobuf.message import Message
from substrait import algebra_pb2 as alg
from substrait.plan_pb2 import Plan

from ...errors import PlanInvalidError, UnsupportedFeatureError
from ...loading.extensions import Extensions
from ...loading.producers import Quirks
from ...plan_visitor import DETACHED, KINDS, SUBQUERY_BODY, KindTable, PlanVisitor, register
from ...walk import emit_mapping
from .expressions import EXPRESSIONS, ExprHandler
from .model import DEFAULT_NAMESPACE, Dataset, InputDataset, Lineage, Output, RelLineage, Scope, Sources
from .relations import DATASET_READS, RELATIONS, RelHandler
from .schema import named_columns

# Maps a plan's table name (NamedTable.names, or [uri] for files and Iceberg metadata) to the dataset's identity:
# a name in the walker's namespace, or a (namespace, name) pair.
NameHook = Callable[[list[str]], "str | tuple[str, str]"]
# fn(walker, detail: Any, inputs: list[RelLineage], path) -> RelLineage
ExtensionHandler = Callable[..., RelLineage]


class LineageWalker(PlanVisitor[RelLineage]):
    """Computes a plan's column lineage. One instance per plan. The walk (dispatch, emit, shared subtrees) is
    `PlanVisitor`'s; `relations` / `expressions` are its kind tables (a subclass may replace them)."""

    reader = "lineage"
    relations: ClassVar[dict[str, RelHandler]] = RELATIONS
    expressions: ClassVar[dict[str, ExprHandler]] = EXPRESSIONS
    relation_handlers = RELATIONS
    expression_handlers = EXPRESSIONS
    refused_relations: ClassVar[dict[str, str]] = {"detached_rel_ordinal": DETACHED}
    refused_expressions: ClassVar[dict[str, str]] = {"detached_expression_ordinal": DETACHED}
    extension_relations: ClassVar[dict[str, ExtensionHandler]] = {}
    extension_tables: ClassVar[dict[str, ExtensionHandler]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        cls.relation_handlers, cls.expression_handlers = cls.relations, cls.expressions
        super().__init_subclass__(**kwargs)

    def __init__(self, plan: Plan, names: NameHook | None = None, namespace: str = DEFAULT_NAMESPACE):
        self.plan = plan
        self.extensions = Extensions(plan)
        self.quirks = Quirks.of(plan)
        self.namespace = namespace
        self._names = names
        self.inputs: dict[Dataset, InputDataset] = {}
        self.outputs: list[Output] = []

    # --- relations -------------------------------------------------------------------------------------------

    def emit(self, kind: str, body: Message, out: RelLineage, path: str) -> RelLineage:
        mapping = emit_mapping(body, len(out.columns), path)
        return out if mapping is None else out.select(mapping)

    @classmethod
    def refusal(cls, what: str, kind: str, reason: str | None, path: str) -> UnsupportedFeatureError:
        return UnsupportedFeatureError(f"lineage of a {kind} {what}" + (f": {reason}" if reason else ""), path)

    def extension(self, detail: Any, inputs: list[RelLineage], path: str, table: bool = False) -> RelLineage:
        """An extension relation's (or, with `table`, an extension table's) lineage, by its handler."""
        handler = (self.extension_tables if table else self.extension_relations).get(detail.type_url)
        what = "extension table" if table else "extension relation"
        if handler is None:
            raise UnsupportedFeatureError(
                f"lineage of {what} {detail.type_url or '(no type URL)'}: its meaning is unknown here", path
            )
        return handler(self, detail, inputs, path)

    # --- expressions -----------------------------------------------------------------------------------------

    def expr(self, e: alg.Expression, scope: Scope, path: str) -> Sources:
        """The lineage of an expression's value over `scope`."""
        return self.expression(e, scope, path)

    # --- datasets --------------------------------------------------------------------------------------------

    def dataset(self, parts: list[str], path: str) -> Dataset:
        """A table as the plan names it (dotted), or as the `names` hook resolves it."""
        if not parts:
            raise PlanInvalidError("table with no name", path)
        if self._names is None:
            return Dataset(self.namespace, ".".join(parts))
        named = self._names(list(parts))
        if isinstance(named, tuple):
            return Dataset(*named)
        return Dataset(self.namespace, named)

    def read(self, dataset: Dataset, kind: str, fields: list[str]) -> None:
        """Record a dataset the plan reads, with the columns it declares."""
        known = self.inputs.get(dataset)
        if known is None:
            self.inputs[dataset] = InputDataset(dataset, kind, list(fields))
            return
        known.fields.extend(f for f in fields if f not in known.fields)

    # --- the plan --------------------------------------------------------------------------------------------

    def lineage(self) -> Lineage:
        roots = [i for i, r in enumerate(self.plan.relations) if r.WhichOneof("rel_type") == "root"]
        if not roots:
            raise PlanInvalidError("plan has no root relation", "relations")
        for n, i in enumerate(roots):
            root = self.plan.relations[i].root
            path = f"relations[{i}].root"
            out = self.rel(root.input, f"{path}.input")
            columns = [(name, c.sources) for name, c in named_columns(out.columns, list(root.names), path)]
            self.outputs.append(Output("root", path, columns, out.indirect, index=n))
        return Lineage(list(self.inputs.values()), self.outputs, self.quirks.notes())


# Lineage reads every read source (datasets are named as the plan names them; an extension table by its handler),
# has no input from any literal, and walks every subquery's relation and every field-reference root.
register(
    *LineageWalker.kind_tables(),
    KindTable.of("lineage", "read_type", {*DATASET_READS, "virtual_table", "extension_table"}),
    KindTable.of("lineage", "literal_type", KINDS["literal_type"]),
    KindTable.of("lineage", "subquery_type", SUBQUERY_BODY),
    KindTable.of("lineage", "root_type", KINDS["root_type"]),
)
