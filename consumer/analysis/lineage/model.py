"""What column lineage is made of, and its OpenLineage rendering (ColumnLineageDatasetFacet 1-2-0).

A value's lineage is `Sources`: the input columns (`InputField`: dataset + field) it derives from, each with the
set of `Transformation`s relating them — DIRECT (IDENTITY, TRANSFORMATION, AGGREGATION: the value is computed
from the input) or INDIRECT (JOIN, FILTER, GROUP_BY, SORT, WINDOW, CONDITIONAL: the input decides which rows
there are, in what order, or which branch gives the value). Sources compose along the plan: a value derived from
a column that itself derives from `x` derives from `x` (see `compose`).

A relation's lineage (`RelLineage`) is one `Col` per output column plus `indirect`: INDIRECT sources that affect
every row of the relation (join keys, filters, grouping keys, sort keys), kept once rather than repeated per
column — OpenLineage's dataset-level lineage (`dataset` in the facet).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

DIRECT = "DIRECT"
INDIRECT = "INDIRECT"
_RANK = {"IDENTITY": 0, "TRANSFORMATION": 1, "AGGREGATION": 2}

SCHEMA_URL = "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet"
# OpenLineage wants a URI naming the producer; part of a facet, overridable by the caller (`Output.facet`).
PRODUCER = "urn:python-package:substrait-spark"
DEFAULT_NAMESPACE = "substrait"


@dataclass(frozen=True, order=True)
class Transformation:
    """How an output value relates to one input column (OpenLineage's `transformations[]` item)."""

    type: str  # DIRECT | INDIRECT
    subtype: str
    masking: bool = False  # the input's value is obfuscated (a hash, a count)

    def __str__(self) -> str:
        return f"{self.type}/{self.subtype}" + ("/masking" if self.masking else "")

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "subtype": self.subtype, "description": "", "masking": self.masking}


IDENTITY = Transformation(DIRECT, "IDENTITY")
TRANSFORMATION = Transformation(DIRECT, "TRANSFORMATION")
AGGREGATION = Transformation(DIRECT, "AGGREGATION")
JOIN = Transformation(INDIRECT, "JOIN")
FILTER = Transformation(INDIRECT, "FILTER")
GROUP_BY = Transformation(INDIRECT, "GROUP_BY")
SORT = Transformation(INDIRECT, "SORT")
WINDOW = Transformation(INDIRECT, "WINDOW")
CONDITIONAL = Transformation(INDIRECT, "CONDITIONAL")


def masked(t: Transformation) -> Transformation:
    return Transformation(t.type, t.subtype, True)


def compose(outer: Transformation, inner: Transformation) -> Transformation:
    """`outer` applied to a value that relates to an input by `inner`.

    A value used indirectly (a filter's condition) makes its inputs indirect the same way, whatever they were;
    a value used directly keeps an indirect input indirect (a column picked by a CASE condition stays
    CONDITIONAL); two direct steps give the stronger subtype (IDENTITY < TRANSFORMATION < AGGREGATION), masking
    if either masks.
    """
    if outer.type == INDIRECT:
        return outer
    if inner.type == INDIRECT:
        return inner
    subtype = max(outer.subtype, inner.subtype, key=lambda s: _RANK.get(s, 1))
    return Transformation(DIRECT, subtype, outer.masking or inner.masking)


@dataclass(frozen=True, order=True)
class Dataset:
    namespace: str
    name: str


@dataclass(frozen=True, order=True)
class InputField:
    dataset: Dataset
    field: str

    def to_dict(self) -> dict[str, Any]:
        return {"namespace": self.dataset.namespace, "name": self.dataset.name, "field": self.field}


# A value's lineage: input column -> how the value relates to it. Treated as immutable once built.
Sources = Mapping[InputField, frozenset[Transformation]]
NONE: Sources = MappingProxyType({})


def apply(t: Transformation, sources: Sources) -> dict[InputField, frozenset[Transformation]]:
    """The lineage of a value computed from `sources` by a step of kind `t`."""
    return {f: frozenset(compose(t, x) for x in ts) for f, ts in sources.items()}


def merge(*parts: Sources) -> dict[InputField, frozenset[Transformation]]:
    out: dict[InputField, frozenset[Transformation]] = {}
    for part in parts:
        for f, ts in part.items():
            out[f] = out[f] | ts if f in out else frozenset(ts)
    return out


def indirect_only(sources: Sources) -> dict[InputField, frozenset[Transformation]]:
    out = {f: frozenset(t for t in ts if t.type == INDIRECT) for f, ts in sources.items()}
    return {f: ts for f, ts in out.items() if ts}


# --- relations -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Col:
    """One output column of a relation: its lineage, its Substrait type where known (to lay out nested output
    names), and whether it is an aggregate's grouping-set index column."""

    sources: Sources
    type: Any = None  # substrait.type_pb2.Type or None
    grouping_index: bool = False


