"""A test hook: with `SUBSTRAIT_SPARK_PLAN_RECORD` naming a file, every root the engine translates is appended
to it as one JSON line — the Substrait plan (base64 protobuf) and Spark's physical plan (`explain` text) — for a
test harness to check (`tests/plan_invariants.py`: no cartesian product the plan does not ask for). The variable
reaches subprocesses (the CLI, `airflow dags test`), so their plans are checked too.

Off unless the variable is set (one environment lookup per root). Recording never changes or fails a
translation: a plan Spark cannot plan is recorded with the error, and fails where its caller runs it.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import time

from pyspark.sql import DataFrame
from substrait.plan_pb2 import Plan

from ..errors import first_line

ENV = "SUBSTRAIT_SPARK_PLAN_RECORD"


def record(plan: Plan, df: DataFrame, *, root: str = "", consumer: str = "") -> None:
    """Append `plan` and the physical plan of its root `df` to the file `SUBSTRAIT_SPARK_PLAN_RECORD` names, with the
    root's path and the consumer class that translated it (validate agrees with that class)."""
    target = os.environ.get(ENV)
    if not target:
        return
    entry: dict[str, object] = {"pid": os.getpid(), "plan": _encoded(plan), "root": root, "consumer": consumer}
    start = time.perf_counter()
    text = io.StringIO()
    try:
        with contextlib.redirect_stdout(text):
            df.explain()  # `explain` is the physical plan's text on classic Spark and on Spark Connect alike
        entry["physical"] = text.getvalue()
    except Exception as exc:  # recorded; the caller meets it when it runs the plan
        entry["error"] = first_line(exc)
    entry["explain_ms"] = round((time.perf_counter() - start) * 1000, 2)
    _append(target, entry)


def refused(
    plan: Plan, feature: str, path: str | None, *, root: str = "", consumer: str = "", target: bool = False
) -> None:
    """Append a root the consumer refused as unsupported (what `validate` must have listed, unless `target`: a
    refusal for the run's target or settings, `TargetRefusedError`, which the plan alone does not show)."""
    record = os.environ.get(ENV)
    if record:
        entry = {"pid": os.getpid(), "plan": _encoded(plan), "root": root, "consumer": consumer}
        _append(record, {**entry, "refused": {"feature": feature, "path": path, "target": target}})


def _encoded(plan: Plan) -> str:
    return base64.b64encode(plan.SerializeToString()).decode()


def _append(target: str, entry: dict[str, object]) -> None:
    """One `write` call on an O_APPEND descriptor: lines from threads and processes never interleave, however long."""
    data = (json.dumps(entry) + "\n").encode("utf-8")
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        while data:
            data = data[os.write(fd, data) :]
    finally:
        os.close(fd)
