"""Which Spark the test session runs on: the suite's `spark` fixture follows `SUBSTRAIT_SPARK_TEST_MODE`.

- `classic` (default): a local classic session of this venv's pyspark. On 3.5 it starts with the Iceberg jars
  (tests/iceberg_stack.py); on 4.x without them — the Iceberg runtime jar available offline is built for 3.5 only
  (`iceberg-spark-runtime-3.5_2.12`), so Iceberg tests stay in the 3.5 run.
- `connect`: a session of this venv's Spark Connect client (3.5 or 4.x) on a real local Connect server started
  from pyspark 4.x (tools/connect_server.py), made through the engine's own hook (`hooks.spark.get_session`).

`make test` runs the whole suite on classic 3.5, then `MATRIX_TESTS` (Makefile) on classic 4.x, Connect from a
4.x client and Connect from the 3.5 client: one Spark session per run.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

MODE_ENV = "SUBSTRAIT_SPARK_TEST_MODE"


class SparkMode(enum.Enum):
    CLASSIC = "classic"
    CONNECT = "connect"


def current_mode() -> SparkMode:
    value = os.environ.get(MODE_ENV, SparkMode.CLASSIC.value).strip().lower()
    try:
        return SparkMode(value)
    except ValueError:
        raise pytest.UsageError(f"{MODE_ENV}={value!r}: expected one of {[m.value for m in SparkMode]}") from None


def spark_major() -> int:
    import pyspark

    return int(pyspark.__version__.split(".")[0])


def configuration() -> str:
    """This run's configuration as the tests name it: `classic-3`, `classic-4`, `connect-3` (pyspark 3.5's
    Connect client), `connect-4`. The server side of Connect is always the local pyspark 4.x server."""
    return f"{current_mode().value}-{spark_major()}"


def needs_spark35_classic(reason: str) -> pytest.MarkDecorator:
    """Skip marker for tests that only the classic 3.5 run can do (Iceberg jars, a JVM in this process)."""
    return pytest.mark.skipif(
        current_mode() is not SparkMode.CLASSIC or spark_major() != 3,
        reason=f"classic Spark 3.5 only: {reason}",
    )


@pytest.fixture(scope="session")
def connect_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`sc://127.0.0.1:<port>` of a real Spark Connect server (pyspark 4.x's), stopped at the end of the run."""
    from connect_server import ConnectServerError, connect_server

    try:
        with connect_server(Path(tmp_path_factory.mktemp("connect-server"))) as url:
            yield url
    except ConnectServerError as exc:
        pytest.fail(str(exc))


def classic_session():
    """The local classic session: with the Iceberg jars on 3.5, plain on 4.x (see the module docstring)."""
    from iceberg_stack import BASE_CONF, start_iceberg_session

    if spark_major() == 3:
        return start_iceberg_session()
    from substrait_spark.hooks.spark import get_session

    session = get_session("local[2]", conf=BASE_CONF, app_name="substrait-spark-tests")
    session.sparkContext.setLogLevel("ERROR")
    return session


def connect_session(url: str):
    from substrait_spark.hooks.spark import get_session

    return get_session(url, conf={"spark.sql.shuffle.partitions": "4"})
