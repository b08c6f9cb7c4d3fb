"""Typed errors. Each carries the CLI exit code and, where known, the path in the plan of the problem."""

from __future__ import annotations

import re
from enum import IntEnum
from typing import Any

from .records import RunError, described, plain
from .redact import redact

# A JVM exception's own line in py4j's text: ": org.apache.spark.SparkException: Job 0 cancelled ...".
_JAVA_CAUSE = re.compile(r"^:?\s*(?:[a-z_$][\w$]*\.)+([A-Z][\w$]*(?:Exception|Error)): (.+)$")
# A cause in a JVM stack trace, as py4j's text and the Spark Connect 4.x client's server stack trace show it.
_CAUSED_BY = re.compile(r"^Caused by: (?:[a-z_$][\w$]*\.)+([A-Z][\w$]*(?:Exception|Error)): (.+)$")
# Spark's error condition in a message: "[FAILED_READ_FILE.NO_HINT] ..." → FAILED_READ_FILE.
_CONDITION = re.compile(r"\[([A-Z][A-Z0-9_]*)(?:\.[A-Z0-9_]+)?\]")
# Conditions whose message says where a task failed, not why (Spark 4 wraps a file's parse error in
# FAILED_READ_FILE): the reason is their first cause that is not one of them.
WRAPPER_CONDITIONS = frozenset({"FAILED_READ_FILE"})


class ExitCode(IntEnum):
    """The one table of exit codes: the CLI's exit status, each error class's `exit_code`, what a front end
    retries (`hooks/plan_run.NOT_RETRYABLE`). An error's `exit_code` is the plain int (`.value`): it travels in
    reports, audit records, XComs and Dagster metadata, which take no enum."""

    OK = 0
    EXECUTION_FAILED = 1
    INVALID_INPUT = 2
    UNSUPPORTED = 3
    RESOLUTION_FAILED = 4
    REFUSED_BY_POLICY = 5


def _condition(text: str) -> str | None:
    match = _CONDITION.search(text)
    return match[1] if match else None


# What a wrapper's message gets when no cause came with it (pyspark 3.5's Connect client has only the message).
NO_CAUSE = "its cause did not reach this client: Spark Connect clients before pyspark 4 cannot fetch an error's causes"


def _reason(lines: list[str]) -> str | None:
    """The first cause in a stack trace that is not a wrapper."""
    for match in filter(None, map(_CAUSED_BY.match, lines)):
        if _condition(match[2]) not in WRAPPER_CONDITIONS:
            return f"{match[1]}: {match[2]}"
    return None


def _server_trace(exc: BaseException) -> list[str]:
    """The server's stack trace a Spark Connect 4.x error holds (causes included), shown in its text or not."""
    get = getattr(exc, "getStackTrace", None)
    trace = get() if callable(get) else None
    return [line.strip() for line in trace.splitlines()] if isinstance(trace, str) else []


def first_line(exc: BaseException, limit: int = 300) -> str:
    """What an exception says, in one line: a JVM exception's own message rather than py4j's
    "An error occurred while calling o133.save"; for a wrapper (WRAPPER_CONDITIONS), the reason first, then
    the wrapper's own message, which says where."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    cause = next((m for m in map(_JAVA_CAUSE.match, lines) if m), None)
    text = f"{cause[1]}: {cause[2]}" if cause else (lines[0] if lines else type(exc).__name__)
    if _condition(text) in WRAPPER_CONDITIONS:
        reason = _reason(lines + _server_trace(exc))
        text = f"{reason} ({text})" if reason else f"{text} ({NO_CAUSE})"
    return redact(text)[:limit]  # a foreign error may quote a URL or setting with its credentials


class SubstraitSparkError(Exception):
    """Base of every error this package raises on purpose."""

    exit_code: int = ExitCode.EXECUTION_FAILED.value
    kind = "error"

    def __init__(self, message: str, path: str | None = None):
        super().__init__(message)
        self.message = message
        self.path = path

    def __str__(self) -> str:
        return f"{self.message} (at {self.path})" if self.path else self.message

    def describe(self) -> str:
        """The error in one line, its kind first: what the CLI prints, an Airflow task fails with and a Dagster
        step or check reports (the message itself never repeats the kind)."""
        return described(self.kind, str(self))

    def record(self) -> RunError:
        """The error as run reports and audit records hold it."""
        return RunError(self.kind, self.message, self.path, self.exit_code)

    def to_dict(self) -> dict[str, Any]:
        """The error as JSON (summaries, `validate` output): its record's plain form, the one serialiser."""
        out: dict[str, Any] = plain(self.record())
        return out

    def at(self, path: str) -> SubstraitSparkError:
        """Attach a plan path if none is set yet (the innermost path wins)."""
        if not self.path:
            self.path = path
        return self


