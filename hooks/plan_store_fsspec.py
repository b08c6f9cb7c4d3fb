"""Plans in GCS and Azure Blob Storage, read through fsspec (gcsfs, adlfs): the stores' own clients and credential
chains, not one written here.

A small table says what differs per store: how a version is pinned in the URI (`gs://b/k#GENERATION`,
`az://c/b?versionid=ID`, as gsutil and adlfs spell them), which info field holds it, and what its container is
called. The object's info is read before its bytes (the size bound, the identity), then the bytes of exactly that
generation or version, so the report never names one version and holds another's bytes. The stores' clients retry
transient failures themselves (gcsfs, the Azure SDK), so no retry loop here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from substrait_spark.consumer.errors import ConfigurationError, PlanInvalidError, PlanNotFoundError
from substrait_spark.consumer.loading.limits import Limits

Filesystem = Any  # an fsspec AbstractFileSystem; fsspec is imported only when such a plan is read


@dataclass(frozen=True)
class ObjectStore:
    """How one kind of store spells things."""

    name: str  # for messages: "GCS", "Azure Blob Storage"
    container: str  # what its top level is called: "bucket", "container"
    version_field: str  # the info key holding the object's generation or version
    pin_form: str  # how a URI pins one, for messages
    credentials: str  # where its client looked for credentials, for messages
    filesystem: Callable[[Mapping[str, Any]], Filesystem]

    def pinned(self, path: str, version: str) -> str:
        return f"{path}#{version}" if self.version_field == "generation" else f"{path}?versionid={version}"


# Not fsspec's cached instances: one is keyed by its arguments only, so a long-lived process (a scheduler, a worker)
# would keep the credentials the environment held when the first plan was read.


def _gcs(options: Mapping[str, Any]) -> Filesystem:
    # gcsfs's plain JSON-API filesystem: its default (ExtendedGcsFileSystem) first asks a gRPC control plane for
    # the bucket's layout, for zonal buckets; a plan read is one GET, and emulators answer no gRPC (a 60 s stall).
    from gcsfs.core import GCSFileSystem

    return GCSFileSystem(**{"version_aware": True, "skip_instance_cache": True, **options})


def _azure(options: Mapping[str, Any]) -> Filesystem:
    from adlfs import AzureBlobFileSystem

    return AzureBlobFileSystem(**{"version_aware": True, "skip_instance_cache": True, **options})


GCS = ObjectStore(
    "GCS",
    "bucket",
    "generation",
    "gs://bucket/object#GENERATION",
    "STORAGE_EMULATOR_HOST, GOOGLE_APPLICATION_CREDENTIALS, gcloud's application default credentials, metadata server",
    _gcs,
)
AZURE = ObjectStore(
    "Azure Blob Storage",
    "container",
    "version_id",
    "az://container/blob?versionid=ID",
    "AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_ACCOUNT_NAME with a key, SAS token or service principal",
    _azure,
)
STORES: dict[str, ObjectStore] = {"gs": GCS, "gcs": GCS, "az": AZURE, "abfs": AZURE, "abfss": AZURE}


@dataclass(frozen=True)
class ObjectLocation:
    container: str
    key: str
    version: str | None
    account: str | None = None  # abfs://container@ACCOUNT.dfs.core.windows.net/… names the storage account

    @classmethod
    def parse(cls, uri: str, store: ObjectStore) -> ObjectLocation:
        parts = urlsplit(uri)
        version = parts.fragment or None if store is GCS else None
        if store is AZURE and parts.query:
            name, _, value = parts.query.partition("=")
            if name.lower() != "versionid" or not value:
                raise PlanInvalidError(f"{store.name} plan URI must be {store.pin_form}: {uri}")
            version = value
        # abfs://container@account.dfs.core.windows.net/path names the container before the "@".
        container, _, host = parts.netloc.partition("@")
        key = parts.path.lstrip("/")
        if not container or not key or (store is GCS and parts.query):
            raise PlanInvalidError(f"{store.name} plan URI must be {store.pin_form}: {uri}")
        return cls(container, key, version, host.split(".", 1)[0] or None if store is AZURE else None)

    def path(self) -> str:
        return f"{self.container}/{self.key}"


def _filesystem(store: ObjectStore, options: Mapping[str, Any]) -> Filesystem:
    try:
        return store.filesystem(options)
    except ImportError as exc:
        client, extra = exc.name or "its fsspec client", "gcs" if store is GCS else "azure"
        raise ConfigurationError(
            f"reading {store.name} plans needs {client}: pip install 'substrait-spark[{extra}]'"
        ) from None


def read_object(
    uri: str, limits: Limits, options: Mapping[str, Any] | None = None, fs: Filesystem | None = None
) -> tuple[bytes, dict[str, str | None]]:
    """The bytes at `uri` (gs://, az://, abfs://) and their identity (version_id, etag, last_modified)."""
    from substrait_spark.hooks.plan_store import PlanStoreError

    store = STORES[urlsplit(uri).scheme.lower()]
    loc = ObjectLocation.parse(uri, store)
    try:
        if fs is None:
            named = {"account_name": loc.account} if loc.account and not options else {}
            fs = _filesystem(store, {**named, **(options or {})})
        else:
            fs = version_aware(fs)
        versioned = bool(getattr(fs, "version_aware", False))
        if loc.version and not versioned:
            raise ConfigurationError(
                f"{uri} pins a version, but the {store.name} filesystem given is not version-aware "
                "(set version_aware in its storage options, or read it without plan_conn_id)"
            )
        path = store.pinned(loc.path(), loc.version) if loc.version else loc.path()
        info = fs.info(path)
        limits.check_size(int(info.get("size") or 0), f"plan {uri}")  # before the bytes are read
        version = str(info.get(store.version_field) or loc.version or "") or None
        data = fs.cat_file(store.pinned(loc.path(), version) if version and versioned else path)
    except FileNotFoundError:
        raise _not_found(fs, store, loc, uri) from None
    except PermissionError as exc:
        raise PlanStoreError(f"cannot read plan {uri}: access denied ({_describe(exc)})") from None
    except Exception as exc:
        raise _translate(exc, store, uri, fs) from None
    return data, {"version_id": version, "etag": _etag(info), "last_modified": _iso(info)}


def version_aware(fs: Filesystem) -> Filesystem:
    """`fs` again with `version_aware=True`, built from the same arguments: a provider builds its filesystem from
    an Airflow connection without that flag (and the azure provider drops storage options beside a connection
    string), so pins would be read as keys. fsspec keeps every filesystem's constructor arguments (`storage_args`,
    `storage_options`), credentials included, so the copy is the connection's; `fs` itself when it cannot say."""
    import inspect

    if getattr(fs, "version_aware", True) or not hasattr(fs, "storage_options"):
        return fs
    if "version_aware" not in inspect.signature(type(fs).__init__).parameters:
        return fs
    options = {**fs.storage_options, "version_aware": True, "skip_instance_cache": True}
    return type(fs)(*getattr(fs, "storage_args", ()), **options)


def _not_found(fs: Filesystem, store: ObjectStore, loc: ObjectLocation, uri: str) -> PlanNotFoundError:
    """Which part is missing: one more request, made only once the object was not found."""
    try:
        container_exists = fs is None or fs.exists(loc.container)
    except Exception:
        container_exists = True  # cannot tell: say the object, the narrower claim
    if not container_exists:
        return PlanNotFoundError(f"{uri}: {store.container} {loc.container!r} does not exist")
    if loc.version:
        return PlanNotFoundError(
            f"{uri}: no version {loc.version!r} of {loc.key!r} in {store.container} {loc.container!r}"
        )
    return PlanNotFoundError(f"{uri}: no object {loc.key!r} in {store.container} {loc.container!r}")


def _translate(exc: Exception, store: ObjectStore, uri: str, fs: Filesystem | None = None) -> Exception:
    """A typed error for what the store's client raised; only the kind of failure and its HTTP status, never the
    client's text (an Azure error can echo a SAS-signed URL). A request that never got an answer names the endpoint
    it was sent to (scheme, host, path): the usual cause is a client built for another endpoint than meant."""
    from substrait_spark.consumer.errors import SubstraitSparkError
    from substrait_spark.hooks.plan_store import PlanStoreError

    if isinstance(exc, SubstraitSparkError):
        return exc
    status = getattr(exc, "code", None) or getattr(exc, "status_code", None)
    kind = type(exc).__name__
    if store is AZURE and isinstance(exc, ValueError) and "connection_string or account_name" in str(exc):
        return PlanStoreError(f"cannot read plan {uri}: no {store.name} credentials found ({store.credentials})")
    if kind == "ClientAuthenticationError" or status in (401, 403):
        return PlanStoreError(f"cannot read plan {uri}: access denied by {store.name} ({_describe(exc)})")
    if kind in ("DefaultCredentialsError", "RefreshError"):
        return PlanStoreError(f"cannot read plan {uri}: no usable {store.name} credentials ({store.credentials})")
    if kind == "ServiceRequestError" and (endpoint := _azure_endpoint(fs)):
        return PlanStoreError(f"cannot read plan {uri} from {store.name}: no answer from {endpoint} ({kind})")
    return PlanStoreError(f"cannot read plan {uri} from {store.name}: {_describe(exc)}")


def _azure_endpoint(fs: Filesystem | None) -> str | None:
    """The blob endpoint adlfs's client sends to."""
    url = getattr(getattr(fs, "service_client", None), "url", None)
    return endpoint(url) if isinstance(url, str) else None


def endpoint(url: str) -> str:
    """`url` as scheme://host[:port]/path: no user info, query (a SAS token), fragment or trailing slash."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme.lower()}://{parts.hostname or ''}{port}{parts.path.rstrip('/')}"


def _describe(exc: Exception) -> str:
    status = getattr(exc, "code", None) or getattr(exc, "status_code", None)
    return f"{type(exc).__name__}" + (f" (HTTP {status})" if isinstance(status, int) else "")


def _etag(info: Mapping[str, Any]) -> str | None:
    etag = info.get("etag")
    return str(etag).strip('"') or None if etag else None


def _iso(info: Mapping[str, Any]) -> str | None:
    modified = info.get("updated") or info.get("last_modified")
    if isinstance(modified, datetime):
        return modified.isoformat()
    return str(modified) if modified else None
