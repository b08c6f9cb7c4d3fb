"""Spark sessions for the CLI, the Python API and the Airflow hook: local, standalone `spark://`, Spark Connect `sc://`.

No Airflow import here: the CLI and plain spark-submit drivers use this module too. Spark Connect's client
(`pyspark.sql.connect`, which needs grpc) is imported only when an `sc://` target is asked for.

One JVM holds one SparkContext, so a process has at most one classic session: asking for the same target
reuses it, asking for another master stops it first. Connect sessions are gRPC clients, kept one per URL.
Asking for no master in particular reuses the open session, classic or Connect: the CLI run in-process, or
`run_plan` without a session, never stops the caller's Connect session to start a local one.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import threading
import warnings
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from pyspark import SparkConf, SparkContext
from pyspark.sql import SparkSession
from substrait_spark.consumer.clients import ENGINE_CONF, is_connect
from substrait_spark.consumer.errors import ConfigurationError, SparkUnavailableError, first_line
from substrait_spark.consumer.redact import redact
from substrait_spark.hooks import connect_endpoint
from substrait_spark.hooks.connect_probe import DEFAULT_CONNECT_TIMEOUT_S, connect_timeout, probe
from substrait_spark.hooks.spark_submit import launched_by_spark_submit

log = logging.getLogger(__name__)

QUIET_LOG4J = Path(__file__).with_name("log4j2-quiet.properties")

DEFAULT_MASTER = "local[*]"
DEFAULT_APP_NAME = "substrait-spark"

# Session-level settings on every kind of session we make (classic or Connect, Spark 3.5 or 4.x): the time zone
# (results of timestamp functions depend on it) and what the engine relies on (`ENGINE_CONF`: ANSI mode off, which
# Spark 4 turns on; a run also holds it on sessions it is given, restoring theirs after).
SESSION_CONF = {"spark.sql.session.timeZone": "UTC", **ENGINE_CONF}

DEFAULT_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    **SESSION_CONF,
    # Classic PySpark 4 records the Python call site of every Column call (DataFrame debugging), which doubles
    # translation time; our errors name plan paths instead. A static setting (a Connect server's own business);
    # Spark 3.5 ignores the key.
    "spark.python.sql.dataFrameDebugging.enabled": "false",
    "spark.sql.shuffle.partitions": "8",
    "spark.driver.memory": "2g",
    # Applies when this call starts the JVM. A classic driver always runs in this process (local, standalone,
    # yarn/k8s client mode), so Spark's own startup chatter stays off stderr in every classic case.
    "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={QUIET_LOG4J}",
}

# A Connect server owns its driver: only session-level settings can be sent.
CONNECT_DEFAULT_CONF = dict(SESSION_CONF)

# Masters that are complete without a scheme (Spark's own spellings); anything else without one is a host name.
_BARE_MASTER = re.compile(r"^(local(\[[^\]]*\])?|local-cluster\[[^\]]*\]|yarn(-client|-cluster)?)$", re.IGNORECASE)
_HAS_PORT = re.compile(r":\d+$")
_LIST_KEYS = {"jars": "spark.jars", "packages": "spark.jars.packages"}


def split_list(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """A list given as a comma string (`a.jar,b.jar`), a list, or nothing → a tuple without blanks."""
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else value
    return tuple(s.strip() for s in items if s and s.strip())


def _with_port(authority: str, port: int | None) -> str:
    """Append `port` to each host of an authority that lacks one (`h1,h2` → `h1:7077,h2:7077`)."""
    if not port:
        return authority
    hosts = authority.split(",")
    return ",".join(h if _HAS_PORT.search(h) else f"{h}:{port}" for h in hosts)


def normalize_master(host: str, port: int | str | None = None, default_scheme: str = "spark") -> str:
    """A master URL Spark accepts, from a host field, an optional port and the scheme a bare host means.

    Airflow connections arrive mangled in several ways, all handled here: host `spark://h` with the port apart,
    host `h` with the scheme only in the connection type (`spark://h:7077` as a URI), the scheme doubled
    (`spark://spark://h`), HA lists `spark://h1:7077,h2:7077`, and masters with no host at all (`local[*]`,
    `yarn`). A port already in the URL wins over `port`. `k8s://` wraps a URL; the port goes on the inner one.
    """
    text = (host or "").strip()
    if not text:
        raise ValueError("empty Spark master URL")
    port = int(port) if port else None
    if _BARE_MASTER.match(text):
        return text
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = default_scheme, text
    scheme = scheme.lower()
    while rest.lower().startswith(f"{scheme}://"):  # spark://spark://h
        rest = rest[len(scheme) + 3 :]
    if scheme == "k8s":
        inner = rest if "://" in rest else f"https://{rest}"
        return f"k8s://{normalize_master(inner, port, default_scheme='https')}"
    # The authority ends at the path ("/...") or at Connect's parameters (";token=...").
    cut = min((i for i in (rest.find("/"), rest.find(";")) if i >= 0), default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    if not authority:
        raise ValueError(f"Spark master URL without a host: {redact(text)!r}")
    if scheme != "sc" and tail == "/":
        tail = ""
    return f"{scheme}://{_with_port(authority, port)}{tail}"


@dataclass(frozen=True)
class SparkTarget:
    """Where and how to run: a master (`local[*]`, `spark://…`, `yarn`, `k8s://…`) or a Connect URL (`sc://…`).

    `master=None` means "whatever session this process already has, else `local[*]`", which is what the CLI
    and tests want: the running classic session, or, when there is none, an open Spark Connect session (never
    stopped to start a local one: a session the caller made is theirs). The URL is not shown by `repr` (a
    Connect URL may carry a token); use `display`. `connect_timeout`: seconds a Spark Connect server has to answer
    before the session is refused (`SparkUnavailableError`). A Connect URL's `;session_id=<uuid>` addresses one
    server-side session (`session_id`, `with_session`): a later process reaches the same session through it.
    """

    master: str | None = field(default=None, repr=False)
    conf: Mapping[str, str] = field(default_factory=dict, repr=False)
    jars: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()
    app_name: str = DEFAULT_APP_NAME
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_S

    @classmethod
    def parse(
        cls,
        url: str | None,
        port: int | str | None = None,
        *,
        conf: Mapping[str, Any] | None = None,
        jars: str | Iterable[str] | None = None,
        packages: str | Iterable[str] | None = None,
        app_name: str | None = None,
        default_scheme: str = "spark",
        connect_timeout: float | str | None = None,
    ) -> SparkTarget:
        """A target from loose strings: a URL or bare host (+ port), conf values coerced to strings."""
        master = normalize_master(url, port, default_scheme) if url and url.strip() else None
        if connect_endpoint.is_connect_url(master):
            master = connect_endpoint.checked_url(str(master))
        return cls(
            master=master,
            conf={str(k): conf_str(v) for k, v in (conf or {}).items()},
            jars=split_list(jars),
            packages=split_list(packages),
            app_name=app_name or DEFAULT_APP_NAME,
            connect_timeout=_timeout(connect_timeout),
        )

    @property
    def is_connect(self) -> bool:
        return bool(self.master) and self.master.lower().startswith("sc://")

    @property
    def kind(self) -> str:
        return "connect" if self.is_connect else "classic"

    @property
    def session_id(self) -> str | None:
        """The Spark Connect session the URL addresses (`;session_id=`), None when the server picks one."""
        return connect_endpoint.param(str(self.master), connect_endpoint.SESSION_ID) if self.is_connect else None

    def with_session(self, session_id: str) -> SparkTarget:
        """This Connect target addressing the server-side session `session_id` (a UUID): a session made from it
        shares that session's state (temporary views, settings, running operations) with every other client of it.
        Classic targets have no such session (ConfigurationError), nor does an id that is no UUID."""
        if not self.is_connect:
            raise ConfigurationError(f"{self.display}: only a Spark Connect (sc://) target addresses a session by id")
        sid = connect_endpoint.session_id_value(session_id, f"Spark Connect target {self.display}")
        return replace(self, master=connect_endpoint.with_param(str(self.master), connect_endpoint.SESSION_ID, sid))

    @property
    def display(self) -> str:
        """The URL for logs (token masked)."""
        return redact(self.master) or f"{DEFAULT_MASTER} (or the active session)"

    def spark_conf(self) -> dict[str, str]:
        """The Spark settings to apply: defaults for this kind, then `conf`, then `jars`/`packages` merged in."""
        if self.is_connect:  # jars belong to the Connect server (or `addArtifacts`), not to session conf
            return {**CONNECT_DEFAULT_CONF, **self.conf}
        out = {**DEFAULT_CONF, **self.conf}
        for attr, key in _LIST_KEYS.items():
            extra = getattr(self, attr)
            if extra:
                merged = dict.fromkeys(split_list(out.get(key)) + extra)  # keeps order, drops repeats
                out[key] = ",".join(merged)
        return out

    def __repr__(self) -> str:
        return f"SparkTarget(master={self.display!r}, conf keys={sorted(self.conf)}, app_name={self.app_name!r})"


def _timeout(value: float | str | None) -> float:
    return connect_timeout(value, "connect_timeout")


def conf_str(value: Any) -> str:
    """Spark conf values are strings; Python booleans become `true`/`false` as Spark spells them."""
    return str(value).lower() if isinstance(value, bool) else str(value)


# --------------------------------------------------------------------------------------------------
# Sessions
# --------------------------------------------------------------------------------------------------

_lock = threading.RLock()
_connect_sessions: dict[str, SparkSession] = {}


def _live_classic_session() -> SparkSession | None:
    """The classic session of this process, if its SparkContext is still running."""
    session = SparkSession._instantiatedSession
    return session if session is not None and session._sc._jsc is not None else None


def _same_master(requested: str, running: str) -> bool:
    return requested.strip().lower() == running.strip().lower()


def _switch_to_connect() -> None:
    """Enter Connect mode. pyspark 3.5 picks classic or Connect `functions`/`Column` per process (the
    SPARK_CONNECT_MODE_ENABLED variable), so a classic session cannot stay usable beside a Connect one."""
    active = _live_classic_session()
    if active is not None:
        log.warning(
            "Stopping the Spark session on %s (application %s) to use Spark Connect: one kind of session per process",
            active.sparkContext.master,
            active.sparkContext.applicationId,
        )
        active.stop()
    os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"


def _switch_to_classic() -> None:
    """Leave Connect mode (see `_switch_to_connect`): close this process's Connect sessions."""
    for url, session in list(_connect_sessions.items()):
        log.warning("Closing the Spark Connect session to %s to start a classic one", redact(url))
        with contextlib.suppress(Exception):
            session.stop()
    if _connect_sessions:
        _connect_sessions.clear()
        os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)


