"""Known deviations of particular producers from the spec, keyed on the plan's declared producer and version.

Each quirk is read once per plan. A quirk either restores the producer's evident meaning (when it is
unambiguous) or makes the consumer refuse what cannot be read safely.
"""

from __future__ import annotations

from dataclasses import dataclass

from substrait.plan_pb2 import Plan


@dataclass(frozen=True)
class Quirks:
    # DuckDB's substrait extension (spec <= 0.53, DuckDB 1.1) and DataFusion (spec <= 0.51, DataFusion 40)
    # write a ProjectRel whose output is only its expressions, without an emit: the spec's output is the
    # input columns followed by the expressions.
    project_outputs_expressions_only: bool = False
    # ibis-substrait writes correlated columns as plain field references into the enclosing record.
    unmarked_outer_references: bool = False
    # DataFusion (spec 0.51, datafusion-python 40) names a named table's columns in base_schema without
    # their types: the types are those of the table the name resolves to.
    untyped_base_schema: bool = False

    @classmethod
    def of(cls, plan: Plan) -> Quirks:
        producer = (plan.version.producer or "").lower()
        minor = plan.version.minor_number
        return cls(
            project_outputs_expressions_only=plan.version.major_number == 0
            and ((producer == "duckdb" and minor <= 53) or (producer == "datafusion" and minor <= 51)),
            unmarked_outer_references=producer.startswith("ibis"),
            untyped_base_schema=producer == "datafusion",
        )

    def notes(self) -> list[str]:
        out = []
        if self.project_outputs_expressions_only:
            out.append("DuckDB <= 1.1 plan: ProjectRel outputs read as its expressions only (the producer's meaning)")
        return out
