"""Shared pytest fixtures: a local Spark session, TPC-H data, the plan corpus."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# py4j logs at INFO while the interpreter shuts down, after pytest closed the streams (noise once Airflow,
# imported by some tests, has configured logging).
logging.getLogger("py4j").setLevel(logging.WARNING)

# Every JVM `spark-submit` starts for the tests (the suite's session, the CLI, `airflow dags test` and Dagster
# subprocesses, Spark Connect servers: they inherit the environment) compiles with C1 only. The tests' JVMs are
# short-lived or run many small queries on small data: C2's compiler threads cost more CPU than its code saves —
# measured on 2 cores, a Spark session and one TPC-H query took 8 s of CPU instead of 15, tests/test_tpch_corpus.py
# 82 s instead of 133, and a cross join of 9e8 rows ran as fast. The JIT tier changes no result. A value the
# caller set is kept (`SPARK_SUBMIT_OPTS=` gives the JVM's default, tiered compilation).
JIT_OPTS_ENV = "SPARK_SUBMIT_OPTS"
os.environ.setdefault(JIT_OPTS_ENV, "-XX:TieredStopAtLevel=1")

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parent
CORPUS_DIR = Path(os.environ.get("SUBSTRAIT_SPARK_CORPUS", REPO_ROOT.parent / "shared" / "corpus"))
TPCH_SCALE = "0.01"
TPCH_DIR = REPO_ROOT / ".data" / "tpch" / f"sf{TPCH_SCALE}"
TPCH_TABLES = ("lineitem", "orders", "customer", "part", "partsupp", "supplier", "nation", "region")

# Test helpers (oracles.py) and the embedded stack (tools/local_stack.py) are imported as top-level modules.
for _dir in (TESTS_DIR, REPO_ROOT / "tools"):
    if str(_dir) not in sys.path:
        sys.path.insert(0, str(_dir))

# Session fixtures, registered here once: a session fixture imported by several test modules is one fixture per
# module (a second `lake` would re-point pyiceberg while Spark keeps the catalog it loaded first).
from iceberg_stack import iceberg_spark_fixture, lake_fixture  # noqa: E402, F401  (Spark with Iceberg, `lake`)
from postgres_server import postgres_uri  # noqa: E402, F401  (session fixture: a PostgreSQL server)
from rest_catalog_server import rest_catalog_server  # noqa: E402, F401  (session fixture: an Iceberg REST catalog)
from s3_server import s3_endpoint  # noqa: E402, F401  (session fixture: a real S3-compatible server)
from spark_cluster import spark_master_url  # noqa: E402, F401  (session fixture: a standalone Spark cluster)
from spark_modes import (  # noqa: E402
    SparkMode,
    classic_session,
    connect_session,
    connect_url,  # noqa: F401  (session fixture: a real Spark Connect server)
    current_mode,
)
from store_servers import azurite, gcs_endpoint  # noqa: E402, F401  (session fixtures: GCS and Azure emulators)


def pytest_configure(config: pytest.Config) -> None:
    # Markers are declared in pyproject.toml (--strict-markers). Every plan a test runs is checked for cartesian
    # products the plan does not ask for (plan_invariants.py).
    import early_release
    import module_durations
    import plan_invariants

    plan_invariants.register(config)
    module_durations.register(config)
    early_release.register(config)
    if config.option.markexpr == "unit":
        refuse_jvm(config)


# --------------------------------------------------------------------------------------------------
# Test tiers
# --------------------------------------------------------------------------------------------------

TIERS = ("unit", "spark", "iceberg", "airflow", "dagster", "browser")
# A test using one of these fixtures (directly or through another fixture) carries the marker: the tiers are
# what `make test-fast` and `-m` select by, so a marker that does not match a test's fixtures would misfile it.
FIXTURE_MARKERS = {
    "spark": "spark",
    "iceberg_spark": "spark",
    "connect_url": "spark",
    "spark_master_url": "spark",
    "lake": "iceberg",
    "postgres_uri": "iceberg",
    "rest_catalog_server": "iceberg",
    "corpus": "corpus",
}
HEAVY_MARKERS = set(TIERS) - {"unit"}


def tier_problems(items: list[pytest.Item]) -> list[str]:
    """The tests whose markers do not say what they need: no tier, `unit` beside a heavier tier, or a fixture
    that needs a marker the test lacks."""
    problems: dict[str, str] = {}
    for item in items:
        marks = {m.name for m in item.iter_markers()}
        module = item.nodeid.split("::")[0]
        if not marks & set(TIERS):
            problems[module] = f"{module}: no tier marker (one of {', '.join(TIERS)}): set `pytestmark`"
        elif "unit" in marks and marks & HEAVY_MARKERS:
            problems[module] = f"{module}: marked unit and {', '.join(sorted(marks & HEAVY_MARKERS))}"
        missing = sorted({FIXTURE_MARKERS[f] for f in item.fixturenames if f in FIXTURE_MARKERS} - marks)
        if missing:  # one line per module (the first such test named)
            problems.setdefault(f"{module}:{missing}", f"{item.nodeid}: uses fixtures that need {', '.join(missing)}")
    return sorted(problems.values())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    problems = tier_problems(items)
    if problems:
        raise pytest.UsageError("test tier markers:\n" + "\n".join(problems))


def refuse_jvm(config: pytest.Config) -> None:
    """Under `-m unit` JAVA_HOME names a `java` that refuses: a unit test that starts Spark (in the test process or
    in a subprocess) fails naming itself, instead of quietly making the pure-Python tier slow."""
    home = Path(tempfile.mkdtemp(prefix="unit-tier-no-java-"))
    config.add_cleanup(lambda: shutil.rmtree(home, ignore_errors=True))
    java = home / "bin" / "java"
    java.parent.mkdir()
    java.write_text('#!/bin/sh\necho "a unit test started a JVM ($PYTEST_CURRENT_TEST): mark it spark" >&2\nexit 1\n')
    java.chmod(0o755)
    os.environ["JAVA_HOME"] = str(home)


# --------------------------------------------------------------------------------------------------
# Spark
# --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def spark(request: pytest.FixtureRequest):
    """One Spark session for the whole test run, of the kind `SUBSTRAIT_SPARK_TEST_MODE` asks (tests/spark_modes.py):
    classic 3.5 starts with the Iceberg jars on its classpath (a JVM's jars are fixed at start; Iceberg catalogs can
    be added later, see tests/iceberg_stack.py); `connect` talks to a real local Spark Connect server."""
    if current_mode() is SparkMode.CONNECT:
        session = connect_session(request.getfixturevalue("connect_url"))
    else:
        session = classic_session()
    yield session
    session.stop()


# --------------------------------------------------------------------------------------------------
# TPC-H data
# --------------------------------------------------------------------------------------------------


def _tpchgen_executable() -> str:
    candidate = Path(sys.executable).parent / "tpchgen-cli"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("tpchgen-cli")
    if found:
        return found
    pytest.fail(
        f"tpchgen-cli not found next to {sys.executable} nor on PATH; "
        "install the test extra (pip install -e '.[test]', it pins tpchgen-cli==4.0.0)"
    )


def ensure_tpch_data(target: Path = TPCH_DIR, scale: str = TPCH_SCALE) -> Path:
    """Make sure ``target/<table>.parquet`` exists for every TPC-H table; generate them if not."""
    if all((target / f"{t}.parquet").exists() for t in TPCH_TABLES):
        return target
    exe = _tpchgen_executable()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.parent / f".{target.name}.tmp-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        proc = subprocess.run(
            [exe, "parquet", "-s", scale, "--output-dir", str(staging)],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            pytest.fail(f"tpchgen-cli failed ({proc.returncode}): {proc.stderr.strip() or proc.stdout.strip()}")
        missing = [t for t in TPCH_TABLES if not (staging / f"{t}.parquet").exists()]
        if missing:
            pytest.fail(f"tpchgen-cli did not write {missing} into {staging}")
        target.mkdir(exist_ok=True)
        for table in TPCH_TABLES:  # one atomic rename per file: concurrent runs never see half a file
            os.replace(staging / f"{table}.parquet", target / f"{table}.parquet")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


@pytest.fixture(scope="session")
def connect_with_ui(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    """A Spark Connect server (pyspark 4.x's) whose UI and its REST API listen on 127.0.0.1: its `sc://` URL and
    its UI's base URL (`connect_server.sql_executions` reads what it ran). Shared by the durable-run tests; stopped
    after the last of them (early_release.py)."""
    from connect_server import running_connect_server
    from early_release import hold

    with hold(request, "connect_with_ui") as stack:
        server = stack.enter_context(running_connect_server(tmp_path_factory.mktemp("connect-with-ui"), ui=True))
        assert server.ui_url is not None
        yield server.url, server.ui_url


@pytest.fixture(scope="session")
def deployment(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, connect_with_ui, tpch_dir: Path
):
    """A real Airflow deployment on 127.0.0.1 (tools/airflow_deployment.py: api-server, scheduler with the
    LocalExecutor's 2 worker slots, dag-processor, triggerer, metadata in a PostgreSQL of its own) over
    tests/airflow_deployment_dags, with the connection `substrait_chaos` to `connect_with_ui`'s server. Stopped by
    PID after the last test using it (early_release.py): nothing of it outlives it, not even a task process orphaned
    by a killed supervisor."""
    import json
    import time

    from airflow_deployment import DeploymentError, airflow_deployment, airflow_processes
    from early_release import hold
    from postgres_server import running_postgres

    url, _ = connect_with_ui
    tables = {t: str(tpch_dir / f"{t}.parquet") for t in ("nation", "lineitem", "orders", "region")}
    connection = {"conn_type": "substrait_spark", "host": url, "extra": {"tables": tables}}
    home = tmp_path_factory.mktemp("airflow-deployment")
    dags = TESTS_DIR / "airflow_deployment_dags"
    with hold(request, "deployment") as stack:
        postgres = stack.enter_context(running_postgres())
        started = time.monotonic()
        try:
            running = stack.enter_context(
                airflow_deployment(
                    home,
                    dags,
                    parallelism=2,
                    postgres_uri=postgres,
                    extra_env={"AIRFLOW_CONN_SUBSTRAIT_CHAOS": json.dumps(connection)},
                )
            )
        except DeploymentError as exc:
            pytest.fail(str(exc))
        print(f"\ndeployment ready in {time.monotonic() - started:.1f}s at {running.base_url}")
        yield running
    assert airflow_processes(home) == []


@pytest.fixture(scope="session")
def outputs_plan_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The durable-run tests' plan with three outputs, one heavy (`durable_plans.outputs_plan`), as a JSON file."""
    import json

    from durable_plans import outputs_plan

    path = tmp_path_factory.mktemp("outputs-plan") / "outputs.json"
    path.write_text(json.dumps(outputs_plan()))
    return path


@pytest.fixture(scope="session")
def outputs_expected(tpch_dir: Path) -> dict[int, list[list[str]]]:
    """DuckDB's rows of each output of `outputs_plan_file`."""
    from durable_plans import expected_outputs

    return expected_outputs(tpch_dir)


@pytest.fixture(scope="session")
def tpch_dir() -> Path:
    """``<repo>/.data/tpch/sf0.01``: ``<table>.parquet`` for the 8 TPC-H tables, made by tpchgen-cli."""
    return ensure_tpch_data()


@pytest.fixture(scope="session")
def duckdb_oracle(tpch_dir):
    """DuckDB over the TPC-H parquet files and consumer-testing's table ``t``: the SQL oracle of the corpus and
    producer tests."""
    from function_corpus import table_t_arrow
    from oracles import DuckDBOracle

    db = DuckDBOracle(tpch_dir)
    db.con.register("t", table_t_arrow())
    yield db
    db.close()


@pytest.fixture(scope="session")
def tpch_resolver(tpch_dir):
    """The TPC-H tables bound by name to their parquet files."""
    from substrait_spark.consumer import TableMapResolver

    return TableMapResolver.from_tables_dir(str(tpch_dir))


@pytest.fixture(scope="session")
def shop_dir() -> Path:
    """``<repo>/.data/shop``: a new user's own data (``shop.py``: customers, products, orders, order_items)."""
    from shop import write_shop

    return write_shop(Path(__file__).resolve().parents[1] / ".data" / "shop")


@pytest.fixture(scope="session")
def shop_plans(shop_dir):
    """DataFusion's plans of ``shop.SHOP_SQL`` by query name (``producers/shop_plans.py``)."""
    from producers import shop_plans as generate

    return generate.plans(shop_dir)


@pytest.fixture(scope="session")
def shop_oracle(shop_dir):
    """DuckDB over the shop's parquet files: the answer a shop plan must give."""
    from oracles import DuckDBOracle
    from shop import SHOP_TABLES

    db = DuckDBOracle(shop_dir, SHOP_TABLES)
    yield db
    db.close()


# --------------------------------------------------------------------------------------------------
# Plan corpus
# --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The shared plan corpus (``<repo>/../shared/corpus``). Missing corpus is a failure, not a skip."""
    if not CORPUS_DIR.is_dir():
        pytest.fail(
            f"plan corpus not found at {CORPUS_DIR} (expected <repo>/../shared/corpus, "
            "or set SUBSTRAIT_SPARK_CORPUS); corpus tests cannot run without it"
        )
    return CORPUS_DIR
