"""No secret leaks anywhere: canary secrets planted in every connection and configuration the stack reads, the
CLI, the example Airflow DAGs and Dagster assets run with them, and every output scanned for them.

Each canary is `CANARY-<random>-<what>`; a scan looks for `CANARY-<random>`, so any canary — or a prefix of one —
in an output is a leak. Planted: the AWS access key id, secret and session token (environment, the Airflow AWS
connection, the Dagster S3 resource); the Iceberg catalog's PostgreSQL password (pyiceberg's URL and Spark's
`jdbc.password`), its `s3.access-key-id` / `s3.secret-access-key` / `s3.session-token`, `credential` and `token`;
Spark settings that hold secrets (the catalog's `spark:` map: `spark.sql.catalog.vault.s3.secret-access-key`;
`spark.hadoop.fs.s3a.access.key` / `secret.key` in the Airflow Spark connection's extras and the Dagster Spark
resource); the Airflow connections' passwords; a Spark Connect server's token (the server requires it: a run that
succeeds proves it was sent), in the CLI's `sc://…;token=` URL for each client and as the password of the Spark
provider's `spark_connect` connection.

The canaries are live configuration, checked where the component can check: the PostgreSQL server asks for the
password (SCRAM; a wrong one is refused, shown first), so a run that commits proves the canary password was used;
the S3 server records each request's headers, so the plan reads prove the canary access key id and session token
signed them; the in-process Spark session holds the catalog's canary Spark settings after the CLI run.

Scanned: stdout/stderr (Python and JVM, `--debug` tracebacks included) and every log record of the CLI; its
`summary.json`, result files, explain pictures (SVG, HTML) and lineage JSON; the audit table's rows; the Airflow
task logs, the metadata database (XCom values, rendered fields, asset events), the OpenLineage events (the
provider's file transport), the plugin page's HTML for the task; the Dagster instance (event log, run storage:
logs and materialization metadata), its stdout/stderr, reports.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from local_stack import PLANS_BUCKET, AirflowStack, s3_client, seed_plans
from postgres_server import running_postgres
from test_airflow_e2e import DAY

pytestmark = [pytest.mark.spark, pytest.mark.iceberg, pytest.mark.airflow, pytest.mark.dagster, pytest.mark.corpus]

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_PLANS = ROOT / "dags_examples" / "plans"
BIN = Path(sys.executable).parent
CATALOG = "vault"  # a name no other test's Spark session has configured


class Canaries:
    """Distinctive secrets, one per place planted; `leaks` finds any of them (or a prefix) in a text."""

    def __init__(self) -> None:
        self.prefix = f"CANARY-{secrets.token_hex(5)}"
        self.planted: dict[str, str] = {}

    def __call__(self, what: str) -> str:
        return self.planted.setdefault(what, f"{self.prefix}-{what}")

    def leaks(self, where: str, text: str | bytes) -> list[str]:
        data = text if isinstance(text, str) else text.decode("latin-1")
        found, start = [], data.find(self.prefix)
        while start >= 0:
            found.append(f"{where}: ...{data[max(0, start - 120) : start + 60]!r}")
            start = data.find(self.prefix, start + 1)
        return found

    def leaks_in_files(self, root: Path, skip: set[Path] = frozenset()) -> list[str]:  # type: ignore[assignment]
        out: list[str] = []
        for path in sorted(p for p in root.rglob("*") if p.is_file() and p.resolve() not in skip):
            out += self.leaks(str(path.relative_to(root)), path.read_bytes())
        return out


@pytest.fixture(scope="module")
def canaries() -> Canaries:
    return Canaries()


@pytest.fixture(scope="module")
def postgres(canaries: Canaries):
    """PostgreSQL asking for the canary password on every TCP connection."""
    with running_postgres(password=canaries("pg-password")) as uri:
        yield uri


def _database(uri: str, password: str, name: str) -> str:
    """A fresh database on the server of `uri`; its URI (without the password)."""
    import psycopg2
    from psycopg2 import sql

    base, _, _ = uri.rpartition("/")
    con = psycopg2.connect(uri, password=password)
    con.autocommit = True
    with con.cursor() as cur:
        cur.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    con.close()
    return f"{base}/{name}"


def canary_catalog_config(canaries: Canaries, postgres: str, folder: Path, database: str) -> Path:
    """`--catalog-config` for catalog `vault` on its own PostgreSQL database (namespace `demo`), every secret a
    canary."""
    from substrait_spark.hooks.iceberg_spark import pyiceberg_catalog, pyiceberg_catalog_properties

    folder.mkdir(parents=True, exist_ok=True)
    settings: dict[str, Any] = {
        "uri": _database(postgres, canaries("pg-password"), database),
        "warehouse": folder / "warehouse",
        "jdbc_user": "postgres",
        "jdbc_password": canaries("pg-password"),
    }
    catalog = pyiceberg_catalog(CATALOG, **settings)
    catalog.create_namespace_if_not_exists("demo")
    catalog.engine.dispose()
    secrets_of_the_catalog = {
        "s3.access-key-id": canaries("catalog-s3-access-key-id"),
        "s3.secret-access-key": canaries("catalog-s3-secret-access-key"),
        "s3.session-token": canaries("catalog-s3-session-token"),
        "credential": canaries("catalog-credential"),
        "token": canaries("catalog-token"),
    }
    props: dict[str, Any] = pyiceberg_catalog_properties(CATALOG, **settings, extra=secrets_of_the_catalog)
    props["spark"] = {  # Spark's side of the catalog: spark.sql.catalog.vault.s3.*
        "s3.access-key-id": canaries("spark-catalog-s3-access-key-id"),
        "s3.secret-access-key": canaries("spark-catalog-s3-secret-access-key"),
    }
    path = folder / "catalogs.yaml"
    path.write_text(yaml.safe_dump({"default": CATALOG, "catalogs": {CATALOG: props}}))
    return path


@pytest.fixture(scope="module")
def recorded_s3(s3_endpoint: str, corpus: Path):
    """The S3 server with the example plans, recording every request (headers included) while this module runs."""
    seed_plans(s3_endpoint, corpus)
    for action in ("reset-recording", "start-recording"):
        urllib.request.urlopen(urllib.request.Request(f"{s3_endpoint}/moto-api/recorder/{action}", method="POST"))
    yield s3_endpoint
    urllib.request.urlopen(urllib.request.Request(f"{s3_endpoint}/moto-api/recorder/stop-recording", method="POST"))


def recorded_headers(endpoint: str) -> str:
    with urllib.request.urlopen(f"{endpoint}/moto-api/recorder/download-recording") as response:
        return "\n".join(json.dumps(json.loads(line)["headers"]) for line in response.read().decode().splitlines())


def audit_rows(config: Path) -> str:
    """The audit table's rows, as text (pyiceberg's view)."""
    from substrait_spark.hooks.iceberg import Catalogs

    catalog = Catalogs.from_file(config).load(CATALOG)
    tables = [t for ns in catalog.list_namespaces() for t in catalog.list_tables(ns) if t[-1] == "audit_log"]
    assert tables, "no audit table written"
    return json.dumps([catalog.load_table(t).scan().to_arrow().to_pylist() for t in tables], default=str)


def test_the_canaries_are_live(canaries: Canaries, postgres: str) -> None:
    """The PostgreSQL server checks the password: a wrong one is refused, the canary is accepted."""
    import psycopg2

    with pytest.raises(psycopg2.OperationalError, match="password authentication failed"):
        psycopg2.connect(postgres, password="not-the-canary").close()
    psycopg2.connect(postgres, password=canaries("pg-password")).close()


def test_cli_with_debug_leaks_no_secret(
    canaries: Canaries,
    postgres: str,
    recorded_s3: str,
    spark,
    tpch_dir: Path,
    tmp_path: Path,
    capfd,
    caplog,
    monkeypatch,
) -> None:
    from substrait_spark.cli import main

    caplog.set_level(logging.INFO)  # the CLI configures no debug logging (botocore's own prints signed headers)
    caplog.set_level(logging.DEBUG, logger="substrait_spark")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", canaries("env-aws-access-key-id"))
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", canaries("env-aws-secret-access-key"))
    monkeypatch.setenv("AWS_SESSION_TOKEN", canaries("env-aws-session-token"))
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", recorded_s3)
    config = canary_catalog_config(canaries, postgres, tmp_path / "catalog", "cli")
    plan = f"s3://{PLANS_BUCKET}/tpch/big_orders_pipeline.json"
    out, failed_out = tmp_path / "out", tmp_path / "failed"
    common = ["--catalog-config", str(config), "--tables-dir", str(tpch_dir)]

    assert main(["--debug", "validate", plan]) == 0
    assert main(["--debug", "run", plan, *common, "--output-dir", str(out), "--audit-log", "iceberg"]) == 0
    # Failing runs: the catalog's password is wrong (the server refuses it), the tables are not there, no plan.
    wrong = tmp_path / "wrong" / "catalogs.yaml"
    wrong.parent.mkdir()
    wrong.write_text(config.read_text().replace(canaries("pg-password"), canaries("wrong-pg-password")))
    wrong_common = ["--catalog-config", str(wrong), "--tables-dir", str(tpch_dir), "--output-dir", str(failed_out)]
    assert main(["--debug", "run", plan, *wrong_common]) in (1, 4)
    empty = tmp_path / "no_tables"
    empty.mkdir()
    missing = ["run", f"s3://{PLANS_BUCKET}/tpch/daily_pricing_summary.json", "--catalog-config", str(config)]
    assert main(["--debug", *missing, "--tables-dir", str(empty), "--param", "0=1995-06-17"]) == 4
    assert main(["--debug", "run", f"s3://{PLANS_BUCKET}/tpch/no_such_plan.json", *common]) == 2
    for fmt in ("svg", "html"):
        report = ["--report", str(out / "summary.json")]
        assert main(["--debug", "explain", plan, "--format", fmt, *report, "--output", str(tmp_path / f"p.{fmt}")]) == 0
    assert main(["--debug", "lineage", plan, "--output", str(tmp_path / "lineage.json")]) == 0
    read_only = f"s3://{PLANS_BUCKET}/tpch/duckdb_q06_forecast_revenue.json"  # text explain translates: no writes
    assert main(["--debug", "explain", read_only, *common]) == 0

    # Live: the run committed through PostgreSQL (canary password); S3 requests were signed with the canary key.
    summary = json.loads((out / "summary.json").read_text())
    assert [s["status"] for s in summary["plans"][0]["steps"]] == ["committed"] * 3
    headers = recorded_headers(recorded_s3)
    assert f"Credential={canaries('env-aws-access-key-id')}/" in headers
    assert canaries("env-aws-session-token") in headers
    secret_key = spark.conf.get(f"spark.sql.catalog.{CATALOG}.s3.secret-access-key")
    assert secret_key == canaries("spark-catalog-s3-secret-access-key")

    captured = capfd.readouterr()
    found = canaries.leaks("stdout", captured.out) + canaries.leaks("stderr", captured.err)
    found += canaries.leaks("log records", "\n".join(r.getMessage() for r in caplog.records))
    found += canaries.leaks_in_files(tmp_path, skip={config.resolve(), wrong.resolve()})
    found += canaries.leaks("audit table", audit_rows(config))
    assert not found, "\n".join(found)


def test_airflow_example_dags_leak_no_secret(
    canaries: Canaries, postgres: str, recorded_s3: str, tpch_dir: Path, tmp_path_factory
) -> None:
    from substrait_spark.graph import plan_html

    home = tmp_path_factory.mktemp("airflow-canaries")
    config = canary_catalog_config(canaries, postgres, home / "catalog", "airflow")
    tables = {t: str((tpch_dir / f"{t}.parquet").resolve()) for t in ("lineitem", "orders", "customer", "nation")}
    tables.update({t: str((tpch_dir / f"{t}.parquet").resolve()) for t in ("part", "partsupp", "region", "supplier")})
    aws = {
        "conn_type": "aws",
        "login": canaries("airflow-aws-access-key-id"),
        "password": canaries("airflow-aws-secret-access-key"),
        "extra": {
            "endpoint_url": recorded_s3,
            "region_name": "us-east-1",
            "aws_session_token": canaries("airflow-aws-session-token"),
        },
    }
    spark_conn = {
        "conn_type": "substrait_spark",
        "host": "local[2]",
        "password": canaries("airflow-spark-password"),
        "extra": {
            "tables": tables,
            "conf": {
                "spark.sql.shuffle.partitions": "4",
                "spark.hadoop.fs.s3a.access.key": canaries("airflow-spark-s3a-access-key"),
                "spark.hadoop.fs.s3a.secret.key": canaries("airflow-spark-s3a-secret-key"),
            },
        },
    }
    provider_spark = {"conn_type": "spark", "host": "local", "password": canaries("airflow-spark-provider-password")}
    events = home / "openlineage.jsonl"
    stack = AirflowStack(
        home,
        recorded_s3,
        tpch_dir,
        home / "reports",
        extra_env={
            "AIRFLOW_CONN_AWS_DEFAULT": json.dumps(aws),
            "AIRFLOW_CONN_SUBSTRAIT_SPARK_DEFAULT": json.dumps(spark_conn),
            "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps(provider_spark),
            "AIRFLOW_VAR_SUBSTRAIT_CATALOG_CONFIG": str(config),
            "AIRFLOW_VAR_SUBSTRAIT_AUDIT_LOG": "iceberg",
            "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(
                {"type": "file", "log_file_path": str(events), "append": True}
            ),
            "AIRFLOW__OPENLINEAGE__NAMESPACE": "canaries",
        },
    )
    stack.migrate()
    runs = [
        stack.dags_test("substrait_table_pipeline", "2024-06-01"),
        stack.dags_test("substrait_daily_report", "1995-06-17"),
        # A failing run: the plans are not where the variable says.
        stack.dags_test(
            "substrait_daily_report", "1995-06-18", AIRFLOW_VAR_SUBSTRAIT_PLANS=f"s3://{PLANS_BUCKET}/nowhere"
        ),
    ]
    assert [r.state for r in runs] == ["success", "success", "failed"], [r.log[-3000:] for r in runs]
    report = runs[0].value("big_orders")
    assert [s["status"] for s in report["steps"]] == ["committed"] * 3  # through PostgreSQL: the canary password
    headers = recorded_headers(recorded_s3)
    assert f"Credential={canaries('airflow-aws-access-key-id')}/" in headers
    assert canaries("airflow-aws-session-token") in headers
    assert events.exists() and events.read_text().strip()

    # The plugin page of each run's task: its report (XCom) and its plan, as the page renders them.
    from substrait_spark.consumer import parse_plan_bytes

    pages = []
    for run, task in ((runs[0], "big_orders"), (runs[1], "pricing_summary")):
        rep = run.value(task)
        key = rep["plan_uri"].removeprefix(f"s3://{PLANS_BUCKET}/")
        body = s3_client(recorded_s3).get_object(Bucket=PLANS_BUCKET, Key=key)["Body"].read()
        pages.append(plan_html(parse_plan_bytes(body, uri=rep["plan_uri"]), rep, title=task))

    found = [leak for r in runs for leak in canaries.leaks(f"{r.dag_id} output", r.log)]
    xcoms = [(r.dag_id, json.dumps(list(r.xcom.items()), default=str)) for r in runs]
    found += [leak for dag_id, text in xcoms for leak in canaries.leaks(f"{dag_id} XCom", text)]
    found += [leak for i, page in enumerate(pages) for leak in canaries.leaks(f"plugin page {i}", page)]
    found += canaries.leaks_in_files(home, skip={config.resolve()})  # logs, airflow.db, OpenLineage, reports
    found += canaries.leaks("audit table", audit_rows(config))
    assert not found, "\n".join(found)


def test_dagster_assets_leak_no_secret(
    canaries: Canaries, postgres: str, recorded_s3: str, tpch_dir: Path, tmp_path: Path
) -> None:
    config = canary_catalog_config(canaries, postgres, tmp_path / "catalog", "dagster")
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\nnux:\n  enabled: false\n")
    definitions = tmp_path / "definitions.py"
    definitions.write_text(
        textwrap.dedent(
            f"""
            from dagster import Definitions
            from dagster_aws.s3 import S3Resource
            from substrait_spark.dagster import (
                IcebergCatalogsResource, PlanStoreResource, SparkResource, SubstraitSparkResource, substrait_assets,
            )

            substrait = SubstraitSparkResource(
                spark=SparkResource(master="local[2]", conf={{
                    "spark.sql.shuffle.partitions": "4",
                    "spark.hadoop.fs.s3a.access.key": {canaries("dagster-spark-s3a-access-key")!r},
                    "spark.hadoop.fs.s3a.secret.key": {canaries("dagster-spark-s3a-secret-key")!r},
                }}),
                plan_store=PlanStoreResource(s3=S3Resource(
                    endpoint_url={recorded_s3!r}, region_name="us-east-1",
                    aws_access_key_id={canaries("dagster-aws-access-key-id")!r},
                    aws_secret_access_key={canaries("dagster-aws-secret-access-key")!r},
                    aws_session_token={canaries("dagster-aws-session-token")!r},
                )),
                catalogs=IcebergCatalogsResource(config_path={str(config)!r}),
                tables_dir={str(tpch_dir)!r},
                audit_log="iceberg",
            )
            big_orders = substrait_assets("s3://{PLANS_BUCKET}/tpch/big_orders_pipeline.json", resource=substrait)
            defs = Definitions(assets=[big_orders], resources={{"substrait": substrait}})
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DAGSTER", "AWS_"))}
    env.update(DAGSTER_HOME=str(home), SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
    done = subprocess.run(
        [str(BIN / "dagster"), "asset", "materialize", "-f", str(definitions), "--select", "*"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"Credential={canaries('dagster-aws-access-key-id')}/" in recorded_headers(recorded_s3)

    from dagster import AssetKey, DagsterInstance

    with DagsterInstance.from_config(str(home)) as instance:
        event = instance.get_latest_materialization_event(AssetKey([CATALOG, "demo", "big_orders"]))
    assert event is not None, done.stdout[-3000:]
    found = canaries.leaks("stdout", done.stdout) + canaries.leaks("stderr", done.stderr)
    found += canaries.leaks("materialization", repr(event))
    found += canaries.leaks_in_files(home)  # event log and run storage: logs, metadata
    found += canaries.leaks("audit table", audit_rows(config))
    assert not found, "\n".join(found)


# --------------------------------------------------------------------------------------------------
# A Spark Connect server's token
# --------------------------------------------------------------------------------------------------

CONNECT_CLIENTS = {"pyspark-3.5": BIN, "pyspark-4": ROOT / ".venv-spark4" / "bin"}


@pytest.fixture(scope="module")
def token_server(canaries: Canaries, tmp_path_factory):
    """A Spark Connect server that refuses every call without the canary token (its own folder is not scanned: what
    the server logs is Spark's business, not ours)."""
    from connect_server import ConnectServerError, connect_server

    token = canaries("connect-token")
    try:
        with connect_server(
            tmp_path_factory.mktemp("connect-token-server"), env={"SPARK_CONNECT_AUTHENTICATE_TOKEN": token}
        ) as url:
            yield url
    except ConnectServerError as exc:
        pytest.fail(str(exc))


def test_a_spark_connect_token_leaks_nowhere(
    canaries: Canaries, token_server: str, recorded_s3: str, corpus: Path, tpch_dir: Path, tmp_path: Path
) -> None:
    """The CLI of each client with `--debug`, a run with the token and one with a wrong one; then Airflow's daily
    report through a `spark_connect` connection whose password is the token, and with a wrong one."""
    plan = corpus / "ibm-substrait-compliance-tpch" / "q06.json"
    env = {k: v for k, v in os.environ.items() if k != "SPARK_CONNECT_MODE_ENABLED"}
    outputs: list[tuple[str, str]] = []
    for client, bin_dir in CONNECT_CLIENTS.items():
        if not (bin_dir / "substrait-spark").exists():
            pytest.skip(f"{bin_dir} not installed")
        for name, token in (("right", canaries("connect-token")), ("wrong", canaries("connect-wrong-token"))):
            out = tmp_path / "cli" / client / name
            done = subprocess.run(
                [str(bin_dir / "substrait-spark"), "--debug", "run", str(plan), "--master",
                 f"{token_server}/;token={token}", "--tables-dir", str(tpch_dir), "--output-dir", str(out),
                 "--audit-log", f"jsonl:{out / 'audit.jsonl'}"],
                env=env, capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            assert done.returncode == (0 if name == "right" else 1), done.stderr[-3000:]
            outputs += [(f"{client} {name} stdout", done.stdout), (f"{client} {name} stderr", done.stderr)]
        assert json.loads((tmp_path / "cli" / client / "right" / "summary.json").read_text())["plans"][0]["outputs"]
        assert "the server refused the credentials" in outputs[-1][1]

    home = tmp_path / "airflow"
    host, port = token_server.removeprefix("sc://").split(":")
    tables = {t: str((tpch_dir / f"{t}.parquet").resolve()) for t in ("lineitem", "nation")}

    def connection(token: str) -> str:
        conn = {"conn_type": "spark_connect", "host": host, "port": int(port), "login": "ann", "password": token}
        return json.dumps({**conn, "extra": {"tables": tables, "use_ssl": False}})

    events = home / "openlineage.jsonl"
    stack = AirflowStack(
        home,
        recorded_s3,
        tpch_dir,
        home / "reports",
        extra_env={
            "AIRFLOW_CONN_SUBSTRAIT_SPARK_DEFAULT": connection(canaries("connect-token")),
            "AIRFLOW_VAR_SUBSTRAIT_AUDIT_LOG": f"jsonl:{home / 'audit.jsonl'}",
            "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(
                {"type": "file", "log_file_path": str(events), "append": True}
            ),
            "AIRFLOW__OPENLINEAGE__NAMESPACE": "canaries",
        },
    )
    stack.migrate()
    runs = [
        stack.dags_test("substrait_daily_report", DAY),
        stack.dags_test(
            "substrait_daily_report",
            "1995-06-18",
            AIRFLOW_CONN_SUBSTRAIT_SPARK_DEFAULT=connection(canaries("connect-wrong-token")),
            # the refusal is retryable (exit 1): the DAG's 2 retries after 1 s, not Airflow's default 300 s
            AIRFLOW__CORE__DEFAULT_TASK_RETRY_DELAY="1",
        ),
    ]
    assert [r.state for r in runs] == ["success", "failed"], [r.log[-3000:] for r in runs]
    report = runs[0].value("pricing_summary")
    assert report["status"] == "success" and report["spark_connect"]["session_id"]
    assert f"Spark Connect at {token_server}/;user_id=ann;token=***;use_ssl=false" in runs[1].log
    assert "the server refused the credentials" in runs[1].log
    assert (home / "audit.jsonl").read_text().strip() and events.read_text().strip()

    found = [leak for where, text in outputs for leak in canaries.leaks(where, text)]
    found += canaries.leaks_in_files(tmp_path / "cli")  # results, summary.json, audit records
    found += [leak for r in runs for leak in canaries.leaks(f"{r.dag_id} output", r.log)]
    found += [leak for r in runs for leak in canaries.leaks(f"{r.dag_id} XCom", json.dumps(list(r.xcom.items())))]
    found += canaries.leaks_in_files(home)  # task logs, airflow.db, audit records, OpenLineage events, reports
    assert not found, "\n".join(found)
