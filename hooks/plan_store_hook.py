"""Airflow face of the plan store: S3 credentials and endpoint come from an Airflow AWS connection.

Only the S3 client differs from ``PlanStore`` used outside Airflow; it is the amazon provider's, so the
connection's login/password, role, region and ``endpoint_url`` extra (S3-compatible stores) work as in every
other AWS task. The provider is imported only when an ``s3://`` plan is read.
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


class PlanStoreHook(BaseHook):
    """Reads Substrait plans (local paths, ``file://``, ``s3://``) with retries, sha256 pinning and S3 versions."""

    conn_name_attr = "aws_conn_id"
    default_conn_name = "aws_default"
    conn_type = "aws"  # the amazon provider's connection type; this hook does not register its own
    hook_name = "Substrait plan store"

    def __init__(
        self, aws_conn_id: str | None = default_conn_name, retries: int = 3, backoff_s: float = 0.5, **kwargs: Any
    ):
        super().__init__(**kwargs)
        self.aws_conn_id = aws_conn_id
        self.store = PlanStore(s3_client=self._s3_client, retries=retries, backoff_s=backoff_s)

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
