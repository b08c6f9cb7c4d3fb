"""A real S3-compatible HTTP server for tests: moto's server mode in a subprocess on 127.0.0.1.

Real HTTP rather than in-process mocks, so boto3's signing, endpoint handling, retries and streaming bodies,
and Airflow's connection handling, run as they do against a real store. Use the session fixture with
``from s3_server import s3_endpoint  # noqa: F401`` (or ``pytest_plugins = ["s3_server"]``); give each test
its own bucket, since the server is shared by the session.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from local_stack import CREDENTIALS, REGION, free_port, running_s3_server, s3_client

__all__ = ["CREDENTIALS", "REGION", "free_port", "new_bucket", "running_s3_server", "s3_client", "s3_endpoint"]


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
