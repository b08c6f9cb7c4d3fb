"""The step executor: runs the steps translation recorded (`translation/steps.py`), in plan order, each one atomic,
retry-safe commit recorded in the run's `StepLog` (idempotency by run key: `log.py`). The runner calls it for each
root once the root is translated, before the next root is translated (a later root may read what a step wrote)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame

from ...translation.steps import PendingStep, StepRelation
from .ddl import execute_ddl
from .log import StepLog
from .update import execute_update
from .writes import execute_write

if TYPE_CHECKING:
    from ...translation.consumer import SubstraitConsumer

# A step's executor returns the rows it modified when its relation outputs them (else None).
Executor = Callable[["SubstraitConsumer", StepLog, PendingStep], DataFrame | None]
EXECUTORS: dict[StepRelation, Executor] = {
    StepRelation.WRITE: execute_write,
    StepRelation.DDL: execute_ddl,
    StepRelation.UPDATE: execute_update,
}


def execute_steps(cx: SubstraitConsumer, log: StepLog, steps: Sequence[PendingStep]) -> dict[str, DataFrame | None]:
    """Run `steps` in order; each step's output by its plan path (rows modified, or None: the output is no rows)."""
    outputs: dict[str, DataFrame | None] = {}
    for step in steps:
        outputs[step.path] = EXECUTORS[step.relation](cx, log, step)
    return outputs
