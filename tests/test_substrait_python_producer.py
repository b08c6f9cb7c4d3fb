"""Plans of the ``substrait`` Python package at its pinned version (``tools/pinned_envs.py``), built by
the test set-up through the package's three front ends (``substrait.dataframe``, ``substrait.builders``,
``substrait.sql``; spec 0.106, extension URNs) in the package's own environment (``producers/substrait_python.py``),
run on Spark and compared with DuckDB's answer to the same question in SQL (``producers/substrait_cases.py``).
"""

from __future__ import annotations

import pytest
from producers import substrait_python
from producers.check import assert_gives_duckdb_answer
from producers.substrait_cases import CASES

# Each test carries its tier: `unit` (pure Python) or `spark`.

# Plans the package writes that the engine refuses, with the error expected (an exact list: a fix shrinks it).
REFUSED: dict[str, str] = {}


@pytest.fixture(scope="module")
def plans():
    return substrait_python.plans()


@pytest.mark.unit
def test_the_package_writes_every_case(plans):
    """Every case is built by the pinned package, as a plan of its spec version with extension URNs."""
    from substrait.plan_pb2 import Plan

    errors = {name: g.error for name, g in plans.items() if g.plan is None}
    assert not errors, errors
    assert {c.front_end for c in CASES} == {"dataframe", "builders", "sql"}
    for g in plans.values():
        plan = Plan.FromString(g.plan.read_bytes())
        assert (plan.version.major_number, plan.version.minor_number) == (0, 106), g.name
        assert all(u.urn.startswith("extension:io.substrait:") for u in plan.extension_urns), g.name


@pytest.mark.spark
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_plan_gives_duckdbs_answer(case, plans, spark, tpch_resolver, duckdb_oracle):
    if case.name in REFUSED:
        from substrait_spark.consumer.errors import SubstraitSparkError

        with pytest.raises(SubstraitSparkError, match=REFUSED[case.name]):
            assert_gives_duckdb_answer(plans[case.name], case.sql, spark, tpch_resolver, duckdb_oracle, case.ordered)
        return
    assert_gives_duckdb_answer(plans[case.name], case.sql, spark, tpch_resolver, duckdb_oracle, case.ordered)
