"""`tools/local_stack.py s3 …`: the embedded S3-compatible server by hand (docs/guides/local-s3.md).

A real moto server started by the CLI in the background, reached with boto3 as a user would after `eval "$(… s3
start)"`, and stopped by the PID the CLI recorded. (The guide's own example, with `substrait-spark run s3://…`,
runs in tests/test_docs.py.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from local_stack import ROOT

pytestmark = [pytest.mark.unit]

CLI = [sys.executable, str(ROOT / "tools" / "local_stack.py"), "s3"]


def stack(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["SUBSTRAIT_SPARK_LOCAL_STACK_DIR"] = str(state)
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=60)


def exports(stdout: str) -> dict[str, str]:
    pairs = [line.removeprefix("export ").split("=", 1) for line in stdout.splitlines() if line.startswith("export ")]
    return dict(pairs)


def test_start_put_status_stop(tmp_path: Path) -> None:
    state = tmp_path / "state"
    started = stack(state, "start")
    assert started.returncode == 0, started.stderr
    env = exports(started.stdout)
    assert set(env) == {"AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION"}
    pid = json.loads((state / "s3.json").read_text())["pid"]
    try:
        assert stack(state, "start").returncode == 2  # one server per state folder
        assert exports(stack(state, "env").stdout) == env
        status = stack(state, "status")
        assert status.returncode == 0 and env["AWS_ENDPOINT_URL_S3"] in status.stdout

        plan = tmp_path / "plan.bin"
        plan.write_bytes(b"\x0a\x00plan bytes")
        put = stack(state, "put", str(plan), "s3://my-plans/daily/plan.bin")
        assert put.returncode == 0, put.stderr
        assert put.stdout.startswith("s3://my-plans/daily/plan.bin?versionId=")

        import boto3  # the object, read back as any S3 client would with the printed settings

        client = boto3.client(
            "s3",
            endpoint_url=env["AWS_ENDPOINT_URL_S3"],
            aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
            region_name=env["AWS_DEFAULT_REGION"],
        )
        assert client.get_object(Bucket="my-plans", Key="daily/plan.bin")["Body"].read() == plan.read_bytes()
        assert client.get_bucket_versioning(Bucket="my-plans")["Status"] == "Enabled"
    finally:
        stopped = stack(state, "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert not Path(f"/proc/{pid}").exists()
    assert not (state / "s3.json").exists()
    assert stack(state, "status").returncode == 1


def test_requests_without_a_server_or_with_a_bad_uri_are_refused(tmp_path: Path) -> None:
    state = tmp_path / "state"
    for args in (("stop",), ("env",), ("put", str(ROOT / "README.md"), "s3://b/k")):
        done = stack(state, *args)
        assert done.returncode == 2 and "no local S3 server running" in done.stderr, args
    bad = stack(state, "put", str(ROOT / "README.md"), "b/k")
    assert bad.returncode == 2 and "expected s3://BUCKET/KEY" in bad.stderr
    assert stack(state, "status").returncode == 1


def test_a_recorded_pid_that_is_not_moto_is_left_alone(tmp_path: Path) -> None:
    """A stale state file whose PID now belongs to another program: `stop` does not signal it."""
    state = tmp_path / "state"
    state.mkdir()
    other = subprocess.Popen(["sleep", "30"])
    try:
        (state / "s3.json").write_text(json.dumps({"pid": other.pid, "endpoint": "http://127.0.0.1:1"}))
        assert stack(state, "stop").returncode == 2
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()
