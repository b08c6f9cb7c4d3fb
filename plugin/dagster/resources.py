"""Dagster resources: where plans are read, which Iceberg catalogs they see, which Spark runs them.

Each holds plain values only (what `hooks/plan_run.RunSettings` takes), so a `defs.yaml` or the UI's launchpad can
configure it; `SubstraitSparkResource` puts the three together and builds a `PlanRunner` — the same composition
root the CLI, `run_plan` and the Airflow operator use.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dagster import ConfigurableResource, InitResourceContext
from dagster_aws.s3 import S3Resource
from pydantic import Field, PrivateAttr
from substrait_spark.consumer.loading.limits import DEFAULT_LIMITS, Limits
from substrait_spark.hooks.plan_run import PlanRunner, RunSettings
from substrait_spark.hooks.plan_store import PlanObject, PlanStore
from substrait_spark.materializations import DAGSTER_BIND_HINT

if TYPE_CHECKING:
    from dagster import AssetCheckResult, AssetExecutionContext, MaterializeResult
    from pyspark.sql import SparkSession
    from substrait_spark.dagster.run import SubstraitRun
    from substrait_spark.hooks.iceberg import Catalogs


class SparkResource(ConfigurableResource):
    """A Spark session: `local[*]`, a standalone `spark://host:port` or Spark Connect `sc://host:port`.

    One session per process (`hooks/spark.get_session` reuses the running one for the same master); a session this
    resource started is stopped when the run's execution ends, a session it found running is left alone. Nothing
    here reaches `sparkContext`, so it works on Spark Connect (where dagster-pyspark's resource does not)."""

    master: str | None = Field(default=None, description="local[*] (default), spark://host:port or sc://host:port")
    conf: dict[str, str] = Field(default_factory=dict, description="Spark settings, e.g. spark.sql.shuffle.partitions")
    connect_timeout: float | None = Field(
        default=None, description="seconds a Spark Connect server (sc://) has to answer before the run fails (20)"
    )
    _started: Any = PrivateAttr(default=None)

    def session(self, extra_conf: Mapping[str, str] | None = None) -> SparkSession:
        """The session, with `extra_conf` (the catalogs' settings) on top of `conf`."""
        from substrait_spark.hooks.spark import SparkTarget, active_session, get_session

        conf = {**self.conf, **(extra_conf or {})}
        before = active_session(SparkTarget.parse(self.master, conf=conf))
        session = get_session(self.master, conf, connect_timeout=self.connect_timeout)
        if before is None:
            self._started = session
        return session

    def teardown_after_execution(self, context: InitResourceContext) -> None:
        if self._started is not None:
            self._started.stop()
            self._started = None


class PlanStoreResource(ConfigurableResource):
    """Where plans are read: paths, `file://`, `s3://bucket/key[?versionId=…]`, `gs://bucket/object[#generation]`
    and `az://container/blob[?versionid=…]`. S3 goes through dagster-aws's `S3Resource` client when one is given (its
    endpoint, credentials and region), else boto3's own chain; GCS and Azure through fsspec (gcsfs, adlfs) with
    `storage_options` per scheme, else their clients' environment."""

    s3: S3Resource | None = None
    retries: int = Field(default=3, description="extra attempts after transient S3 failures")
    storage_options: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="fsspec options per scheme, e.g. {az: {connection_string: …}}, {gs: {token: …, project: …}}; "
        "give secrets as EnvVar",
    )

    def store(self) -> PlanStore:
        s3 = self.s3
        return PlanStore(
            s3_client=s3.get_client if s3 is not None else None,
            retries=self.retries,
            storage_options=self.storage_options,
        )

    def read(self, uri: str, expected_sha256: str | None = None, limits: Limits = DEFAULT_LIMITS) -> PlanObject:
        """The plan's bytes (refused unread beyond `limits`), refused unless they have `expected_sha256`."""
        return self.store().read(uri, expected_sha256, limits=limits)