@dataclass(frozen=True)
class RelLineage:
    columns: list[Col]
    indirect: Sources = field(default_factory=lambda: NONE)  # INDIRECT sources affecting every row
    # For a cross product (or inner join) of several inputs, filtered or not: each input's column count, so that
    # a filter above can tell join predicates (`WHERE a.k = b.k`) from filters. None for anything else.
    segments: tuple[int, ...] | None = None

    def with_indirect(self, *parts: Sources) -> RelLineage:
        return RelLineage(self.columns, merge(self.indirect, *parts), self.segments)

    def select(self, positions: Iterable[int]) -> RelLineage:
        return RelLineage([self.columns[i] for i in positions], self.indirect)


@dataclass(frozen=True)
class Scope:
    """The record an expression sees (its input's columns) and, through `outer`, the records of the queries
    enclosing a subquery (reached by outer references, `steps_out`), as the consumer's `Scope`."""

    columns: list[Col]
    outer: Scope | None = None

    def up(self, steps: int) -> Scope | None:
        s: Scope | None = self
        for _ in range(steps):
            s = s.outer if s else None
        return s


# --- the result ----------------------------------------------------------------------------------------------


@dataclass
class InputDataset:
    """A dataset the plan reads, with the columns the plan declares for it (base schema), in plan order."""

    dataset: Dataset
    kind: str  # named_table | local_files | iceberg_table | virtual_table | written_table
    fields: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "namespace": self.dataset.namespace,
            "name": self.dataset.name,
            "kind": self.kind,
            "fields": list(self.fields),
        }


def _input_fields(sources: Sources) -> list[dict[str, Any]]:
    return [
        {**f.to_dict(), "transformations": [t.to_dict() for t in sorted(ts, key=_order)]}
        for f, ts in sources.items()
        if ts
    ]


def _order(t: Transformation) -> tuple:
    return (t.type != DIRECT, _RANK.get(t.subtype, 9), t.subtype, t.masking)


@dataclass
class Output:
    """One thing the plan produces: a root's rows, or a table (or view) a write, DDL or update changes."""

    kind: str  # root | write | ddl | update
    path: str  # where it is in the plan
    columns: list[tuple[str, Sources]]  # output column name -> its lineage, in column order
    indirect: Sources = field(default_factory=lambda: NONE)  # dataset-level INDIRECT lineage
    dataset: Dataset | None = None  # the table written (None for a root)
    operation: str | None = None  # insert | delete | update | ctas | create_table | create_view | ...
    index: int | None = None  # a root's index among the plan's roots

    @property
    def names(self) -> list[str]:
        return [n for n, _ in self.columns]

    def field(self, name: str) -> Sources:
        """The lineage of output column `name` (case-insensitive; equal names merged)."""
        found = [s for n, s in self.columns if n.lower() == name.lower()]
        if not found:
            raise KeyError(f"no output column {name!r} (columns: {self.names})")
        return merge(*found)

    def fields(self) -> dict[str, Sources]:
        out: dict[str, Sources] = {}
        for n, s in self.columns:
            out[n] = merge(out[n], s) if n in out else s
        return out

    def facet(self, dataset_lineage: bool = True, producer: str = PRODUCER) -> dict[str, Any]:
        """The OpenLineage `columnLineage` dataset facet. With `dataset_lineage` false, dataset-level INDIRECT
        lineage is repeated in every field (OpenLineage's legacy representation) and `dataset` is empty."""
        fields = {}
        for name, sources in self.fields().items():
            src = sources if dataset_lineage else merge(sources, self.indirect)
            inputs = _input_fields(src)
            if inputs:
                fields[name] = {"inputFields": inputs}
        return {
            "_producer": producer,
            "_schemaURL": SCHEMA_URL,
            "fields": fields,
            "dataset": _input_fields(self.indirect) if dataset_lineage else [],
        }

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "path": self.path}
        if self.index is not None:
            out["index"] = self.index
        if self.dataset is not None:
            out.update(namespace=self.dataset.namespace, name=self.dataset.name)
        if self.operation:
            out["operation"] = self.operation
        out["columns"] = self.names
        out["columnLineage"] = self.facet()
        return out


@dataclass
class Lineage:
    """Column lineage of a whole plan: what it reads, and the lineage of every root and every table it writes."""

    inputs: list[InputDataset]
    outputs: list[Output]
    notes: list[str] = field(default_factory=list)

    @property
    def roots(self) -> list[Output]:
        return [o for o in self.outputs if o.kind == "root"]

    @property
    def written(self) -> list[Output]:
        return [o for o in self.outputs if o.kind != "root"]

    def output(self, name: str) -> Output:
        """The written table (or view) called `name` (as the plan or the `names` hook names it), last write wins."""
        found = [o for o in self.written if o.dataset is not None and o.dataset.name.lower() == name.lower()]
        if not found:
            raise KeyError(f"the plan writes no table {name!r}")
        return found[-1]

    def to_dict(self) -> dict[str, Any]:
        return {
            "inputs": [i.to_dict() for i in self.inputs],
            "outputs": [o.to_dict() for o in self.outputs],
            "notes": list(self.notes),
        }
