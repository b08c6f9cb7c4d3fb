"""The fuzz target's own parts (`tests/fuzz_plans.py`): cases are reproducible alone, mutations change the plan,
and an ending is judged clean only when it is one of ours."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from fuzz_plans import MUTATIONS, _problem, discover, make_case

pytestmark = [pytest.mark.unit, pytest.mark.corpus]


def test_a_case_is_reproduced_from_its_seed_and_index_alone(corpus: Path) -> None:
    plans = discover(corpus)
    originals = {p.rel: p.data for p in plans}
    cases = [make_case(plans, 7, i) for i in range(300)]
    assert [make_case(plans, 7, i) for i in (299, 3, 150)] == [cases[299], cases[3], cases[150]]
    assert Counter(c.mutation for c in cases).keys() == MUTATIONS.keys()  # every mutation is drawn
    changed = sum(c.data != originals[c.plan] for c in cases)
    assert changed >= 290, f"only {changed} of 300 mutated plans differ from their originals"
    assert len({c.plan for c in cases}) > 150  # spread over the corpus


@pytest.mark.parametrize(
    "code, stderr, stdout, clean",
    [
        (0, "", "== q (root 0, 1 rows)", True),
        (2, "substrait-spark: p.json: invalid plan: truncated (at relations)\n", "", True),
        (3, "", "p.json: 1 unsupported feature(s)\n  - x (at relations[0])\n", True),
        (1, "substrait-spark: internal error: KeyError: 'x'\n", "", False),
        (1, "substrait-spark: p: x\nTraceback (most recent call last):\n  ...\n", "", False),
        (2, "substrait-spark: p: first line\nsecond line\n", "", False),
        (4, "", "", False),
        (130, "", "", False),
    ],
)
def test_endings_are_judged(code: int, stderr: str, stdout: str, clean: bool) -> None:
    assert (_problem(code, stderr, stdout) is None) is clean
