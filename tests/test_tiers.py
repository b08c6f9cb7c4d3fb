"""The test tiers `make test-fast` and `-m` select by: conftest refuses a test whose markers misfile it."""

from __future__ import annotations

import os
import subprocess
from types import SimpleNamespace

import pytest
from conftest import refuse_jvm, tier_problems

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


def test_under_the_unit_tier_a_jvm_start_fails_naming_the_test(monkeypatch):
    """`-m unit` points JAVA_HOME at a `java` that refuses, so Spark cannot start quietly in the pure-Python tier."""
    monkeypatch.setenv("JAVA_HOME", "/usr")  # restored after the test
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/test_x.py::test_y (call)")
    cleanups: list = []
    refuse_jvm(SimpleNamespace(add_cleanup=cleanups.append))
    java = os.path.join(os.environ["JAVA_HOME"], "bin", "java")
    done = subprocess.run([java, "-version"], capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert "a unit test started a JVM (tests/test_x.py::test_y (call)): mark it spark" in done.stderr
    for cleanup in cleanups:
        cleanup()
    assert not os.path.exists(java)
