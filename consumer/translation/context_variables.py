"""ExecutionContextVariable: the current timestamp, date and session time zone of the plan's execution.

The spec evaluates these once per plan (`ExecutionBehavior.variable_eval_mode` PER_PLAN, the default when
unspecified) or once per record (PER_RECORD). Spark's `current_timestamp()` is folded once per *query*, and a
plan may run several queries (roots, write steps), so PER_PLAN takes one instant per translation and uses it
as a literal everywhere (Catalyst folds it like its own `current_timestamp`); the date is that instant's date
in the session time zone, so the two always agree. Spark has no per-record clock among its native
expressions: PER_RECORD is refused.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TYPE_CHECKING

from pyspark.sql import functions as F
from pyspark.sql import types as T
from substrait import algebra_pb2 as alg
from substrait import plan_pb2

from ..errors import PlanInvalidError, UnsupportedFeatureError
from .scope import Scope, Typed

if TYPE_CHECKING:
    from .consumer import SubstraitConsumer

Variable = alg.Expression.ExecutionContextVariable
Mode = plan_pb2.ExecutionBehavior.VariableEvaluationMode
_PER_PLAN = {Mode.Value("VARIABLE_EVALUATION_MODE_UNSPECIFIED"), Mode.Value("VARIABLE_EVALUATION_MODE_PER_PLAN")}
_INSTANT = "_substrait_context_instant"  # consumer attribute: the plan's one instant, taken at first use


def instant(cx: SubstraitConsumer) -> dt.datetime:
    """The plan's execution instant (UTC), the same for every variable of this translation."""
    now = getattr(cx, _INSTANT, None)
    if now is None:
        now = dt.datetime.now(dt.UTC)
        setattr(cx, _INSTANT, now)
    return now


def _truncate(now: dt.datetime, precision: int, path: str) -> dt.datetime:
    if not 0 <= precision <= 12:
        raise PlanInvalidError(f"timestamp precision {precision} (0 to 12)", path)
    step = 10 ** max(0, 6 - precision)  # finer than microseconds: the clock's microseconds, as Spark's own
    return now.replace(microsecond=now.microsecond - now.microsecond % step)


def _timestamp(cx: SubstraitConsumer, v: Variable, path: str) -> Typed:
    now = _truncate(instant(cx), v.current_timestamp.precision, f"{path}.current_timestamp.precision")
    return Typed(F.lit(now).cast(T.TimestampType()), T.TimestampType())


def _date(cx: SubstraitConsumer, v: Variable, path: str) -> Typed:
    # The instant's calendar date in the session time zone (Spark's own current_date rule).
    return Typed(F.to_date(F.lit(instant(cx)).cast(T.TimestampType())), T.DateType())


def _timezone(cx: SubstraitConsumer, v: Variable, path: str) -> Typed:
    return Typed(F.current_timezone(), T.StringType())


VARIABLES: dict[str, Callable[[SubstraitConsumer, Variable, str], Typed]] = {
    "current_timestamp": _timestamp,
    "current_date": _date,
    "current_timezone": _timezone,
}


def context_variable(cx: SubstraitConsumer, v: Variable, scope: Scope, path: str) -> Typed:
    kind = v.WhichOneof("execution_context_variable_type")
    if kind is None:
        raise PlanInvalidError("execution context variable with no kind set", path)
    mode = cx.plan.execution_behavior.variable_eval_mode
    if mode not in _PER_PLAN:
        raise UnsupportedFeatureError(
            f"execution context variable evaluated {Mode.Name(mode)}: Spark's clock functions are evaluated "
            "once per query, it has no per-record clock",
            path,
        )
    return VARIABLES[kind](cx, v, path)


def unsupported_reason(plan: plan_pb2.Plan) -> str | None:
    """Why the plan's context variables cannot be translated (for `analyze`), or None."""
    mode = plan.execution_behavior.variable_eval_mode
    return None if mode in _PER_PLAN else f"execution context variables evaluated {Mode.Name(mode)}"


__all__ = ["VARIABLES", "context_variable", "instant", "unsupported_reason"]
