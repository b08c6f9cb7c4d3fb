"""Session fixtures: a GCS emulator (fake-gcs-server) and Azurite on 127.0.0.1, one each per test session
(registered in conftest.py), started on first use and stopped by PID (tools/store_emulators.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def gcs_endpoint() -> Iterator[str]:
    """`http://127.0.0.1:PORT` of fake-gcs-server: what `STORAGE_EMULATOR_HOST` names."""
    pytest.importorskip("gcsfs")
    from store_emulators import running_gcs_server

    with running_gcs_server() as url:
        yield url


@pytest.fixture(scope="session")
def azurite() -> Iterator[str]:
    """A connection string for Azurite's development account: what `AZURE_STORAGE_CONNECTION_STRING` holds."""
    pytest.importorskip("adlfs")
    from store_emulators import AZURITE, running_azurite

    if not (AZURITE / "azurite-blob").exists():
        pytest.skip("Azurite is not installed (make azurite)")
    with running_azurite() as connection_string:
        yield connection_string
