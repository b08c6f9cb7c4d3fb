"""What the running stage asks of the PySpark client: observed metrics, a Spark Connect session's identity and
the operations it ran. What every stage asks (classic or Connect, the engine's settings) is `consumer/clients.py`'s,
re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..clients import (
    ENGINE_CONF,
    PYSPARK_MAJOR,
    engine_settings,
    has_outer_references,
    is_connect,
    translation_settings,
)


def reads_observations(df: Any) -> bool:
    """Can `Observation.get` return the metrics of `df`'s execution? Not on pyspark 3.5's Connect client (its
    `Observation` needs the JVM; the 3.5 client sends the observation but never reads it back)."""
    return PYSPARK_MAJOR >= 4 or not is_connect(df)


def connect_identity(spark: Any) -> dict[str, Any] | None:
    """A Spark Connect session's identity for the run report (None for a classic session): the server's session
    id, the operation tags this thread sends (the Airflow operator's job group) and, filled in by
    `recorded_operations`, the ids of the operations the run executed."""
    if not is_connect(spark):
        return None
    return {"session_id": spark.session_id, "operation_tags": sorted(spark.getTags()), "operation_ids": None}


@contextmanager
def recorded_operations(spark: Any) -> Iterator[list[str] | None]:
    """The ids of the Connect operations (queries, writes, commands) executed inside the block, in order.

    pyspark 4's Connect client reports every operation to progress handlers when it finishes; pyspark 3.5's
    client has no such hook and keeps the ids to itself: then the block yields None.
    """
    register = getattr(spark, "registerProgressHandler", None)
    if not is_connect(spark) or register is None:
        yield None
        return
    ids: list[str] = []

    def handler(stages: Any, inflight_tasks: int, operation_id: str | None, done: bool) -> None:
        if done and operation_id and operation_id not in ids:
            ids.append(operation_id)

    register(handler)
    try:
        yield ids
    finally:
        spark.removeProgressHandler(handler)


__all__ = [
    "ENGINE_CONF",
    "PYSPARK_MAJOR",
    "connect_identity",
    "engine_settings",
    "has_outer_references",
    "is_connect",
    "reads_observations",
    "recorded_operations",
    "translation_settings",
]
