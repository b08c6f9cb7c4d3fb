"""Count a Spark Connect client's round trips to its server, and where in the engine each was made.

On Spark Connect, building a DataFrame is free, but a schema read (`df.columns`, `df.schema`) is an AnalyzePlan
call in which the server analyzes the whole plan so far, and a temp view registered or dropped is an ExecutePlan
command. The translation of a plan needs neither: `count_round_trips(spark)` wraps the client's request methods
(the same names in pyspark 3.5's and 4.x's Connect client) for a block and records each call with the engine's
innermost frame that led to it. Used by tests/test_connect_round_trips.py and bench/translation.py.
"""

from __future__ import annotations

import collections
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

# The client's methods that send a request and wait for its answer: analysis, commands, plan execution.
_METHODS = ("_analyze", "execute_command", "_execute", "_execute_and_fetch", "_execute_and_fetch_as_iterator")
_ENGINE = "substrait_spark/"


@dataclass
class RoundTrips:
    """The round trips made in a block: (client method, engine call site) per call, in order."""

    calls: list[tuple[str, str]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.calls)

    def by_site(self) -> collections.Counter[tuple[str, str]]:
        return collections.Counter(self.calls)

    def describe(self) -> str:
        return "; ".join(f"{n}x {m} at {s}" for (m, s), n in self.by_site().most_common()) or "none"


def _site() -> str:
    """The innermost frame of the engine (or else the caller) that led to this call."""
    frames = traceback.extract_stack()[:-3]
    engine = [f for f in frames if _ENGINE in f.filename.replace("\\", "/") or "/consumer/" in f.filename]
    f = (engine or frames)[-1]
    return f"{f.filename.rsplit('/', 2)[-2]}/{f.filename.rsplit('/', 1)[-1]}:{f.lineno} {f.name}"


@contextmanager
def count_round_trips(spark: Any) -> Iterator[RoundTrips]:
    """Within the block, every request `spark`'s Connect client sends is recorded (a nested call, e.g.
    `_execute_and_fetch` through `execute_command`, counts once)."""
    client = spark.client
    found = RoundTrips()
    depth = [0]

    def wrap(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            if depth[0] == 0:
                found.calls.append((name, _site()))
            depth[0] += 1
            try:
                return method(*args, **kwargs)
            finally:
                depth[0] -= 1

        return counted

    wrapped = [n for n in _METHODS if hasattr(client, n)]
    for n in wrapped:
        setattr(client, n, wrap(n, getattr(client, n)))
    try:
        yield found
    finally:
        for n in wrapped:
            delattr(client, n)  # the instance attribute: the class's method shows again
