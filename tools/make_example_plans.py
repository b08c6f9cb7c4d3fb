"""Write the example DAGs' plans (dags_examples/plans/) from real producer plans in the shared corpus.

`daily_pricing_summary.json`: TPC-H q1 as IBM's compliance suite (Isthmus) wrote it, with its shipping-date
cut-off `l_shipdate <= date '1998-09-01'` turned into dynamic parameter $0 (a date; the plan keeps
1998-09-01 as its default binding), so a daily DAG can pass its logical date.

`big_orders_pipeline.json`: a plan that changes a table in three steps (built with tests/plan_builder.py, the
builder the tests use): CTAS `demo.big_orders` (replace if it exists) from TPC-H orders over 400,000; INSERT
the orders between 350,000 and 400,000; DELETE those over 450,000. Run again after changing it:

    .venv/bin/python tools/make_example_plans.py [--corpus ../shared/corpus]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from google.protobuf import json_format
from substrait import algebra_pb2 as alg
from substrait import type_pb2 as tp
from substrait_spark.consumer.loading.loader import load_plan
from substrait_spark.consumer.walk import nodes

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "dags_examples" / "plans"
CUTOFF_DAYS = 10470  # 1998-09-01 as days since the epoch, IBM q01's literal


def _is_cutoff(item) -> bool:
    return (
        isinstance(item, alg.Expression)
        and item.WhichOneof("rex_type") == "literal"
        and item.literal.WhichOneof("literal_type") == "date"
        and item.literal.date == CUTOFF_DAYS
    )


def daily_pricing_summary(corpus: Path) -> str:
    plan = load_plan(corpus / "ibm-substrait-compliance-tpch" / "q01.json").plan
    found = [e for e, _ in nodes(plan) if _is_cutoff(e)]  # IBM q01 has it once, in the filter
    date_type = tp.Type(date=tp.Type.Date(nullability=tp.Type.NULLABILITY_REQUIRED))
    for e in found:
        e.Clear()
        e.dynamic_parameter.CopyFrom(alg.DynamicParameter(type=date_type, parameter_reference=0))
    if len(found) != 1:
        raise SystemExit(f"expected one cut-off literal in q01, found {len(found)}")
    plan.parameter_bindings.add(parameter_anchor=0).value.date = CUTOFF_DAYS
    header = (
        "// TPC-H q1 (Pricing Summary Report) from IBM's substrait compliance suite (Isthmus), with the cut-off\n"
        "// l_shipdate <= $0 as a dynamic parameter (a date; default 1998-09-01). Made by tools/make_example_plans.py\n"
    )
    return header + json_format.MessageToJson(plan, indent=2) + "\n"


def big_orders_pipeline() -> str:
    sys.path.insert(0, str(ROOT / "tests"))
    from plan_builder import PlanBuilder, WriteRel, decimal_, field, filter_, i64, lit, named, project, write

    names, types = ["o_orderkey", "o_totalprice"], [i64(), decimal_(15, 2)]
    b = PlanBuilder()

    def orders_where(condition) -> alg.Rel:
        rel = named("orders", ["o_orderkey", "o_custkey", "o_totalprice"], [i64(), i64(), decimal_(15, 2)])
        return project(filter_(rel, condition(field(2))), field(0), field(2), emit=[3, 4])

    def money(v: str):
        return lit(v, decimal_(15, 2))

    target = ["demo", "big_orders"]
    ctas = write(
        target,
        orders_where(lambda price: b.call("gt", price, money("400000.00"))),
        names,
        types,
        op=WriteRel.WRITE_OP_CTAS,
        create_mode=WriteRel.CREATE_MODE_REPLACE_IF_EXISTS,
    )
    insert = write(
        target,
        orders_where(
            lambda price: b.call(
                "and", b.call("gte", price, money("350000.00")), b.call("lte", price, money("400000.00"))
            )
        ),
        names,
        types,
    )
    delete = write(
        target,
        filter_(named(target, names, types), b.call("gt", field(1), money("450000.00"))),
        names,
        types,
        op=WriteRel.WRITE_OP_DELETE,
    )
    plan = b.plan(ctas, names, more=[(insert, names), (delete, names)])
    plan.version.producer = "substrait-spark tools/make_example_plans.py"
    header = "// CTAS demo.big_orders, INSERT, DELETE: three steps. Made by tools/make_example_plans.py\n"
    return header + json_format.MessageToJson(plan, indent=2) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus"))
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "daily_pricing_summary.json").write_text(daily_pricing_summary(Path(args.corpus)))
    (OUT / "big_orders_pipeline.json").write_text(big_orders_pipeline())
    print(f"wrote {OUT / 'daily_pricing_summary.json'} and {OUT / 'big_orders_pipeline.json'}")


if __name__ == "__main__":
    main()
