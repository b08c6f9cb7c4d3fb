"""Airflow connections as the hooks read them: a connection id that names nothing is one typed error, not Airflow's
traceback (and not retried: a retry finds it missing too)."""

from __future__ import annotations

from typing import Any

from substrait_spark.consumer.errors import ConfigurationError


def get_connection(hook: Any, conn_id: str, attr: str | None = None) -> Any:
    """`hook.get_connection(conn_id)`; a missing connection is a `ConfigurationError` naming it (as the argument
    `attr` that gave it, default the hook's) and how to define it (the Airflow UI or CLI, or an `AIRFLOW_CONN_<ID>`
    environment variable)."""
    from airflow.providers.common.compat.sdk import AirflowNotFoundException

    try:
        return hook.get_connection(conn_id)
    except AirflowNotFoundException:
        env = f"AIRFLOW_CONN_{conn_id.upper()}"  # Airflow's own lookup: the id upper-cased as it is
        raise ConfigurationError(
            f"{attr or hook.conn_name_attr} {conn_id!r}: no such Airflow connection (define it in the UI, with "
            f"`airflow connections add`, or as the environment variable {env})"
        ) from None
