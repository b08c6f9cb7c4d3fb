"""The one scrubbing function: text and settings fit for logs, errors, reports, audit records and lineage.

Plans run with the cluster's and the catalogs' credentials; none of them may leave through what the package
writes. `redact` masks what looks secret — URI user info (`postgresql://user:pw@host`), query parameters and
`key=value` / `key: value` text whose key names a secret (`password`, `token`, `secret.key`, `access-key-id`, …,
Spark Connect's `;token=`), and in a mapping every value under such a key — so one function serves a log line, an
exception's message and a catalog's properties alike.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "***"

# A key holding one of these (case-insensitive) holds a secret: AWS (`aws_secret_access_key`, `s3.access-key-id`,
# `fs.s3a.secret.key`, session tokens), JDBC and SQLAlchemy passwords, REST catalogs' `credential` and `token`.
SECRET_WORDS = (
    "password",
    "passwd",
    "secret",
    "token",
    "credential",
    "signature",
    "apikey",
    "api_key",
    "access_key",
    "access-key",
    "access.key",
    "accesskey",
    "session_key",
    "private_key",
    "authorization",
)
_KV = re.compile(
    r"(?i)\b([\w.-]*(?:" + "|".join(re.escape(w) for w in SECRET_WORDS) + r")[\w.-]*)(['\"]?\s*[=:]\s*)"
    r"(\"[^\"]*\"|'[^']*'|[^\s,;&'\"}\]]+)"
)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s]*@")


def is_secret_key(key: str) -> bool:
    """Whether a setting or parameter named `key` holds a secret."""
    return any(w in key.lower() for w in SECRET_WORDS)


def redact(value: Any) -> Any:
    """`value` without credentials: a string scrubbed (URI user info, secret query values, `secret=…`), a mapping
    with secret keys' values masked and the others redacted, a list or tuple element by element; anything else
    as it is."""
    if isinstance(value, str):
        return _text(value) if value else value
    if isinstance(value, Mapping):
        return {k: (MASK if isinstance(k, str) and is_secret_key(k) and v else redact(v)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact(v) for v in value)
    return value


def _text(text: str) -> str:
    if "://" in text and not any(c.isspace() for c in text):
        try:
            parts = urlsplit(text)
            if parts.query:
                pairs = parse_qsl(parts.query, keep_blank_values=True)
                query = [(k, MASK if is_secret_key(k) else v) for k, v in pairs]
                text = urlunsplit(parts._replace(query=urlencode(query, safe="*/:")))
        except ValueError:
            pass
    text = _USERINFO.sub(rf"\1{MASK}@", text)
    return _KV.sub(lambda m: f"{m[1]}{m[2]}{MASK}", text)
