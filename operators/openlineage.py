"""OpenLineage for `SubstraitSparkOperator`: what a run read, wrote and derived, as the provider's OperatorLineage.

Naming follows OpenLineage's Spark integration (`IcebergHandler.getDatasetIdentifier` in
integration/spark/spark3/.../catalog/iceberg), so a table reads the same here and under Spark's own listener:

- an Iceberg table is its location (`PathUtils.fromPath` → `FilesystemDatasetUtils`): namespace `file` and the
  absolute path for local tables, namespace `s3://bucket` and the key path for object stores; the location is
  the `location` of the table's metadata (the metadata file the run report names);
- with a `symlinks` facet of type TABLE naming it in its catalog: `namespace.table` in the catalog's namespace
  (Iceberg's JDBC catalog: the JDBC URL without `jdbc:`, credentials and query — `postgres://host:port` with the
  database prefixed to the name for PostgreSQL; REST: the catalog URI; Hive: `hive://host:port`; else the
  warehouse);
- the dataset version is the snapshot id.

Table-map files are named by their URI the same way; anything else (Spark's session catalog) by its identity in
the namespace `substrait`.

Lineage never fails nor holds up the task: every OpenLineage import is inside a function, and each entry point
logs what went wrong and returns an empty OperatorLineage.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any
from urllib.parse import urlsplit

from substrait_spark.consumer.running.report import RunReport, plain

log = logging.getLogger(__name__)

PRODUCER = "https://github.com/substrait-spark/substrait-spark"
PLAN_FACET_SCHEMA = "https://substrait-spark.dev/openlineage/SubstraitPlanJobFacet.json#/$defs/SubstraitPlanJobFacet"
RUN_FACET_SCHEMA = "https://substrait-spark.dev/openlineage/SubstraitRunFacet.json#/$defs/SubstraitRunFacet"
PLAN_FACET = "substrait_plan"
RUN_FACET = "substrait_run"
DEFAULT_NAMESPACE = "substrait"


def _empty() -> Any:
    from airflow.providers.openlineage.extractors import OperatorLineage

    return OperatorLineage()


def guarded(what: str, build: Callable[[], Any]) -> Any:
    """`build()`, or an empty OperatorLineage (logged) if anything goes wrong — lineage never fails a task."""
    try:
        return build()
    except Exception:
        log.warning("OpenLineage: could not compute the %s lineage; emitting none", what, exc_info=True)
        try:
            return _empty()
        except Exception:  # the provider is not installed: nothing would ask us anyway
            return None


# --- custom facets ------------------------------------------------------------------------------------------


@cache
def facet_classes() -> tuple[type, type]:
    """(SubstraitPlanJobFacet, SubstraitRunFacet), defined on first use (openlineage imported lazily)."""
    import attr
    from openlineage.client.facet_v2 import JobFacet, RunFacet

    @attr.define
    class SubstraitPlanJobFacet(JobFacet):
        """The plan a job runs: where it is, which object version, its bytes' sha256, who produced it."""

        uri: str | None = attr.field(default=None)
        versionId: str | None = attr.field(default=None)
        sha256: str | None = attr.field(default=None)
        planProducer: str | None = attr.field(default=None)  # the plan's producer (`producer` is the facet's own)
        specVersion: str | None = attr.field(default=None)

        @staticmethod
        def _get_schema() -> str:
            return PLAN_FACET_SCHEMA

    @attr.define
    class SubstraitRunFacet(RunFacet):
        """What the run did: status, Spark application, its steps (kind, target, rows, snapshots)."""

        status: str | None = attr.field(default=None)
        sparkApplicationId: str | None = attr.field(default=None)
        durationS: float | None = attr.field(default=None)
        steps: list[dict[str, Any]] = attr.field(factory=list)
        error: dict[str, Any] | None = attr.field(default=None)

        @staticmethod
        def _get_schema() -> str:
            return RUN_FACET_SCHEMA

    return SubstraitPlanJobFacet, SubstraitRunFacet


