"""Two runs in one process on one session, the first without catalogs, the second with (issue 28 item 5).

In an Airflow worker, two operator tasks on one connection share the process's session: when the task without
`catalog_config` ran first, its session had no Iceberg jars (`spark.jars` joins a session only when it starts) and
the CTAS task failed deep in Spark (`Cannot find catalog plugin class for catalog 'lake'`). Now the session is
checked before the run: catalog settings (runtime settings) are set on it, and a session without Iceberg's
classes is refused with the reason and the fix (`CatalogUnavailableError`, exit 4).

Each case runs in a fresh interpreter: a JVM's jars are fixed when it starts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest
from iceberg_stack import LAKE, Lake, iceberg_session_conf
from plan_builder import PlanBuilder, i32, i64, named, string, virtual
from substrait_spark.hooks.iceberg_spark import pyiceberg_catalog

pytestmark = [pytest.mark.spark, pytest.mark.iceberg]

TWO_RUNS = textwrap.dedent(
    """
    import json, sys
    from substrait_spark.consumer.errors import SubstraitSparkError
    from substrait_spark.hooks.plan_run import PlanRunner, RunSettings
    from substrait_spark.consumer.running.sinks import Sink

    plain_plan, lake_plan, catalog_config, first_conf = sys.argv[1:5]
    first = PlanRunner(RunSettings(master="local[1]", spark_conf=json.loads(first_conf)))  # no catalogs
    first.run(first.check(open(plain_plan, "rb").read()))
    second = PlanRunner(RunSettings(catalog_config=catalog_config))  # the same process: the running session
    try:
        assert second.spark is first.spark
        report = second.run(second.check(open(lake_plan, "rb").read()), sink=Sink("preview", max_rows=None))
        print("RESULT", json.dumps({"rows": report.outputs[0].preview}))
    except SubstraitSparkError as exc:
        print("RESULT", json.dumps({"error": type(exc).__name__, "exit_code": exc.exit_code, "message": str(exc)}))
    """
)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The plans (one over a virtual table, one reading `lake.shop.people`) and a catalog config holding it."""
    root = tmp_path_factory.mktemp("session-catalogs")
    lake = Lake(LAKE, root / "catalog.db", root / "warehouse", None, None)
    catalog = pyiceberg_catalog(LAKE, uri=lake.uri, warehouse=lake.warehouse)
    catalog.create_namespace("shop")
    people = pa.table({"id": pa.array([1, 2], pa.int64()), "name": pa.array(["Zoë", "Ana"], pa.string())})
    catalog.create_table("shop.people", schema=people.schema).append(people)
    b = PlanBuilder()
    plain = root / "plain.bin"
    plain.write_bytes(b.plan(virtual(["a"], [i32()], [(1,)]), ["a"]).SerializeToString())
    reads = root / "reads_lake.bin"
    rel = named([LAKE, "shop", "people"], ["id", "name"], [i64(), string()])
    reads.write_bytes(PlanBuilder().plan(rel, ["id", "name"]).SerializeToString())
    return plain, reads, lake.write_config(root / "catalogs.yaml")


def _second_run(two_runs: tuple[Path, Path, Path], first_conf: dict[str, str]) -> dict:
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
    args = [*map(str, two_runs), json.dumps(first_conf)]
    done = subprocess.run([sys.executable, "-c", TWO_RUNS, *args], env=env, capture_output=True, text=True, timeout=600)
    results = [line[len("RESULT ") :] for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and results, done.stderr[-4000:]
    return json.loads(results[-1])


def test_a_session_started_without_iceberg_is_refused_with_the_reason_and_the_fix(two_runs):
    got = _second_run(two_runs, {})
    assert got["error"] == "CatalogUnavailableError" and got["exit_code"] == 4, got
    message = got["message"]
    assert "catalog 'lake'" in message and "lacks Iceberg's classes" in message, message
    assert "`jars` or `packages` extra" in message and "process of its own" in message, message


def test_catalog_settings_join_a_running_session_that_has_the_jars(two_runs):
    """The first run's session has Iceberg's jars but no catalog: the catalog's settings are set at runtime."""
    got = _second_run(two_runs, iceberg_session_conf())
    assert sorted(map(tuple, got.get("rows", []))) == [(1, "Zoë"), (2, "Ana")], got
