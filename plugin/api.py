"""The Python entry point: run a plan and get its RunReport."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from substrait_spark.consumer.loading.loader import LoadedPlan
from substrait_spark.consumer.running.report import RunReport
from substrait_spark.consumer.running.sinks import Sink
from substrait_spark.consumer.tables import TableResolver
from substrait_spark.consumer.translation.consumer import SubstraitConsumer


def run_plan(
    plan: str | Path | bytes | LoadedPlan,
    spark: SparkSession | None = None,
    catalogs: TableResolver | None = None,
    parameters: Mapping[str | int, Any] | None = None,
    *,
    output: Sink | str | dict[str, Any] | None = None,
    consumer_class: type[SubstraitConsumer] = SubstraitConsumer,
    update_keys: Mapping[str, Sequence[str] | str] | None = None,
    cast_to_plan_types: bool = False,
    params: Mapping[str | int, Any] | None = None,
    policy: Any = None,
    run_key: str | None = None,
    slot: int = 0,
) -> RunReport:
    """Load `plan` (path, URI, bytes or LoadedPlan), run every root on `spark`, return the RunReport.

    `parameters` binds the plan's dynamic parameters by anchor (`{0: "2024-01-31"}` or `{"$0": ...}`), the
    name `to_dataframe` and the operator use (`params`, its earlier name here, still works and warns);
    `output` says where root rows go (see `Sink.parse`; default: run and count); `update_keys` (table →
    key columns) says which columns UPDATE writes match rows by (see `consumer/running/steps/update_key.py`);
    `cast_to_plan_types` casts read columns to the plan's declared types even where that can lose information
    (else a schema mismatch, exit 4), each such cast noted in the report; `policy` says what the plan may read,
    write and run (a `Policy`, a policy file's path or its rules as a mapping: `consumer/analysis/policy.py`);
    `run_key` (the same for every try of one job, e.g. `pipeline/run-id/task`) makes write steps retry-safe: a
    step an earlier try of this plan committed under it is skipped, and a different plan's commit under it on
    the same step is refused (`RunKeyReusedError`, exit 2; see `consumer/running/steps/log.py`); several plans
    run under one `run_key` each take their own `slot` (their place in the batch, as the CLI numbers them). A
    plan that cannot run (too large or deep, refused by the policy, invalid, unsupported, parameters that do not
    fit) is refused before a Spark session is started (`spark=None`).
    """
    from substrait_spark.hooks.plan_run import PlanRunner, RunSettings
    from substrait_spark.hooks.run_sequence import PlanRun

    if params is not None:
        if parameters is not None:
            raise TypeError("run_plan: pass parameters=, not also params= (its deprecated name)")
        warnings.warn("run_plan(params=) is deprecated: use parameters=", DeprecationWarning, stacklevel=2)
        parameters = params
    if catalogs is None:
        from substrait_spark.consumer.running.resolver import SessionCatalogResolver

        catalogs = SessionCatalogResolver()
    settings = RunSettings(update_keys=update_keys or {}, cast_to_plan_types=cast_to_plan_types, policy=policy)
    runner = PlanRunner(settings, resolver=catalogs, session=spark, consumer_class=consumer_class)
    result = PlanRun(runner, plan).execute(parameters=parameters, run_key=run_key, slot=slot, sink=output)
    return result.raise_error()  # the run sequence every front end shares (hooks/run_sequence.py)
