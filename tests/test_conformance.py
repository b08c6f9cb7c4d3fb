"""The spec's function conformance cases (substrait-extensions `testcases/`), run through the consumer on Spark.

Exactly the cases listed in tests/conformance/expected_failures.txt fail: a case that starts failing is a
regression; a case that starts passing must be removed from the file (regenerate it and docs/conformance.md with
`.venv/bin/python -m tests.conformance.report`), so the file only shrinks.
"""

from __future__ import annotations

import pytest
from conformance.cases import load_cases
from conformance.configurations import EXTRA_FAILURES
from conformance.runner import EXPECTED_FAILURES, Runner, read_expected_failures
from spark_modes import configuration

# Each test carries its tier: `unit` (pure Python) or `spark`.


@pytest.mark.unit
def test_cases_parse():
    cases = load_cases()
    assert len(cases) > 1000
    files = {c.file for c in cases}
    assert len(files) > 100
    assert all(c.urn.startswith("extension:") for c in cases)


@pytest.mark.spark
def test_conformance_failures_are_exactly_the_expected_ones(spark):
    """The same cases fail in every configuration (classic and Connect, Spark 3.5 and 4), but those that
    conformance/configurations.py lists for this one, with the reason."""
    outcomes = Runner(spark).run_all()
    failing = {o.case.id: o.reason for o in outcomes if not o.passed}
    expected = {**read_expected_failures(), **EXTRA_FAILURES[configuration()]}
    print(f"conformance on {configuration()}: {len(outcomes) - len(failing)} of {len(outcomes)} cases pass")
    new_failures = sorted(set(failing) - set(expected))
    now_passing = sorted(set(expected) - set(failing))
    unknown = now_passing and sorted(set(expected) - {o.case.id for o in outcomes})
    msg = []
    if new_failures:
        msg.append("newly failing:\n" + "\n".join(f"  {i}  {failing[i]}" for i in new_failures[:50]))
    if now_passing:
        msg.append(f"now passing (remove from {EXPECTED_FAILURES.name}):\n" + "\n".join(f"  {i}" for i in now_passing))
    if unknown:
        msg.append("listed but not a case: " + ", ".join(unknown))
    assert not msg, "\n".join(msg) + "\nregenerate with: .venv/bin/python -m tests.conformance.report"
