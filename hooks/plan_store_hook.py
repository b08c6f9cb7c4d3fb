"""Airflow face of the plan store: credentials come from the Airflow connections a team already has.

Only how the store is reached differs from ``PlanStore`` used outside Airflow. S3: the amazon provider's client for
``aws_conn_id`` (login/password, role, region, ``endpoint_url`` extra as in every other AWS task). GCS and Azure
(``gs://``, ``az://``, ``abfs://``): with ``plan_conn_id``, the filesystem Airflow's ``ObjectStoragePath`` builds
from that connection (the google or microsoft.azure provider's); without it, the store client's own environment
(``STORAGE_EMULATOR_HOST``, ``GOOGLE_APPLICATION_CREDENTIALS``, ``AZURE_STORAGE_CONNECTION_STRING``...). Providers
are imported only when such a plan is read.
"""

from __future__ import annotations

import os
from typing import Any

try:
    from airflow.sdk.bases.hook import BaseHook
except ImportError:  # Airflow 2.x
    from airflow.hooks.base import BaseHook  # type: ignore[no-redef]

from substrait_spark.consumer.errors import ConfigurationError
from substrait_spark.consumer.loading.limits import DEFAULT_LIMITS, Limits
from substrait_spark.hooks.connections import get_connection
from substrait_spark.hooks.plan_store import PlanObject, PlanStore
from substrait_spark.hooks.plan_store_fsspec import endpoint


class PlanStoreHook(BaseHook):
    """Reads Substrait plans (local paths, ``file://``, ``s3://``) with retries, sha256 pinning and S3 versions."""

    conn_name_attr = "aws_conn_id"
    default_conn_name = "aws_default"
    conn_type = "aws"  # the amazon provider's connection type; this hook does not register its own
    hook_name = "Substrait plan store"

    def __init__(
        self,
        aws_conn_id: str | None = default_conn_name,
        retries: int = 3,
        backoff_s: float = 0.5,
        plan_conn_id: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(**kwargs)
        self.aws_conn_id = aws_conn_id
        self.plan_conn_id = plan_conn_id
        filesystem = self._filesystem if plan_conn_id else None
        self.store = PlanStore(s3_client=self._s3_client, retries=retries, backoff_s=backoff_s, filesystem=filesystem)

    def _filesystem(self, uri: str) -> Any:
        """The fsspec filesystem Airflow's storage layer builds for `uri` from `plan_conn_id` (checked to exist
        first: a missing connection would otherwise fall back to the environment's credentials quietly)."""
        from airflow.sdk import ObjectStoragePath

        assert self.plan_conn_id
        connection = get_connection(self, self.plan_conn_id, attr="plan_conn_id")
        # The microsoft.azure provider registers abfs://, abfss:// and adl://; az:// is adlfs's other name for the
        # same blob filesystem (the path is parsed from `uri`, not from this one).
        scheme, rest = uri.split("://", 1)
        registered = "abfs" if scheme.lower() == "az" else scheme
        try:
            fs = ObjectStoragePath(f"{registered}://{rest}", conn_id=self.plan_conn_id).fs
        except ValueError as exc:
            if "connection_string or account_name" in str(exc):  # adlfs, from the provider's options
                raise ConfigurationError(
                    f"plan_conn_id {self.plan_conn_id!r}: the connection names no Azure storage account (set its "
                    "account_name extra beside login/password, or a connection_string extra)"
                ) from None
            if "unable to connect to account" in str(exc):  # adlfs: a blank or malformed connection string
                raise ConfigurationError(
                    f"plan_conn_id {self.plan_conn_id!r}: adlfs cannot use the connection's Azure credentials "
                    "(a blank or malformed connection_string?)"
                ) from None
            if "No filesystem registered" not in str(exc):
                raise
            scheme = scheme.lower()
            google = scheme in ("gs", "gcs")
            provider = "apache-airflow-providers-google" if google else "apache-airflow-providers-microsoft-azure"
            raise ConfigurationError(
                f"plan_conn_id {self.plan_conn_id!r}: Airflow has no filesystem for {scheme}:// plans; install "
                f"{provider}, or leave plan_conn_id unset to use the store client's environment"
            ) from None
        if registered.lower() in ("abfs", "abfss", "adl"):
            refuse_ignored_azure_host(self.plan_conn_id, connection.host, fs)
        return fs

    def _s3_client(self) -> Any:
        """The amazon provider's client for `aws_conn_id`. A connection named that does not exist is an error
        naming it (the provider would quietly use the environment's credentials instead); only the default,
        `aws_default`, may be missing — Airflow's convention for "the environment's credentials" — and then an
        error for lack of credentials says so. `aws_conn_id=None`: the environment's, on purpose."""
        from airflow.providers.amazon.aws.hooks.s3 import S3Hook

        if self.aws_conn_id:
            self._check_connection(self.aws_conn_id)
        return S3Hook(aws_conn_id=self.aws_conn_id).get_conn()

    def _check_connection(self, conn_id: str) -> None:
        try:
            get_connection(self, conn_id)
        except ConfigurationError:
            if conn_id != self.default_conn_name:
                raise
            self.store.credentials_source = (
                f"aws_conn_id {conn_id!r} is not defined, so only the environment's: variables, profile, instance role"
            )

    def get_conn(self) -> PlanStore:
        return self.store

    def read(
        self, uri: str | os.PathLike[str], expected_sha256: str | None = None, limits: Limits = DEFAULT_LIMITS
    ) -> PlanObject:
        """The plan's bytes and identity; see ``PlanStore.read`` for the errors raised."""
        return self.store.read(uri, expected_sha256=expected_sha256, limits=limits)


def refuse_ignored_azure_host(conn_id: str, host: str | None, fs: Any) -> None:
    """A connection's host that the Azure filesystem would not use is a `ConfigurationError` naming the fix.

    The microsoft.azure provider passes a wasb connection's host to adlfs as ``account_url``, a parameter adlfs does
    not have (fsspec/adlfs#450, apache/airflow#68344): adlfs reads ``https://ACCOUNT.blob.core.windows.net`` (or
    ``https://`` + an ``account_host`` extra) instead, and the read fails minutes later, after azure-core's retries,
    with a bare ``ServiceRequestError`` (the WasbHook of the same provider does use the host). A connection string
    names its endpoint itself: adlfs then has no ``account_url`` and there is nothing to check."""
    used, given = getattr(fs, "account_url", None), (getattr(fs, "storage_options", None) or {}).get("account_url")
    if not host or not used or not given or endpoint(used) == endpoint(given):
        return
    shown = endpoint(given)
    scheme, account_host = shown.split("://", 1)
    https = f", or for an https endpoint an account_host extra ({account_host})" if scheme == "https" else ""
    raise ConfigurationError(
        f"plan_conn_id {conn_id!r}: the connection's host {shown} is not used by Airflow's Azure filesystem (it "
        f"would read {endpoint(used)}): name the endpoint in a connection_string extra "
        f"(DefaultEndpointsProtocol={scheme};AccountName=...;AccountKey=...;BlobEndpoint={shown}){https}"
    )
