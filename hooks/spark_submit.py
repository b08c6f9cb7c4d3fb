"""Whether this Python is the driver of a spark-submit application: spark-submit starts the driver's JVM first and
tells the Python it runs the port of that JVM's gateway. No pyspark import, so the CLI can ask before Spark."""

from __future__ import annotations

import os

LAUNCHER_GATEWAY_ENV = "PYSPARK_GATEWAY_PORT"


def launched_by_spark_submit() -> bool:
    """The driver's JVM runs already, started and configured by spark-submit (`--master`, `--name`, `--conf`)."""
    return LAUNCHER_GATEWAY_ENV in os.environ
