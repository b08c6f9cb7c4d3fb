"""Running one step: its index and idempotency key, the already-committed check, timing, and its report record.

Key format: `<run key>/<slot>/<plan sha256, first 12 hex digits>/step-<index>`, stored with the commit under
`KEY_PROPERTY` (a snapshot's summary; a DDL commit's table properties; a DROP's namespace record), next to the
plan's full sha256 (`PLAN_PROPERTY`). The run key is the caller's (e.g. `dag/run/task`, never the try number);
the slot is the plan's place in the caller's batch (the CLI's position of the plan on the command line; 0 for an
Airflow task or a Dagster asset, whose run keys are their own; `run_plan(slot=)`, 0 by default). So a retry of the
same plan finds the commits its earlier try made and skips them, and two plans never share a key. A commit on the
target under the same run key, slot and step index but another plan's sha256 means the run key was reused for a
changed plan: the step is refused (`RunKeyReusedError`), neither skipped nor committed twice. Without a run key
the key is unique to this run and nothing is skipped.

Keys of earlier versions (`<run key>/step-<index>`) are still found: such a commit is this step's when its
snapshot carries this plan's sha256 (DDL commits keep no sha256 per key: theirs are not matched).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from ...errors import RunKeyReusedError, SubstraitSparkError
from ..report import Skip, Step, StepKind, StepStatus
from ..spark_errors import spark_error  # re-exported: the steps' and tests' old import path
from .targets import KeyRecord, ViewTarget, WriteTarget, WriteTargets

KEY_PROPERTY = "substrait-spark.step-key"
PLAN_PROPERTY = "substrait-spark.plan-sha256"
SHA_DIGITS = 12  # of the plan's sha256 in a step key: tells the plans run under one run key apart


def step_key(run_key: str, slot: int, plan_sha256: str | None, index: int) -> str:
    """The idempotency key of step `index` of the plan with `plan_sha256` at `slot` of run `run_key`."""
    return f"{run_key}/{slot}/{(plan_sha256 or 'unknown')[:SHA_DIGITS]}/step-{index}"


def legacy_key(run_key: str, index: int) -> str:
    """The key earlier versions gave step `index` of every plan run under `run_key`."""
    return f"{run_key}/step-{index}"


@dataclass
class Outcome:
    """What a step's body reports back: rows affected and, when it did not commit, why."""

    rows: int | None = None
    skipped: tuple[Skip, str] | None = None  # the kind of skip and why


@dataclass
class StepLog:
    """The steps of one run, in the order they ran (plan order)."""

    targets: WriteTargets | None
    run_key: str
    plan_sha256: str | None = None
    slot: int = 0  # the plan's place in the caller's batch (see the module's docstring)
    steps: list[Step] = field(default_factory=list)
    update_keys: dict[str, list[str]] = field(default_factory=dict)  # the caller's, see `update_key`
    found_keys: dict[int, str] = field(default_factory=dict)  # step index → the key its earlier commit carries

    def key(self, index: int) -> str:
        return step_key(self.run_key, self.slot, self.plan_sha256, index)

    def found_key(self, step: Step) -> str:
        """The key an earlier try's commit of `step` carries (this version's, or an earlier version's)."""
        return self.found_keys.get(step.index, step.idempotency_key or "")

    def snapshot_properties(self, step: Step) -> dict[str, str]:
        """Carried by the step's commit: found again by a retry (`committed`)."""
        props = {KEY_PROPERTY: step.idempotency_key or ""}
        if self.plan_sha256:
            props[PLAN_PROPERTY] = self.plan_sha256
        return props

    @contextmanager
    def step(self, kind: StepKind, target: WriteTarget, path: str) -> Iterator[Step]:
        """Record a step around its body; a failure is recorded and re-raised typed."""
        step = Step(len(self.steps), kind, target.identity, path)
        step.idempotency_key = self.key(step.index)
        self.steps.append(step)
        start = time.perf_counter()
        try:
            step.snapshot_before = target.snapshot_id() if target.exists() else None
            yield step
            if step.status is StepStatus.RUNNING:
                step.status = StepStatus.COMMITTED
        except SubstraitSparkError as exc:
            step.status, step.reason = StepStatus.FAILED, str(exc)
            raise exc.at(path) from None
        except Exception as exc:  # Spark's own errors: the commit did not happen
            err = spark_error(exc)
            step.status, step.reason = StepStatus.FAILED, err.message
            raise err.at(path) from exc
        finally:
            step.snapshot_after = target.snapshot_id() if target.exists() else None
            step.duration_s = round(time.perf_counter() - start, 3)

    def already_committed(self, step: Step, target: WriteTarget | ViewTarget) -> bool:
        """An earlier try of this plan committed this step: mark it skipped (its snapshot is the one after).
        Another plan's commit under this step's run key, slot and index: `RunKeyReusedError`."""
        if not target.exists() or step.idempotency_key is None:
            return False
        records = target.key_records(KEY_PROPERTY, PLAN_PROPERTY)
        mine = self._mine(step, records)
        if mine is not None:
            self.found_keys[step.index] = mine.value
            mark_committed(step, mine.where)
            return True
        for record in records:
            self.refuse_other_plan(step, record.value, target.identity, record.where, record.plan)
        return False

    def _mine(self, step: Step, records: list[KeyRecord]) -> KeyRecord | None:
        """This step's earlier commit: its key, or an earlier version's key on a commit of this plan."""
        legacy = legacy_key(self.run_key, step.index)
        for record in records:
            if record.value == step.idempotency_key:
                return record
        plan = self.plan_sha256
        return next((r for r in records if r.value == legacy and plan and r.plan == plan), None)

    def refuse_other_plan(self, step: Step, key: str, target: str, where: str, plan: str | None = None) -> None:
        """`key` (found on `target`, at `where`) is this step's run key, slot and index with another plan's
        sha256: the run key was reused for another plan. A skip would lose this plan's write, a commit could
        apply a changed plan's write twice: refused (exit 2)."""
        prefix, suffix = f"{self.run_key}/{self.slot}/", f"/step-{step.index}"
        if key == step.idempotency_key or not (key.startswith(prefix) and key.endswith(suffix)):
            return
        sha = key[len(prefix) : len(key) - len(suffix)]
        if "/" in sha:
            return
        earlier = plan if plan and plan.startswith(sha) else f"{sha}…"
        raise RunKeyReusedError(
            f"run key {self.run_key!r} was used with another plan: step {step.index} of plan slot {self.slot} "
            f"was committed to {target} ({where}) by plan sha256 {earlier}, this plan is sha256 "
            f"{self.plan_sha256}; a retry must run the same plan — run a changed plan under a new run key "
            "(several plans under one run key: give each its own slot, its place in the batch)"
        )


def mark_committed(step: Step, found: str) -> None:
    """The status every step an earlier try committed gets; `found`: where its key was."""
    step.skipped(Skip.ALREADY_COMMITTED, f"already committed ({found})")


Body = Callable[[Step], Outcome]
