"""The test tiers `make test-fast` and `-m` select by: conftest refuses a test whose markers misfile it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from conftest import tier_problems

pytestmark = [pytest.mark.unit]


def _item(nodeid: str, marks: list[str], fixtures: list[str]):
    return SimpleNamespace(
        nodeid=nodeid, fixturenames=fixtures, iter_markers=lambda: [SimpleNamespace(name=m) for m in marks]
    )


def test_a_test_marked_for_what_it_uses_passes():
    items = [
        _item("tests/test_a.py::t1", ["unit"], ["tmp_path"]),
        _item("tests/test_b.py::t2", ["spark", "iceberg", "corpus"], ["spark", "lake", "corpus"]),
    ]
    assert tier_problems(items) == []


def test_misfiled_tests_are_named_once_per_module_and_problem():
    items = [
        _item("tests/test_none.py::t", ["corpus"], ["corpus"]),
        _item("tests/test_mixed.py::t", ["unit", "spark"], ["spark"]),
        _item("tests/test_lake.py::t1", ["spark"], ["spark", "lake"]),
        _item("tests/test_lake.py::t2", ["spark"], ["iceberg_spark", "lake"]),
        _item("tests/test_unit.py::t", ["unit"], ["spark"]),
    ]
    assert tier_problems(items) == [
        "tests/test_lake.py::t1: uses fixtures that need iceberg",
        "tests/test_mixed.py: marked unit and spark",
        "tests/test_none.py: no tier marker (one of unit, spark, iceberg, airflow, dagster, browser): set `pytestmark`",
        "tests/test_unit.py::t: uses fixtures that need spark",
    ]
