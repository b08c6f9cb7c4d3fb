"""Spark sessions and the Airflow hook: master URLs from connections, conf extras, reuse, job groups, a real cluster.

Tests that can use the shared local session (`spark`, local[2]) run in-process and never stop it. Anything that
needs another master runs its driver in a subprocess (one SparkContext per process), against a real standalone
cluster started by `spark_cluster.py`. Spark Connect is checked up to the builder (pyspark 3.5 has no server).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import spark_cluster
from oracles import read_ibm_csv
from substrait_spark import TableMapResolver, load_plan, to_dataframe
from substrait_spark.hooks import spark as sessions
from substrait_spark.hooks.spark import SparkTarget, cancel_job_group, get_session, job_group, normalize_master
from substrait_spark.hooks.spark_hook import SubstraitSparkHook

pytestmark = [pytest.mark.spark, pytest.mark.airflow, pytest.mark.corpus]

IBM = "ibm-substrait-compliance-tpch"

# Importing Airflow points logging at the stream pytest captures; py4j's INFO line at interpreter exit would then
# hit a closed file ("--- Logging error ---"). Its shutdown chatter is not needed.
logging.getLogger("py4j").setLevel(logging.WARNING)
GROUP_PROPERTY = "spark.jobGroup.id"


def _sleep_job(spark, millis: int, partitions: int = 1):
    """A job whose tasks sleep in the executor: interruptible, no Python UDF."""
    return spark.range(0, partitions, 1, partitions).selectExpr(
        f"java_method('java.lang.Thread', 'sleep', {millis}L) AS slept", "id"
    )


# --------------------------------------------------------------------------------------------------
# Master URLs
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "port", "expected"),
    [
        ("local[*]", None, "local[*]"),
        ("local[4]", 7077, "local[4]"),  # no host to put a port on
        ("local", None, "local"),
        ("yarn", None, "yarn"),
        ("spark://127.0.0.1:7077", None, "spark://127.0.0.1:7077"),
        ("spark://127.0.0.1", 7077, "spark://127.0.0.1:7077"),  # host with scheme, port apart
        ("127.0.0.1", 7077, "spark://127.0.0.1:7077"),  # scheme only in the connection type
        ("spark://spark://127.0.0.1", 7077, "spark://127.0.0.1:7077"),  # scheme added twice
        ("spark://127.0.0.1:7077/", None, "spark://127.0.0.1:7077"),
        ("spark://127.0.0.1:7077", 9999, "spark://127.0.0.1:7077"),  # the URL's own port wins
        ("spark://h1:7077,h2:7077", None, "spark://h1:7077,h2:7077"),  # standalone HA
        ("spark://h1:7077,h2:7077", 7077, "spark://h1:7077,h2:7077"),
        ("h1,h2", 7077, "spark://h1:7077,h2:7077"),
        ("k8s://https://api.example:6443", None, "k8s://https://api.example:6443"),
        ("k8s://https://api.example", 6443, "k8s://https://api.example:6443"),
        ("k8s://api.example:6443", None, "k8s://https://api.example:6443"),
        ("sc://h", 15002, "sc://h:15002"),
        ("sc://h:15002/;token=abc", None, "sc://h:15002/;token=abc"),
    ],
)
def test_master_urls_are_normalized(host, port, expected):
    assert normalize_master(host, port) == expected


@pytest.mark.parametrize("bad", ["", "   ", "spark://", "spark:///path"])
def test_master_url_without_host_is_an_error(bad):
    with pytest.raises(ValueError):
        normalize_master(bad)


def test_target_merges_jars_and_packages_over_defaults():
    target = SparkTarget.parse(
        "local[2]",
        conf={"spark.jars": "/a.jar", "spark.sql.shuffle.partitions": 3, "spark.sql.ansi.enabled": True},
        jars=" /b.jar, /a.jar ",
        packages=["org.x:y:1"],
    )
    conf = target.spark_conf()
    assert conf["spark.jars"] == "/a.jar,/b.jar"
    assert conf["spark.jars.packages"] == "org.x:y:1"
    assert conf["spark.sql.shuffle.partitions"] == "3" and conf["spark.sql.ansi.enabled"] == "true"
    assert conf["spark.driver.extraJavaOptions"].endswith("log4j2-quiet.properties")  # quiet log4j stays
    assert conf["spark.ui.enabled"] == "false"


def test_spark_submit_settings_win_over_defaults_not_over_what_was_asked():
    """A driver spark-submit started (tests/test_spark_submit.py runs one): the session keeps spark-submit's
    master, name and tuning where the target did not ask for its own; what it asked for still applies."""
    launched = {
        "spark.master": "spark://h:7077",
        "spark.app.name": "nightly",
        "spark.sql.shuffle.partitions": "200",
        "spark.ui.enabled": "true",
    }
    conf = sessions._over_launcher(SparkTarget.parse(None, conf={"spark.sql.catalog.lake": "x"}), launched)
    assert not set(launched) & set(conf)  # master, app name and both defaults give way
    assert conf["spark.sql.catalog.lake"] == "x" and conf["spark.sql.session.timeZone"] == "UTC"
    asked = SparkTarget.parse("local[1]", conf={"spark.sql.shuffle.partitions": 2}, app_name="mine")
    conf = sessions._over_launcher(asked, launched)
    assert (conf["spark.master"], conf["spark.app.name"], conf["spark.sql.shuffle.partitions"]) == (
        "local[1]",
        "mine",
        "2",
    )
    alone = sessions._over_launcher(SparkTarget.parse(None), {})  # no spark-submit: the defaults
    assert (alone["spark.master"], alone["spark.app.name"], alone["spark.ui.enabled"]) == (
        "local[*]",
        "substrait-spark",
        "false",
    )


def test_connect_url_token_stays_out_of_repr_and_logs():
    target = SparkTarget.parse("sc://h:15002/;token=s3cret;use_ssl=true")
    assert target.is_connect
    assert "s3cret" not in repr(target) and "s3cret" not in target.display
    assert "spark.driver.extraJavaOptions" not in target.spark_conf()  # a Connect server owns its driver


# --------------------------------------------------------------------------------------------------
# Connections (as AIRFLOW_CONN_* environment variables: URI or JSON)
# --------------------------------------------------------------------------------------------------

CONNECTIONS = [
    ("spark://spark%3A%2F%2F127.0.0.1:7077", "spark://127.0.0.1:7077"),
    ("spark://127.0.0.1:7077", "spark://127.0.0.1:7077"),  # SparkSubmitHook would give "127.0.0.1:7077"
    ('{"conn_type": "spark", "host": "spark://h1:7077,h2:7077"}', "spark://h1:7077,h2:7077"),
    ('{"conn_type": "spark", "host": "h1,h2", "port": 7077}', "spark://h1:7077,h2:7077"),
    ('{"conn_type": "spark", "host": "spark://127.0.0.1", "port": 7077}', "spark://127.0.0.1:7077"),
    ("spark://local%5B%2A%5D", "local[*]"),
    ("spark://yarn?deploy-mode=cluster&spark-binary=spark3-submit", "yarn"),
    ("k8s://https%3A%2F%2Fapi.example:6443", "k8s://https://api.example:6443"),
    ("substrait-spark://spark%3A%2F%2F127.0.0.1:7077", "spark://127.0.0.1:7077"),
    ("substrait-spark://127.0.0.1:7077", "spark://127.0.0.1:7077"),
    ('{"conn_type": "substrait_spark", "host": "spark://h1:7077,h2:7077"}', "spark://h1:7077,h2:7077"),
    ('{"conn_type": "substrait_spark", "host": "local[2]"}', "local[2]"),
    ("spark-connect://h:15002", "sc://h:15002"),
    ("spark-connect://alice:t0k%3Bx@h:15002?use_ssl=true", "sc://h:15002/;user_id=alice;token=t0k%3Bx;use_ssl=true"),
    ("substrait-spark://sc%3A%2F%2Fh:15002?token=abc", "sc://h:15002/;token=abc"),
]


@pytest.mark.parametrize(("uri", "master"), CONNECTIONS)
def test_connection_gives_master_url(monkeypatch, uri, master):
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_UNDER_TEST", uri)
    target = SubstraitSparkHook("spark_under_test").target
    assert target.master == master
    assert target.is_connect == master.startswith("sc://")


def test_spark_connection_extras_become_conf(monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_YARN", "spark://yarn?queue=etl&namespace=ignored-on-yarn")
    conf = SubstraitSparkHook("spark_yarn").target.conf
    assert conf == {"spark.yarn.queue": "etl", "spark.kubernetes.namespace": "ignored-on-yarn"}


def test_cluster_deploy_mode_points_to_the_provider(monkeypatch, caplog):
    """The driver of our operator is the task; a `spark` connection meant for cluster mode says where to go."""
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_YARN", "spark://yarn?deploy-mode=cluster")
    with caplog.at_level(logging.WARNING, logger="substrait_spark.hooks.spark_hook"):
        assert SubstraitSparkHook("spark_yarn").target.master == "yarn"
    assert "deploy-mode 'cluster' ignored" in caplog.text
    assert "SparkSubmitOperator, application substrait_spark.SUBMIT_APPLICATION" in caplog.text


def test_unknown_connection_type_is_refused(monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_NOT_SPARK", "postgres://h:5432/db")
    with pytest.raises(ValueError, match="postgres"):
        _ = SubstraitSparkHook("not_spark").target


def test_a_missing_connection_is_one_typed_error(monkeypatch):
    from substrait_spark.consumer.errors import ConfigurationError
    from substrait_spark.hooks.iceberg_hook import IcebergCatalogHook

    monkeypatch.delenv("AIRFLOW_CONN_NO_SUCH_SPARK", raising=False)
    with pytest.raises(ConfigurationError) as info:
        _ = SubstraitSparkHook("no_such_spark").target
    assert str(info.value) == (
        "spark_conn_id 'no_such_spark': no such Airflow connection (define it in the UI, with `airflow connections "
        "add`, or as the environment variable AIRFLOW_CONN_NO_SUCH_SPARK)"
    )
    assert info.value.exit_code == 2  # the operator fails the task without retrying
    with pytest.raises(ConfigurationError, match="iceberg_conn_id 'no_lake': no such Airflow connection"):
        IcebergCatalogHook("no_lake").catalog_config()
    monkeypatch.setenv("AIRFLOW_CONN_NO_SUCH_SPARK", "spark://h:7077")  # the variable the message names
    assert SubstraitSparkHook("no_such_spark").target.master == "spark://h:7077"


def test_substrait_spark_extras_conf_reaches_the_session(monkeypatch, spark):
    extra = {
        "conf": {"spark.sql.shuffle.partitions": 3, "spark.substrait.test.marker": "from-connection"},
        "jars": "/opt/a.jar,/opt/b.jar",
        "packages": ["org.example:thing:1.0"],
        "app_name": "nightly",
        "tables": {"lineitem": {"uri": "s3://b/lineitem", "format": "parquet"}, "nation": "/data/nation.parquet"},
    }
    conn = {"conn_type": "substrait_spark", "host": "local[2]", "extra": extra}  # the shared session's master
    monkeypatch.setenv("AIRFLOW_CONN_SUBSTRAIT_LOCAL", json.dumps(conn))
    hook = SubstraitSparkHook("substrait_local")
    before = spark.conf.get("spark.sql.shuffle.partitions")
    try:
        assert hook.get_session() is spark  # same master: reused, not restarted
        assert spark.conf.get("spark.sql.shuffle.partitions") == "3"
        assert spark.conf.get("spark.substrait.test.marker") == "from-connection"
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", before)
        spark.conf.unset("spark.substrait.test.marker")
    assert hook.target.app_name == "nightly"
    assert hook.target.spark_conf()["spark.jars"] == "/opt/a.jar,/opt/b.jar"
    assert hook.target.spark_conf()["spark.jars.packages"] == "org.example:thing:1.0"
    assert hook.table_map == {
        "lineitem": {"uri": "s3://b/lineitem", "format": "parquet"},
        "nation": {"uri": "/data/nation.parquet"},
    }


def test_session_reused_within_the_process(spark):
    assert get_session() is spark
    assert get_session("local[2]", conf={"spark.sql.session.timeZone": "UTC"}) is spark
    hook = SubstraitSparkHook()  # no connection: the process's session, else local[*]
    assert hook.get_session() is spark
    assert hook.application_id() == spark.sparkContext.applicationId
    assert hook.application_id().startswith("local-")
    assert hook.table_map == {}


# --------------------------------------------------------------------------------------------------
# Job groups
# --------------------------------------------------------------------------------------------------


def test_job_group_is_cleared_and_nested_groups_restored(spark):
    sc = spark.sparkContext
    assert sc.getLocalProperty(GROUP_PROPERTY) is None
    with job_group(spark, "outer", "outer block"):
        assert sc.getLocalProperty(GROUP_PROPERTY) == "outer"
        with job_group(spark, "inner"):
            assert sc.getLocalProperty(GROUP_PROPERTY) == "inner"
            assert sc.getLocalProperty("spark.job.interruptOnCancel") == "true"
        assert sc.getLocalProperty(GROUP_PROPERTY) == "outer"
        assert sc.getLocalProperty("spark.job.description") == "outer block"
    assert sc.getLocalProperty(GROUP_PROPERTY) is None
    assert sc.getLocalProperty("spark.job.interruptOnCancel") is None
    with pytest.raises(ValueError), job_group(spark, "a,b"):
        pass


def _wait_for(predicate, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting for Spark"
        time.sleep(0.05)


def test_cancel_stops_exactly_the_group_jobs(spark):
    """A 60 s job in a group is cancelled from another thread within seconds; a job outside it completes."""
    hook = SubstraitSparkHook()
    sc, tracker, group = spark.sparkContext, spark.sparkContext.statusTracker(), "substrait-test-cancel"
    outcome: dict = {}

    def in_group() -> None:
        with hook.job_group(group, "a long job"):
            try:
                _sleep_job(spark, 60_000).collect()
            except Exception as exc:  # py4j / pyspark error of the cancelled job
                outcome["error"] = exc
        outcome["group_after"] = sc.getLocalProperty(GROUP_PROPERTY)
        outcome["done_at"] = time.monotonic()

    def outside() -> None:
        outcome["other_group"] = sc.getLocalProperty(GROUP_PROPERTY)
        outcome["other"] = _sleep_job(spark, 2_500).collect()

    grouped = threading.Thread(target=in_group)
    grouped.start()
    _wait_for(lambda: any(tracker.getJobInfo(j).status == "RUNNING" for j in tracker.getJobIdsForGroup(group)))
    other = threading.Thread(target=outside)
    other.start()
    _wait_for(lambda: len(tracker.getActiveJobsIds()) >= 2)

    cancelled_at = time.monotonic()
    assert hook.cancel(group) is True
    grouped.join(timeout=30)
    other.join(timeout=30)
    assert not grouped.is_alive() and not other.is_alive()

    assert "cancel" in str(outcome.get("error", "")).lower()
    assert outcome["done_at"] - cancelled_at < 10
    assert outcome["group_after"] is None  # leaving the block clears the group
    assert outcome["other_group"] is None
    assert [r.id for r in outcome["other"]] == [0]
    # interruptOnCancel: the sleeping task was interrupted, so both cores are free again at once
    t0 = time.monotonic()
    assert _sleep_job(spark, 200, partitions=2).count() == 2
    assert time.monotonic() - t0 < 10


def test_cancel_without_a_session_starts_none(monkeypatch):
    monkeypatch.setenv("AIRFLOW_CONN_ELSEWHERE", "spark://10.255.255.1:7077")
    assert SubstraitSparkHook("elsewhere").cancel("any-group") is False


# --------------------------------------------------------------------------------------------------
# Spark Connect (no server in pyspark 3.5: up to the builder)
# --------------------------------------------------------------------------------------------------


class _FakeConnectSession:
    """Stands in for `pyspark.sql.connect.session.SparkSession` (the module name is what dispatch looks at)."""

    __module__ = "pyspark.sql.connect.session"

    version = "4.0.0"  # what a server answers (`hooks/spark._answering` asks once)

    def __init__(self, url: str, conf: dict[str, str]):
        self.url, self.settings, self.tags, self.interrupted = url, conf, set(), []
        self.client = type("Client", (), {"is_closed": False})()
        self.conf = type("Conf", (), {"set": lambda _, k, v: self.settings.__setitem__(k, v)})()

    def getTags(self):
        return set(self.tags)

    def addTag(self, tag):
        self.tags.add(tag)

    def removeTag(self, tag):
        self.tags.discard(tag)

    def interruptTag(self, tag):
        self.interrupted.append(tag)
        return []


class _FakeRemoteBuilder:
    created: list[_FakeConnectSession] = []

    def __init__(self):
        self.url, self.options = None, {}

    def remote(self, url):
        self.url = url
        return self

    def config(self, key, value):
        self.options[key] = value
        return self

    def create(self):
        session = _FakeConnectSession(self.url, dict(self.options))
        self.created.append(session)
        return session


def test_spark_connect_builder_gets_the_remote_url(monkeypatch):
    monkeypatch.setattr(sessions, "_remote_builder", _FakeRemoteBuilder)
    monkeypatch.setattr(sessions, "_connect_sessions", {})
    monkeypatch.setattr(_FakeRemoteBuilder, "created", [])
    mode_switches: list[str] = []
    monkeypatch.setattr(sessions, "_switch_to_connect", lambda: mode_switches.append("connect"))  # keeps `spark`
    monkeypatch.setattr(sessions, "probe", lambda url, display, timeout: None)  # no server at connect.example
    conn = {
        "conn_type": "spark_connect",
        "host": "connect.example",
        "port": 15002,
        "login": "alice",
        "password": "t0ken",
        "extra": {"use_ssl": True},
    }
    monkeypatch.setenv("AIRFLOW_CONN_SC_TEST", json.dumps(conn))
    hook = SubstraitSparkHook("sc_test", conf={"spark.sql.ansi.enabled": "true"})
    remote = hook.get_session()
    assert remote.url == "sc://connect.example:15002/;user_id=alice;token=t0ken;use_ssl=true"
    assert remote.settings == {**sessions.CONNECT_DEFAULT_CONF, "spark.sql.ansi.enabled": "true"}
    assert remote.settings["spark.sql.session.timeZone"] == "UTC"
    assert hook.get_session() is remote and len(_FakeRemoteBuilder.created) == 1  # one client per URL
    assert mode_switches == ["connect"]  # pyspark 3.5: Connect mode is per process

    with hook.job_group("run-1"):
        assert remote.tags == {"run-1"}
    assert remote.tags == set()
    assert hook.cancel("run-1") is True
    cancel_job_group(remote, "run-2")
    assert remote.interrupted == ["run-1", "run-2"]


def test_importing_sessions_needs_neither_connect_nor_airflow():
    code = (
        "import sys, substrait_spark.hooks.spark as s; "
        "print(any(m.startswith(('pyspark.sql.connect', 'airflow', 'grpc')) for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_ui_field_behaviour():
    behaviour = SubstraitSparkHook.get_ui_field_behaviour()
    assert behaviour["hidden_fields"] == ["schema"]
    assert behaviour["relabeling"]["host"] == "Master URL"
    placeholder = behaviour["placeholders"]["host"]
    for example in ("spark://127.0.0.1:7077", "local[*]", "sc://host:15002"):
        assert example in placeholder
    extra = json.loads(behaviour["placeholders"]["extra"])
    assert set(extra) == {"conf", "jars", "packages", "app_name", "connect_timeout", "tables", "policy"}
    from substrait_spark.consumer.analysis.policy import Policy

    assert Policy.from_mapping(extra["policy"]).write_namespaces == ("lake.staging",)  # the example is a policy
    assert (SubstraitSparkHook.conn_type, SubstraitSparkHook.conn_name_attr) == ("substrait_spark", "spark_conn_id")
    assert SubstraitSparkHook.default_conn_name == "substrait_spark_default"


# --------------------------------------------------------------------------------------------------
# A real standalone cluster (driver in a subprocess)
# --------------------------------------------------------------------------------------------------

CLUSTER_DRIVER = textwrap.dedent(
    """
    import json, logging, sys
    from substrait_spark import TableMapResolver, load_plan, to_dataframe
    from substrait_spark.hooks.spark import get_session
    from substrait_spark.hooks.spark_hook import SubstraitSparkHook

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    plan, tables_dir = sys.argv[1:3]
    local = get_session("local[1]")                  # a classic session on another master first
    local_app = local.sparkContext.applicationId
    hook = SubstraitSparkHook("cluster")             # spark://127.0.0.1:<port>, scheme only in the type
    spark = hook.get_session()                       # must stop local[1] and start on the cluster
    df = to_dataframe(load_plan(plan), spark, TableMapResolver.from_tables_dir(tables_dir))
    print("RESULT", json.dumps({
        "local_app": local_app,
        "master": spark.sparkContext.master,
        "app_id": hook.application_id(),
        "reused": hook.get_session() is spark,
        "rows": [[str(v) for v in row] for row in df.collect()],
    }))
    """
)


def test_standalone_cluster_runs_a_tpch_plan(spark_master_url, spark, corpus, tpch_dir, tmp_path):
    plan = corpus / IBM / "q06.json"
    env = spark_cluster.cluster_env()
    env["AIRFLOW_CONN_CLUSTER"] = spark_master_url  # spark://127.0.0.1:<port>: SparkSubmitHook's mangling case
    env["AIRFLOW_HOME"] = str(tmp_path / "airflow")
    proc = subprocess.run(
        [sys.executable, "-c", CLUSTER_DRIVER, str(plan), str(tpch_dir)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    logs = proc.stdout + proc.stderr  # Airflow's logging may write to either
    out = json.loads(next(line for line in proc.stdout.splitlines() if line.startswith("RESULT "))[7:])

    assert out["local_app"].startswith("local-")
    assert "Stopping the Spark session on local[1]" in logs  # said so in a log line
    assert out["master"] == spark_master_url
    assert out["app_id"].startswith("app-")
    assert out["reused"] is True

    local = to_dataframe(load_plan(plan), spark, TableMapResolver.from_tables_dir(tpch_dir)).collect()
    assert out["rows"] == [[str(v) for v in row] for row in local]  # same result as the in-process local run
    expected = read_ibm_csv(Path(corpus / IBM / "expected" / "q06.csv")).rows
    assert float(out["rows"][0][0]) == pytest.approx(expected[0][0], rel=1e-9)
    assert os.environ.get("AIRFLOW_CONN_CLUSTER") is None  # the test process's environment is untouched