def _classic_session(target: SparkTarget) -> SparkSession:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    _switch_to_classic()
    active = _live_classic_session()
    if active is not None:
        running = active.sparkContext.master
        if target.master is None or _same_master(target.master, running):
            return _reuse_classic(active, target)
        log.warning(
            "Stopping the Spark session on %s (application %s) to start one on %s: one SparkContext per process",
            running,
            active.sparkContext.applicationId,
            target.display,
        )
        active.stop()
    conf = _over_launcher(target, launcher_conf())
    if SparkContext._gateway is not None and conf.get("spark.jars.packages"):
        log.warning("spark.jars.packages are resolved when the JVM starts; this process's JVM already runs")
    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    log.info("Started Spark session on %s (application %s)", session.sparkContext.master, _app_id(session))
    return session


def launcher_conf() -> dict[str, str]:
    """What spark-submit configured this driver with (`--master`, `--name`, `--conf`, its properties file); empty
    when this process starts its own JVM."""
    if not launched_by_spark_submit():
        return {}
    SparkContext._ensure_initialized()  # connects to spark-submit's JVM, whose system properties hold its settings
    return dict(SparkConf().getAll())


def _over_launcher(target: SparkTarget, launched: Mapping[str, str]) -> dict[str, str]:
    """The settings a new classic session is built with: the target's, where what it did not ask for (a master,
    an app name, our defaults) gives way to what spark-submit set (`launched`): the application runs on the
    cluster spark-submit was given, under its name and with its tuning."""
    conf = {"spark.master": target.master or DEFAULT_MASTER, "spark.app.name": target.app_name, **target.spark_conf()}
    asked = set(target.conf) | {key for attr, key in _LIST_KEYS.items() if getattr(target, attr)}
    asked |= {"spark.master"} if target.master else set()
    asked |= {"spark.app.name"} if target.app_name != DEFAULT_APP_NAME else set()
    return {key: value for key, value in conf.items() if key in asked or key not in launched}


