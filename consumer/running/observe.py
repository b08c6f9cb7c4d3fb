"""Rows counted on the execution that produces them (no second scan), on every kind of client.

`DataFrame.observe` collects metrics from the same job. On classic Spark an `Observation` reads them back. On Spark
Connect a run's commands go through `connect_operations.CommandRunner`, which reads the observed metrics from the
command's own response stream, on the 3.5 client as on 4.x: the observation is named, and `get` reads the
runner's values. Outside such a runner (a caller's own action on Connect), a 4.x client's `Observation` reads them;
pyspark 3.5's Connect client cannot, so there the metrics are one aggregate over the same DataFrame after the
action ran (the same inputs, so the same numbers, at the cost of a second scan).
"""

from __future__ import annotations

import functools
import itertools
from typing import Any, Protocol

from pyspark.sql import Column, DataFrame, Observation

from ..errors import ExecutionError
from .clients import is_connect, reads_observations
from .connect_operations import CommandRunner, active_runner

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


class _Streamed:
    """The metrics of a named observation, as the command runner read them from the command's responses."""

    def __init__(self, runner: CommandRunner, name: str, keys: list[str]) -> None:
        self._runner, self._name, self._keys = runner, name, keys

    @property
    def get(self) -> dict[str, Any]:
        values = self._runner.observed.get(self._name)
        if values is None:
            raise ExecutionError(f"the server sent no metrics for observation {self._name!r}")
        return dict(zip(self._keys, values, strict=False))


def observed(df: DataFrame, **metrics: Column) -> tuple[DataFrame, Metrics]:
    """`df` with `metrics` (name → aggregate column) attached, and the object that reads them after the action."""
    named = [m.alias(k) for k, m in metrics.items()]
    runner = active_runner() if is_connect(df) else None
    if runner is not None:
        name = f"substrait_metrics_{next(_ids)}"
        return _batch(df).observe(name, *named), _Streamed(runner, name, list(metrics))
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
