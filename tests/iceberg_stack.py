"""Fixtures for the embedded Iceberg stack: a Spark session with the Iceberg jars and a catalog `lake` shared with
pyiceberg on a SQLite file.

One JVM holds one SparkContext, and its jars are fixed when it starts (`ADD JAR` later reaches the driver but
not the task class loader: Iceberg's scans then fail with ClassCastException). Catalogs, though, are loaded
lazily by name, so a session started with the jars takes any number of catalogs later (`register_catalog`).
Hence: the session-wide `spark` fixture should start with `iceberg_session_conf()`; `iceberg_spark` reuses any
running session that has the jars, starts one when none runs, and otherwise skips, leaving the work to a fresh
interpreter (`run_in_fresh_jvm`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from substrait_spark.hooks.iceberg_spark import (
    default_jars_dir,
    pyiceberg_catalog,
    pyiceberg_catalog_properties,
    register_catalog,
    spark_session_conf,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
LAKE = "lake"
RUNTIME_JAR_MARK = "iceberg-spark-runtime-"
# Set in the fresh interpreter that runs the Iceberg tests when the suite's JVM lacks the jars.
FRESH_JVM_ENV = "SUBSTRAIT_SPARK_ICEBERG_FRESH_JVM"

# The same settings as the suite's `spark` fixture (tests/conftest.py), so either fixture may start the session.
BASE_CONF = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.memory": "2g",
}


def iceberg_session_conf() -> dict[str, str]:
    """`spark.jars` + Iceberg's SQL extensions; provisions the jars first when `.data/jars` has none."""
    jars_dir = default_jars_dir()
    if not (jars_dir / "_PROVISIONED.json").is_file():
        tools = str(REPO_ROOT / "tools")
        if tools not in sys.path:
            sys.path.insert(0, tools)
        import provision_jars

        try:
            provision_jars.provision(jars_dir)
        except provision_jars.ProvisionError as exc:
            pytest.fail(f"cannot provision the Iceberg jars: {exc}")
    return spark_session_conf(jars_dir)


def running_session() -> Any | None:
    """The classic session of this process's JVM, if one runs."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    if SparkContext._active_spark_context is None:
        return None
    return SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()


def has_iceberg_jars(spark: Any) -> bool:
    return RUNTIME_JAR_MARK in spark.sparkContext.getConf().get("spark.jars", "")


def start_iceberg_session() -> Any:
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[2]").appName("substrait-spark-tests")
    for key, value in {**BASE_CONF, **iceberg_session_conf()}.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def run_in_fresh_jvm(test_file: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run `test_file`'s tests with pytest in a new interpreter (so a new JVM that starts with the jars)."""
    env = dict(os.environ, **{FRESH_JVM_ENV: "1", "SPARK_LOCAL_IP": "127.0.0.1"})
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "not fresh_jvm", str(test_file)]
    return subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="session", name="iceberg_spark")
def iceberg_spark_fixture() -> Iterator[Any]:
    """A Spark session whose classpath has the Iceberg runtime (the suite's own one when it has the jars)."""
    session = running_session()
    if session is None:
        session = start_iceberg_session()
    elif not has_iceberg_jars(session):
        pytest.skip("this JVM started without the Iceberg jars: these tests run in a fresh interpreter instead")
    yield session  # stopped by whoever owns it last: the suite's `spark` fixture, or interpreter exit


@dataclass(frozen=True)
class Lake:
    """The catalog `lake` as both sides see it: one SQLite file, one warehouse folder, one name."""

    name: str
    uri: Path
    warehouse: Path
    spark: Any
    catalog: Any  # pyiceberg SqlCatalog (RestCatalog when `properties` say type rest)
    properties: dict[str, str] | None = None  # the catalog's properties when not a SQL catalog on `uri`

    @property
    def settings(self) -> dict[str, Any]:
        return {"uri": self.uri, "warehouse": self.warehouse}

    @property
    def catalog_properties(self) -> dict[str, str]:
        """pyiceberg's properties for this catalog (as `--catalog-config` holds them)."""
        if self.properties is not None:
            return dict(self.properties)
        return pyiceberg_catalog_properties(self.name, uri=self.uri, warehouse=self.warehouse)

    @property
    def config(self) -> dict[str, Any]:
        """The catalog configuration naming this catalog as the default (`--catalog-config`'s content)."""
        return {"default": self.name, "catalogs": {self.name: self.catalog_properties}}

    def catalogs(self) -> Any:
        from substrait_spark.hooks.iceberg import Catalogs

        return Catalogs.from_mapping(self.config)

    def write_config(self, path: Path) -> Path:
        """The configuration as a YAML file, as the CLI and the operator read it."""
        import yaml

        path.write_text(yaml.safe_dump(self.config))
        return path


@pytest.fixture(scope="session", name="lake")
def lake_fixture(iceberg_spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Lake:
    """Catalog `lake` (Iceberg JDBC on SQLite) registered on the running session and opened with pyiceberg.

    Session-wide: tests keep apart by using their own namespace.
    """
    root = tmp_path_factory.mktemp("iceberg-lake")
    settings = {"uri": root / "catalog.db", "warehouse": root / "warehouse"}
    register_catalog(iceberg_spark, LAKE, **settings)
    return Lake(LAKE, settings["uri"], settings["warehouse"], iceberg_spark, pyiceberg_catalog(LAKE, **settings))


# The catalog stores every Iceberg test runs on: `@pytest.fixture(scope="module", params=CATALOG_STORES)`.
CATALOG_STORES = ["sqlite", "postgresql", "rest"]


def store_lake(
    request: pytest.FixtureRequest, spark: Any, tmp_path_factory: pytest.TempPathFactory, prefix: str
) -> Lake:
    """A catalog on the store `request.param`: a SQLite file (the embedded default), a PostgreSQL database started
    on 127.0.0.1, or a warehouse of the REST catalog server started on 127.0.0.1 (OAuth2 client credentials). Named
    `<prefix>sqlake` / `<prefix>pglake` / `<prefix>restlake`, a module's own: Spark keeps a catalog it has loaded for
    the life of the session."""
    if request.param == "rest":
        return rest_lake(request.getfixturevalue("rest_catalog_server"), spark, f"{prefix}restlake")
    root = tmp_path_factory.mktemp(f"{prefix}lake-{request.param}")
    if request.param == "sqlite":
        name, uri = f"{prefix}sqlake", root / "catalog.db"
    else:
        name, uri = f"{prefix}pglake", request.getfixturevalue("postgres_uri")
    settings = {"uri": uri, "warehouse": root / "warehouse"}
    register_catalog(spark, name, **settings)
    return Lake(name, uri, settings["warehouse"], spark, pyiceberg_catalog(name, **settings))


def rest_lake(server: Any, spark: Any, name: str) -> Lake:
    """Catalog `name` on the REST server (its own warehouse there), seen by pyiceberg's RestCatalog and registered
    on the session as Iceberg's Spark RESTCatalog, both from the same properties (`Catalogs`)."""
    from substrait_spark.hooks.iceberg import Catalogs

    props = server.properties(name)
    catalogs = Catalogs.from_mapping({"default": name, "catalogs": {name: props}})
    catalogs.configure(spark, name)
    return Lake(name, server.uri, name, spark, catalogs.load(name), props)