def _reuse_classic(active: SparkSession, target: SparkTarget) -> SparkSession:
    """Apply the target's own settings (not the defaults) to the running session; jars cannot join late."""
    running_conf = active.sparkContext.getConf()
    for attr, key in _LIST_KEYS.items():
        missing = set(getattr(target, attr)) - set(split_list(running_conf.get(key)))
        if missing:
            log.warning("The running Spark session cannot load %s added later: %s", key, ", ".join(sorted(missing)))
    for key, value in target.conf.items():
        if active.conf.get(key, None) == value:
            continue
        try:  # Spark refuses static and core settings on a running session; any other key is fine
            active.conf.set(key, value)
        except Exception:
            log.warning("Spark setting %s only applies to a new session; the running one keeps its value", key)
    log.debug("Reusing the Spark session on %s", active.sparkContext.master)
    return active


def _remote_builder() -> Any:
    """Spark Connect's session builder; imported here so that classic use never needs the Connect extras."""
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    return RemoteSparkSession.builder


def _is_open(session: SparkSession | None) -> bool:
    return session is not None and not getattr(session.client, "is_closed", False)


def _open_connect_session() -> SparkSession | None:
    """A Spark Connect session this process has open: one made here, else the caller's own (pyspark's active
    Connect session). Without the Connect client's module imported there is none."""
    ours = next((s for s in _connect_sessions.values() if _is_open(s)), None)
    if ours is not None:
        return ours
    module = sys.modules.get("pyspark.sql.connect.session")
    theirs = module.SparkSession.getActiveSession() if module is not None else None
    return theirs if _is_open(theirs) else None


