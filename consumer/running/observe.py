"""Rows counted on the execution that produces them (no second scan), on every kind of client.

`DataFrame.observe` with an `Observation` collects metrics from the same job on classic Spark and through Spark
Connect from a 4.x client. pyspark 3.5's Connect client cannot read an observation back, so there the metrics are
computed by one aggregate over the same DataFrame after the action ran: the inputs are the same (Iceberg reads are
pinned to snapshot ids), so the numbers are too, at the cost of a second scan. Use a 4.x client to avoid it.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any, Protocol

from pyspark.sql import Column, DataFrame, Observation

from .clients import is_connect, reads_observations

_ids = itertools.count()


class Metrics(Protocol):
    """What `observed` returns beside the DataFrame: `get` is the metrics by name, once the action has run."""

    @property
    def get(self) -> dict[str, Any]: ...


class _Recount:
    """The metrics as one aggregate over the DataFrame, computed on first `get` (after the action)."""

    def __init__(self, df: DataFrame, metrics: list[Column]) -> None:
        self._df, self._metrics = df, metrics
        self._values: dict[str, Any] | None = None

    @property
    def get(self) -> dict[str, Any]:
        if self._values is None:
            row = self._df.agg(*self._metrics).first()
            assert row is not None, "an aggregate without grouping keys has one row"
            self._values = row.asDict()
        return self._values


def observed(df: DataFrame, **metrics: Column) -> tuple[DataFrame, Metrics]:
    """`df` with `metrics` (name → aggregate column) attached, and the object that reads them after the action."""
    named = [m.alias(k) for k, m in metrics.items()]
    if not reads_observations(df):
        return df, _Recount(df, named)
    obs = Observation(f"substrait_metrics_{next(_ids)}")
    return _batch(df).observe(obs, *named), obs


def _batch(df: DataFrame) -> DataFrame:
    """`df`, known to be a batch DataFrame. pyspark 4's Connect client asks the server whether a DataFrame is
    streaming before it observes it (`isStreaming`: an AnalyzePlan call, in which the server analyzes the whole
    plan — as long as building it took — before the run executes it and analyzes it anyway). A run's DataFrames
    read batch sources only (`spark.read`, `spark.table`); a streaming one still fails its batch action, in Spark's
    words. `isStreaming` is a cached property of the Connect DataFrame: its answer is given here, without the
    round trip (nothing to give on classic Spark, where it is a JVM field)."""
    if is_connect(df) and isinstance(vars(type(df)).get("isStreaming"), functools.cached_property):
        vars(df)["isStreaming"] = False
    return df
