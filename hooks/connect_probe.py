"""Is a Spark Connect server there? Asked once, within a bounded time, before a session is made.

pyspark's Connect client retries an unreachable server for about ten minutes (15 retries, backoff up to 60 s),
and pyspark 3.5's session builder swallows the failure of its first calls: `run --master sc://host:1` printed
nothing for ten minutes, then an internal error. Here a server that refuses, does not resolve, or does not answer
as gRPC (HTTP/2) within the timeout is one `SparkUnavailableError` naming the endpoint (the URL with its token
masked), raised within the timeout.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any

from substrait_spark.consumer.errors import ConfigurationError, SparkUnavailableError

# Long enough for a server on another continent or a TLS handshake, short enough that a wrong URL fails fast.
DEFAULT_CONNECT_TIMEOUT_S = 20.0

# A proxy for gRPC means the client does not connect to the endpoint itself: no direct TCP check then.
_PROXY_VARIABLES = ("grpc_proxy", "https_proxy", "http_proxy", "GRPC_PROXY", "HTTPS_PROXY", "HTTP_PROXY")


def connect_timeout(value: Any, source: str = "connect timeout") -> float:
    """A timeout in seconds from a CLI option, connection extra or setting; None means the default."""
    if value is None or value == "":
        return DEFAULT_CONNECT_TIMEOUT_S
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = -1.0
    if not seconds > 0:
        raise ConfigurationError(f"{source}: expected a number of seconds above 0, got {value!r}")
    return seconds


def _channel_builder(url: str) -> Any:
    """pyspark's own parser of `sc://` URLs (host, port, `use_ssl`, `token`): 4.x's `DefaultChannelBuilder`,
    3.5's `ChannelBuilder`."""
    from pyspark.sql.connect.client import core

    return getattr(core, "DefaultChannelBuilder", core.ChannelBuilder)(url)


def _tcp_reason(host: str, port: int, timeout: float) -> str | None:
    """Why a TCP connection to the endpoint fails (refused, unknown host, timed out), None when it opens."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except socket.gaierror:
        return f"host {host!r} not found"
    except TimeoutError:
        return f"no TCP connection within {timeout:g} s"
    except OSError as exc:
        return (exc.strerror or type(exc).__name__).lower()


def probe(url: str, display: str, timeout: float) -> None:
    """Return when a gRPC server answers at `url` within `timeout` seconds, else raise `SparkUnavailableError`
    naming `display` (never `url`: it may hold a token)."""
    import grpc

    builder = _channel_builder(url)
    host, port = builder.host, int(builder.endpoint.rsplit(":", 1)[1])
    deadline = time.monotonic() + timeout
    where = f"Spark Connect at {display}"
    hint = "check the URL and that the server runs (timeout: --connect-timeout / connect_timeout)"
    if not any(os.environ.get(v) for v in _PROXY_VARIABLES):
        reason = _tcp_reason(host, port, timeout)
        if reason is not None:
            raise SparkUnavailableError(f"{where}: {reason}; {hint}")
    channel = builder.toChannel()
    ready = grpc.channel_ready_future(channel)
    try:
        ready.result(timeout=max(deadline - time.monotonic(), 0.1))
    except grpc.FutureTimeoutError:
        raise SparkUnavailableError(
            f"{where}: no gRPC (Spark Connect) answer within {timeout:g} s — something else listens there, or TLS "
            f"(use_ssl/token) does not match the server; {hint}"
        ) from None
    finally:
        ready.cancel()
        channel.close()
