"""Known deviations of particular producers from the spec, keyed on the plan's declared producer and version.

Each quirk is read once per plan. A quirk either restores the producer's evident meaning (when it is
unambiguous) or makes the consumer refuse what cannot be read safely.
"""

from __future__ import annotations

from dataclasses import dataclass

from substrait.algebra_pb2 import AggregateRel
from substrait.plan_pb2 import Plan


@dataclass(frozen=True)
class Quirks:
    # DuckDB's substrait extension (spec <= 0.53, DuckDB 1.1) and DataFusion (spec <= 0.51, DataFusion 40)
    # write a ProjectRel whose output is only its expressions, without an emit: the spec's output is the
    # input columns followed by the expressions.
    #
    # Not substrait-go (producer "substrait-go"; its test fixtures declare spec 0.29): its own type model is the
    # spec's. `ProjectRel.RecordType()` is the input's types followed by the expressions' types
    # (plan/relations.go at 1a7a92cc, 009ecdb0 (v4), de668ec8), `Builder.Project` writes no emit and checks a
    # remap against input + expressions (plan/builders.go at 012d059f, v8), and its tests assert it: a Project of
    # one expression over a 2-column read has root names a, b, c and type NSTRUCT<a, b, c> (TestProjectRelation,
    # TestProjectMultipleRelation in plan/plan_builder_test.go at 099ac605, v6; TestReadProjectionPlanRoundTrip
    # in plan/read_projection_test.go at 02f0f4b3, v9). Its fixture plan/testdata/ctas_with_filter.json (each
    # of the 4 versions read) feeds a 10-column Project into a 5-column CTAS table_schema because
    # `CreateTableAsSelect` never compares its input with the schema; it is refused (exit 2), not reinterpreted:
    # its filter's `field: 1` is `name` in substrait-go's model (its reads ignored their projection, issue
    # #333) and `employee_id` under the spec, so no reading of that plan is the producer's evident meaning.
    # tests/test_producer_writes.py and tests/data/producers/substrait_go/README.md hold the details.
    project_outputs_expressions_only: bool = False
    # ibis-substrait writes correlated columns as plain field references into the enclosing record.
    unmarked_outer_references: bool = False
    # DataFusion (spec 0.51, datafusion-python 40) names a named table's columns in base_schema without
    # their types: the types are those of the table the name resolves to.
    untyped_base_schema: bool = False
    # DataFusion's producer (spec 0.52-0.85; checked with datafusion-python 55, which declares 0.85) writes an
    # AggregateRel with several grouping sets in DataFusion's own column order: each distinct grouping expression
    # once, then the grouping-set column, then the measures. The spec's order is every grouping expression as
    # listed (DataFusion lists a key once per set that uses it: ROLLUP(a, b) gives [a, b, a]), the measures, then
    # that column; the relations above count DataFusion's way (apache/datafusion#17910). DataFusion 40 (spec 0.51)
    # had no such column, and the fix (apache/datafusion#23468) deduplicates the expressions and writes an emit on
    # the aggregate that maps the spec's order back: an aggregate with its own emit is read as the spec says.
    # tests/test_datafusion_producer.py (grouping sets, rollup) holds the evidence.
    grouping_index_before_measures: bool = False

    @classmethod
    def of(cls, plan: Plan) -> Quirks:
        producer = (plan.version.producer or "").lower()
        minor = plan.version.minor_number
        return cls(
            project_outputs_expressions_only=plan.version.major_number == 0
            and ((producer == "duckdb" and minor <= 53) or (producer == "datafusion" and minor <= 51)),
            unmarked_outer_references=producer.startswith("ibis"),
            untyped_base_schema=producer == "datafusion",
            grouping_index_before_measures=producer == "datafusion"
            and plan.version.major_number == 0
            and 51 < minor <= 85,
        )

    def grouping_index_first(self, rel: AggregateRel) -> bool:
        """Whether this multi-set AggregateRel's grouping-set column precedes its measures (the consumer and the
        lineage walker both ask here)."""
        return self.grouping_index_before_measures and not rel.common.HasField("emit")

    def as_written(self, rel: AggregateRel) -> AggregateRel:
        """The aggregate in the spec's terms where the producer's order differs (DataFusion's distinct keys; the
        caller places the grouping-set column, `grouping_index_first`)."""
        return distinct_grouping_expressions(rel) if self.grouping_index_first(rel) else rel

    def notes(self) -> list[str]:
        out = []
        if self.project_outputs_expressions_only:
            out.append("DuckDB <= 1.1 plan: ProjectRel outputs read as its expressions only (the producer's meaning)")
        if self.grouping_index_before_measures:
            out.append(
                "DataFusion plan: an AggregateRel with several grouping sets and no emit of its own outputs its "
                "grouping-set column before the measures (the producer's meaning)"
            )
        return out


def distinct_grouping_expressions(rel: AggregateRel) -> AggregateRel:
    """The aggregate with each grouping expression once (first appearance), its groupings' references remapped."""
    first: dict[bytes, int] = {}
    remap = [first.setdefault(e.SerializeToString(deterministic=True), len(first)) for e in rel.grouping_expressions]
    if len(first) == len(remap):
        return rel
    out = AggregateRel()
    out.CopyFrom(rel)
    del out.grouping_expressions[:]
    out.grouping_expressions.extend(e for i, e in enumerate(rel.grouping_expressions) if remap.index(remap[i]) == i)
    for g in out.groupings:
        refs = [remap[r] if 0 <= r < len(remap) else r for r in g.expression_references]
        del g.expression_references[:]
        g.expression_references.extend(refs)
    return out
