"""Translating a plan changes no table: its write, DDL and update relations become steps (`PendingStep`s) that only
a run executes, root by root, after translating the root. So a translator (explain, a caller of `root(n)`) can look
at a plan that writes without writing, and a run's `translate_ms` is translation alone: each commit's time is in
its own step record."""

from __future__ import annotations

import pytest
from plan_builder import (
    DdlRel,
    PlanBuilder,
    aggregate,
    ddl,
    field,
    filter_,
    fp64,
    i64,
    lit,
    named,
    reference,
    sorted_rows,
    string,
    update,
    virtual,
    write,
)
from substrait_spark.consumer import to_dataframe
from substrait_spark.consumer.errors import TargetRefusedError
from substrait_spark.consumer.translation.consumer import SubstraitConsumer
from substrait_spark.consumer.translation.steps import StepObject, StepRelation
from substrait_spark.hooks.iceberg_writes import WritableIcebergResolver
from test_write_steps import (  # noqa: F401
    KEYED,
    NAMES,
    TYPES,
    W,
    catalogs_fixture,
    content,
    ns_fixture,
    rows_of,
    run,
    table,
    values,
)

pytestmark = [pytest.mark.spark, pytest.mark.iceberg]

D = DdlRel
KEY_TYPES = [i64(False), string(), fp64()]  # table `k`'s: `id` is its identifier field
UPDATE, RECORDS = W.WRITE_OP_UPDATE, W.OUTPUT_MODE_MODIFIED_RECORDS


def every_kind_of_step(ns: str):
    """One root per kind of step: INSERT, DELETE by predicate, UPDATE write (records out), UpdateRel, CTAS, CREATE,
    ALTER and DROP of tables."""
    b = PlanBuilder()
    doomed = filter_(named([ns, "t"], NAMES, TYPES), b.call("gt", field(0), lit(1, i64()), out=None))
    roots = [
        (write([ns, "t"], values(rows_of([7])), NAMES, TYPES), NAMES),
        (write([ns, "t"], doomed, NAMES, TYPES, op=W.WRITE_OP_DELETE), NAMES),
        (
            write([ns, "k"], virtual(NAMES, KEY_TYPES, [(1, "one", 9.0)]), NAMES, KEY_TYPES, UPDATE, output=RECORDS),
            NAMES,
        ),
        (update([ns, "t"], NAMES, TYPES, b.call("equal", field(0), lit(0, i64())), {1: lit("zero")}), NAMES),
        (write([ns, "c"], values(rows_of([1, 2])), NAMES, TYPES, op=W.WRITE_OP_CTAS), NAMES),
        (ddl([ns, "d"], D.DDL_OP_CREATE, D.DDL_OBJECT_TABLE, NAMES, TYPES), []),
        (ddl([ns, "k"], D.DDL_OP_ALTER, D.DDL_OBJECT_TABLE, NAMES[:2], KEY_TYPES[:2]), []),
        (ddl([ns, "gone"], D.DDL_OP_DROP), []),
    ]
    return b.plan(roots[0][0], roots[0][1], more=roots[1:])


def state(lake, ns: str) -> dict[str, list[int] | None]:
    """Every table of the namespace and its snapshot ids (None: no such table)."""
    out: dict[str, list[int] | None] = {}
    for name in ("t", "k", "gone", "c", "d"):
        ident = f"{ns}.{name}"
        out[name] = (
            [s.snapshot_id for s in lake.catalog.load_table(ident).snapshots()]
            if lake.catalog.table_exists(ident)
            else None
        )
    return out