def plan_facet(report: RunReport) -> Any:
    plan_cls, _ = facet_classes()
    return _with_producer(
        plan_cls(
            uri=report.plan_uri,
            versionId=report.plan_version_id,
            sha256=report.plan_sha256,
            planProducer=report.producer,
            specVersion=report.spec_version,
        )
    )


def _with_producer(facet: Any) -> Any:
    facet._producer = PRODUCER
    return facet


def run_facet(report: RunReport) -> Any:
    _, run_cls = facet_classes()
    steps = [
        plain(
            {
                "kind": s.kind,
                "target": s.target,
                "status": s.status,
                "skip": s.skip,
                "rows": s.rows,
                "snapshotBefore": s.snapshot_before,
                "snapshotAfter": s.snapshot_after,
            }
        )
        for s in report.steps
    ]
    return _with_producer(
        run_cls(
            status=report.status.value,
            sparkApplicationId=report.spark_application_id,
            durationS=report.duration_s,
            steps=steps,
            error=plain(report.error),
        )
    )


# --- naming -------------------------------------------------------------------------------------------------


def location_dataset(location: str) -> tuple[str, str]:
    """A storage location as OpenLineage's filesystem naming has it: (`file`, /abs/path) or (`s3://b`, key)."""
    parts = urlsplit(location)
    scheme = parts.scheme.lower()
    if scheme in ("", "file"):
        path = parts.path if scheme else location
        return "file", "/" + path.lstrip("/") if path else "/"
    if scheme == "s3a" or scheme == "s3n":
        scheme = "s3"
    name = parts.path.strip("/") or "/"
    return f"{scheme}://{parts.netloc}", name


def catalog_symlink(config: Any, table: str) -> tuple[str, str] | None:
    """The catalog-side name of `table` (`namespace.table`) as Spark's Iceberg catalog handlers give it."""
    if config is None:
        return None
    conf = config.spark_conf()
    prefix = f"spark.sql.catalog.{config.name}."
    props = {k[len(prefix) :]: v for k, v in conf.items() if k.startswith(prefix)}
    kind = (props.get("type") or config.properties.get("type") or "").lower()
    uri = props.get("uri") or ""
    if kind == "jdbc" or uri.lower().startswith("jdbc:"):
        url = re.sub(r"^jdbc:", "", uri, flags=re.IGNORECASE)
        url = url.split("?", 1)[0]
        parts = urlsplit(url)
        if parts.scheme.startswith("postgres"):
            host = parts.hostname or "localhost"
            database = parts.path.strip("/")
            return f"postgres://{host}:{parts.port or 5432}", f"{database}.{table}" if database else table
        if parts.netloc and "@" in parts.netloc:  # drop credentials
            url = url.replace(parts.netloc, parts.netloc.rsplit("@", 1)[1], 1)
        return url, table
    if kind == "hive" and uri:
        parts = urlsplit(uri)
        return f"hive://{parts.hostname}:{parts.port or 9083}", table
    if uri:
        return uri.rstrip("/"), table
    warehouse = props.get("warehouse") or config.properties.get("warehouse")
    return (warehouse.rstrip("/"), table) if warehouse else None


# --- datasets -----------------------------------------------------------------------------------------------


