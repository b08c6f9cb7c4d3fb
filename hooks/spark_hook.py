"""Airflow hook: a Spark session from an Airflow connection, job groups for cancelling, the application id.

Accepts the Spark provider's `spark` and `spark_connect` connections as they are (so existing connections work)
and our own `substrait_spark` type, whose host is any master URL Spark accepts. Session handling itself lives in
`hooks/spark.py` (no Airflow there); this module only turns connections into a `SparkTarget`.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from functools import cached_property
from typing import Any
from urllib.parse import quote

from pyspark.sql import SparkSession
from substrait_spark.hooks import spark as spark_sessions
from substrait_spark.hooks.connect_probe import connect_timeout
from substrait_spark.hooks.connection_form import UI_FIELD_BEHAVIOUR
from substrait_spark.hooks.connections import get_connection
from substrait_spark.hooks.spark import SparkTarget, normalize_master

try:
    from airflow.sdk.bases.hook import BaseHook
except ImportError:  # Airflow 2.x
    from airflow.hooks.base import BaseHook  # type: ignore[no-redef]

log = logging.getLogger(__name__)

# `spark` connection extras (SparkSubmitHook's names) that mean a Spark setting for an in-process driver.
# `deploy-mode` and `spark-binary` are spark-submit's business: the driver here is always this process.
SPARK_EXTRA_CONF = {
    "queue": "spark.yarn.queue",
    "namespace": "spark.kubernetes.namespace",
    "principal": "spark.kerberos.principal",
    "keytab": "spark.kerberos.keytab",
}
# Spark Connect URL parameters (pyspark's ChannelBuilder) and the connection fields/extras they come from:
# login = user_id, password = token (the Spark provider's form), extras `use_ssl` and `session_id` (a UUID).
CONNECT_PARAMS = ("user_id", "token", "use_ssl", "session_id")


def _json_field(extra: Mapping[str, Any], key: str) -> Any:
    """An extras value that may be given as JSON text (form fields store strings, older forms with a prefix)."""
    value = extra.get(key, extra.get(f"extra__substrait_spark__{key}"))
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        return json.loads(value)
    return value


def connect_url(host: str, port: int | None, params: Mapping[str, Any]) -> str:
    """`sc://host:port/;k=v` from connection parts; parameters already in the host are kept."""
    base = normalize_master(host, port, default_scheme="sc")
    extra = ";".join(f"{k}={quote(_param_str(v), safe='')}" for k, v in params.items() if v not in (None, ""))
    if not extra:
        return base
    return f"{base};{extra}" if ";" in base else f"{base.rstrip('/')}/;{extra}"


def _param_str(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _connect_params(conn: Any, extra: Mapping[str, Any]) -> dict[str, Any]:
    """Login/password as the Spark provider reads them, extras `user_id`/`token`/`use_ssl`/`session_id` otherwise."""
    fields = {"user_id": conn.login, "token": conn.password}
    return {k: fields.get(k) or extra.get(k) for k in CONNECT_PARAMS}


def _from_spark(conn: Any, extra: Mapping[str, Any]) -> SparkTarget:
    """The Spark provider's `spark` type (and URI schemes it stores as the type: `k8s`, `yarn`, `local`, ...)."""
    if extra.get("deploy-mode") == "cluster":
        log.warning(
            "Connection %s: deploy-mode 'cluster' ignored, the Spark driver runs in the task; for a driver on the "
            "cluster, run the plan with the Spark provider's SparkSubmitOperator, application "
            "substrait_spark.SUBMIT_APPLICATION",
            conn.conn_id,
        )
    scheme = "spark" if conn.conn_type in (None, "", "spark") else conn.conn_type
    host = conn.host or ("yarn" if scheme == "spark" else "")
    if scheme in ("yarn", "local") and not host:  # `yarn://` or `local://` as a URI: the type is the master
        host = scheme
    elif scheme != "spark" and not host.lower().startswith(f"{scheme}://"):  # `k8s://https%3A%2F%2Fapi:6443`
        host = f"{scheme}://{host}"
    conf = {key: extra[name] for name, key in SPARK_EXTRA_CONF.items() if extra.get(name)}
    return SparkTarget.parse(host, conn.port, conf=conf, default_scheme=scheme)


def _from_spark_connect(conn: Any, extra: Mapping[str, Any]) -> SparkTarget:
    """The Spark provider's `spark_connect` type: host, port, login = user id, password = token, `use_ssl`."""
    return SparkTarget.parse(connect_url(conn.host or "localhost", conn.port, _connect_params(conn, extra)))


def _from_substrait_spark(conn: Any, extra: Mapping[str, Any]) -> SparkTarget:
    """Our type: host is any master URL (a bare host means `spark://`), extras hold conf, jars, packages."""
    host = conn.host or ""
    if host.strip().lower().startswith("sc://"):
        host = connect_url(host, conn.port, _connect_params(conn, extra))
    return SparkTarget.parse(
        host or None,
        conn.port,
        conf=_json_field(extra, "conf") or {},
        jars=_json_field(extra, "jars"),
        packages=_json_field(extra, "packages"),
        app_name=extra.get("app_name"),
    )


CONNECTION_PARSERS: dict[str, Callable[[Any, Mapping[str, Any]], SparkTarget]] = {
    "spark": _from_spark,
    "k8s": _from_spark,
    "yarn": _from_spark,
    "mesos": _from_spark,
    "local": _from_spark,
    "spark_connect": _from_spark_connect,
    "substrait_spark": _from_substrait_spark,
}


