"""Read plan bytes from where plans live: a local path, a ``file://`` URI, ``s3://bucket/key[?versionId=...]``,
``gs://bucket/object[#generation]`` or ``az://container/blob[?versionid=...]`` (GCS and Azure through fsspec,
`plan_store_fsspec.py`).

Orchestrator-free so the CLI, the Python API and a bare Spark driver share it; the Airflow hook only supplies
an S3 client built from a connection. Bytes are returned untouched (binary plans must never be decoded as text)
with what a run report needs to pin them: sha256, size, S3 VersionId and ETag. botocore is imported only when an
S3 URI is read, so local reads stay cheap.
"""

from __future__ import annotations

import hashlib
import logging
import os
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from substrait_spark.consumer.errors import ExecutionError, PlanInvalidError, PlanNotFoundError, PolicyError
from substrait_spark.consumer.loading.limits import DEFAULT_LIMITS, Limits
from substrait_spark.consumer.loading.loader import read_plan_bytes
from substrait_spark.hooks.plan_store_fsspec import STORES, read_object

log = logging.getLogger(__name__)

S3ClientFactory = Callable[[], Any]


class PlanChangedError(PolicyError):
    """The plan's bytes are not the ones pinned by ``expected_sha256`` (exit 5: running them is refused)."""

    kind = "plan changed"


class PlanStoreError(ExecutionError):
    """The store could not be read: access denied, no credentials, or transient failures outlasting the retries."""

    kind = "plan store failed"


@dataclass(frozen=True)
class PlanObject:
    """A plan's raw bytes and the identity of the object they were read from."""

    uri: str
    data: bytes
    sha256: str
    size: int
    version_id: str | None = None
    etag: str | None = None
    last_modified: str | None = None  # ISO 8601, as the store reports it

    @classmethod
    def of(cls, uri: str, data: bytes, **identity: str | None) -> PlanObject:
        return cls(uri=uri, data=data, sha256=hashlib.sha256(data).hexdigest(), size=len(data), **identity)


@dataclass(frozen=True)
class S3Location:
    bucket: str
    key: str
    version_id: str | None = None

    # The query is only taken as a version when it is exactly `versionId=...`; a key is not percent-decoded
    # (AWS CLI convention: s3:// URIs carry keys as written).
    _URI = re.compile(r"^s3a?://(?P<bucket>[^/?#]*)/?(?P<key>.*?)(?:\?versionId=(?P<version>[^&=?]+))?$", re.I)

    @classmethod
    def parse(cls, uri: str) -> S3Location:
        m = cls._URI.match(uri)
        if not m or not m["bucket"] or not m["key"]:
            raise PlanInvalidError(f"S3 plan URI must be s3://bucket/key[?versionId=ID]: {uri}")
        return cls(m["bucket"], m["key"], unquote(m["version"]) if m["version"] else None)

    def describe(self) -> str:
        version = f" version {self.version_id!r}" if self.version_id else ""
        return f"bucket {self.bucket!r} key {self.key!r}{version}"