def test_translating_every_kind_of_step_changes_no_table(lake, catalogs, ns):
    table(lake, ns, range(3))
    table(lake, ns, range(3), schema=KEYED, name="k")
    table(lake, ns, range(1), name="gone")
    before = state(lake, ns)
    assert before["c"] is None and before["d"] is None
    plan = every_kind_of_step(ns)
    cx = SubstraitConsumer(lake.spark, plan, WritableIcebergResolver(catalogs))
    dfs = [cx.root(n) for n in range(len(plan.relations))]
    steps = cx.take_steps()
    assert [(s.relation, s.op) for s in steps] == [
        (StepRelation.WRITE, "INSERT"),
        (StepRelation.WRITE, "DELETE"),
        (StepRelation.WRITE, "UPDATE"),
        (StepRelation.UPDATE, "UPDATE"),
        (StepRelation.WRITE, "CTAS"),
        (StepRelation.DDL, "CREATE"),
        (StepRelation.DDL, "ALTER"),
        (StepRelation.DDL, "DROP"),
    ]
    assert [s.path for s in steps] == [
        f"relations[{i}].root.input.{k}"
        for i, k in enumerate(["write", "write", "write", "update", "write", "ddl", "ddl", "ddl"])
    ]
    assert [s.target for s in steps] == [(ns, n) for n in ("t", "t", "k", "t", "c", "d", "k", "gone")]
    assert all(s.object is StepObject.TABLE for s in steps)
    assert steps[0].names == tuple(NAMES) and steps[2].records and not steps[0].records
    # The inputs are translated — lazy DataFrames, nothing ran — except the DELETE by predicate's (its executor
    # translates the filter over the table the run pins).
    assert [s.input is not None for s in steps] == [True, False, True, False, True, False, False, False]
    assert sorted(steps[4].input.frame.collect()) == sorted(
        lake.spark.createDataFrame(rows_of([1, 2]), NAMES).collect()
    )
    assert [df.columns for df in dfs[:3]] == [NAMES] * 3 and [len(df.columns) for df in dfs[5:]] == [3, 2, 0]
    assert state(lake, ns) == before  # no commit, no table created or dropped
    assert content(lake, ns) == rows_of(range(3))
    cx.close()


def test_to_dataframe_refuses_a_plan_with_steps_and_changes_nothing(lake, catalogs, ns):
    table(lake, ns, range(3))
    before = state(lake, ns)
    plan = PlanBuilder().plan(write([ns, "c"], values(rows_of([5])), NAMES, TYPES, op=W.WRITE_OP_CTAS), NAMES)
    with pytest.raises(TargetRefusedError, match="outside a run") as info:
        to_dataframe(plan, lake.spark, WritableIcebergResolver(catalogs))
    assert info.value.path == "relations[0].root.input.write"
    assert state(lake, ns) == before


def test_a_run_times_translation_without_the_commits(lake, catalogs, ns):
    """The same plan run: every step commits, in plan order, each timed in its own record; translate_ms is
    translation alone (before, it held the commits too: never less than their sum)."""
    table(lake, ns, range(3))
    table(lake, ns, range(3), schema=KEYED, name="k")
    table(lake, ns, range(1), name="gone")
    report = run(lake, catalogs, every_kind_of_step(ns), run_key="dag/r/side-effects")
    assert [s.kind.value for s in report.steps] == [
        "insert", "delete", "update", "update", "ctas", "create_table", "alter_table", "drop_table",
    ]  # fmt: skip
    assert [s.status.value for s in report.steps] == ["committed"] * 8
    assert report.steps[2].rows == 1 and report.outputs[2].rows == 1  # the UPDATE's after-image, its output
    committing = sum(s.duration_s or 0 for s in report.steps) * 1000
    assert report.translate_ms is not None and report.translate_ms < committing
    now = state(lake, ns)
    assert now["gone"] is None and now["c"] is not None and now["d"] is not None
    assert content(lake, ns, "c") == rows_of([1, 2])
    assert content(lake, ns) == [(0, "zero", 0.0), (1, "n1", 1.5)]


def test_rows_an_insert_modified_reach_every_root_sharing_it(lake, catalogs, ns):
    """A write in a shared subtree runs once, with the first root that reads it; its modified rows (known once it
    committed) feed that root and the later ones."""
    table(lake, ns, range(3))
    b = PlanBuilder()
    inserted = write([ns, "t"], values(rows_of([5, 6])), NAMES, TYPES, output=RECORDS)
    counted = aggregate(reference(0), measures=[b.agg("count", field(0), out=i64(False))])
    plan = b.plan(counted, ["n"], shared=[inserted], more=[(reference(0), NAMES)])
    report = run(lake, catalogs, plan)
    assert [s.kind.value for s in report.steps] == ["insert"] and report.steps[0].rows == 2
    assert report.outputs[0].preview == [[2]]
    assert sorted_rows(report.outputs[1].preview) == rows_of([5, 6])
    assert content(lake, ns) == rows_of([0, 1, 2, 5, 6])
