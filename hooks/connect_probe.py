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
    3.5's `ChannelBuilder`. gRPC's own log lines (a failed TLS handshake, which the probe reports in one line) stay
    off stderr unless GRPC_VERBOSITY asks for them; set before grpc starts, it applies to the process."""
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
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
    builder = _channel_builder(url)
    host, port = builder.host, int(builder.endpoint.rsplit(":", 1)[1])
    deadline = time.monotonic() + timeout
    where = f"Spark Connect at {display}"
    hint = "check the URL and that the server runs (timeout: --connect-timeout / connect_timeout)"
    if not any(os.environ.get(v) for v in _PROXY_VARIABLES):
        reason = _tcp_reason(host, port, timeout)
        if reason is not None:
            raise SparkUnavailableError(f"{where}: {reason}; {hint}")
    if builder.secure and _answers_without_tls(builder, deadline):
        raise SparkUnavailableError(
            f"{where}: the server answers without TLS, and this URL asks for TLS (use_ssl=true, or a token to a "
            f"host that is not local); {_TLS_HINT}"
        )
    if not _ready(builder.toChannel(), deadline):
        raise SparkUnavailableError(
            f"{where}: no gRPC (Spark Connect) answer within {timeout:g} s — something else listens there, or TLS "
            f"(use_ssl/token) does not match the server; {hint}"
        )


# How long a TLS channel gets before the probe asks whether the endpoint speaks plain gRPC instead.
_TLS_SLICE_S = 2.0
_TLS_HINT = (
    "a Spark Connect server serves no TLS itself: reach it through a TLS proxy, or, on this machine, leave "
    "use_ssl unset (a token then goes to a loopback host without TLS)"
)


def _ready(channel: Any, deadline: float, limit: float | None = None) -> bool:
    """Whether `channel` connects before `deadline` (or within `limit` seconds); the channel is closed after."""
    import grpc

    wait = max(deadline - time.monotonic(), 0.1)
    ready = grpc.channel_ready_future(channel)
    try:
        ready.result(timeout=min(wait, limit) if limit else wait)
        return True
    except grpc.FutureTimeoutError:
        return False
    finally:
        ready.cancel()
        channel.close()


def _answers_without_tls(builder: Any, deadline: float) -> bool:
    """A TLS channel that does not connect at once, to an endpoint where a plain gRPC channel does: TLS on one side
    only. Found in seconds instead of at the end of the timeout, with the fix in the message."""
    import grpc

    if _ready(builder.toChannel(), deadline, _TLS_SLICE_S):
        return False
    return _ready(grpc.insecure_channel(builder.endpoint), deadline, _TLS_SLICE_S)
