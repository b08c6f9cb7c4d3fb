"""The state a durable run keeps for a later try (hooks/durable.py): which generation a try resumes, what a
finished run leaves, and the CLI's state file shared by a batch of plans."""

from __future__ import annotations

import json

import pytest
from substrait_spark.hooks.durable import FileStore, RunPhase, RunState

pytestmark = [pytest.mark.unit]


class DictStore(dict):
    def set(self, key, value):
        self[key] = json.loads(json.dumps(value))  # JSON values only, as the task state store takes


def test_a_try_resumes_the_unfinished_run_of_the_same_plan_bytes_only():
    store = DictStore()
    first = RunState(store).resume_or_start("sha-a", "v1")
    first_ledger = RunState(store)
    assert first_ledger.resume_or_start("sha-a", "v1") == first and first_ledger.resumed
    first_ledger.ledger().put("output.0.0", {"operation_id": "op", "status": "started"})
    # the entries of a generation are under its id: a try of other plan bytes starts afresh and sees none of them
    other = RunState(store)
    assert other.resume_or_start("sha-b", "v2").id != first.id and not other.resumed
    assert other.ledger().get("output.0.0") is None
    assert RunState(store).resume_or_start("sha-b", None).id == other.generation.id


def test_a_finished_run_is_reported_and_a_failed_one_starts_afresh():
    store = DictStore()
    state = RunState(store)
    gen = state.resume_or_start("sha", None)
    state.finish(RunPhase.SUCCESS, {"status": "success", "outputs": []})
    assert RunState(store).finished_report("sha") == {"status": "success", "outputs": []}
    assert RunState(store).finished_report("other") is None
    state = RunState(store)
    assert state.resume_or_start("sha", None).id != gen.id  # a finished generation is not resumed
    state.finish(RunPhase.FAILED)
    assert RunState(store).finished_report("sha") is None
    assert RunState(store).resume_or_start("sha", None).id != state.generation.id


def test_a_deferrable_run_hands_its_ledger_the_detach_callback():
    called = []
    state = RunState(DictStore(), detach=called.append)
    state.resume_or_start("sha", None)
    ledger = state.ledger()
    ledger.detach({"operation_id": "op"})
    assert called == [{"operation_id": "op"}]
    plain = RunState(DictStore())
    plain.resume_or_start("sha", None)
    assert not hasattr(plain.ledger(), "detach")  # the engine then waits in-process


def test_the_plans_of_a_batch_share_one_state_file(tmp_path):
    path = tmp_path / "state.json"
    a, b = (
        RunState(FileStore(path), header_key="substrait_run.0"),
        RunState(FileStore(path), header_key="substrait_run.1"),
    )
    a.resume_or_start("sha-a", None)
    b.resume_or_start("sha-b", None)
    a.ledger().put("output.0", {"rows": 1})
    b.ledger().put("output.0", {"rows": 2})
    again = RunState(FileStore(path), header_key="substrait_run.0")
    assert again.resume_or_start("sha-a", None) == a.generation
    assert again.ledger().get("output.0") == {"rows": 1}
    assert not list(tmp_path.glob(".state.json.*")), "a temporary file was left behind"
