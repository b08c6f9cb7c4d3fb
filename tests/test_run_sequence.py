"""The one run sequence (`hooks/run_sequence.py`): what every front end's failed run gets before Spark — its failed
report and its audit record, the observer told in one order — and the one table of exit codes. No Spark: each plan
here fails before a session is asked for (the factory would fail the test)."""

from __future__ import annotations

import json

import pytest
from plan_builder import PlanBuilder
from substrait_spark.consumer.errors import (
    ConfigurationError,
    ExecutionError,
    ExitCode,
    PlanInvalidError,
    PolicyError,
    ResolutionError,
    UnsupportedFeatureError,
)
from substrait_spark.hooks.plan_run import NOT_RETRYABLE, PlanRunner, RunSettings
from substrait_spark.hooks.run_sequence import PlanRun, RunObserver

pytestmark = [pytest.mark.unit]


def no_session(catalog_conf):
    raise AssertionError("a Spark session was asked for")


class Calls(RunObserver):
    def __init__(self) -> None:
        self.calls: list[str] = []

    def on_read(self, obj):
        self.calls.append("read")

    def on_loaded(self, planned):
        self.calls.append("loaded")

    def on_report(self, report, error):
        self.calls.append(f"report:{report.status.value}")

    def on_audit(self, result):
        self.calls.append(f"audit:{result.status if result else None}")

    def on_error(self, error):
        self.calls.append(f"error:{error.exit_code}")


def _runner(tmp_path) -> PlanRunner:
    return PlanRunner(RunSettings(audit_log=f"jsonl:{tmp_path / 'audit.jsonl'}"), session=no_session)


def _records(tmp_path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]


def test_a_plan_not_found_gets_a_failed_report_audited_and_its_exit_code(tmp_path):
    missing = str(tmp_path / "missing.json")
    observer = Calls()
    result = PlanRun(_runner(tmp_path), missing).execute(run_key="k", observer=observer)
    assert result.exit_code == ExitCode.INVALID_INPUT and result.report is None and result.planned is None
    assert observer.calls == ["error:2", "audit:written"]
    (record,) = _records(tmp_path)
    assert (record["plan_uri"], record["status"], record["run_key"]) == (missing, "failed", "k")
    assert record["error"]["exit_code"] == 2 and "missing.json" in record["error"]["message"]
    with pytest.raises(PlanInvalidError):
        result.raise_error()


def test_an_unsupported_plan_is_read_parsed_and_refused_with_its_report_in_that_order(tmp_path):
    from substrait import algebra_pb2 as alg

    rel = alg.Rel()
    rel.extension_leaf.detail.type_url = "type.googleapis.com/google.protobuf.Empty"
    plan = tmp_path / "unsupported.bin"
    plan.write_bytes(PlanBuilder().plan(rel, ["x"]).SerializeToString())
    run = PlanRun(_runner(tmp_path), str(plan))
    observer = Calls()
    result = run.execute(observer=observer)
    assert result.exit_code == ExitCode.UNSUPPORTED and result.report is not None
    assert observer.calls == ["read", "loaded", "error:3", "report:failed", "audit:written"]
    (record,) = _records(tmp_path)
    assert record["plan_sha256"] == result.report.plan_sha256 == run.load().loaded.sha256
    assert record["error"]["exit_code"] == 3


def test_a_stage_done_before_execute_is_not_done_again(tmp_path, monkeypatch):
    """The CLI loads and checks a batch before it runs any; OpenLineage's start event loads first: one read."""
    from substrait_spark.hooks import plan_store

    reads: list[str] = []
    read = plan_store.PlanStore.read
    monkeypatch.setattr(plan_store.PlanStore, "read", lambda self, *a, **k: reads.append(a[0]) or read(self, *a, **k))
    plan = tmp_path / "bad.json"
    plan.write_text("not a plan")
    run = PlanRun(_runner(tmp_path), str(plan))
    with pytest.raises(PlanInvalidError) as first:
        run.load()
    result = run.execute()
    assert result.error is first.value and reads == [str(plan)]


def test_exit_codes_are_one_table():
    assert [int(c) for c in ExitCode] == [0, 1, 2, 3, 4, 5]
    classes = [ExecutionError, PlanInvalidError, UnsupportedFeatureError, ResolutionError, ConfigurationError]
    assert [c.exit_code for c in [*classes, PolicyError]] == [1, 2, 3, 4, 2, 5]
    assert all(type(c.exit_code) is int for c in classes)  # plain ints in reports, XComs and Dagster metadata
    assert sorted(NOT_RETRYABLE) == [ExitCode.INVALID_INPUT, ExitCode.UNSUPPORTED, ExitCode.REFUSED_BY_POLICY]
