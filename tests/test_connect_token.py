"""Spark Connect endpoints as users have them (issue 30 item 3): a server that requires a token, the token in the URL
or in the Spark provider's `spark_connect` connection, and the session a URL addresses by `;session_id=`.

The server is a real local Spark Connect 4.x server (tools/connect_server.py) with `SPARK_CONNECT_AUTHENTICATE_TOKEN`
set: every call without the token is refused. It serves no TLS (a Spark Connect server never does; TLS comes from a
proxy), and on 127.0.0.1 neither client would send a token without TLS by itself — pyspark 3.5 turns TLS on for any
token, pyspark 4 for any host but `localhost` — so the hook sends it as the bearer header on a plain channel to a
loopback host (hooks/connect_endpoint.py). Checked with the CLI binary of each client (pyspark 3.5 in `.venv`,
pyspark 4.x in `.venv-spark4`): the right token runs a plan; a wrong or missing token, TLS asked of a plain server and
an unreachable port are each one `spark unavailable` line naming the endpoint without the token, in seconds.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from plan_builder import PlanBuilder, i32, virtual

REPO = Path(__file__).resolve().parent.parent
CLIENTS = {"pyspark-3.5": REPO / ".venv" / "bin", "pyspark-4": REPO / ".venv-spark4" / "bin"}
TOKEN = f"tok-{uuid.uuid4().hex}"
BOUND_S = 15  # a refusal comes in seconds, well under the connect timeout (20 s)
Q06_REVENUE = 1193053.2253  # IBM's expected/q06.csv at sf 0.01


def _client(name: str) -> Path:
    if not (CLIENTS[name] / "python").exists():
        pytest.skip(f"{CLIENTS[name]} not installed")
    return CLIENTS[name]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SPARK_CONNECT_MODE_ENABLED"}
    return {**env, "SPARK_LOCAL_IP": "127.0.0.1"}


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory):
    """`sc://127.0.0.1:<port>` of a Spark Connect server that requires TOKEN."""
    from connect_server import ConnectServerError, connect_server

    try:
        with connect_server(
            tmp_path_factory.mktemp("token-server"), env={"SPARK_CONNECT_AUTHENTICATE_TOKEN": TOKEN}
        ) as url:
            yield url
    except ConnectServerError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="module")
def plan_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A plan that checks (no tables): the run gets as far as asking for the session."""
    path = tmp_path_factory.mktemp("plan") / "two_rows.bin"
    path.write_bytes(PlanBuilder().plan(virtual(["a"], [i32()], [(1,), (2,)]), ["a"]).SerializeToString())
    return path