class PlanStore:
    """Reads plans by URI. ``retries`` are extra attempts after the first, for transient S3 failures only.

    They come on top of the S3 client's own retries because botocore does not retry a body that fails while
    streaming (read timeouts, truncated responses), which is where a large plan read over a flaky link breaks.
    """

    def __init__(
        self,
        s3_client: S3ClientFactory | None = None,
        retries: int = 3,
        backoff_s: float = 0.5,
        storage_options: Mapping[str, Mapping[str, Any]] | None = None,
        filesystem: Callable[[str], Any] | None = None,
    ):
        if retries < 0 or backoff_s < 0:
            raise ValueError("retries and backoff_s must be >= 0")
        self._s3_factory = s3_client or _default_s3_client
        self._s3: Any = None
        self.retries = retries
        self.backoff_s = backoff_s
        self._sleep: Callable[[float], None] = time.sleep
        self._readers: dict[str, Callable[[str, Limits], PlanObject]] = {"s3": self._read_s3, "s3a": self._read_s3}
        self._readers |= dict.fromkeys(STORES, self._read_fsspec)
        # fsspec storage options per scheme ("gs", "az", ...): a front end's connection or resource; without them
        # each store's client reads its own environment (STORAGE_EMULATOR_HOST, AZURE_STORAGE_CONNECTION_STRING...).
        self.storage_options = {k.lower(): dict(v) for k, v in (storage_options or {}).items()}
        # Or the filesystem itself, from a plan URI: Airflow's ObjectStoragePath over a connection (None: the above).
        self._filesystem = filesystem
        # Where credentials were looked for, as an error without any should say (a front end's client may know more).
        self.credentials_source = "env, profile or connection"

    def read(
        self, uri: str | os.PathLike[str], expected_sha256: str | None = None, limits: Limits = DEFAULT_LIMITS
    ) -> PlanObject:
        """Read the plan at ``uri`` (refused unread when larger than ``limits`` allow); with ``expected_sha256``,
        refuse bytes whose digest differs."""
        uri = os.fsdecode(os.fspath(uri))
        reader = self._readers.get(urlsplit(uri).scheme.lower(), self._read_local)
        obj = reader(uri, limits)
        if expected_sha256 is not None:
            check_sha256(obj, expected_sha256)
        return obj

    @property
    def s3(self) -> Any:
        """The S3 client, created on first use (so local reads need no credentials or provider)."""
        if self._s3 is None:
            self._s3 = self._s3_factory()
        return self._s3

    def _read_local(self, uri: str, limits: Limits) -> PlanObject:
        # Paths, file:// URIs and the "unsupported scheme" error all belong to the loader.
        return PlanObject.of(uri, read_plan_bytes(uri, limits))

    def _read_fsspec(self, uri: str, limits: Limits) -> PlanObject:
        fs = self._filesystem(uri) if self._filesystem is not None else None
        data, identity = read_object(uri, limits, self.storage_options.get(urlsplit(uri).scheme.lower()), fs=fs)
        return PlanObject.of(uri, data, **identity)

    def _read_s3(self, uri: str, limits: Limits) -> PlanObject:
        loc = S3Location.parse(uri)
        attempt = 0
        while True:
            attempt += 1
            try:
                return _get_object(self.s3, loc, uri, limits)
            except Exception as exc:
                if not _is_transient(exc):
                    typed = _translate(exc, uri, loc, self.credentials_source)
                    if typed is exc:
                        raise
                    raise typed from None
                if attempt > self.retries:
                    raise PlanStoreError(
                        f"cannot read plan {uri}: {_describe(exc)}; gave up after {attempt} attempts "
                        "(transient errors, retries exhausted)"
                    ) from None
                delay = self.backoff_s * 2 ** (attempt - 1) * random.uniform(0.5, 1.0)
                log.warning(
                    "reading plan %s: %s; retry %d/%d in %.2fs", uri, _describe(exc), attempt, self.retries, delay
                )
                self._sleep(delay)


def pinned_uri(uri: str, version_id: str | None) -> str:
    """`uri` pinned to `version_id` as its store spells it (`?versionId=` for S3, `#generation` for GCS,
    `?versionid=` for Azure); unchanged when already pinned, without a version, or for a local plan."""
    scheme = urlsplit(uri).scheme.lower()
    if not version_id or "?" in uri or "#" in uri:
        return uri
    if scheme in ("s3", "s3a"):
        return f"{uri}?versionId={version_id}"
    store = STORES.get(scheme)
    return store.pinned(uri, version_id) if store is not None else uri


def check_sha256(obj: PlanObject, expected: str) -> None:
    """Raise PlanChangedError unless ``obj`` has the pinned digest (hex, optionally ``sha256:``-prefixed)."""
    want = expected.strip().lower().removeprefix("sha256:")
    if not re.fullmatch(r"[0-9a-f]{64}", want):
        raise PolicyError(f"expected_sha256 must be 64 hex digits, got {expected!r}")
    if obj.sha256 != want:
        raise PlanChangedError(
            f"plan {obj.uri} changed: expected sha256 {want[:12]}..., read {obj.sha256[:12]}... ({obj.size} bytes)"
        )


def _default_s3_client() -> Any:
    """boto3's own configuration chain: AWS_* env vars, profiles, AWS_ENDPOINT_URL(_S3) for S3-compatible stores —
    read now, through a new session: boto3's default session keeps the credentials it resolved first, so a
    long-lived process would sign with stale ones after the environment changed."""
    import boto3

    return boto3.session.Session().client("s3")


