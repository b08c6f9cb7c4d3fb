"""The one composition root of a run: from plain settings to a checked plan, a Spark session, a RunReport and its
audit record. Every front end (the CLI, `run_plan`, the Airflow operator, Dagster, Pipes) builds its `PlanRunner`
here and runs a plan through the one run sequence over it (`hooks/run_sequence.PlanRun`); a Dagster resource can
hold `RunSettings` as they are (plain values only).

The order is the one issue 13 set: read the plan (plan store), check its sha256 pin, parse it (within the
engine's size and depth bounds, or the policy's lower ones: `consumer/loading/limits.py`) and check it (the
policy, with views expanded through the catalogs: `consumer/analysis/policy.py`; then `preflight`: validate,
check the tables read where the resolver chain finds them without Spark (`consumer/running/table_check.py`) and
bind the parameters) — all before a Spark session is asked for; then the catalogs, the
resolver chain, the session (with the catalogs' Spark settings), the write targets, the run, the audit record.

Defaults (one set, for every front end): no table maps, no catalogs, no audit log unless a catalog is configured
(then the Iceberg table `substrait_spark.audit_log` of the default catalog) or `audit_log` says where, the running
Spark session of the process or else `local[*]`, no run key (write steps are then not retry-safe), lossy casts
to the plan's declared types refused.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from substrait_spark.consumer.errors import ExitCode, SubstraitSparkError, UnboundParameterError
from substrait_spark.consumer.loading.limits import DEFAULT_LIMITS, Limits, PlanTooLargeError
from substrait_spark.hooks.plan_store import PlanObject, PlanStore, check_sha256

if TYPE_CHECKING:  # importing this module stays cheap: PySpark and the consumer come with the first plan
    from pyspark.sql import SparkSession
    from substrait_spark.consumer.analysis.policy import Policy, Violation
    from substrait_spark.consumer.loading.loader import LoadedPlan
    from substrait_spark.consumer.running.connect_operations import Ledger
    from substrait_spark.consumer.running.report import RunReport
    from substrait_spark.consumer.running.resolver import TableBinding, TableMapResolver
    from substrait_spark.consumer.running.sinks import Sink
    from substrait_spark.consumer.running.table_check import TableCheck
    from substrait_spark.consumer.tables import TableResolver
    from substrait_spark.hooks.audit import AuditContext, AuditLog, AuditResult
    from substrait_spark.hooks.iceberg import Catalogs

# Exit codes whose errors another try cannot fix: invalid input, unsupported feature, refused by policy. Front ends
# fail such a run without retrying (an Airflow task, a Dagster step).
NOT_RETRYABLE = frozenset({ExitCode.INVALID_INPUT, ExitCode.UNSUPPORTED, ExitCode.REFUSED_BY_POLICY})

PlanSource = str | os.PathLike[str] | bytes | PlanObject
# Given `PlanRunner.catalog_conf` (packages already on the session → the catalogs' Spark settings).
SessionFactory = Callable[[Callable[[Sequence[str]], dict[str, str]]], "SparkSession"]


@dataclass(frozen=True)
class RunSettings:
    """What runs are built from, as plain values (a Dagster resource's or an operator's configuration).

    `tables`: name → `URI[:FORMAT]` or `{uri, format}`; `tables_dir`: `DIR/<name>.parquet` bound to `<name>`;
    `tables_file`: a JSON/YAML table map (tables_dir, then `tables`, then the file: a later one wins a name);
    `catalog_config`: an Iceberg catalog configuration file; `master`/`spark_conf`: the Spark target;
    `connect_timeout`: seconds a Spark Connect `master` has to answer (None: 20);
    `expected_sha256`: the plan's pinned digest; `audit_log`/`audit_strict`: see `hooks/audit.py`;
    `update_keys`: table → key columns of UPDATE writes; `cast_to_plan_types`: allow lossy casts (noted);
    `policy`: what plans may read, write and run (`consumer/analysis/policy.py`: a `Policy`, a file's path or
    its keys)."""

    tables: Mapping[str, Any] = field(default_factory=dict)
    tables_dir: str | None = None
    tables_file: str | None = None
    catalog_config: str | None = None
    master: str | None = None
    spark_conf: Mapping[str, Any] = field(default_factory=dict)
    connect_timeout: float | None = None
    expected_sha256: str | None = None
    audit_log: str | Mapping[str, Any] | None = None
    audit_strict: bool = False
    update_keys: Mapping[str, Sequence[str] | str] = field(default_factory=dict)
    cast_to_plan_types: bool = False
    policy: Policy | str | Mapping[str, Any] | None = None


@dataclass
class PlanInput:
    """A plan read, pinned and parsed (`PlanRunner.load`), then checked (`PlanRunner.check`): what a run runs.
    `source`: the object read (version id, ETag), None for a plan given as bytes or a LoadedPlan."""

    loaded: LoadedPlan
    source: PlanObject | None = None


class PlanRunner:
    """Builds and runs plans from `RunSettings`. What a front end brings of its own is passed in: the plan store
    (an Airflow hook's, with its connection), catalogs already built (from Airflow connections), a table map of
    lowest priority (a Spark connection's `tables` extra), a resolver replacing the whole chain (`run_plan`'s),
    how to get a Spark session (an Airflow hook's, a session the caller holds), a policy of its own (an
    Airflow connection's `policy` extra: applied as well as the settings' one, never instead of it), how its
    users give a parameter's value (`bind_hint`, a template of `{anchor}` such as `--param {anchor}=VALUE`: what
    an `UnboundParameterError` says; by default the Python API's `parameters=`), and whether the session's own
    catalog starts empty (`session_catalog_empty`: the CLI's local session; then a table in no table map or
    catalog is missing before Spark starts, else it is left to the session)."""

    def __init__(
        self,
        settings: RunSettings | None = None,
        *,
        store: Any = None,
        catalogs: Catalogs | None = None,
        base_tables: Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None = None,
        resolver: TableResolver | None = None,
        session: SparkSession | SessionFactory | None = None,
        consumer_class: type | None = None,
        base_policy: Policy | str | Mapping[str, Any] | Callable[[], Any] | None = None,
        bind_hint: str | None = None,
        session_catalog_empty: bool = False,
    ):
        self.settings = settings or RunSettings()
        self._store = store
        self._catalogs = catalogs
        self._base_tables = base_tables
        self._resolver = resolver
        self._session = session
        self._consumer_class = consumer_class
        self._base_policy = base_policy
        self._bind_hint = bind_hint
        self._session_catalog_empty = session_catalog_empty

    # --- before Spark ---------------------------------------------------------------------------------------

    @property
    def store(self) -> Any:
        if self._store is None:
            self._store = PlanStore()
        return self._store

    @cached_property
    def policies(self) -> list[Policy]:
        """The run's policies, each applied in full: the front end's own (an Airflow connection's `policy` extra)
        and the settings' (read once; one that cannot be read fails every plan, exit 2)."""
        specs = [self._base_policy() if callable(self._base_policy) else self._base_policy, self.settings.policy]
        if all(spec is None for spec in specs):
            return []
        from substrait_spark.consumer.analysis.policy import Policy

        return [p for p in map(Policy.of, specs) if p is not None]

    @property
    def limits(self) -> Limits:
        """The loader's size and depth bounds: the engine's, lowered by the policies."""
        limits = DEFAULT_LIMITS
        for policy in self.policies:
            limits = policy.limits(limits)
        return limits

    @property
    def max_result_rows(self) -> int | None:
        """The most root rows the policies let a run hand back (None: no bound)."""
        bounds = [p.max_result_rows for p in self.policies if p.max_result_rows is not None]
        return min(bounds) if bounds else None

    def read(self, plan: str | os.PathLike[str]) -> PlanObject:
        """The plan's bytes from the plan store (refused unread when too large), refused unless they have the
        pinned sha256."""
        obj = self.bounded(lambda: self.store.read(plan, limits=self.limits))
        if self.settings.expected_sha256 is not None:
            check_sha256(obj, self.settings.expected_sha256)
        return obj

    def load(self, plan: PlanSource | LoadedPlan) -> PlanInput:
        """`plan` (a path or URI, bytes, a `PlanObject` read already, or a LoadedPlan) read, pinned and parsed."""
        from substrait_spark.consumer.loading.loader import LoadedPlan, parse_plan_bytes

        if isinstance(plan, LoadedPlan):
            return PlanInput(plan)
        if isinstance(plan, bytes | bytearray | memoryview):
            data = bytes(plan)
            return PlanInput(self.bounded(lambda: parse_plan_bytes(data, limits=self.limits)))
        obj = plan if isinstance(plan, PlanObject) else self.read(plan)
        if isinstance(plan, PlanObject) and self.settings.expected_sha256 is not None:
            check_sha256(obj, self.settings.expected_sha256)
        return PlanInput(self.bounded(lambda: parse_plan_bytes(obj.data, uri=obj.uri, limits=self.limits)), obj)

    def bounded(self, read: Callable[[], Any]) -> Any:
        """`read()`, with a bound only the policy set (lower than the engine's) refused as the policy's (exit 5)."""
        try:
            return read()
        except PlanTooLargeError as exc:
            refusal = next(filter(None, (p.refusal(exc, DEFAULT_LIMITS) for p in self.policies)), None)
            if refusal is None:
                raise
            raise refusal from None

    def violations(self, loaded: LoadedPlan) -> list[Violation]:
        """What the policy refuses in a loaded plan (none without a policy): what `validate --policy` lists and
        `check` refuses. Views read through NamedTable are expanded through the catalogs, a NamedTable the table
        maps bind is a read of its files (`read_locations`) — no Spark."""
        if not self.policies:
            return []
        from substrait_spark.consumer.analysis.policy import TableNames

        names: TableNames | None = None
        if self.catalogs:
            from substrait_spark.hooks.policy_names import CatalogNames

            names = CatalogNames(self.catalogs)
        return [v for policy in self.policies for v in policy.check(loaded.plan, loaded.sha256, names, self.binding)]

    @property
    def table_maps(self) -> list[TableMapResolver]:
        """The static table maps of the resolver (its chain's, or the caller's resolver if it is one), in order."""
        from substrait_spark.consumer.running.resolver import ChainResolver, TableMapResolver

        chain = self.resolver
        return [
            r
            for r in (chain.resolvers if isinstance(chain, ChainResolver) else [chain])
            if isinstance(r, TableMapResolver)
        ]

    def binding(self, names: Sequence[str]) -> TableBinding | None:
        """What the table maps bind `names` to, as a run resolves it (the first map binding it wins)."""
        return next(filter(None, (m.binding(names) for m in self.table_maps)), None)

    def check(
        self, plan: PlanInput | PlanSource | LoadedPlan, parameters: Mapping[str | int, Any] | None = None
    ) -> PlanInput:
        """Load `plan` (unless loaded) and check it: everything a run would refuse is refused here, before Spark,
        with a failed report on the error (`exc.report`)."""
        planned = plan if isinstance(plan, PlanInput) else self.load(plan)
        from substrait_spark.consumer.running.runner import preflight  # PySpark's modules: once a plan is loaded

        try:
            preflight(
                planned.loaded,
                parameters=parameters,
                before=self._enforce,
                tables=lambda loaded: self.tables(loaded).raise_first(),
                **self._consumer(),
            )
        except SubstraitSparkError as exc:
            _identify(getattr(exc, "report", None), planned.source)
            self._word(exc)
            raise
        return planned

    def tables(self, loaded: LoadedPlan) -> TableCheck:
        """The plan's NamedTable reads checked where the run resolves them, without Spark (`running/table_check.py`):
        what `validate` lists and `check` refuses."""
        from substrait_spark.consumer.running.table_check import TableCheck, check_tables
        from substrait_spark.consumer.running.table_schemas import SchemaSource

        if not isinstance(self.resolver, SchemaSource):
            return TableCheck(not_checked=[f"tables: {type(self.resolver).__name__} resolves them when the plan runs"])
        return check_tables(loaded.plan, self.resolver, lossy_ok=self.settings.cast_to_plan_types)

    # --- what runs share -------------------------------------------------------------------------------------

    @cached_property
    def catalogs(self) -> Catalogs | None:
        """The Iceberg catalogs: the caller's (e.g. from connections, over the file's), else the file's."""
        if self._catalogs is not None:
            return self._catalogs
        if self.settings.catalog_config:
            from substrait_spark.hooks.iceberg import Catalogs

            return Catalogs.from_file(self.settings.catalog_config)
        return None

    @cached_property
    def resolver(self) -> TableResolver:
        """Static table maps, then the Iceberg catalogs, then Spark's session catalog (or the caller's resolver)."""
        if self._resolver is not None:
            return self._resolver
        from substrait_spark.consumer.running.resolver import ChainResolver, SessionCatalogResolver, TableMapResolver

        s = self.settings
        static = TableMapResolver.from_tables_dir(s.tables_dir) if s.tables_dir else TableMapResolver()
        base = self._base_tables() if callable(self._base_tables) else self._base_tables or {}
        for mapping, source in ((base, "connection tables"), (s.tables or {}, "table map")):
            for name, binding in TableMapResolver.from_mapping(mapping, source).tables.items():
                static.add(name, binding)
        if s.tables_file:
            for name, binding in TableMapResolver.from_file(s.tables_file).tables.items():
                static.add(name, binding)
        chain: list[Any] = [static]
        if self.catalogs:
            from substrait_spark.hooks.iceberg import IcebergCatalogResolver

            chain.append(IcebergCatalogResolver(self.catalogs))
        return ChainResolver([*chain, SessionCatalogResolver(known_empty=self._session_catalog_empty)])

    def catalog_conf(self, packages: Sequence[str] = ()) -> dict[str, str]:
        """The Spark settings the catalogs need (Iceberg's jars unless `packages` bring Iceberg)."""
        if not self.catalogs:
            return {}
        from substrait_spark.hooks.iceberg import session_conf

        return session_conf(self.catalogs, packages=packages)

    @cached_property
    def spark(self) -> SparkSession:
        """The session: the caller's, from the caller's factory, else `master` (the running one, else local[*]);
        with the catalogs registered and loadable on it (`Catalogs.check_session`: a session of this process
        started without Iceberg's jars is refused before the run, with the fix)."""
        session = self._new_session()
        if self.catalogs:
            self.catalogs.check_session(session)
        return session

    def _new_session(self) -> SparkSession:
        if callable(self._session):  # a factory (a session is not callable)
            return self._session(self.catalog_conf)
        if self._session is not None:
            return self._session
        from substrait_spark.hooks.spark import get_session

        s = self.settings
        return get_session(s.master, {**s.spark_conf, **self.catalog_conf()}, connect_timeout=s.connect_timeout)

    @cached_property
    def targets(self) -> Any:
        """Where write and DDL steps commit: the catalogs' tables (none without catalogs)."""
        if not self.catalogs:
            return None
        from substrait_spark.hooks.iceberg_writes import IcebergWriteTargets

        return IcebergWriteTargets(self.catalogs)

    @cached_property
    def audit(self) -> AuditLog | None:
        """The audit log (`hooks/audit.py`: `audit_log`, else the default table when catalogs are configured)."""
        from substrait_spark.hooks.audit import AuditLog

        if AuditLog.off(self.settings.audit_log):  # the catalogs are not needed (nor built) to know
            return None
        return AuditLog.from_spec(self.settings.audit_log, self.catalogs, strict=self.settings.audit_strict)

    # --- the run ----------------------------------------------------------------------------------------------

    def run(
        self,
        checked: PlanInput,
        *,
        parameters: Mapping[str | int, Any] | None = None,
        run_key: str | None = None,
        sink: Sink | None = None,
        slot: int = 0,
        ledger: Ledger | None = None,
    ) -> RunReport:
        """Run a checked plan into `sink` (default: run and count). Typed errors carry the failed report. `slot`:
        the plan's place in a batch of plans sharing `run_key` (the CLI's), part of its write steps' keys.
        `ledger`: a durable run's (`hooks/durable.py`); the report says whether a later try can resume it."""
        from substrait_spark.consumer.running.runner import run_loaded

        s = self.settings
        if sink is not None and sink.kind == "preview":
            for policy in self.policies:
                policy.result_rows(sink.max_rows, "the run's preview of root rows")
        try:
            report = run_loaded(
                checked.loaded,
                self.spark,
                self.resolver,
                sink=sink,
                parameters=parameters,
                run_key=run_key,
                slot=slot,
                targets=self.targets,
                update_keys=s.update_keys,
                cast_to_plan_types=s.cast_to_plan_types,
                ledger=ledger,
                **self._consumer(),
            )
        except SubstraitSparkError as exc:
            _identify(getattr(exc, "report", None), checked.source, ledger)
            self._word(exc)
            raise
        _identify(report, checked.source, ledger)
        return report

    def record(self, report: RunReport | Mapping[str, Any], context: AuditContext) -> AuditResult | None:
        """The run's audit record (None without an audit log, logged why); never raises unless the log is strict:
        a log that cannot be set up is a warning and a note in the report (`hooks/audit.record_run`)."""
        from substrait_spark.hooks.audit import record_run

        s = self.settings
        return record_run(report, context, lambda: self.audit, s.audit_log, strict=s.audit_strict)

    def _enforce(self, loaded: LoadedPlan) -> None:
        violations = self.violations(loaded)
        if violations:
            from substrait_spark.consumer.analysis.policy import PolicyRefusedError

            raise PolicyRefusedError(violations)

    def _word(self, exc: SubstraitSparkError) -> None:
        """An unbound parameter's error in this front end's words (`bind_hint`)."""
        if self._bind_hint is not None and isinstance(exc, UnboundParameterError):
            exc.bind_with(self._bind_hint)

    def _consumer(self) -> dict[str, Any]:
        return {"consumer_class": self._consumer_class} if self._consumer_class is not None else {}


def _identify(report: Any, obj: PlanObject | None, ledger: Ledger | None = None) -> None:
    """The object-store identity of the bytes read, and in a durable run whether it is durable, on the report."""
    if report is None:
        return
    if obj is not None:
        report.plan_version_id, report.plan_etag = obj.version_id, obj.etag
    if ledger is not None:
        from substrait_spark.consumer.running.report import Durability

        report.durability = Durability.DURABLE if report.spark_connect is not None else Durability.CLASSIC
