"""What the PySpark client in use can do: classic or Spark Connect, pyspark 3.5 or 4.x.

The engine uses only APIs that every kind of client has; the few places where they differ ask here, once (stage 0:
translation asks too). The running stage's own questions (observed metrics, a Connect session's identity and
operations) are `running/clients.py`'s.
Call-site capture (PySpark 4's DataFrame debugging) and ANSI mode are session settings, not client kinds: see
`hooks/spark.py` and the per-expression semantics in `functions/`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pyspark

PYSPARK_MAJOR = int(pyspark.__version__.split(".", 1)[0])


# Settings the translation relies on: the engine maps every Substrait option (overflow, division by zero, cast
# failure) itself on Spark's non-ANSI behaviour, the default of 3.5 that Spark 4 turns around. A run holds them for
# its duration (`engine_settings`); the sessions our hooks make start with them.
ENGINE_CONF = {"spark.sql.ansi.enabled": "false"}


@contextmanager
def translation_settings(spark: Any) -> Iterator[None]:
    """`engine_settings` while a plan is translated, on classic Spark only: there each expression takes its ANSI
    behaviour (overflow, division by zero, cast failure, index out of range) from the session when it is built
    and keeps it, so a DataFrame of `to_dataframe` or `SubstraitConsumer.root` gives the spec's results when run
    later under a session with ANSI on (Spark 4's default). Spark Connect builds expressions when the server
    analyzes, at execution: there the caller runs the DataFrame inside `engine_settings` (a run does)."""
    if is_connect(spark):
        yield
        return
    with engine_settings(spark):
        yield


@contextmanager
def engine_settings(spark: Any) -> Iterator[None]:
    """`ENGINE_CONF` on `spark` inside the block, the session's own values restored after: a plan gives the
    spec's results whatever the session says (classic Spark fixes the semantics while translating, Spark Connect
    when it analyzes, at execution: the block spans both)."""
    saved: dict[str, str] = {}
    for key, value in ENGINE_CONF.items():
        # The value in effect (its default when unset): one round trip, and none more when it already holds —
        # a classic translation pays each (~1 ms; Spark SQL's own parse + analysis takes 10-20 ms).
        current = spark.conf.get(key)
        if current != value:
            saved[key] = current
            spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, before in saved.items():
            spark.conf.set(key, before)


def is_connect(obj: Any) -> bool:
    """A Spark Connect session, DataFrame or Column (their classes live in `pyspark.sql.connect`)."""
    return type(obj).__module__.startswith("pyspark.sql.connect")


def has_outer_references() -> bool:
    """`Column.outer()`, `DataFrame.scalar()`/`exists()` and `lateralJoin` (Spark 4.0's correlated subqueries).
    A question about the client, so that `validate` (no session) answers as `run` does: a pyspark 4.x client
    talks to Spark 4 (classic: its own; Connect: a 4.x client needs a 4.x server)."""
    return PYSPARK_MAJOR >= 4
