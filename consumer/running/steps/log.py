"""Running one step: its index and idempotency key, the already-committed check, timing, and its report record.

Key format: `<run key>/step-<index>`, stored in the commit's Iceberg snapshot summary under `KEY_PROPERTY`.
The run key is the caller's (e.g. `dag/run/task`, never the try number), so a retry finds the commits an
earlier try made and skips them; without a run key the key is unique to this run and nothing is skipped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from ...errors import ExecutionError, SubstraitSparkError
from ..report import Skip, Step, StepKind, StepStatus
from .targets import WriteTarget, WriteTargets

KEY_PROPERTY = "substrait-spark.step-key"
PLAN_PROPERTY = "substrait-spark.plan-sha256"


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
    steps: list[Step] = field(default_factory=list)
    update_keys: dict[str, list[str]] = field(default_factory=dict)  # the caller's, see `update_key`

    def key(self, index: int) -> str:
        return f"{self.run_key}/step-{index}"

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

    def already_committed(self, step: Step, target: WriteTarget) -> bool:
        """An earlier try committed this step: mark it skipped (its snapshot is the one after)."""
        if not target.exists() or step.idempotency_key is None:
            return False
        found = target.committed(KEY_PROPERTY, step.idempotency_key)
        if found is None:
            return False
        mark_committed(step, found)
        return True


def mark_committed(step: Step, found: str) -> None:
    """The status every step an earlier try committed gets; `found`: where its key was."""
    step.skipped(Skip.ALREADY_COMMITTED, f"already committed ({found})")


def spark_error(exc: Exception) -> ExecutionError:
    from ..runner import _spark_error  # one place that turns py4j's text into one line

    return _spark_error(exc)


Body = Callable[[Step], Outcome]