class Namer:
    """Resolves the run's tables to OpenLineage datasets, loading Iceberg metadata once per table."""

    def __init__(self, catalogs: Any = None):
        self.catalogs = catalogs

    def _config(self, catalog: str | None) -> Any:
        if not catalog or self.catalogs is None:
            return None
        return self.catalogs.find(catalog)

    def static_table(self, metadata_location: str, catalog: str | None) -> Any:
        from pyiceberg.table import StaticTable

        config = self._config(catalog)
        props = dict(config.properties) if config is not None else {}
        return StaticTable.from_metadata(metadata_location, properties=props)

    def current_table(self, identity: str, catalog: str | None) -> Any:
        """The table as it is now (after the run), or None if it is gone or not an Iceberg table."""
        config = self._config(catalog)
        if config is None:
            return None
        ident = identity.split(".")[1:] if identity.split(".")[0].lower() == config.name.lower() else identity
        try:
            return self.catalogs.load(config.name).load_table(tuple(ident))
        except Exception:
            return None

    def iceberg_dataset(self, identity: str, catalog: str | None, table: Any) -> tuple[str, str, Any]:
        """(namespace, name, symlink facet or None) of an Iceberg table (its location), or by identity."""
        from openlineage.client.facet_v2 import symlinks_dataset

        short = (
            identity.split(".", 1)[1] if catalog and identity.lower().startswith(catalog.lower() + ".") else identity
        )
        link = catalog_symlink(self._config(catalog), short)
        if table is not None:
            ns, name = location_dataset(table.metadata.location)
        elif link is not None:
            ns, name = link
        else:
            ns, name = DEFAULT_NAMESPACE, identity
        facet = None
        if link is not None:
            facet = symlinks_dataset.SymlinksDatasetFacet(
                identifiers=[symlinks_dataset.Identifier(namespace=link[0], name=link[1], type="TABLE")],
                producer=PRODUCER,
            )
        return ns, name, facet


def schema_facet(table: Any) -> Any:
    from openlineage.client.facet_v2 import schema_dataset

    fields = [
        schema_dataset.SchemaDatasetFacetFields(name=f.name, type=str(f.field_type), description=f.doc)
        for f in table.schema().fields
    ]
    return schema_dataset.SchemaDatasetFacet(fields=fields, producer=PRODUCER)


def version_facet(snapshot_id: Any) -> Any:
    from openlineage.client.facet_v2 import dataset_version_dataset

    return dataset_version_dataset.DatasetVersionDatasetFacet(datasetVersion=str(snapshot_id), producer=PRODUCER)


def column_lineage_facet(facet: dict[str, Any]) -> Any:
    """consumer/analysis/lineage's columnLineage dict as the client's ColumnLineageDatasetFacet."""
    from openlineage.client.facet_v2 import column_lineage_dataset as cl

    def field(f: dict[str, Any]) -> Any:
        ts = [
            cl.Transformation(
                type=t["type"], subtype=t.get("subtype"), description=t.get("description"), masking=t.get("masking")
            )
            for t in f.get("transformations") or []
        ]
        return cl.InputField(namespace=f["namespace"], name=f["name"], field=f["field"], transformations=ts)

    fields = {n: cl.Fields(inputFields=[field(i) for i in v["inputFields"]]) for n, v in facet["fields"].items()}
    return cl.ColumnLineageDatasetFacet(
        fields=fields, dataset=[field(i) for i in facet.get("dataset") or []], producer=PRODUCER
    )


LIFECYCLE = (  # step kind → LifecycleStateChange (first match wins)
    (("ctas", "create_table", "create_view"), "CREATE"),
    (("create_or_replace", "replace"), "OVERWRITE"),
    (("drop",), "DROP"),
    (("alter",), "ALTER"),
)


def lifecycle(kind: str) -> str | None:
    kind = (kind or "").lower()
    if kind.startswith(("create_or_replace", "replace")):
        return "OVERWRITE"
    for prefixes, change in LIFECYCLE:
        if kind.startswith(prefixes):
            return change
    return None


# --- the lineage ----------------------------------------------------------------------------------------------