def _run_cli(client: str, url: str, *args: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = subprocess.run(
        [str(_client(client) / "substrait-spark"), *args, "--master", url],
        cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return done, time.monotonic() - started


def _leaks(*texts: str) -> list[str]:
    return [text[max(0, text.find(TOKEN) - 100) :][:200] for text in texts if TOKEN in text]


@pytest.mark.spark
@pytest.mark.corpus
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_the_right_token_runs_a_plan(client, host, token_server, corpus, tpch_dir, tmp_path):
    port = token_server.rsplit(":", 1)[1]
    out, audit = tmp_path / "out", tmp_path / "audit.jsonl"
    done, _ = _run_cli(
        client,
        f"sc://{host}:{port}/;token={TOKEN}",
        "--debug", "run", str(corpus / "ibm-substrait-compliance-tpch" / "q06.json"), "--tables-dir", str(tpch_dir),
        "--output-dir", str(out), "--output-format", "csv", "--audit-log", f"jsonl:{audit}",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    rows = (out / "q06.csv").read_text().splitlines()
    assert len(rows) == 2 and float(rows[1]) == pytest.approx(Q06_REVENUE)
    summary = (out / "summary.json").read_text()
    (report,) = json.loads(summary)["plans"]
    assert str(uuid.UUID(report["spark_connect"]["session_id"])) == report["spark_connect"]["session_id"]
    assert not _leaks(done.stdout, done.stderr, summary, audit.read_text())


REFUSALS = {
    "wrong token": (";token=not-the-token", "the server refused the credentials", "Invalid authentication token"),
    "no token": ("", "the server refused the credentials", "No authentication token provided"),
    "TLS asked of a plain server": (f";token={TOKEN};use_ssl=true", "the server answers without TLS", "TLS proxy"),
}


@pytest.mark.spark
@pytest.mark.parametrize("case", sorted(REFUSALS))
@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_a_refused_token_is_one_line_naming_the_endpoint(client, case, token_server, plan_file, tmp_path):
    params, reason, detail = REFUSALS[case]
    url = f"{token_server}/{params}" if params else token_server
    done, elapsed = _run_cli(client, url, "run", str(plan_file), cwd=tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr[-3000:]
    assert "spark unavailable: Spark Connect at " + token_server in lines[0], lines[0]
    assert reason in lines[0] and detail in lines[0], lines[0]
    assert not _leaks(done.stdout, done.stderr)
    assert elapsed < BOUND_S, f"{elapsed:.1f} s"


@pytest.mark.spark
@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_an_unreachable_server_is_the_same_error_in_bounded_time(client, plan_file, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done, elapsed = _run_cli(client, f"sc://127.0.0.1:{port}/;token={TOKEN}", "run", str(plan_file), cwd=tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr[-3000:]
    assert f"spark unavailable: Spark Connect at sc://127.0.0.1:{port}/;token=***: connection refused" in lines[0]
    assert not _leaks(done.stdout, done.stderr)
    assert elapsed < BOUND_S, f"{elapsed:.1f} s"


# One process makes a temporary view in the session its target addresses and leaves without closing it (as a killed
# worker does); another reaches the same server-side session through the same id.
MAKE_VIEW = textwrap.dedent(
    """
    import os, sys
    from substrait_spark.hooks.spark import SparkTarget, session_for
    target = SparkTarget.parse(sys.argv[1]).with_session(sys.argv[2])
    spark = session_for(target)
    spark.range(7).createOrReplaceTempView("kept_by_the_session")
    print(spark.session_id, repr(target), flush=True)
    os._exit(0)
    """
)
READ_VIEW = textwrap.dedent(
    """
    import sys
    from substrait_spark.hooks.spark_hook import SubstraitSparkHook
    hook = SubstraitSparkHook("sc_token")
    spark = hook.get_session()
    try:
        print("VIEW", spark.session_id, spark.table("kept_by_the_session").count(), flush=True)
    except Exception as exc:
        print("VIEW", spark.session_id, type(exc).__name__, flush=True)
    """
)


@pytest.mark.spark
@pytest.mark.airflow
def test_a_session_id_addresses_one_server_session(token_server, tmp_path):
    """The 4.x client through `SparkTarget.with_session`, then the 3.5 client through the Spark provider's
    `spark_connect` connection (password = token, extra `session_id`): the same server-side session."""
    session_id = str(uuid.uuid4())
    made = subprocess.run(
        [str(_client("pyspark-4") / "python"), "-c", MAKE_VIEW, f"{token_server}/;token={TOKEN}", session_id],
        env=_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr[-3000:]
    assert made.stdout.split()[0] == session_id and not _leaks(made.stdout, made.stderr)
    host, port = token_server.removeprefix("sc://").split(":")
    outcomes = []
    for sid in (session_id.upper().replace("-", ""), str(uuid.uuid4())):  # the same id, spelt otherwise; another
        conn = {"conn_type": "spark_connect", "host": host, "port": int(port), "password": TOKEN}
        conn["extra"] = {"session_id": sid}
        read = subprocess.run(
            [sys.executable, "-c", READ_VIEW],
            env={**_env(), "AIRFLOW_CONN_SC_TOKEN": json.dumps(conn)}, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert read.returncode == 0, read.stderr[-3000:]
        assert not _leaks(read.stdout, read.stderr)
        outcomes += [line.split()[1:] for line in read.stdout.splitlines() if line.startswith("VIEW ")]
    assert outcomes[0] == [session_id, "7"]
    assert outcomes[1][0] != session_id and outcomes[1][1] == "AnalysisException"  # another session: no view


# --------------------------------------------------------------------------------------------------
# The URL a target and a connection build (pure Python)
# --------------------------------------------------------------------------------------------------

SID = "7f0c1b0e-2d7a-4d3a-9a51-0c1f5b7b2a10"


@pytest.mark.unit
def test_with_session_addresses_a_session_and_never_shows_the_token():
    from substrait_spark.hooks.spark import SparkTarget

    target = SparkTarget.parse("sc://h:15002/;user_id=ann;token=t%3Bx", connect_timeout=5)
    assert target.session_id is None
    resumed = target.with_session(SID.upper())
    assert resumed.master == f"sc://h:15002/;user_id=ann;token=t%3Bx;session_id={SID}"
    assert resumed.session_id == SID and resumed.connect_timeout == 5
    assert resumed.with_session(str(uuid.UUID(int=1))).session_id == str(uuid.UUID(int=1))  # replaced, not added
    assert resumed.with_session(str(uuid.UUID(int=1))).master.count("session_id=") == 1
    for shown in (repr(resumed), resumed.display, str(resumed)):
        assert "t%3Bx" not in shown and "t;x" not in shown and SID in shown


@pytest.mark.unit
def test_a_session_id_that_is_no_uuid_is_a_configuration_error():
    from substrait_spark.consumer.errors import ConfigurationError
    from substrait_spark.hooks.spark import SparkTarget

    with pytest.raises(ConfigurationError, match="session_id 'run-7' is not a UUID") as info:
        SparkTarget.parse("sc://h:15002/;token=secret;session_id=run-7")
    assert info.value.exit_code == 2 and "secret" not in str(info.value)
    with pytest.raises(ConfigurationError, match="not a UUID"):
        SparkTarget.parse("sc://h:15002").with_session("run-7")
    with pytest.raises(ConfigurationError, match="only a Spark Connect"):
        SparkTarget.parse("local[2]").with_session(SID)


@pytest.mark.unit
@pytest.mark.parametrize(
    ("url", "sent"),
    [
        ("sc://127.0.0.1:1/;token=a%3Bb", "sc://127.0.0.1:1/;authorization=Bearer%20a%3Bb"),
        ("sc://localhost:1/;user_id=u;token=t", "sc://localhost:1/;user_id=u;authorization=Bearer%20t"),
        ("sc://[::1]:1/;token=t;use_ssl=false", "sc://[::1]:1/;use_ssl=false;authorization=Bearer%20t"),
        ("sc://127.0.0.1:1/;token=t;use_ssl=true", "sc://127.0.0.1:1/;token=t;use_ssl=true"),  # TLS as asked
        ("sc://spark.example:443/;token=t", "sc://spark.example:443/;token=t"),  # off the machine: the client's TLS
        ("sc://127.0.0.1:1", "sc://127.0.0.1:1"),
    ],
)
def test_a_token_to_a_loopback_host_goes_without_tls(url, sent):
    from substrait_spark.consumer.redact import redact
    from substrait_spark.hooks.connect_endpoint import transport_url

    assert transport_url(url) == sent
    assert "Bearer" not in redact(sent)  # should the URL ever be shown, the header is masked too


@pytest.mark.airflow
def test_the_spark_connect_connection_builds_the_url(monkeypatch):
    from substrait_spark.hooks.spark_hook import SubstraitSparkHook

    conn = {
        "conn_type": "spark_connect",
        "host": "spark.example",
        "port": 15002,
        "login": "ann",
        "password": "t0k;en",
        "extra": {"use_ssl": False, "session_id": SID.upper()},
    }
    monkeypatch.setenv("AIRFLOW_CONN_SC_FULL", json.dumps(conn))
    target = SubstraitSparkHook("sc_full").target
    assert target.master == f"sc://spark.example:15002/;user_id=ann;token=t0k%3Ben;use_ssl=false;session_id={SID}"
    assert target.session_id == SID and "t0k" not in repr(target)
    ours = {"conn_type": "substrait_spark", "host": "sc://spark.example:15002", "password": "t0k", "extra": {}}
    ours["extra"] = {"session_id": SID}
    monkeypatch.setenv("AIRFLOW_CONN_SC_OURS", json.dumps(ours))
    assert SubstraitSparkHook("sc_ours").target.master == f"sc://spark.example:15002/;token=t0k;session_id={SID}"
