"""A real Iceberg REST catalog server for tests: Iceberg's own request handlers over JdbcCatalogs
(tools/rest_catalog/), on 127.0.0.1, with OAuth2 client credentials; one per session, stopped by PID.

Each catalog a test makes is a warehouse of its own on the server (`warehouse` property = prefix of its routes).
"""

from __future__ import annotations

import os
import secrets
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parent.parent / "tools"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

import rest_catalog  # noqa: E402  (tools/ is not a package)
from local_stack import stop  # noqa: E402

START_SECONDS = 60


@dataclass(frozen=True)
class RestServer:
    """Where the server listens and the one client it accepts (the secret is for the tests' own use only)."""

    uri: str
    client_id: str
    client_secret: str
    log: Path

    @property
    def credential(self) -> str:
        """pyiceberg's and Iceberg's `credential` property: `client_id:client_secret`."""
        return f"{self.client_id}:{self.client_secret}"

    def properties(self, warehouse: str) -> dict[str, str]:
        """Catalog properties (pyiceberg's, carried over to Spark's RESTCatalog) for a warehouse on this server."""
        return {
            "type": "rest",
            "uri": self.uri,
            "credential": self.credential,
            "warehouse": warehouse,
            "oauth2-server-uri": f"{self.uri}/v1/oauth/tokens",
            "scope": "catalog",
        }


def _pyspark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


@contextmanager
def running_rest_catalog() -> Iterator[RestServer]:
    """Build (once) and start the server on a port the system picks; stop it by PID and remove its files."""
    import provision_jars

    jars = [Path(j).name for j in provision_jars.provisioned_jars(rest_catalog.jars_dir())]
    if provision_jars.SHADED_HTTPCLIENT not in jars:  # provisioned before the REST client's HttpClient joined
        pytest.fail(f"the jars in {rest_catalog.jars_dir()} lack Iceberg's REST client (HttpClient): run `make jars`")
    classpath = rest_catalog.server_classpath(_pyspark_jars())
    root = Path(tempfile.mkdtemp(prefix="substrait-rest-catalog-"))
    client_id, client_secret = "substrait-tests", secrets.token_urlsafe(24)
    env = {**os.environ, "REST_CATALOG_CLIENT_ID": client_id, "REST_CATALOG_CLIENT_SECRET": client_secret}
    log = root / "server.log"
    java = shutil.which("java") or "java"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [java, "-Xmx512m", "-cp", classpath, rest_catalog.SERVER_CLASS, str(root / "warehouses")],
            stdout=subprocess.PIPE,
            stderr=err,
            env=env,
        )
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + START_SECONDS
        line = b""
        while not line.endswith(b"\n"):
            ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(proc.stdout.fileno(), 256) if ready else b""
            if not chunk:
                raise RuntimeError(f"the REST catalog server did not start: {log.read_text()[-2000:]}")
            line += chunk
        port = int(line.split()[1])
        yield RestServer(f"http://127.0.0.1:{port}", client_id, client_secret, log)
    finally:
        stop(proc)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def rest_catalog_server() -> Iterator[RestServer]:
    """The REST catalog server for the whole session."""
    with running_rest_catalog() as server:
        yield server