def target_from_connection(conn: Any) -> SparkTarget:
    """The `SparkTarget` an Airflow connection describes; unknown connection types are an error."""
    parser = CONNECTION_PARSERS.get(conn.conn_type or "")
    if parser is None:
        raise ValueError(
            f"Connection {conn.conn_id!r} has type {conn.conn_type!r}; expected one of {', '.join(CONNECTION_PARSERS)}"
        )
    extra = conn.extra_dejson or {}
    timeout = connect_timeout(_json_field(extra, "connect_timeout"), f"connection {conn.conn_id!r}: connect_timeout")
    return replace(parser(conn, extra), connect_timeout=timeout)


class SubstraitSparkHook(BaseHook):
    """A Spark session for Substrait plans, described by an Airflow connection (none: `local[*]`).

    The session is shared by every hook of the worker process that asks for the same target (see `hooks/spark.py`).
    """

    conn_name_attr = "spark_conn_id"
    default_conn_name = "substrait_spark_default"
    conn_type = "substrait_spark"
    hook_name = "Substrait on Spark"

    def __init__(
        self,
        spark_conn_id: str | None = None,
        *,
        conf: Mapping[str, Any] | None = None,
        app_name: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.spark_conn_id = spark_conn_id
        self._conf_override = dict(conf or {})
        self._app_name = app_name
        self._extra: Mapping[str, Any] = {}
        self._open_groups: set[str] = set()  # job groups whose block is running (cancellation must outlast them)

    @cached_property
    def target(self) -> SparkTarget:
        """Where the session runs: from the connection, with `conf`/`app_name` given to the hook on top."""
        if self.spark_conn_id:
            conn = get_connection(self, self.spark_conn_id)
            self._extra = conn.extra_dejson or {}
            base = target_from_connection(conn)
        else:
            base = SparkTarget()  # the process's running session, else local[*]
        target = replace(
            base,
            conf={**base.conf, **{k: spark_sessions.conf_str(v) for k, v in self._conf_override.items()}},
            app_name=self._app_name or base.app_name,
        )
        self.log.info("Spark target for connection %s: %s", self.spark_conn_id or "(none)", target.display)
        return target

    def add_conf(self, conf: Mapping[str, Any]) -> None:
        """More Spark settings before the session starts: over the connection's, under the hook's own `conf`."""
        own = {k: spark_sessions.conf_str(v) for k, v in self._conf_override.items()}
        added = {k: spark_sessions.conf_str(v) for k, v in conf.items()}
        self.target = replace(self.target, conf={**self.target.conf, **added, **own})

    @property
    def table_map(self) -> dict[str, dict[str, str]]:
        """The connection's static table map (`tables` extra): name → {uri, format}; a plain string is a URI."""
        _ = self.target  # reads the connection
        tables = _json_field(self._extra, "tables") or {}
        if not isinstance(tables, Mapping):
            raise ValueError(f"Connection {self.spark_conn_id!r}: extra 'tables' must map names to {{uri, format}}")
        return {str(name): {"uri": spec} if isinstance(spec, str) else dict(spec) for name, spec in tables.items()}

    @property
    def policy(self) -> Mapping[str, Any] | str | None:
        """The connection's policy (`policy` extra: the rules as JSON, or a policy file's path), applied to every
        plan run through this connection; the platform's, so an operator's own `policy=` adds to it."""
        _ = self.target  # reads the connection
        return _json_field(self._extra, "policy") or None

    def get_session(self) -> SparkSession:
        """The session for this hook's target, started on first use and reused in this process."""
        return spark_sessions.session_for(self.target)

    def get_conn(self) -> SparkSession:
        return self.get_session()

    @contextmanager
    def job_group(self, group_id: str, description: str = "") -> Iterator[SparkSession]:
        """Tag every job this thread starts in the block with `group_id`, so that `cancel(group_id)` stops them."""
        self._open_groups.add(group_id)
        try:
            with spark_sessions.job_group(self.get_session(), group_id, description) as spark:
                yield spark
        finally:
            self._open_groups.discard(group_id)

    def cancel(self, group_id: str, timeout_s: float = 30.0, every_s: float = 1.0) -> bool:
        """Cancel the jobs of `group_id`, and keep cancelling while its block runs: Spark cancels only the jobs
        active at the call, and a plan may start its next job (or its first, after translating) a moment later.
        Never starts a session: False when this process has none to cancel.

        The Spark calls run on a thread of their own: `on_kill` runs in a signal handler on the main thread,
        which may be blocked inside a py4j call whose connection it must not reuse.
        """
        first = threading.Event()
        outcome: list[bool] = []

        def cancel() -> None:
            spark = spark_sessions.active_session(self.target)
            if spark is None:
                self.log.info("No Spark session for %s in this process; nothing to cancel", self.target.display)
                outcome.append(False)
                first.set()
                return
            while True:
                spark_sessions.cancel_job_group(spark, group_id)
                outcome.append(True)
                first.set()
                if group_id not in self._open_groups:
                    return
                time.sleep(every_s)

        threading.Thread(target=cancel, name=f"cancel {group_id}", daemon=True).start()
        first.wait(timeout_s)
        return bool(outcome and outcome[0])

    def application_id(self) -> str | None:
        """Spark's application id of this hook's session (`local-…`, `app-…`, `application_…`)."""
        return spark_sessions.application_id(self.get_session())

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        """The connection form: host is the master URL; login/password only matter for Spark Connect."""
        return UI_FIELD_BEHAVIOUR
