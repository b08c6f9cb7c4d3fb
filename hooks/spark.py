"""Spark sessions for the CLI and the operators (local here; cluster and Connect variants come with the operator)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pyspark.sql import SparkSession

QUIET_LOG4J = Path(__file__).with_name("log4j2-quiet.properties")

DEFAULT_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "8",
    "spark.driver.memory": "2g",
    # Applies when this call starts the JVM (a new local session); Spark's own startup chatter stays off stderr.
    "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={QUIET_LOG4J}",
}


def get_session(
    master: str | None = None, conf: Mapping[str, str] | None = None, app_name: str = "substrait-spark"
):
    """A SparkSession for `master` (default `local[*]`), reused if one is active in this process."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.appName(app_name).master(master or "local[*]")
    for k, v in {**DEFAULT_CONF, **(conf or {})}.items():
        builder = builder.config(k, v)
    return builder.getOrCreate()
