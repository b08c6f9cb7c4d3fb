"""Known deviations of particular producers from the spec, keyed on the plan's declared producer and version.

Each quirk is read once per plan. A quirk either restores the producer's evident meaning (when it is
unambiguous) or makes the consumer refuse what cannot be read safely.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from substrait.algebra_pb2 import AggregateRel
from substrait.algebra_pb2 import Expression as _Expression
from substrait.plan_pb2 import Plan


@dataclass(frozen=True)
class FunctionAlias:
    """A producer's own name for a function of known meaning: the function it is (base name and extension URN) and
    the options its name fixes (`stddev_pop` is the spec's `std_dev` with `distribution: POPULATION`)."""

    base: str
    extension: str
    options: tuple[tuple[str, str], ...] = ()


ARITHMETIC = "extension:io.substrait:functions_arithmetic"
# Functions internal to DuckDB, which its optimizer leaves in the plans it writes (translated only for its plans).
DUCKDB_INTERNAL = "extension:org.duckdb:duckdb_internal"
_SAMPLE = (("distribution", "SAMPLE"),)
_POPULATION = (("distribution", "POPULATION"),)

# Function names particular producers write with no extension URN, for functions whose meaning is known, by the
# producer's declared name (lower case). Only a declaration with no extension URN is read this way (a name under an
# extension means what that extension says), and only from these producers: never by a name's likeness to a spec
# name. Each entry's evidence is the producer's plan of the SQL function it names; tests/test_producer_aliases.py
# holds it: DataFusion's plans written again at the pinned version, DuckDB 1.1.3's stored with their SQL.
FUNCTION_ALIASES: Mapping[str, Mapping[str, FunctionAlias]] = MappingProxyType(
    {
        # DataFusion (datafusion-python 55, spec 0.85) writes its own aggregate and operator names, each with
        # extension_urn_reference 4294967295 (none): SQL stddev/stddev_samp -> "stddev", stddev_pop ->
        # "stddev_pop", var/var_samp -> "var", var_pop -> "var_pop" (DataFusion has no `variance`); the operators
        # `>>` and `<<` -> "bitwise_shift_right" / "bitwise_shift_left" (datafusion-substrait's operator names; its
        # GROUPING() is `(grouping_id & mask) >> n` on the i8 grouping id: TPC-DS q70, q86). Its shifts take the
        # shift amount modulo the base's width (Rust's wrapping_shr/shl: i8 100 >> 9 is 50), as `shift_right`
        # translates them for i8 and i16.
        "datafusion": {
            "stddev": FunctionAlias("std_dev", ARITHMETIC, _SAMPLE),
            "stddev_pop": FunctionAlias("std_dev", ARITHMETIC, _POPULATION),
            "var": FunctionAlias("variance", ARITHMETIC, _SAMPLE),
            "var_pop": FunctionAlias("variance", ARITHMETIC, _POPULATION),
            "bitwise_shift_right": FunctionAlias("shift_right", ARITHMETIC),
            "bitwise_shift_left": FunctionAlias("shift_left", ARITHMETIC),
        },
        # DuckDB's substrait extension (1.1.3, spec 0.53; producer "DuckDB") writes SQL stddev/variance as the
        # spec's `std_dev:fp64` / `variance:fp64`, but stddev_samp, stddev_pop, var_samp and var_pop under DuckDB's
        # names with no signature and no extension (TPC-DS q17: "stddev_samp"). Its optimizer leaves
        # "constant_or_null(c, args...)" in filters (TPC-DS q13, q15, q48): `c` when every arg is non-null, else
        # NULL (DuckDB's ConstantOrNullFunction, src/function/scalar/generic/constant_or_null.cpp).
        "duckdb": {
            "stddev_samp": FunctionAlias("std_dev", ARITHMETIC, _SAMPLE),
            "stddev_pop": FunctionAlias("std_dev", ARITHMETIC, _POPULATION),
            "var_samp": FunctionAlias("variance", ARITHMETIC, _SAMPLE),
            "var_pop": FunctionAlias("variance", ARITHMETIC, _POPULATION),
            "constant_or_null": FunctionAlias("constant_or_null", DUCKDB_INTERNAL),
        },
    }
)
_NO_ALIASES: Mapping[str, FunctionAlias] = MappingProxyType({})
IfThen = _Expression.IfThen


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
    # DataFusion's producer (the same versions; checked with datafusion-python 55) writes into that grouping-set
    # column DataFusion's own `__grouping_id`, not the set's index the spec defines: a bitmask with one bit per
    # distinct grouping expression, the first the most significant, set where the row's set leaves the expression
    # out (ROLLUP(a, b): 0, 1, 3 where the index is 0, 1, 2). Its GROUPING(x) reads that bit,
    # `(grouping_id & mask) >> n` (TPC-DS q70, q86). Reported as apache/datafusion#25208 (open; PR #25527 would
    # write the index). tests/test_producer_aliases.py (ROLLUP with GROUPING, against DuckDB) holds the evidence.
    grouping_id_bitmask: bool = False
    # DataFusion's producer (every version read here; `from_case` in datafusion-substrait, checked with 55) writes a
    # simple CASE (`CASE mean WHEN 0 THEN 0 ELSE stdev / mean END`, TPC-DS q39) as an IfThen whose first clause has
    # an `if` (the operand) and no `then`; each following clause's `if` is a value the operand equals (SQL's
    # equality: a NULL operand matches none). DataFusion's consumer reads it so.
    case_operand_clause: bool = False
    # The producer's own names for known functions, written with no extension URN (`FUNCTION_ALIASES`).
    function_aliases: Mapping[str, FunctionAlias] = field(default_factory=lambda: _NO_ALIASES, hash=False)

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
            grouping_id_bitmask=producer == "datafusion" and plan.version.major_number == 0 and 51 < minor <= 85,
            case_operand_clause=producer == "datafusion",
            function_aliases=FUNCTION_ALIASES.get(producer, _NO_ALIASES),
        )

    def grouping_index_first(self, rel: AggregateRel) -> bool:
        """Whether this multi-set AggregateRel's grouping-set column precedes its measures (the consumer and the
        lineage walker both ask here)."""
        return self.grouping_index_before_measures and not rel.common.HasField("emit")

    def as_written(self, rel: AggregateRel) -> AggregateRel:
        """The aggregate in the spec's terms where the producer's order differs (DataFusion's distinct keys; the
        caller places the grouping-set column, `grouping_index_first`)."""
        return distinct_grouping_expressions(rel) if self.grouping_index_first(rel) else rel

    def grouping_set_ids(self, sets: list[list[int]], keys: int) -> list[int]:
        """The grouping-set column's value for each set (given as indexes of its `keys` distinct grouping
        expressions): the set's index, or the producer's bitmask (`grouping_id_bitmask`)."""
        if not self.grouping_id_bitmask:
            return list(range(len(sets)))
        return [sum(1 << (keys - 1 - k) for k in range(keys) if k not in s) for s in sets]

    def grouping_id_refusal(self, sets: list[list[int]], keys: int) -> str | None:
        """Why the grouping-set column of these sets cannot be given the producer's values, or None: DataFusion
        separates repeated sets by an ordinal in higher bits, a layout not checked here."""
        if self.grouping_id_bitmask and len(sets) > 1:
            if len({frozenset(s) for s in sets}) < len(sets):
                return "DataFusion grouping id of repeated grouping sets"
            if keys > 30:
                return "DataFusion grouping id of more than 30 grouping expressions"
        return None

    def case_operand(self, e: IfThen) -> bool:
        """Whether this IfThen's first clause is a simple CASE's operand (`case_operand_clause`), not a condition."""
        return self.case_operand_clause and len(e.ifs) > 1 and not e.ifs[0].HasField("then")

    def notes(self) -> list[str]:
        out = []
        if self.project_outputs_expressions_only:
            out.append("DuckDB <= 1.1 plan: ProjectRel outputs read as its expressions only (the producer's meaning)")
        if self.grouping_index_before_measures:
            out.append(
                "DataFusion plan: an AggregateRel with several grouping sets and no emit of its own outputs its "
                "grouping-set column before the measures (the producer's meaning)"
            )
        if self.grouping_id_bitmask:
            out.append(
                "DataFusion plan: an AggregateRel's grouping-set column holds DataFusion's grouping id (a bit per "
                "grouping expression the set leaves out), not the set's index (the producer's meaning)"
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