class ExecutionError(SubstraitSparkError):
    """Spark failed while running a translated plan (exit 1)."""

    exit_code = ExitCode.EXECUTION_FAILED.value
    kind = "execution failed"


class ConcurrentCommitError(ExecutionError):
    """Another writer committed to a table between the snapshot this run pinned and a step's commit: the step was
    not applied, the table holds the other writer's commit (exit 1; a new run pins the new snapshot)."""

    kind = "concurrent commit"


class SparkUnavailableError(ExecutionError):
    """The Spark the run is given cannot be reached: nothing answers as Spark Connect at the URL within the connect
    timeout (exit 1: the plan did not run; a later try may find the server up, so front ends may retry it)."""

    kind = "spark unavailable"


class RequiredColumnNullError(ExecutionError):
    """A NULL reached a column the table (or the plan's table_schema) declares REQUIRED: the step failed and wrote
    nothing — neither the NULL nor a row without it (exit 1)."""

    kind = "null in required column"


class PlanInvalidError(SubstraitSparkError):
    """The plan cannot be parsed or is malformed: dangling anchors, bad references, type mismatches (exit 2)."""

    exit_code = ExitCode.INVALID_INPUT.value
    kind = "invalid plan"


class PlanNotFoundError(PlanInvalidError):
    """The plan's file, bucket, key or version does not exist (exit 2: the input names nothing)."""

    kind = "plan not found"


class UnboundParameterError(PlanInvalidError):
    """A dynamic parameter the plan uses has no value, neither the caller's nor a plan binding (exit 2). The message
    says how to give one the way the caller gives values: `how` is a template of `{anchor}`, the front end's own
    (`PlanRunner(bind_hint=...)`: the CLI's `--param`, the operator's `parameters`, ...); by default the Python
    API's `parameters=`, which `run_plan` and `to_dataframe` take."""

    PYTHON = "parameters={{{anchor}: VALUE}}"

    def __init__(self, anchor: int, path: str | None = None, how: str = PYTHON):
        self.anchor = anchor
        super().__init__(self._text(anchor, how), path)

    @staticmethod
    def _text(anchor: int, how: str) -> str:
        return f"dynamic parameter ${anchor} has no value: bind it with {how.format(anchor=anchor)}"

    def bind_with(self, how: str) -> None:
        """Say `how` instead (a front end's own way to give the value), in the failed report too."""
        self.message = self._text(self.anchor, how)
        report = getattr(self, "report", None)
        if report is not None:
            report.error = self.record()


class RunReportError(PlanInvalidError):
    """A run report handed over with a plan (`explain --report`) cannot be read, or is another plan's (exit 2)."""

    kind = "invalid run report"


class UnsupportedFeatureError(SubstraitSparkError):
    """The plan is valid but uses a feature this consumer does not translate (exit 3)."""

    exit_code = ExitCode.UNSUPPORTED.value
    kind = "unsupported"


class TargetRefusedError(UnsupportedFeatureError):
    """Unsupported for this run's target or settings, not for the plan itself: the table's current schema or
    format, its snapshots (a retry), the caller's update keys, a catalog that cannot hold the change, a write asked
    for outside a run. `validate` sees the plan only, so it cannot list these; `run` meets them at the step, before
    it commits (exit 3, like every unsupported feature)."""


class ResolutionError(SubstraitSparkError):
    """A table the plan reads cannot be found, or its schema does not match the plan (exit 4)."""

    exit_code = ExitCode.RESOLUTION_FAILED.value
    kind = "resolution failed"


class CatalogUnavailableError(ResolutionError):
    """The Spark session cannot load a catalog the run needs, e.g. the session of this process started without
    Iceberg's classes (jars join a session only when it starts): refused before the run, with the fix (exit 4;
    a try in a new process, whose session starts with the jars, can succeed)."""


class SchemaMismatchError(ResolutionError):
    """The data's columns do not match the plan's base schema: missing, of another type, or of a type a cast
    would lose information from (exit 4)."""


class ConfigurationError(SubstraitSparkError):
    """The run's configuration names something that is not there, e.g. an Airflow connection (exit 2)."""

    exit_code = ExitCode.INVALID_INPUT.value
    kind = "invalid configuration"


class UnusedParameterError(ConfigurationError):
    """A caller's parameter value that no plan of the batch declares: a typo or a stale option (exit 2)."""

    kind = "unused parameter"


class RunKeyReusedError(ConfigurationError):
    """A write step's table holds a commit under the same run key, batch slot and step index made by another plan:
    the caller reused a run key for a changed plan. Neither skipped nor committed again (exit 2; a new run key
    runs the plan)."""

    kind = "run key reused"


class PolicyError(SubstraitSparkError):
    """The plan is refused by a configured policy (exit 5)."""

    exit_code = ExitCode.REFUSED_BY_POLICY.value
    kind = "refused by policy"