class IcebergCatalogsResource(ConfigurableResource):
    """Iceberg catalogs: the YAML file the CLI's `--catalog-config` reads (`config_path`), or its content inline
    (`config`: `{default: NAME, catalogs: {NAME: {type: sql, uri: …, warehouse: …}}}`)."""

    config_path: str | None = None
    config: dict[str, Any] | None = None

    def catalogs(self) -> Catalogs | None:
        from substrait_spark.hooks.iceberg import Catalogs

        if self.config:
            return Catalogs.from_mapping(self.config, "catalogs resource config")
        return Catalogs.from_file(self.config_path) if self.config_path else None


class SubstraitSparkResource(ConfigurableResource):
    """Everything a plan's run needs: the plan store, the catalogs, Spark, table maps and the run's policies (the
    fields of `RunSettings`). `runner()` is the shared run path (`hooks/plan_run.PlanRunner`); `run()` is what
    an asset of `substrait_assets` does when it materializes."""

    spark: SparkResource = Field(default_factory=SparkResource)
    plan_store: PlanStoreResource = Field(default_factory=PlanStoreResource)
    catalogs: IcebergCatalogsResource = Field(default_factory=IcebergCatalogsResource)
    tables: dict[str, Any] = Field(default_factory=dict, description="name → URI[:FORMAT] or {uri, format}")
    tables_dir: str | None = Field(default=None, description="DIR/<name>.parquet bound to <name>")
    tables_file: str | None = None
    audit_log: str | None = Field(default=None, description="iceberg:NS.TABLE, jsonl:/path or off (hooks/audit.py)")
    audit_strict: bool = False
    update_keys: dict[str, list[str]] = Field(default_factory=dict)
    cast_to_plan_types: bool = False
    policy: dict[str, Any] | None = Field(
        default=None, description="what plans may read, write and run (docs/reference/policy.md)"
    )
    policy_file: str | None = Field(default=None, description="a policy file (YAML/JSON), applied as well as `policy`")
    durable: bool = Field(
        default=True,
        description="keep what a re-execution needs in the Dagster instance: after the run's worker died, a "
        "re-execution from failure reattaches to the Spark Connect operations it left running instead of "
        "submitting them again (classic Spark cannot be durable: the report says so)",
    )

    def settings(self, expected_sha256: str | None = None) -> RunSettings:
        return RunSettings(
            tables=self.tables,
            tables_dir=self.tables_dir,
            tables_file=self.tables_file,
            catalog_config=self.catalogs.config_path,
            master=self.spark.master,
            spark_conf=self.spark.conf,
            connect_timeout=self.spark.connect_timeout,
            expected_sha256=expected_sha256,
            audit_log=self.audit_log,
            audit_strict=self.audit_strict,
            update_keys=self.update_keys,
            cast_to_plan_types=self.cast_to_plan_types,
            policy=self.policy,
        )

    def runner(self, expected_sha256: str | None = None) -> PlanRunner:
        """A run built from this resource: its plan store, its catalogs, its Spark session."""
        return PlanRunner(
            self.settings(expected_sha256),
            store=self.plan_store.store(),
            catalogs=self.catalogs.catalogs(),
            session=self._session,
            base_policy=self.policy_file,
            bind_hint=DAGSTER_BIND_HINT,
        )

    def run(self, context: AssetExecutionContext, plan: SubstraitRun) -> Iterator[AssetCheckResult | MaterializeResult]:
        """Materialize `plan` (`run.SubstraitRun`, what the asset holds): its blocking `plan_valid` check of every
        asset, then a `MaterializeResult` per table the run changed (and the root result's), with the lineage of
        the plan this run read (`run.execute`). A typed error fails the step as a `Failure` (not retried when
        another try cannot fix it)."""
        from substrait_spark.dagster.run import execute

        yield from execute(self, context, plan)

    def _session(self, catalog_conf: Any) -> SparkSession:
        """The Spark resource's session with the catalogs' settings (Iceberg's jars unless `spark.jars.packages`
        brings Iceberg)."""
        packages: Sequence[str] = [p for p in self.spark.conf.get("spark.jars.packages", "").split(",") if p]
        return self.spark.session(catalog_conf(packages))