def _reuse_connect(session: SparkSession, target: SparkTarget) -> SparkSession:
    """Apply the target's own settings (not the defaults) to an open Connect session."""
    for key, value in target.conf.items():
        session.conf.set(key, value)
    return session


def _connect_session(target: SparkTarget) -> SparkSession:
    assert target.master is not None
    with _lock:
        session = _connect_sessions.get(target.master)
        if session is not None and _is_open(session):
            return _reuse_connect(session, target)
        url = connect_endpoint.transport_url(target.master)  # never logged: it holds the token
        # Before anything changes in this process (a classic session stopped): pyspark would retry for ten minutes.
        probe(url, target.display, target.connect_timeout)
        _switch_to_connect()
        if target.jars or target.packages:
            log.warning("Spark Connect: jars and packages are the server's; ignored for %s", target.display)
        builder = _remote_builder().remote(url)
        for key, value in target.spark_conf().items():
            builder = builder.config(key, value)
        session = _answering(builder, target)
        _connect_sessions[target.master] = session
        log.info("Connected to Spark Connect at %s", target.display)
        return session


# What a refusing server's gRPC status means for the user; any other failure: the server is no Spark Connect.
_REFUSALS = {
    "UNAUTHENTICATED": "the server refused the credentials (a wrong or missing token: `;token=` in the URL, the "
    "connection's password)",
    "PERMISSION_DENIED": "the server refused this user (user_id) or token",
}
_NOT_CONNECT = "the server does not answer as Spark Connect"
_GRPC_STATUS = re.compile(r"status = StatusCode\.(\w+)")
_GRPC_DETAILS = re.compile(r'details = "([^"]*)"')


def _refusal(exc: BaseException) -> str:
    """Why the server refused, in one line: the gRPC status and details when the client's error carries them
    (pyspark prints an `_InactiveRpcError` over several lines), else the error's first line."""
    text = str(exc)
    status, details = _GRPC_STATUS.search(text), _GRPC_DETAILS.search(text)
    if status is None:
        return f"{_NOT_CONNECT}: {first_line(exc)}"
    said = redact(f"{status[1]}: {details[1]}" if details else status[1])
    return f"{_REFUSALS.get(status[1], _NOT_CONNECT)}: {said}"


def _answering(builder: Any, target: SparkTarget) -> SparkSession:
    """The session of `builder` once its server has answered one request (its Spark version): a gRPC server that
    is not Spark Connect, or that refuses the token, fails here in one line naming the endpoint (token masked), not
    at the run's first query. pyspark 4 calls the server while creating the session; pyspark 3.5 warns about each
    setting it could not send and goes on: its warnings are held until the server has answered."""
    session: SparkSession | None = None
    try:
        with warnings.catch_warnings(record=True) as held:  # what the filters let through, held back
            session = builder.create()
            log.debug("Spark Connect at %s runs Spark %s", target.display, session.version)
    except Exception as exc:
        if session is not None:
            with contextlib.suppress(Exception):
                session.stop()
        raise SparkUnavailableError(f"Spark Connect at {target.display}: {_refusal(exc)}") from None
    for warning in held:
        log.warning("Spark Connect at %s: %s", target.display, redact(str(warning.message)))
    return session


_SESSION_FACTORIES = {"classic": _classic_session, "connect": _connect_session}


def _running_connect_for(target: SparkTarget) -> SparkSession | None:
    """The open Connect session a target without a master reuses: when no classic session runs (SparkTarget)."""
    if target.master is not None or _live_classic_session() is not None:
        return None
    return _open_connect_session()


def session_for(target: SparkTarget) -> SparkSession:
    """The session for `target`: the running one when it fits, else a new one (see the module docstring)."""
    with _lock:
        running = _running_connect_for(target)
        if running is not None:
            return _reuse_connect(running, target)
        return _SESSION_FACTORIES[target.kind](target)


