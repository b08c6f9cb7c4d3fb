"""The `substrait_spark` connection form, declared once: the hook's `get_ui_field_behaviour` (Airflow < 3.2)
and the provider info's `ui-field-behaviour` / `conn-fields` (Airflow 3.2+, read without importing the hook)
both come from here. No Airflow import, so `get_provider_info` stays cheap."""

from __future__ import annotations

import json
from typing import Any

EXTRA_EXAMPLE = {
    "conf": {"spark.sql.shuffle.partitions": "64", "spark.executor.memory": "4g"},
    "jars": ["/opt/jars/iceberg-spark-runtime-3.5_2.12.jar"],
    "packages": "org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.6.1",
    "app_name": "substrait-spark",
    "connect_timeout": 20,
    "tables": {"lineitem": {"uri": "s3://bucket/tpch/lineitem", "format": "parquet"}},
    "policy": {"read_namespaces": ["lake.*"], "write_namespaces": ["lake.staging"], "steps": ["insert", "ctas"]},
}

UI_FIELD_BEHAVIOUR: dict[str, Any] = {
    "hidden_fields": ["schema"],
    "relabeling": {
        "host": "Master URL",
        "login": "User ID (Spark Connect)",
        "password": "Token (Spark Connect)",
    },
    "placeholders": {
        "host": "spark://127.0.0.1:7077, local[*], yarn, k8s://https://api:6443 or sc://host:15002",
        "port": "optional: added to a master URL without one",
        "login": "Spark Connect user_id (optional)",
        "password": "Spark Connect token (optional)",
        "extra": json.dumps(EXTRA_EXAMPLE, indent=2),
    },
}

# Extra fields of the form; each is stored in the connection's extras under its name (JSON text is parsed).
CONN_FIELDS: dict[str, Any] = {
    "conf": {
        "label": "Spark conf (JSON)",
        "description": 'Spark settings, e.g. {"spark.executor.memory": "4g"}',
        "schema": {"type": ["string", "null"]},
    },
    "jars": {
        "label": "Jars",
        "description": "Comma-separated jar paths or URLs",
        "schema": {"type": ["string", "null"]},
    },
    "packages": {
        "label": "Packages",
        "description": "Comma-separated Maven coordinates (spark.jars.packages)",
        "schema": {"type": ["string", "null"]},
    },
    "connect_timeout": {
        "label": "Connect timeout (s)",
        "description": "Seconds a Spark Connect server (sc://) has to answer before the task fails (default 20)",
        "schema": {"type": ["string", "number", "null"]},
    },
    "tables": {
        "label": "Table map (JSON)",
        "description": 'Table name to location, e.g. {"lineitem": {"uri": "s3://b/lineitem", "format": "parquet"}}',
        "schema": {"type": ["string", "null"]},
    },
    "policy": {
        "label": "Policy (JSON or file path)",
        "description": 'What plans may read, write and run, e.g. {"write_namespaces": ["lake.staging"]}',
        "schema": {"type": ["string", "null"]},
    },
}


def provider_connection_form() -> dict[str, Any]:
    """The form in the provider-info spelling (kebab-case keys)."""
    b = UI_FIELD_BEHAVIOUR
    return {
        "ui-field-behaviour": {
            "hidden-fields": b["hidden_fields"],
            "relabeling": b["relabeling"],
            "placeholders": b["placeholders"],
        },
        "conn-fields": CONN_FIELDS,
    }