def build(
    report: RunReport | Mapping[str, Any], loaded: Any = None, catalogs: Any = None, complete: bool = True
) -> Any:
    """OperatorLineage from a run report (plus the loaded plan for column lineage, the catalogs for metadata)."""
    from airflow.providers.openlineage.extractors import OperatorLineage
    from openlineage.client.event_v2 import InputDataset, OutputDataset
    from openlineage.client.facet_v2 import lifecycle_state_change_dataset as lsc
    from openlineage.client.facet_v2 import output_statistics_output_dataset as stats

    report = RunReport.of(report)
    namer = Namer(catalogs)
    by_name: dict[str, tuple[str, str]] = {}  # the plan's dotted name (lower) -> OL (namespace, name)
    inputs: list[Any] = []
    for t in report.tables_read:
        facets: dict[str, Any] = {}
        identity = t.identity or t.name
        if t.format == "iceberg" or t.metadata_location:
            table = None
            if t.metadata_location:
                try:
                    table = namer.static_table(t.metadata_location, t.catalog)
                except Exception:
                    log.info("OpenLineage: metadata of %s not readable", identity, exc_info=True)
            ns, name, link = namer.iceberg_dataset(identity, t.catalog, table)
            if link is not None:
                facets["symlinks"] = link
            if table is not None:
                facets["schema"] = schema_facet(table)
        elif "://" in str(identity) or str(identity).startswith("/"):
            ns, name = location_dataset(identity)
        else:
            ns, name = DEFAULT_NAMESPACE, identity
        if t.snapshot_id is not None:
            facets["version"] = version_facet(t.snapshot_id)
        elif t.view_version is not None:
            facets["version"] = version_facet(t.view_version)
        by_name[(t.name or identity).lower()] = (ns, name)
        if (ns, name) not in {(i.namespace, i.name) for i in inputs}:
            inputs.append(InputDataset(namespace=ns, name=name, facets=facets))

    # Written tables: one output per target, with the steps' rows and the strongest lifecycle change.
    targets: dict[str, dict[str, Any]] = {}
    for s in report.steps:
        if not s.target or (s.skip and not s.changed):  # a CTAS of an existing table, a DROP of nothing: no output
            continue
        entry = targets.setdefault(s.target, {"rows": 0, "changes": [], "snapshot": None, "paths": []})
        entry["paths"].append(s.path)
        if s.changed:  # committed now or by an earlier try; not a CTAS ignored nor a DROP of nothing
            entry["rows"] += s.rows or 0
            change = lifecycle(s.kind)
            if change:
                entry["changes"].append(change)
            if s.snapshot_after is not None:
                entry["snapshot"] = s.snapshot_after
    out_names: dict[str, tuple[str, str]] = {}
    outputs = []
    for target, entry in targets.items():
        catalog = target.split(".", 1)[0] if namer._config(target.split(".", 1)[0]) is not None else None
        table = namer.current_table(target, catalog) if catalog else None
        facets = {}
        if catalog:
            ns, name, link = namer.iceberg_dataset(target, catalog, table)
            if link is not None:
                facets["symlinks"] = link
        else:
            ns, name = location_dataset(target) if "://" in target else (DEFAULT_NAMESPACE, target)
        if table is not None:
            facets["schema"] = schema_facet(table)
        if entry["snapshot"] is not None:
            facets["version"] = version_facet(entry["snapshot"])
        if entry["changes"]:
            change = "DROP" if entry["changes"][-1] == "DROP" else entry["changes"][0]
            facets["lifecycleStateChange"] = lsc.LifecycleStateChangeDatasetFacet(
                lifecycleStateChange=lsc.LifecycleStateChange(change), producer=PRODUCER
            )
        out_facets: dict[str, Any] = {}
        if complete:
            out_facets["outputStatistics"] = stats.OutputStatisticsOutputDatasetFacet(
                rowCount=entry["rows"], producer=PRODUCER
            )
        out_names[target.lower()] = (ns, name)
        for p in entry["paths"]:
            if p:
                out_names[f"path:{p}"] = (ns, name)
        outputs.append(OutputDataset(namespace=ns, name=name, facets=facets, outputFacets=out_facets))

    # Root results written to a location.
    root_outputs: dict[int, Any] = {}
    for o in report.outputs:
        if o.location:
            ns, name = location_dataset(o.location)
            out_facets = {}
            if complete and o.rows is not None:
                out_facets["outputStatistics"] = stats.OutputStatisticsOutputDatasetFacet(
                    rowCount=o.rows, producer=PRODUCER
                )
            ds = OutputDataset(namespace=ns, name=name, facets={}, outputFacets=out_facets)
            root_outputs[o.index] = ds
            outputs.append(ds)

    if loaded is not None:
        _attach_column_lineage(loaded, by_name, out_names, outputs, root_outputs)

    return OperatorLineage(
        inputs=inputs,
        outputs=outputs,
        run_facets={RUN_FACET: run_facet(report)},
        job_facets={PLAN_FACET: plan_facet(report)},
    )