def _get_object(client: Any, loc: S3Location, uri: str, limits: Limits) -> PlanObject:
    args = {"Bucket": loc.bucket, "Key": loc.key} | ({"VersionId": loc.version_id} if loc.version_id else {})
    response = client.get_object(**args)
    body = response["Body"]
    try:
        limits.check_size(int(response.get("ContentLength") or 0), f"plan {uri}")  # before the body is read
        data = body.read()  # bytes; botocore checks Content-Length and raises IncompleteReadError if short
    finally:
        body.close()
    modified = response.get("LastModified")
    return PlanObject.of(
        uri,
        data,
        version_id=response.get("VersionId") or loc.version_id,
        etag=(response.get("ETag") or "").strip('"') or None,
        last_modified=modified.isoformat() if modified is not None else None,
    )


# --- error classification ---------------------------------------------------------------------------------

_TRANSIENT_CODES = frozenset(
    {
        "Throttling", "ThrottlingException", "ThrottledException", "RequestThrottled", "RequestThrottledException",
        "TooManyRequestsException", "SlowDown", "RequestLimitExceeded", "RequestTimeout", "RequestTimeoutException",
        "InternalError", "ServiceUnavailable", "PriorRequestNotComplete",
    }
)  # fmt: skip

_TRANSIENT_BOTOCORE = (
    "EndpointConnectionError",
    "ConnectTimeoutError",
    "ReadTimeoutError",
    "ConnectionClosedError",
    "ResponseStreamingError",
    "IncompleteReadError",
)


def _client_error(exc: Exception) -> tuple[str, int] | None:
    """(error code, HTTP status) of a botocore ClientError, None for anything else."""
    response = getattr(exc, "response", None)
    if not isinstance(response, dict) or "Error" not in response:
        return None
    code = str(response["Error"].get("Code") or "")
    status = int(response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
    return code, status


def _is_transient(exc: Exception) -> bool:
    from botocore import exceptions as bce

    client = _client_error(exc)
    if client is not None:
        code, status = client
        return code in _TRANSIENT_CODES or status == 429 or status >= 500
    return isinstance(exc, tuple(getattr(bce, name) for name in _TRANSIENT_BOTOCORE if hasattr(bce, name)))


def _describe(exc: Exception) -> str:
    """One line about a failure without the service's free text (it may echo request details)."""
    client = _client_error(exc)
    if client is not None:
        code, status = client
        return f"S3 error {code or 'unknown'} (HTTP {status})"
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")


def _not_found(what: str) -> Callable[[str, S3Location], PlanNotFoundError]:
    messages = {
        "bucket": "bucket {b!r} does not exist",
        "key": "no key {k!r} in bucket {b!r}",
        "version": "no version {v!r} of key {k!r} in bucket {b!r}",
    }
    return lambda uri, loc: PlanNotFoundError(
        f"{uri}: " + messages[what].format(b=loc.bucket, k=loc.key, v=loc.version_id)
    )


def _access_denied(uri: str, loc: S3Location) -> PlanStoreError:
    return PlanStoreError(
        f"cannot read plan {uri}: access denied to {loc.describe()} "
        "(S3 also answers AccessDenied for a missing key when the caller may not list the bucket)"
    )


def _invalid_argument(uri: str, loc: S3Location) -> PlanInvalidError:
    what = f"versionId {loc.version_id!r} is not valid" if loc.version_id else f"InvalidArgument for {loc.describe()}"
    return PlanInvalidError(f"invalid S3 request for plan {uri}: {what}")


_CLIENT_ERRORS: dict[str, Callable[[str, S3Location], Exception]] = {
    "NoSuchBucket": _not_found("bucket"),
    "NoSuchKey": _not_found("key"),
    "404": _not_found("key"),
    "NotFound": _not_found("key"),
    "NoSuchVersion": _not_found("version"),
    "AccessDenied": _access_denied,
    "403": _access_denied,
    "AllAccessDisabled": _access_denied,
    "InvalidArgument": _invalid_argument,
}


def _translate(exc: Exception, uri: str, loc: S3Location, credentials_source: str) -> Exception:
    """A typed error (with the CLI's exit code) for a failure that retrying will not fix."""
    client = _client_error(exc)
    if client is not None:
        code, _ = client
        make = _CLIENT_ERRORS.get(code)
        if make is not None:
            return make(uri, loc)
        return PlanStoreError(f"cannot read plan {uri} ({loc.describe()}): {_describe(exc)}")
    from botocore.exceptions import BotoCoreError, NoCredentialsError

    if isinstance(exc, NoCredentialsError):
        return PlanStoreError(f"cannot read plan {uri}: no AWS credentials found ({credentials_source})")
    if isinstance(exc, BotoCoreError):
        return PlanStoreError(f"cannot read plan {uri}: {_describe(exc)}")
    return exc
