"""Progress of a run's Spark Connect operations, from the server's progress messages, on every client.

A Spark 4 server sends an `ExecutionProgress` response every few seconds while an operation runs (its stages,
their tasks done of all, bytes read; the tasks running). pyspark 4's client hands it to the progress handlers
registered on the session (`registerProgressHandler`); pyspark 3.5's client has neither the handlers nor the
message in its protocol, so the message arrives as an unknown field (number 18). The command runner
(`connect_operations.py`) reads it there and tells the listeners added here — the same stages, so the task log
shows the same progress lines on both clients (`hooks/spark_progress.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

EXECUTION_PROGRESS_FIELD = 18  # ExecutePlanResponse.execution_progress (Spark 4's protocol)


@dataclass(frozen=True)
class StageInfo:
    """One stage as the server reports it (the fields of pyspark 4's `StageInfo`)."""

    stage_id: int
    num_tasks: int
    num_completed_tasks: int
    num_bytes_read: int
    done: bool


# Called with (stages, inflight_tasks, operation_id, done) as pyspark 4's progress handlers are.
Listener = Callable[..., None]
_listeners: list[Listener] = []


def add_listener(listener: Listener) -> None:
    _listeners.append(listener)


def remove_listener(listener: Listener) -> None:
    if listener in _listeners:
        _listeners.remove(listener)


def listening() -> bool:
    return bool(_listeners)


def notify(response: Any) -> None:
    """Tell the listeners of the progress `response` carries as an unknown field (pyspark 3.5's client)."""
    progress = unknown_progress(response)
    if progress is None:
        return
    stages, inflight = progress
    for listener in list(_listeners):
        listener(stages=stages, inflight_tasks=inflight, operation_id=response.operation_id, done=False)


def unknown_progress(response: Any) -> tuple[list[StageInfo], int] | None:
    """The stages and running tasks of a progress message the client's protocol does not know, else None."""
    try:
        from google.protobuf.unknown_fields import UnknownFieldSet
    except ImportError:  # protobuf < 4.22
        return None
    for f in UnknownFieldSet(response):  # type: ignore[attr-defined]  # iterable at run time
        if f.field_number == EXECUTION_PROGRESS_FIELD and isinstance(f.data, bytes):
            return _execution_progress(f.data)
    return None


def _execution_progress(data: bytes) -> tuple[list[StageInfo], int]:
    stages, inflight = [], 0
    for number, value in _fields(data):
        if number == 1 and isinstance(value, bytes):
            s = dict(_fields(value))
            stages.append(
                StageInfo(int(s.get(1, 0)), int(s.get(2, 0)), int(s.get(3, 0)), int(s.get(4, 0)), bool(s.get(5, 0)))
            )
        elif number == 2 and isinstance(value, int):
            inflight = value
    return stages, inflight


def _fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """A protobuf message's fields as (number, value): varints as ints, length-delimited as bytes (the only wire
    types ExecutionProgress uses; others are skipped)."""
    out: list[tuple[int, int | bytes]] = []
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
            out.append((number, value))
        elif wire == 2:
            size, i = _varint(data, i)
            out.append((number, data[i : i + size]))
            i += size
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            break
    return out


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while i < len(data):
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
    return value, i
