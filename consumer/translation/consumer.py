"""The consumer: one overridable method per relation and expression kind.

Subclass `SubstraitConsumer` to add extension relations, extension tables or functions, or to change how a
kind is translated; `to_dataframe` and `run_plan` accept a consumer class. Dispatch is by the protobuf
oneof name through the tables below, never by chains of `if`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import types as T
from substrait import algebra_pb2 as alg
from substrait.plan_pb2 import Plan

from ..clients import is_connect, translation_settings
from ..errors import (
    PlanInvalidError,
    ResolutionError,
    SubstraitSparkError,
    TargetRefusedError,
    UnsupportedFeatureError,
    first_line,
)
from ..loading.extensions import Extensions
from ..loading.producers import Quirks
from ..plan_visitor import DETACHED, SUBQUERY_BODY, KindTable, PlanVisitor, register
from ..records import TableRead
from ..tables import ResolvedTable, ResolvedView, TableResolver
from ..types import PlanTypes, has_struct
from ..walk import emit_mapping
from . import expressions as ex
from . import lambdas, plan_record, steps, subqueries, windows
from . import views as view_defs
from .context_variables import context_variable
from .conversions import LossyCast
from .functions import AGGREGATE, COMPARISONS, SCALAR, UNSUPPORTED, AggregateHandler, Call, Handler, lookup
from .functions.argument_types import argument_type_refusal
from .functions.window import WINDOW, WindowCall, WindowHandler
from .functions.window import resolve as resolve_window
from .literals import to_column
from .mark_reads import mark_reads
from .ordered_root import computed_names, names_fit, ordering_input, table_columns
from .parameters import Parameters
from .registry import extension_handler
from .relation import NameSource, Relation, column_cache, quote
from .relations import (
    aggregate,
    exchange,
    expand,
    join,
    lateral,
    physical_join,
    project,
    read,
    setop,
    sort,
    subquery_placement,
    topn,
)
from .relations import filter as filter_rel
from .relations import window as window_rel
from .scope import Scope, Truth, Typed, Widened

Expression = alg.Expression
ReadRel = alg.ReadRel

# Relation kind -> method name; expression kind -> method name.
REL_METHODS: dict[str, str] = {
    "read": "consume_read",
    "filter": "consume_filter",
    "project": "consume_project",
    "fetch": "consume_fetch",
    "sort": "consume_sort",
    "aggregate": "consume_aggregate",
    "join": "consume_join",
    "cross": "consume_cross",
    "set": "consume_set",
    "reference": "consume_reference",
    "extension_single": "consume_extension_single",
    "extension_multi": "consume_extension_multi",
    "extension_leaf": "consume_extension_leaf",
    "write": "consume_write",  # steps: recorded by translation (translation/steps.py), run by the runner
    "ddl": "consume_ddl",
    "update": "consume_update",
    "hash_join": "consume_hash_join",  # physical relations (consumer/translation/relations/physical_join.py, ...)
    "merge_join": "consume_merge_join",
    "nested_loop_join": "consume_nested_loop_join",
    "lateral_join": "consume_lateral_join",
    "exchange": "consume_exchange",
    "expand": "consume_expand",
    "top_n": "consume_top_n",
    "window": "consume_window",
}
EXPR_METHODS: dict[str, str] = {
    "literal": "literal",
    "selection": "selection",
    "scalar_function": "scalar_function",
    "if_then": "if_then",
    "switch_expression": "switch_expression",
    "singular_or_list": "singular_or_list",
    "multi_or_list": "multi_or_list",
    "cast": "cast",
    "subquery": "subquery",
    "nested": "nested",
    "dynamic_parameter": "dynamic_parameter",
    "execution_context_variable": "execution_context_variable",
    "window_function": "window_function",
    "lambda": "lambda_",
    "lambda_invocation": "lambda_invocation",
    "named_lambda_reference": "named_lambda_reference",
}
# What a relation's translator refuses from the plan alone (its module's `refusals(rel, path)`: (feature, path)
# pairs; an invalid relation raises PlanInvalidError): checked before the translator runs, and read by `validate`.
Refusals = Callable[[Any, str], Iterable[tuple[str, str]]]
RELATION_REFUSALS: dict[str, Refusals] = {
    "read": read.refusals,
    "sort": sort.refusals,
    "fetch": sort.fetch_refusals,
    "join": join.refusals,
    "hash_join": physical_join.refusals,
    "merge_join": physical_join.refusals,
    "nested_loop_join": physical_join.refusals,
    "lateral_join": lateral.refusals,
    "exchange": exchange.refusals,
    "top_n": topn.refusals,
}
# Relation kinds whose translator applies `common.emit` itself (folded into its one select).
EMIT_APPLIED_BY_TRANSLATOR = {"project"}


class SubstraitConsumer(PlanVisitor[Relation]):
    """Translates one plan into Spark DataFrames within one SparkSession. The walk (dispatch through REL_METHODS
    and EXPR_METHODS, emit, shared subtrees) is `PlanVisitor`'s; each kind's method is overridable."""

    reader = "translator"
    relation_handlers: ClassVar[dict[str, str]] = REL_METHODS
    refused_relations: ClassVar[dict[str, str]] = {"detached_rel_ordinal": DETACHED}
    expression_handlers: ClassVar[dict[str, str]] = EXPR_METHODS
    refused_expressions: ClassVar[dict[str, str]] = {"detached_expression_ordinal": DETACHED}
    relation_refusals: ClassVar[Mapping[str, Refusals]] = RELATION_REFUSALS

    scalar_functions: ClassVar[dict[str, Handler]] = SCALAR
    aggregate_functions: ClassVar[dict[str, AggregateHandler]] = AGGREGATE
    window_functions: ClassVar[dict[str, WindowHandler]] = WINDOW
    # Extension relations and tables by protobuf Any type URL: fn(consumer, detail, inputs, path) -> Relation.
    # Consulted before the process-wide `registry.register_extension_relation` handlers.
    extension_relations: ClassVar[dict[str, Callable[..., Relation]]] = {}

    def __init__(
        self,
        spark: SparkSession,
        plan: Plan,
        resolver: TableResolver,
        parameters: Mapping[str | int, Any] | None = None,
        *,
        cast_to_plan_types: bool = False,
    ) -> None:
        self.spark = spark
        self.plan = plan
        self.resolver = resolver
        self.parameters = Parameters.bind(plan, parameters)
        # Read columns whose type a cast to the plan's declared type would lose information from: refused
        # (a schema mismatch, exit 4) unless the caller opts in; each cast made anyway is recorded here.
        self.cast_to_plan_types = cast_to_plan_types
        self.lossy_casts: list[LossyCast] = []
        self.extensions = Extensions(plan)
        self.quirks = Quirks.of(plan)
        self.plan_types = PlanTypes.of(plan)  # user-defined types and type aliases, for spark_type
        self.names = NameSource()
        self.run_id = uuid.uuid4().hex[:12]
        self.views: list[str] = []
        self.tables_read: list[TableRead] = []
        self.grouping_index_columns: set[str] = set()  # set by aggregates with several grouping sets
        self.computed_columns: set[str] = set()  # ProjectRel outputs that compute a value (not a column reference)
        self._mark_reads: dict[str, Truth | None] | None = None  # `mark_truth`, worked out on first use
        # ProjectRel outputs that cast an integer column to fp64, by name: the cast and the integer (an aggregate's
        # avg reads the integer, `relations/aggregate.py`).
        self.widened_integers: dict[str, Widened] = {}
        # ProjectRel outputs of a floating-point type whose magnitude their expression bounds (`magnitude.py`), by
        # name: a checked cast of a column that carries one can be shown never to fail.
        self.column_bounds: dict[str, float] = {}
        self._resolved: dict[tuple[str, ...], ResolvedTable] = {}
        self._shared_uses: dict[int, int] = {}
        # Write/DDL/update steps translated and not yet run (`translation/steps.py`): the runner takes each root's
        # (`take_steps`) and runs them; translation itself changes no table. `step_outputs`: the output of each
        # step run, by plan path (rows modified, or None), for a root built again around them.
        self.pending_steps: list[steps.PendingStep] = []
        self.step_outputs: dict[str, DataFrame | None] = {}
        # Why this consumer refuses those relations instead (None: it records them for a run to execute).
        self.steps_refused: str | None = None
        self.expanding: tuple[str, ...] = ()  # the views whose definitions this consumer translates, outermost first
        # Spark Connect analyzes a DataFrame only when it is used: each relation's frame, inputs first, to name the
        # one Spark rejects when the root fails analysis later (`rejection`). Classic Spark checks every operation.
        self._lazy = is_connect(spark)
        self._built: list[tuple[str, str, DataFrame]] = []
        self._prebuilt: dict[str, Relation] = {}  # relations translated ahead of their parent, by plan path
        # The names the aggregate or projection at a plan path gives the root's columns it computes (by position,
        # None: a name of its own), as Spark SQL names them (ordered_root.py `computed_names`).
        self.output_names: dict[str, list[str | None]] = {}
        # Each root's output column names as `root` attached them: what a run reports, known without asking
        # Spark (`df.columns` is an analysis round trip on Spark Connect).
        self.root_columns: dict[int, list[str]] = {}
        self.root_types: dict[int, list[T.DataType]] = {}  # each root's declared types (a table sink's columns)
        # Frames known to hold no rows without running them (a write step's NO_OUTPUT result, `steps.common.empty`),
        # and the roots that are one: a run counts their rows without a Spark job.
        self.empty_frames: list[DataFrame] = []
        self.empty_roots: set[int] = set()

    # --- relations -----------------------------------------------------------------------------------------

    def rel(self, rel: alg.Rel, path: str, outer: Scope | None = None) -> Relation:
        """Translate any relation, then apply its `emit` (with this plan's user-defined types declared)."""
        prebuilt = self._prebuilt.pop(path, None)
        if prebuilt is not None:
            return prebuilt
        with self.plan_types.active():
            return super().rel(rel, path, outer)

    def mark_truth(self, path: str) -> Truth | None:
        """How the plan reads the mark of the LEFT MARK join at `path` (`mark_reads.py`; None: not at all)."""
        if self._mark_reads is None:
            self._mark_reads = mark_reads(self, self.plan.relations)
        return self._mark_reads.get(path, Truth.VALUE)

    def visit_relation(
        self, kind: str, handler: Callable[..., Relation], body: Any, path: str, outer: Scope | None
    ) -> Relation:
        self._check_common(body, path)
        for feature, at in self.relation_refusals.get(kind, _no_refusals)(body, path):
            raise UnsupportedFeatureError(feature, at)
        try:
            out = handler(body, path, outer)
        except SubstraitSparkError:
            raise
        except Exception as exc:  # Spark's analysis errors while building: name the relation
            raise PlanInvalidError(f"Spark rejected the translated {kind} relation: {first_line(exc)}", path) from exc
        if self._lazy:
            self._built.append((path, kind, out.frame))
        return out

    def analyzed(self, df: DataFrame, path: str) -> DataFrame:
        """`df` once Spark has analyzed it: classic Spark has, operation by operation; on Spark Connect this asks
        the server once (one AnalyzePlan call) and names a rejection as `rejection` does."""
        if self._lazy:
            try:
                df.schema  # noqa: B018
            except AnalysisException as exc:
                raise self.rejection(exc, path) from exc
        return df

    def rejection(self, exc: AnalysisException, path: str) -> PlanInvalidError:
        """The typed error for Spark rejecting a translated plan late (Spark Connect analyzes when a DataFrame is
        used): the relations are analyzed one by one, inputs first, and the innermost one Spark rejects is named
        by its plan path, as classic Spark's eager analysis names it during translation."""
        for p, kind, frame in self._built:
            try:
                frame.schema  # noqa: B018
            except AnalysisException as inner:
                return PlanInvalidError(f"Spark rejected the translated {kind} relation: {first_line(inner)}", p)
        return PlanInvalidError(f"Spark rejected the translated plan: {first_line(exc)}", path)

    @property
    def lazy(self) -> bool:
        """Whether Spark analyzes this consumer's DataFrames only when they are used (Spark Connect)."""
        return self._lazy

    def _check_common(self, body: Any, path: str) -> None:
        """Refuse advanced-extension enhancements (they change meaning) but those the relation's translator
        consumes (an UPDATE write's key: `steps.plan_update_key`); optimizations may be ignored."""
        fields = body.DESCRIPTOR.fields_by_name
        if (
            "advanced_extension" in fields
            and body.advanced_extension.HasField("enhancement")
            and not steps.consumed_enhancement(body)
        ):
            raise UnsupportedFeatureError("advanced extension enhancement", f"{path}.advanced_extension")
        if "common" in fields and body.common.advanced_extension.HasField("enhancement"):
            raise UnsupportedFeatureError("advanced extension enhancement", f"{path}.common.advanced_extension")

    def emit(self, kind: str, body: Any, out: Relation, path: str) -> Relation:
        if kind in EMIT_APPLIED_BY_TRANSLATOR:
            return out
        mapping = emit_mapping(body, len(out.names), path)
        return out if mapping is None else out.select_positions(mapping, self.names)

    def consume_read(self, rel: alg.ReadRel, path: str, outer: Scope | None) -> Relation:
        return read.translate_read(self, rel, path, outer)

    def read_named_table(
        self,
        table: ReadRel.NamedTable,
        names: list[str],
        types: list[T.DataType] | None,
        path: str,
        outer: Scope | None,
    ) -> Relation:
        return read.read_named_table(self, table, names, types, path)

    def resolve_table(self, parts: list[str], path: str) -> ResolvedTable:
        """The table a NamedTable names, resolved once per run: every read of it sees the same snapshot."""
        key = tuple(p.lower() for p in parts)
        if key not in self._resolved:
            try:
                resolved = self.resolver.resolve(self.spark, parts)
            except ResolutionError as exc:
                raise exc.at(path) from None
            if isinstance(resolved, ResolvedView):
                resolved = self.read_view(resolved, path)
            self._resolved[key] = resolved
            self.tables_read.append(resolved.report(".".join(parts)))
        return self._resolved[key]

    def read_view(self, view: ResolvedView, path: str) -> ResolvedTable:
        """A catalog view: its stored Substrait definition translated in place (see `views`)."""
        return view_defs.expand(self, view, path, self.expanding)

    def view_consumer(self, plan: Plan, expanding: tuple[str, ...]) -> SubstraitConsumer:
        """A consumer for a view's definition, sharing this run's names, pinned tables and temp views."""
        inner = type(self)(self.spark, plan, self.resolver, cast_to_plan_types=self.cast_to_plan_types)
        inner.names, inner.views, inner.tables_read = self.names, self.views, self.tables_read
        inner.lossy_casts = self.lossy_casts
        inner._resolved, inner.expanding = self._resolved, expanding
        return inner

    def record_lossy_cast(self, what: str, column: str, actual: T.DataType, declared: T.DataType, path: str) -> None:
        """A read column cast to the plan's type with possible loss (`cast_to_plan_types`), once per column."""
        entry = LossyCast(what, column, actual.simpleString(), declared.simpleString(), path)
        if entry not in self.lossy_casts:
            self.lossy_casts.append(entry)

    def forget_table(self, identity: str) -> None:
        """After a step changed a table, later reads in this run resolve (and pin) its new snapshot."""
        for key in [k for k, t in self._resolved.items() if t.identity == identity]:
            del self._resolved[key]

    def read_virtual_table(
        self, table: ReadRel.VirtualTable, names: list[str], types: list[T.DataType], path: str, outer: Scope | None
    ) -> Relation:
        return read.read_virtual_table(self, table, names, types, path)

    def read_local_files(
        self, files: ReadRel.LocalFiles, names: list[str], types: list[T.DataType], path: str, outer: Scope | None
    ) -> Relation:
        return read.read_local_files(self, files, names, types, path)

    def read_extension_table(
        self, table: ReadRel.ExtensionTable, names: list[str], types: list[T.DataType], path: str, outer: Scope | None
    ) -> Relation:
        handler = extension_handler(self.extension_relations, table.detail.type_url)
        if handler is None:
            raise UnsupportedFeatureError(f"extension table {table.detail.type_url or '(no type URL)'}", path)
        return handler(self, table.detail, [], path)

    def read_iceberg_table(
        self, table: ReadRel.IcebergTable, names: list[str], types: list[T.DataType], path: str, outer: Scope | None
    ) -> Relation:
        return read.read_iceberg_table(self, table, names, types, path)

    def consume_filter(self, rel: alg.FilterRel, path: str, outer: Scope | None) -> Relation:
        placed = subquery_placement.placed_filter(self, rel, path, outer)
        return placed if placed is not None else filter_rel.translate_filter(self, rel, path, outer)

    def consume_project(self, rel: alg.ProjectRel, path: str, outer: Scope | None) -> Relation:
        return project.translate_project(self, rel, path, outer)

    def consume_fetch(self, rel: alg.FetchRel, path: str, outer: Scope | None) -> Relation:
        return sort.translate_fetch(self, rel, path, outer)

    def consume_sort(self, rel: alg.SortRel, path: str, outer: Scope | None) -> Relation:
        return sort.translate_sort(self, rel, path, outer)

    def consume_aggregate(self, rel: alg.AggregateRel, path: str, outer: Scope | None) -> Relation:
        return aggregate.translate_aggregate(self, rel, path, outer)

    def consume_window(self, rel: alg.ConsistentPartitionWindowRel, path: str, outer: Scope | None) -> Relation:
        return window_rel.translate_window(self, rel, path, outer)

    def consume_join(self, rel: alg.JoinRel, path: str, outer: Scope | None) -> Relation:
        return join.translate_join(self, rel, path, outer)

    def consume_cross(self, rel: alg.CrossRel, path: str, outer: Scope | None) -> Relation:
        return join.translate_cross(self, rel, path, outer)

    def consume_set(self, rel: alg.SetRel, path: str, outer: Scope | None) -> Relation:
        return setop.translate_set(self, rel, path, outer)

    def consume_hash_join(self, rel: alg.HashJoinRel, path: str, outer: Scope | None) -> Relation:
        return physical_join.translate_hash_join(self, rel, path, outer)

    def consume_merge_join(self, rel: alg.MergeJoinRel, path: str, outer: Scope | None) -> Relation:
        return physical_join.translate_merge_join(self, rel, path, outer)

    def consume_nested_loop_join(self, rel: alg.NestedLoopJoinRel, path: str, outer: Scope | None) -> Relation:
        return physical_join.translate_nested_loop_join(self, rel, path, outer)

    def consume_lateral_join(self, rel: alg.LateralJoinRel, path: str, outer: Scope | None) -> Relation:
        return lateral.translate_lateral_join(self, rel, path, outer)

    def consume_exchange(self, rel: alg.ExchangeRel, path: str, outer: Scope | None) -> Relation:
        return exchange.translate_exchange(self, rel, path, outer)

    def consume_expand(self, rel: alg.ExpandRel, path: str, outer: Scope | None) -> Relation:
        return expand.translate_expand(self, rel, path, outer)

    def consume_top_n(self, rel: alg.TopNRel, path: str, outer: Scope | None) -> Relation:
        return topn.translate_top_n(self, rel, path, outer)

    def consume_reference(self, rel: alg.ReferenceRel, path: str, outer: Scope | None) -> Relation:
        """A shared subtree (`plan.relations[i].rel`) is translated once; later uses get fresh column names."""
        i = rel.subtree_ordinal
        shared = self.shared(i, path, outer)
        self._shared_uses[i] = self._shared_uses.get(i, 0) + 1
        return shared if self._shared_uses[i] == 1 else shared.renamed(self.names)

    # --- steps (translation/steps.py): each recorded as a PendingStep, run by the runner (running/steps) --------

    def consume_write(self, rel: alg.WriteRel, path: str, outer: Scope | None) -> Relation:
        return steps.write_step(self, rel, path, outer)

    def consume_ddl(self, rel: alg.DdlRel, path: str, outer: Scope | None) -> Relation:
        return steps.ddl_step(self, rel, path, outer)

    def consume_update(self, rel: alg.UpdateRel, path: str, outer: Scope | None) -> Relation:
        return steps.update_step(self, rel, path, outer)

    def steps_ran(self, outputs: Mapping[str, DataFrame | None]) -> bool:
        """Take the outputs of steps a run executed (by plan path); whether a root must be built again around
        them (a step output the rows it modified). A shared subtree holding such a step is translated again."""
        self.step_outputs.update(outputs)
        records = [p for p, df in outputs.items() if df is not None]
        shared: dict[int, Relation] = self.__dict__.get("_shared_results", {})
        for k in [k for k in shared if any(p.startswith(f"relations[{k}].rel.") for p in records)]:
            del shared[k]
        return bool(records)

    def take_steps(self) -> list[steps.PendingStep]:
        """The steps translated since the last call, in plan order (the runner runs them)."""
        taken, self.pending_steps = self.pending_steps, []
        return taken

    def _extension_rel(
        self,
        rel: alg.ExtensionSingleRel | alg.ExtensionMultiRel | alg.ExtensionLeafRel,
        path: str,
        outer: Scope | None,
        inputs: list[Relation],
    ) -> Relation:
        handler = extension_handler(self.extension_relations, rel.detail.type_url)
        if handler is None:
            raise UnsupportedFeatureError(f"extension relation {rel.detail.type_url or '(no type URL)'}", path)
        return handler(self, rel.detail, [r.materialized() for r in inputs], path)

    def consume_extension_single(self, rel: alg.ExtensionSingleRel, path: str, outer: Scope | None) -> Relation:
        return self._extension_rel(rel, path, outer, [self.rel(rel.input, f"{path}.input", outer)])

    def consume_extension_multi(self, rel: alg.ExtensionMultiRel, path: str, outer: Scope | None) -> Relation:
        inputs = [self.rel(r, f"{path}.inputs[{i}]", outer) for i, r in enumerate(rel.inputs)]
        return self._extension_rel(rel, path, outer, inputs)

    def consume_extension_leaf(self, rel: alg.ExtensionLeafRel, path: str, outer: Scope | None) -> Relation:
        return self._extension_rel(rel, path, outer, [])

    # --- expressions ---------------------------------------------------------------------------------------

    def literal(self, e: Expression.Literal, scope: Scope, path: str) -> Typed:
        if lambdas.is_null_function_literal(e):
            return lambdas.null_function(path)
        return to_column(e, path)

    def selection(self, e: Expression.FieldReference, scope: Scope, path: str) -> Typed:
        return ex.selection(self, e, scope, path)

    def scalar_function(self, e: Expression.ScalarFunction, scope: Scope, path: str) -> Typed:
        return ex.scalar_function(self, e, scope, path)

    def if_then(self, e: Expression.IfThen, scope: Scope, path: str) -> Typed:
        return ex.if_then(self, e, scope, path)

    def switch_expression(self, e: Expression.SwitchExpression, scope: Scope, path: str) -> Typed:
        return ex.switch(self, e, scope, path)

    def singular_or_list(self, e: Expression.SingularOrList, scope: Scope, path: str) -> Typed:
        return ex.singular_or_list(self, e, scope, path)

    def multi_or_list(self, e: Expression.MultiOrList, scope: Scope, path: str) -> Typed:
        return ex.multi_or_list(self, e, scope, path)

    def cast(self, e: Expression.Cast, scope: Scope, path: str) -> Typed:
        return ex.cast(self, e, scope, path)

    def subquery(self, e: Expression.Subquery, scope: Scope, path: str) -> Typed:
        return subqueries.subquery(self, e, scope, path)

    def nested(self, e: Expression.Nested, scope: Scope, path: str) -> Typed:
        return ex.nested(self, e, scope, path)

    def dynamic_parameter(self, e: alg.DynamicParameter, scope: Scope, path: str) -> Typed:
        return self.parameters.column(e, path)

    def execution_context_variable(self, e: Expression.ExecutionContextVariable, scope: Scope, path: str) -> Typed:
        return context_variable(self, e, scope, path)

    def window_function(self, e: Expression.WindowFunction, scope: Scope, path: str) -> Typed:
        return windows.window_function(self, e, scope, path)

    def lambda_(self, e: Expression.Lambda, scope: Scope, path: str) -> Typed:
        """A function value, for higher-order functions (see `lambdas`)."""
        return lambdas.lambda_value(self, e, scope, path)

    def lambda_invocation(self, e: Expression.LambdaInvocation, scope: Scope, path: str) -> Typed:
        return lambdas.invocation(self, e, scope, path)

    def named_lambda_reference(self, e: Expression.NamedLambdaReference, scope: Scope, path: str) -> Typed:
        return lambdas.named_lambda_reference(self, e, scope, path)

    # --- functions -----------------------------------------------------------------------------------------

    def call_scalar(self, call: Call) -> Column:
        handler = lookup(self.scalar_functions, call.ref)
        if handler is None:
            raise UnsupportedFeatureError(_unsupported("scalar", call), call.path)
        _check_argument_types(call)
        return handler(call)

    def call_aggregate(self, call: Call, distinct: bool) -> Column:
        handler = lookup(self.aggregate_functions, call.ref)
        if handler is None:
            raise UnsupportedFeatureError(_unsupported("aggregate", call), call.path)
        return handler(call, distinct)

    def call_window(self, call: WindowCall) -> Column:
        """A window function, or an aggregate function over the window's frame (see `functions.window.resolve`)."""
        handler = resolve_window(self.window_functions, self.aggregate_functions, call.ref)
        if handler is None:
            raise UnsupportedFeatureError(_unsupported("window", call), call.path)
        return handler(call)

    # --- per-run resources ---------------------------------------------------------------------------------

    def register_view(self, df: DataFrame) -> str:
        """A temp view unique to this run (for Spark's own scalar subqueries); dropped by `close()`."""
        name = f"__substrait_{self.run_id}_{len(self.views)}"
        df.createOrReplaceTempView(name)
        self.views.append(name)
        return name

    def close(self) -> None:
        for v in self.views:
            self.spark.catalog.dropTempView(v)
        self.views.clear()

    # --- roots ---------------------------------------------------------------------------------------------

    def root(self, index: int = 0) -> DataFrame:
        """The DataFrame of the plan's `index`-th root relation, with the plan's output names."""
        roots = [i for i, r in enumerate(self.plan.relations) if r.WhichOneof("rel_type") == "root"]
        if not roots:
            raise PlanInvalidError("plan has no root relation", "relations")
        if not 0 <= index < len(roots):
            raise PlanInvalidError(f"plan has {len(roots)} root(s), asked for root {index}", "relations")
        i = roots[index]
        self.empty_roots.discard(index)  # built again around its steps' outputs: known anew
        root = self.plan.relations[i].root
        path = f"relations[{i}].root"
        consumer = f"{type(self).__module__}.{type(self).__qualname__}"
        try:
            with column_cache(self.spark), translation_settings(self.spark):
                names = list(root.names)
                try:
                    # Each column named by the relation that computes it, as Spark SQL names them.
                    tables = table_columns(self.plan)
                    wanted = [None if self.names.internal(n) else n for n in names]
                    given = computed_names(
                        root.input, f"{path}.input", wanted, tables, self.quirks.project_outputs_expressions_only
                    )
                    self.output_names.update(given)
                    below = ordering_input(root.input, f"{path}.input")
                    if below is not None:  # named below the root's sorts and limits, as Spark SQL names them
                        inner = self._unindexed(self.rel(below.rel, below.path), names)
                        if inner.names != tuple(names) and names_fit(names, inner) and not below.filtered:
                            inner = Relation(name_columns(inner, names, path), names, inner.types)
                        elif inner.projection is not None and inner.projection.exprs and not below.filtered:
                            inner = inner.materialized()  # computed (and named) below the sorts, as Spark SQL does
                        if inner.names == tuple(names) or given:
                            self.names.reserve(names)
                        self._prebuilt[below.path] = inner
                    out = self._unindexed(self.rel(root.input, f"{path}.input"), names)
                    for at in given:
                        self.output_names.pop(at, None)
                    if out.names == tuple(names) and out.projection is None and names_fit(names, out):
                        df = out.frame
                    else:
                        df = name_columns(out, names, path)
                    self.root_columns[index] = top_level_names(out, names)
                    self.root_types[index] = list(out.types)
                    if any(out.frame is f for f in self.empty_frames):  # a projection of no rows has none
                        self.empty_roots.add(index)
                except AnalysisException as exc:  # a projection still pending is analyzed here, in this select
                    raise self.rejection(exc, path) from exc
        except UnsupportedFeatureError as exc:  # test hooks, off unless their environment variable is set
            target = isinstance(exc, TargetRefusedError)
            plan_record.refused(self.plan, exc.message, exc.path, root=path, consumer=consumer, target=target)
            raise
        plan_record.record(self.plan, df, root=path, consumer=consumer)
        return df

    def query(self, rel: alg.Rel, path: str, names: Sequence[str] | None = None) -> DataFrame:
        """The DataFrame of a relation that is not a root (the query feeding a write step, for `explain`), its
        columns named `names` (the step's) when they fit, else by position. Never runs a step: writes below it
        are refused."""
        refused, self.steps_refused = self.steps_refused, steps.OUTSIDE_A_RUN
        try:
            with column_cache(self.spark), translation_settings(self.spark):
                out = self.rel(rel, path).materialized()
                df = out.df
                return df.toDF(*names) if names and len(names) == len(out.names) else df
        finally:
            self.steps_refused = refused

    def _unindexed(self, out: Relation, names: list[str]) -> Relation:
        """`out` without the trailing grouping-set index column that Calcite-based producers (Isthmus) do not
        have, and so name none."""
        if len(names) == len(out.names) - 1 and out.names[-1] in self.grouping_index_columns:
            return out.select_positions(range(len(names)), self.names)
        return out


def name_columns(out: Relation, names: list[str], path: str) -> DataFrame:
    """Attach the plan's output names (nested struct field names included, depth-first)."""
    if not names:
        return out.frame.select(*[c.alias(n) for c, n in zip(out.cols(), out.names, strict=True)])
    cols, k = [], 0
    for i, t in enumerate(out.types):
        if k >= len(names):
            raise PlanInvalidError(f"{len(names)} output names for {len(out.names)} columns", f"{path}.names")
        top = names[k]
        k += 1
        col = out.col(i)
        if has_struct(t):
            new_t, k = _rename_struct(t, names, k, f"{path}.names")
            col = col.cast(new_t)
        cols.append(col.alias(top))
    if k != len(names):
        raise PlanInvalidError(f"{len(names)} output names for {len(out.names)} columns", f"{path}.names")
    return out.frame.select(*cols)  # any pending projection is applied here, in the same select


def top_level_names(out: Relation, names: list[str]) -> list[str]:
    """The top-level column names `name_columns` gives `out` (once it has accepted `names`), without Spark."""
    if not names:
        return list(out.names)
    tops, k = [], 0
    for t in out.types:
        tops.append(names[k])
        k += 1
        if has_struct(t):
            k = _rename_struct(t, names, k, "names")[1]
    return tops


def _rename_struct(t: T.DataType, names: list[str], k: int, path: str) -> tuple[T.DataType, int]:
    if isinstance(t, T.StructType):
        fields = []
        for f in t.fields:
            if k >= len(names):
                raise PlanInvalidError("too few output names for nested struct fields", path)
            name = names[k]
            inner, k = _rename_struct(f.dataType, names, k + 1, path)
            fields.append(T.StructField(name, inner, f.nullable))
        return T.StructType(fields), k
    if isinstance(t, T.ArrayType):
        inner, k = _rename_struct(t.elementType, names, k, path)
        return T.ArrayType(inner, t.containsNull), k
    if isinstance(t, T.MapType):
        kt, k = _rename_struct(t.keyType, names, k, path)
        vt, k = _rename_struct(t.valueType, names, k, path)
        return T.MapType(kt, vt, t.valueContainsNull), k
    return t, k


def _no_refusals(rel: Any, path: str) -> Iterator[tuple[str, str]]:
    return iter(())


def _unsupported(kind: str, call: Call) -> str:
    reason = lookup(UNSUPPORTED, call.ref)
    return f"{kind} function {call.ref.name}" + (f": {reason}" if reason else "")


def _check_argument_types(call: Call) -> None:
    """Reject calls whose argument types cannot mean what the function says (exit 2, not a Spark coercion): the
    rule `validate` applies to the types the plan states. A string compared with a date or timestamp is read as one."""
    why = argument_type_refusal(call.ref, call.families())
    if why:
        raise PlanInvalidError(why, call.path)
    if call.name in COMPARISONS:
        ex.coerce_comparison(call)


# The roots a field reference may start from: `expressions.selection` translates each (an outer reference to a
# relation, not a query level, only inside a lateral join's right input). `subqueries.subquery` translates every
# subquery kind (a UNIQUE set predicate it refuses by its operator, not its kind).
FIELD_ROOTS = ("root_reference", "outer_reference", "expression", "lambda_parameter_reference")
register(
    *SubstraitConsumer.kind_tables(),
    KindTable.of("translator", "root_type", FIELD_ROOTS),
    KindTable.of("translator", "subquery_type", SUBQUERY_BODY),
)

__all__ = ["SubstraitConsumer", "name_columns", "quote"]
