"""Remote Spark through Dagster Pipes: the plan runs in a spark-submit driver of its own.

    substrait_assets(plan_uri, resource=lake, remote=SparkSubmitPipes())

The asset validates the plan here (the blocking `plan_valid` check, no Spark), then starts
`spark-submit … substrait_spark/pipes_remote.py` through `PipesSubprocessClient`, with the resource's master and
settings and the catalogs' Spark settings as `--conf`, and the plan, run settings, parameters and run key as Pipes
extras. The driver needs only the engine and `dagster-pipes`; it reports the same materializations the in-process
run does. The same extras fit the EMR and Databricks Pipes clients (their job's entry point is `pipes_remote.py`).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dagster import AssetKey, PipesSubprocessClient
from substrait_spark.dagster.resources import SubstraitSparkResource

REMOTE = Path(__file__).resolve().parent.parent / "pipes_remote.py"


@dataclass(frozen=True)
class SparkSubmitPipes:
    """How to submit: `spark_submit` (default: the one beside this interpreter, else on PATH), extra arguments
    (`--deploy-mode`, `--py-files`, …) and environment."""

    spark_submit: str | None = None
    args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)

    def executable(self) -> str:
        if self.spark_submit:
            return self.spark_submit
        beside = Path(sys.executable).parent / "spark-submit"
        return str(beside) if beside.exists() else shutil.which("spark-submit") or "spark-submit"

    def command(self, substrait: SubstraitSparkResource, runner: Any) -> list[str]:
        from substrait_spark.hooks.spark import DEFAULT_MASTER, SESSION_CONF, SparkTarget

        target = SparkTarget.parse(substrait.spark.master, conf=substrait.spark.conf)
        if target.is_connect:
            raise ValueError("a spark-submit driver needs a cluster master, not a Spark Connect URL")
        conf = {**target.spark_conf(), **SESSION_CONF, **runner.catalog_conf(target.packages)}
        cmd = [self.executable(), "--master", target.master or DEFAULT_MASTER]
        for key, value in conf.items():
            cmd += ["--conf", f"{key}={value}"]
        return [*cmd, *self.args, str(REMOTE)]

    def run(
        self,
        context: Any,
        substrait: SubstraitSparkResource,
        runner: Any,
        plan_uri: str,
        parameters: Mapping[str, Any],
        run_key: str,
        results: Any,
        root_key: AssetKey | None,
    ) -> Iterator[Any]:
        settings = dataclasses.asdict(runner.settings)
        extras = {
            "plan_uri": plan_uri,
            "settings": {k: v for k, v in settings.items() if k not in ("master", "spark_conf")},
            "parameters": {str(k): v for k, v in parameters.items()},
            "run_key": run_key,
            "results": results,
            "root_key": list(root_key.path) if root_key is not None else None,
        }
        env = {**os.environ, "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", sys.executable), **self.env}
        env.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        command = self.command(substrait, runner)
        context.log.info("Submitting %s through Dagster Pipes (run key %s)", plan_uri, run_key)
        invocation = PipesSubprocessClient().run(command=command, context=context, extras=extras, env=env)
        yield from invocation.get_results()
