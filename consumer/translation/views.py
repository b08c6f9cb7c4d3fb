"""Views whose definition is a Substrait plan: how a DdlRel's `view_definition` becomes a stored plan, and how a
later NamedTable read of the view translates that plan again.

The stored definition is a whole plan: the DdlRel's `view_definition` as its one root (named by `table_schema`),
with the defining plan's extension declarations and version (so producer quirks still apply when it is read).
A definition must stand alone: no writes or DDL, no ReferenceRel into the defining plan, no dynamic parameters.
Reading a view translates its plan with the reading run's resolver: the tables under it are resolved, pinned and
reported like direct reads, and a view reading itself (directly or through others) is refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from google.protobuf import json_format
from substrait import algebra_pb2 as alg
from substrait.plan_pb2 import Plan, PlanRel

from ..errors import PlanInvalidError, ResolutionError, SubstraitSparkError
from ..loading.loader import parse_plan_bytes
from ..tables import ResolvedTable, ResolvedView
from ..walk import nodes

if TYPE_CHECKING:
    from .consumer import SubstraitConsumer

# What a stored definition may not hold, and why.
_NOT_IN_DEFINITION: dict[type, str] = {
    alg.WriteRel: "a write",
    alg.DdlRel: "DDL",
    alg.UpdateRel: "an update",
    alg.ReferenceRel: "a reference to another relation of the defining plan",
    alg.DynamicParameter: "a dynamic parameter (a view's definition is fixed when it is created)",
}


def definition_plan(cx: SubstraitConsumer, rel: alg.DdlRel, path: str) -> Plan:
    """The plan a view keeps: its definition as the one root, with the defining plan's extensions."""
    for msg, p in nodes(rel.view_definition, f"{path}.view_definition"):
        what = _NOT_IN_DEFINITION.get(type(msg))
        if what is not None:
            raise PlanInvalidError(f"a view definition cannot hold {what}", p)
    plan = Plan()
    plan.version.CopyFrom(cx.plan.version)
    plan.extension_urns.extend(cx.plan.extension_urns)
    plan.extensions.extend(cx.plan.extensions)
    plan.relations.append(PlanRel(root=alg.RelRoot(input=rel.view_definition, names=rel.table_schema.names)))
    return plan


def to_text(plan: Plan) -> str:
    """Protobuf JSON: the form every Substrait library reads, and an auditor can."""
    return json_format.MessageToJson(plan, indent=1)


def expand(cx: SubstraitConsumer, view: ResolvedView, path: str, expanding: tuple[str, ...]) -> ResolvedTable:
    """The view's definition translated for this run (with a consumer of the run's own class)."""
    where = f"view {view.identity} (version {view.version_id})"
    if view.definition is None:
        known = ", ".join(view.dialects) or "none"
        raise ResolutionError(f"{where} has no Substrait definition (its representations: {known})", path)
    if view.identity in expanding:
        chain = " -> ".join((*expanding, view.identity))
        raise PlanInvalidError(f"{where} reads itself: {chain}", path)
    try:
        loaded = parse_plan_bytes(view.definition.encode(), uri=where)
        inner = cx.view_consumer(loaded.plan, (*expanding, view.identity))
        df = inner.root(0)
    except SubstraitSparkError as exc:
        inner_path = f" at {exc.path}" if exc.path else ""
        raise type(exc)(f"{where}: {exc.message}{inner_path}", path) from None
    return ResolvedTable(
        df,
        identity=view.identity,
        format="iceberg-view",
        catalog=view.catalog,
        metadata_location=view.metadata_location,
        view_version=view.version_id,
    )
