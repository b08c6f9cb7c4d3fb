"""Spark Connect URLs: their parameters, the session they address, and how this process's client must send a token.

A Connect URL is `sc://host:port/;user_id=…;token=…;use_ssl=…;session_id=…` (pyspark's ChannelBuilder reads the
parameters, their values URL-quoted). No Airflow, no grpc here: the CLI, the hook and the durable-run code share it.

Tokens over a plain channel: a Spark Connect 4.x server checks a bearer token (`spark.connect.authenticate.token` /
`SPARK_CONNECT_AUTHENTICATE_TOKEN`) but serves no TLS itself: TLS, when there is any, comes from a proxy in front.
pyspark 3.5's client turns TLS on whenever the URL holds a token, and pyspark 4's does too unless the host is
exactly `localhost`, so neither could reach a token-protected server on `127.0.0.1` or a sidecar on the loopback
interface. For a loopback host without `use_ssl=true`, `transport_url` sends the token as the same
`authorization: Bearer …` header on a plain channel — what pyspark 4 does itself for `localhost`. Any other host
keeps the client's TLS.
"""

from __future__ import annotations

import ipaddress
import uuid
from urllib.parse import quote, unquote, urlsplit

from substrait_spark.consumer.errors import ConfigurationError
from substrait_spark.consumer.redact import redact

# pyspark's ChannelBuilder parameters that the Spark provider's `spark_connect` connection and ours set.
TOKEN = "token"
USE_SSL = "use_ssl"
SESSION_ID = "session_id"
# gRPC metadata pyspark sends with every call for a parameter it does not know: the bearer header on a plain channel.
AUTHORIZATION = "authorization"
LOOPBACK_NAMES = frozenset({"localhost"})


def is_connect_url(url: str | None) -> bool:
    return bool(url) and str(url).strip().lower().startswith("sc://")


def split_params(url: str) -> tuple[str, dict[str, str]]:
    """`sc://h:p/;k=v;…` → (`sc://h:p/`, {k: v}) with the values as written (URL-quoted)."""
    base, _, tail = url.partition(";")
    params: dict[str, str] = {}
    for part in tail.split(";"):
        if part:
            key, _, value = part.partition("=")
            params[key] = value
    return base, params


def join_params(base: str, params: dict[str, str]) -> str:
    """The inverse of `split_params`: parameters after `/;` (pyspark wants an empty path before them)."""
    if not params:
        return base
    return f"{base.rstrip('/')}/;" + ";".join(f"{k}={v}" for k, v in params.items())


def param(url: str, key: str) -> str | None:
    """The unquoted value of a URL parameter, None when absent."""
    value = split_params(url)[1].get(key)
    return None if value is None else unquote(value)


def with_param(url: str, key: str, value: str) -> str:
    """`url` with parameter `key` set to `value` (quoted), in place when present, else appended."""
    base, params = split_params(url)
    params[key] = quote(value, safe="")
    return join_params(base, params)


def session_id_value(value: object, where: str) -> str:
    """A Connect session id as pyspark and the server take it: a UUID, in its canonical text form."""
    try:
        return str(uuid.UUID(str(value).strip()))
    except ValueError:
        raise ConfigurationError(
            f"{where}: session_id {redact(str(value))!r} is not a UUID (Spark Connect addresses sessions by UUID)"
        ) from None


def checked_url(url: str) -> str:
    """A Connect URL with its `session_id`, if any, checked and in canonical form (ConfigurationError otherwise)."""
    given = param(url, SESSION_ID)
    if given is None:
        return url
    return with_param(url, SESSION_ID, session_id_value(given, f"Spark Connect URL {redact(url)}"))


def _host(url: str) -> str:
    return (urlsplit("http" + url.strip()[2:]).hostname or "").lower()


def is_loopback(host: str) -> bool:
    """`localhost` or a loopback address (127.0.0.0/8, ::1): traffic that never leaves the machine."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def transport_url(url: str) -> str:
    """The URL to give this process's Connect client: a token for a loopback host without `use_ssl=true` becomes
    the bearer header on a plain channel (see the module docstring); any other URL as it is."""
    token = param(url, TOKEN)
    if token is None or (param(url, USE_SSL) or "").lower() == "true" or not is_loopback(_host(url)):
        return url
    base, params = split_params(url)
    del params[TOKEN]
    params[AUTHORIZATION] = quote(f"Bearer {token}", safe="")
    return join_params(base, params)
