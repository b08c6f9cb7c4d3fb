"""The catalog configuration (CLI `--catalog-config`, operator `catalog_config`, Airflow connections): how each
catalog type becomes the Spark catalog of the same name, and what a bad configuration says. No Spark needed."""

from __future__ import annotations

import json

import pytest
from substrait_spark.consumer.errors import ResolutionError
from substrait_spark.hooks.iceberg import Catalogs, session_conf
from substrait_spark.hooks.iceberg_hook import catalogs_from_connections

pytestmark = [pytest.mark.unit]

CONFIG = {
    "default": "lake",
    "catalogs": {
        "lake": {"type": "sql", "uri": "sqlite:////data/catalog.db", "warehouse": "file:///data/wh"},
        "pg": {"type": "sql", "uri": "postgresql+psycopg2://u:pw@db.internal:5433/cat", "warehouse": "s3://b/wh"},
        "prod": {"type": "rest", "uri": "https://rest.example", "credential": "id:secret", "warehouse": "w"},
        "aws": {"type": "glue", "warehouse": "s3://lake/", "spark": {"io-impl": "org.apache.iceberg.aws.s3.S3FileIO"}},
        "legacy": {"type": "hive", "uri": "thrift://metastore:9083", "warehouse": "s3://h/"},
    },
}


def test_each_catalog_type_becomes_the_spark_catalog_of_the_same_name():
    conf = Catalogs.from_mapping(CONFIG).spark_conf()
    assert conf["spark.sql.extensions"] == "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
    for name in CONFIG["catalogs"]:
        assert conf[f"spark.sql.catalog.{name}"] == "org.apache.iceberg.spark.SparkCatalog"
    assert conf["spark.sql.catalog.lake.type"] == "jdbc"
    assert conf["spark.sql.catalog.lake.uri"] == "jdbc:sqlite:/data/catalog.db"
    assert conf["spark.sql.catalog.lake.jdbc.schema-version"] == "V1"
    assert conf["spark.sql.catalog.pg.uri"] == "jdbc:postgresql://db.internal:5433/cat"
    assert conf["spark.sql.catalog.pg.jdbc.user"] == "u" and conf["spark.sql.catalog.pg.jdbc.password"] == "pw"
    assert conf["spark.sql.catalog.prod.type"] == "rest"
    assert conf["spark.sql.catalog.prod.uri"] == "https://rest.example"
    assert conf["spark.sql.catalog.prod.credential"] == "id:secret"
    # pyiceberg commits to the same tables during a run: Spark's table cache would hide its snapshots
    assert conf["spark.sql.catalog.prod.cache-enabled"] == conf["spark.sql.catalog.lake.cache-enabled"] == "false"
    assert conf["spark.sql.catalog.aws.type"] == "glue"
    assert conf["spark.sql.catalog.aws.io-impl"] == "org.apache.iceberg.aws.s3.S3FileIO"
    assert conf["spark.sql.catalog.legacy.type"] == "hive"
    assert conf["spark.sql.catalog.legacy.uri"] == "thrift://metastore:9083"


def test_secrets_are_masked_in_what_is_shown():
    prod = Catalogs.from_mapping(CONFIG).catalogs["prod"]
    assert prod.redacted()["credential"] == "***" and prod.redacted()["uri"] == "https://rest.example"


def test_a_cluster_with_iceberg_packages_needs_no_provisioned_jars(tmp_path):
    catalogs = Catalogs.from_mapping(CONFIG)
    conf = session_conf(
        catalogs, jars_dir=tmp_path, packages=["org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.6.1"]
    )
    assert "spark.jars" not in conf and conf["spark.sql.catalog.lake.type"] == "jdbc"
    with pytest.raises(ResolutionError, match="not provisioned"):
        session_conf(catalogs, jars_dir=tmp_path)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({}, "expected 'catalogs:"),
        ({"catalogs": {"x": "sqlite"}}, "catalog 'x' needs a mapping"),
        ({"default": "nope", "catalogs": {"x": {"type": "sql", "uri": "sqlite:////a.db"}}}, "default catalog 'nope'"),
        ({"catalogs": {"x": {"type": "nessie"}}}, "type 'nessie' has no Spark equivalent"),
    ],
)
def test_bad_configurations_say_what_is_wrong(config, message):
    with pytest.raises(ResolutionError, match=message) as exc:
        Catalogs.from_mapping(config).spark_conf()
    assert exc.value.exit_code == 4


def test_catalog_config_file(tmp_path):
    path = tmp_path / "catalogs.json"
    path.write_text(json.dumps(CONFIG))
    catalogs = Catalogs.from_file(path)
    assert catalogs.default == "lake" and set(catalogs.catalogs) == set(CONFIG["catalogs"])
    assert catalogs.find("LAKE").name == "lake"
    with pytest.raises(ResolutionError, match="cannot read catalog config"):
        Catalogs.from_file(tmp_path / "missing.yaml")


def test_airflow_connections_give_catalogs(monkeypatch):
    # The Iceberg provider's connection: host = REST URI, login/password = client id/secret.
    monkeypatch.setenv(
        "AIRFLOW_CONN_ICEBERG_PROD",
        json.dumps(
            {
                "conn_type": "iceberg",
                "host": "https://rest.example",
                "login": "id",
                "password": "s3cret",
                "extra": {"warehouse": "w", "catalog_name": "prod"},
            }
        ),
    )
    # Any connection with pyiceberg properties in its extras.
    monkeypatch.setenv(
        "AIRFLOW_CONN_LAKE",
        json.dumps({"conn_type": "generic", "extra": {"type": "sql", "uri": "sqlite:////data/c.db", "warehouse": "w"}}),
    )
    catalogs = catalogs_from_connections(["iceberg_prod", "lake"])
    assert catalogs.default == "prod"
    prod = catalogs.catalogs["prod"]
    assert prod.properties == {
        "warehouse": "w",
        "uri": "https://rest.example",
        "type": "rest",
        "credential": "id:s3cret",
    }
    assert catalogs.catalogs["lake"].spark_conf()["spark.sql.catalog.lake.uri"] == "jdbc:sqlite:/data/c.db"