def get_session(
    master: str | None = None,
    conf: Mapping[str, Any] | None = None,
    app_name: str = DEFAULT_APP_NAME,
    *,
    jars: str | Iterable[str] | None = None,
    packages: str | Iterable[str] | None = None,
    connect_timeout: float | str | None = None,
) -> SparkSession:
    """A SparkSession for `master` (default: the active session, else `local[*]`); `sc://` URLs use Spark Connect,
    refused (`SparkUnavailableError`) when no server answers within `connect_timeout` seconds (default 20)."""
    target = SparkTarget.parse(
        master, conf=conf, jars=jars, packages=packages, app_name=app_name, connect_timeout=connect_timeout
    )
    return session_for(target)


def active_session(target: SparkTarget | None = None) -> SparkSession | None:
    """The session `target` would reuse, without starting one (for cancelling from another thread)."""
    if target is not None and target.is_connect:
        return _connect_sessions.get(target.master or "")
    session = _live_classic_session() or _running_connect_for(target or SparkTarget())
    if session is None or target is None or target.master is None:
        return session
    return session if _same_master(target.master, session.sparkContext.master) else None


def _app_id(spark: SparkSession) -> str | None:
    try:
        return spark.conf.get("spark.app.id", None)
    except Exception:  # a Connect server that refuses the lookup
        return None


def application_id(spark: SparkSession) -> str | None:
    """Spark's application id (`local-…`, `app-…` on a standalone cluster, `application_…` on YARN)."""
    if is_connect(spark):
        return _app_id(spark)
    return spark.sparkContext.applicationId


# --------------------------------------------------------------------------------------------------
# Job groups: tag every job a block starts, so that exactly those jobs can be cancelled
# --------------------------------------------------------------------------------------------------


class _GroupOps(Protocol):
    def enter(self, spark: Any, group_id: str, description: str) -> Any: ...
    def leave(self, spark: Any, group_id: str, saved: Any) -> None: ...
    def cancel(self, spark: Any, group_id: str) -> None: ...


_GROUP_PROPERTIES = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")


class _ClassicGroups:
    """Job groups are thread-local properties (PySpark pins each Python thread to a JVM thread)."""

    def enter(self, spark: Any, group_id: str, description: str) -> dict[str, str | None]:
        sc = spark.sparkContext
        saved = {key: sc.getLocalProperty(key) for key in _GROUP_PROPERTIES}
        sc.setJobGroup(group_id, description, interruptOnCancel=True)
        return saved

    def leave(self, spark: Any, group_id: str, saved: dict[str, str | None]) -> None:
        sc = spark.sparkContext
        if sc._jsc is None:  # the session was stopped inside the block
            return
        for key, value in saved.items():  # None removes the property: later jobs are not tagged
            sc.setLocalProperty(key, value)

    def cancel(self, spark: Any, group_id: str) -> None:
        spark.sparkContext.cancelJobGroup(group_id)


class _ConnectGroups:
    """Spark Connect has operation tags instead (thread-local on the client)."""

    def enter(self, spark: Any, group_id: str, description: str) -> bool:
        already = group_id in spark.getTags()
        spark.addTag(group_id)
        return already

    def leave(self, spark: Any, group_id: str, saved: bool) -> None:
        if not saved:
            spark.removeTag(group_id)

    def cancel(self, spark: Any, group_id: str) -> None:
        interrupted = spark.interruptTag(group_id)
        if interrupted:
            log.info("Interrupted Spark Connect operations %s (tag %s)", ", ".join(interrupted), group_id)


_GROUP_OPS: dict[bool, _GroupOps] = {False: _ClassicGroups(), True: _ConnectGroups()}


def _check_group_id(group_id: str) -> str:
    if not group_id or "," in group_id:  # Connect tags may not hold commas; keep both kinds alike
        raise ValueError(f"job group id must be non-empty and without commas, got {group_id!r}")
    return group_id


@contextmanager
def job_group(spark: SparkSession, group_id: str, description: str = "") -> Iterator[SparkSession]:
    """Tag every Spark job this thread starts inside the block with `group_id`; restore the previous group after.

    Classic sessions use `setJobGroup(..., interruptOnCancel=True)` so that cancelling interrupts running tasks;
    Connect sessions use operation tags.
    """
    ops = _GROUP_OPS[is_connect(spark)]
    saved = ops.enter(spark, _check_group_id(group_id), description)
    try:
        yield spark
    finally:
        ops.leave(spark, group_id, saved)


def cancel_job_group(spark: SparkSession, group_id: str) -> None:
    """Cancel the jobs of `group_id` (running and queued); jobs of other groups go on. Safe from any thread."""
    log.info("Cancelling Spark job group %s", group_id)
    _GROUP_OPS[is_connect(spark)].cancel(spark, _check_group_id(group_id))