def _attach_column_lineage(loaded, by_name, out_names, outputs, root_outputs) -> None:
    from substrait_spark.consumer.analysis.lineage import column_lineage

    def names(parts: list[str]) -> tuple[str, str]:
        dotted = ".".join(parts).lower()
        if dotted in by_name:
            return by_name[dotted]
        for target, ds in out_names.items():  # a written table: its identity ends with the plan's name
            if target == dotted or target.endswith("." + dotted):
                return ds
        if len(parts) == 1 and "://" in parts[0]:
            return location_dataset(parts[0])
        return DEFAULT_NAMESPACE, ".".join(parts)

    try:
        lineage = column_lineage(loaded, names=names)
    except Exception:
        log.info("OpenLineage: no column lineage for this plan", exc_info=True)
        return
    index = {(o.namespace, o.name): o for o in outputs}
    for written in lineage.written:
        ds = out_names.get(f"path:{written.path}")
        if ds is None and written.dataset is not None:
            ds = (written.dataset.namespace, written.dataset.name)
        target = index.get(ds) if ds else None
        if target is not None and written.columns:
            target.facets["columnLineage"] = column_lineage_facet(written.facet(producer=PRODUCER))
    for root in lineage.roots:
        target = root_outputs.get(root.index or 0)
        if target is not None:
            target.facets["columnLineage"] = column_lineage_facet(root.facet(producer=PRODUCER))


def report_from_plan(loaded: Any, plan_uri: str | None, version_id: str | None = None) -> RunReport:
    """A run report's identity part, from the plan alone (before the run)."""
    return RunReport(
        plan_uri=getattr(loaded, "uri", None) or plan_uri,
        plan_version_id=version_id,
        plan_sha256=getattr(loaded, "sha256", None),
        producer=getattr(loaded, "producer", None),
        spec_version=getattr(loaded, "spec_version", None),
    )


def on_start(loaded: Any, plan_uri: str | None, version_id: str | None = None) -> Any:
    """Inputs and outputs as the plan names them (nothing resolved yet), and the plan facet."""
    from airflow.providers.openlineage.extractors import OperatorLineage
    from openlineage.client.event_v2 import InputDataset, OutputDataset
    from substrait_spark.consumer.analysis.lineage import column_lineage

    report = report_from_plan(loaded, plan_uri, version_id)
    job_facets = {PLAN_FACET: plan_facet(report)}
    lineage = column_lineage(loaded)
    inputs = [
        InputDataset(namespace=i.dataset.namespace, name=i.dataset.name, facets={})
        for i in lineage.inputs
        if i.kind != "virtual_table"
    ]
    outputs: dict[tuple[str, str], Any] = {}
    for w in lineage.written:
        if w.dataset is None:
            continue
        facets = {}
        if w.columns:
            facets["columnLineage"] = column_lineage_facet(w.facet(producer=PRODUCER))
        change = lifecycle(w.operation or "")
        if change:
            from openlineage.client.facet_v2 import lifecycle_state_change_dataset as lsc

            facets["lifecycleStateChange"] = lsc.LifecycleStateChangeDatasetFacet(
                lifecycleStateChange=lsc.LifecycleStateChange(change), producer=PRODUCER
            )
        key = (w.dataset.namespace, w.dataset.name)
        outputs[key] = OutputDataset(namespace=key[0], name=key[1], facets=facets)
    return OperatorLineage(inputs=inputs, outputs=list(outputs.values()), job_facets=job_facets)


def on_start_empty() -> Any:
    """Nothing known (the plan was never read)."""
    return _empty()
