"""Column-level lineage of a Substrait plan, computed from the plan alone (no Spark, no catalog).

For each output column of each root, and each column of each table a WriteRel, DdlRel (a view's definition) or
UpdateRel changes, the input columns it derives from with OpenLineage's transformation types: DIRECT (IDENTITY,
TRANSFORMATION, AGGREGATION) and INDIRECT (JOIN, FILTER, GROUP_BY, SORT, WINDOW, CONDITIONAL)::

    from substrait_spark.consumer.analysis.lineage import column_lineage

    lineage = column_lineage(load_plan("q01.json"))
    lineage.roots[0].field("sum_qty")      # {InputField(lineitem, l_quantity): {DIRECT/AGGREGATION}}
    lineage.roots[0].indirect              # dataset-level: l_shipdate FILTER, l_returnflag GROUP_BY, ...
    lineage.roots[0].facet()               # OpenLineage's columnLineage dataset facet (1-2-0)

Datasets are named as the plan names them: a NamedTable's names dotted, local files and Iceberg metadata files by
URI, a virtual table `values`, all in one namespace (`namespace=`). `names=` maps the plan's names (the
NamedTable's parts, or `[uri]`) to resolved identities: a name, or a (namespace, name) pair.

Modules: `model` (result types, composition, OpenLineage rendering), `walker` (dispatch), `relations`,
`expressions`, `writes` (the handlers, one per kind), `schema` (NamedStruct and output names).
"""

from __future__ import annotations

from ...loading.loader import LoadedPlan
from .model import (
    AGGREGATION,
    CONDITIONAL,
    DEFAULT_NAMESPACE,
    DIRECT,
    FILTER,
    GROUP_BY,
    IDENTITY,
    INDIRECT,
    JOIN,
    SORT,
    TRANSFORMATION,
    WINDOW,
    Dataset,
    InputDataset,
    InputField,
    Lineage,
    Output,
    RelLineage,
    Sources,
    Transformation,
)
from .walker import LineageWalker, NameHook


def column_lineage(
    plan,
    names: NameHook | None = None,
    namespace: str = DEFAULT_NAMESPACE,
    walker_class: type[LineageWalker] = LineageWalker,
) -> Lineage:
    """The column lineage of a plan (a `substrait.plan_pb2.Plan` or a `LoadedPlan`).

    Raises PlanInvalidError for a malformed plan (a dangling reference, a bad emit) and UnsupportedFeatureError
    for what has no known lineage (an extension relation or table without a handler, a relation kind unknown).
    """
    p = plan.plan if isinstance(plan, LoadedPlan) else plan
    return walker_class(p, names=names, namespace=namespace).lineage()


__all__ = [
    "AGGREGATION",
    "CONDITIONAL",
    "DIRECT",
    "FILTER",
    "GROUP_BY",
    "IDENTITY",
    "INDIRECT",
    "JOIN",
    "SORT",
    "TRANSFORMATION",
    "WINDOW",
    "Dataset",
    "InputDataset",
    "InputField",
    "Lineage",
    "LineageWalker",
    "NameHook",
    "Output",
    "RelLineage",
    "Sources",
    "Transformation",
    "column_lineage",
]
