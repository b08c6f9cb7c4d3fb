"""A real S3-compatible HTTP server for tests: moto's server mode in a subprocess on 127.0.0.1.

Real HTTP rather than in-process mocks, so boto3's signing, endpoint handling, retries and streaming bodies,
and Airflow's connection handling, run as they do against a real store. Use the session fixture with
``from s3_server import s3_endpoint  # noqa: F401`` (or ``pytest_plugins = ["s3_server"]``); give each test
its own bucket, since the server is shared by the session.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

REGION = "us-east-1"
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
START_TIMEOUT_S = 30.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _moto_command(port: int) -> list[str]:
    exe = Path(sys.executable).parent / "moto_server"
    head = [str(exe)] if exe.exists() else [sys.executable, "-m", "moto.server"]
    return [*head, "-H", "127.0.0.1", "-p", str(port)]


def _answers(endpoint: str) -> bool:
    try:
        with urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1) as response:
            return response.status < 500
    except OSError:
        return False


@contextmanager
def running_s3_server(port: int | None = None) -> Iterator[str]:
    """Start moto's server, wait until it answers HTTP, yield ``http://127.0.0.1:PORT``, stop it afterwards."""
    port = port or free_port()
    endpoint = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    proc = subprocess.Popen(
        _moto_command(port), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, start_new_session=True
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _answers(endpoint):
            if proc.poll() is not None:
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                raise RuntimeError(f"moto_server exited with {proc.returncode}: {err.strip()[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"moto_server did not answer on {endpoint} within {START_TIMEOUT_S:.0f}s")
            time.sleep(0.1)
        yield endpoint
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr:
            proc.stderr.close()


def s3_client(endpoint: str, **config: Any) -> Any:
    """A boto3 S3 client for the test server (dummy credentials); ``config`` goes to botocore's Config."""
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3", endpoint_url=endpoint, region_name=REGION, config=Config(**config) if config else None, **CREDENTIALS
    )


def new_bucket(client: Any, versioned: bool = False) -> str:
    """A fresh bucket with a unique name (the server is shared by the whole session)."""
    name = f"plans-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=name)
    if versioned:
        client.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    return name


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of a moto S3 server running for the whole test session."""
    with running_s3_server() as endpoint:
        yield endpoint
