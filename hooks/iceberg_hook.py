"""Airflow hook: Iceberg catalogs from Airflow connections, in the same form the CLI's `--catalog-config` uses.

Reuses the Iceberg provider's `iceberg` connection type as it is (host = REST catalog URI, login/password =
client id/secret, extras = more catalog properties), and accepts any connection whose extras hold pyiceberg
catalog properties (`{"type": "sql", "uri": "sqlite:////…", "warehouse": "file:///…"}`). The catalog's name —
the same in pyiceberg and in Spark — is the extra `catalog_name`, else the connection id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from substrait_spark.hooks.connections import get_connection
from substrait_spark.hooks.iceberg import CatalogConfig, Catalogs

try:
    from airflow.sdk.bases.hook import BaseHook
except ImportError:  # Airflow 2.x
    from airflow.hooks.base import BaseHook  # type: ignore[no-redef]


class IcebergCatalogHook(BaseHook):
    """One Iceberg catalog described by an Airflow connection."""

    conn_name_attr = "iceberg_conn_id"
    default_conn_name = "iceberg_default"
    conn_type = "iceberg"  # the Iceberg provider's type; this hook does not register its own
    hook_name = "Iceberg catalog (Substrait on Spark)"

    def __init__(self, iceberg_conn_id: str = default_conn_name, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.iceberg_conn_id = iceberg_conn_id

    def catalog_config(self) -> CatalogConfig:
        conn = get_connection(self, self.iceberg_conn_id)
        extra = dict(conn.extra_dejson or {})
        name = str(extra.pop("catalog_name", None) or self.iceberg_conn_id)
        spark = extra.pop("spark", None) or {}
        props = {k: str(v) for k, v in extra.items()}
        if conn.host and "uri" not in props:
            host = conn.host if "://" in conn.host else f"https://{conn.host}"
            props["uri"] = f"{host}:{conn.port}" if conn.port else host
            props.setdefault("type", "rest")
        if conn.login and conn.password and "credential" not in props:
            props["credential"] = f"{conn.login}:{conn.password}"
        return CatalogConfig(name, props, dict(spark))

    def get_conn(self) -> Any:
        """The pyiceberg catalog."""
        config = self.catalog_config()
        return Catalogs({config.name: config}).load(config.name)


def catalogs_from_connections(conn_ids: Sequence[str], base: Catalogs | None = None) -> Catalogs:
    """Catalogs of several connections (added to `base`, e.g. a config file's); the first is the default
    unless `base` names one."""
    catalogs = dict(base.catalogs) if base else {}
    default = base.default if base else None
    for conn_id in conn_ids:
        config = IcebergCatalogHook(conn_id).catalog_config()
        catalogs[config.name] = config
        default = default or config.name
    return Catalogs(catalogs, default)
