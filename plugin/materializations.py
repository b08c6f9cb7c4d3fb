"""What a run changed, as Dagster materializations in plain data — without importing Dagster.

Two callers need the same figures: the in-process assets (`substrait_spark.dagster`, which turn them into
`MaterializeResult`s) and the remote side of a Dagster Pipes run (`substrait_spark.pipes_remote`, inside a
spark-submit driver that has only the engine and `dagster-pipes`, which reports them back as they are). So the
figures are built once, here, in Dagster's external metadata form (`{"type": …, "raw_value": …}`: what Pipes
carries and `dagster._core.definitions.metadata.external_metadata` reads).

Asset keys (`TableKeys`): a table the catalogs hold is keyed by its catalog identifier, catalog first —
`demo.big_orders` under the default catalog `lake` is `lake/demo/big_orders`; a table a static table map binds is
keyed by its name in the map, `orders`. Lower case: the engine resolves names case-insensitively.

What is read where: the changed tables and their steps from the report (`consumer.running.report.changed_tables`, as the
Airflow Asset events); schema, row count and location from the catalog's current table (pyiceberg); column
lineage from the plan (`consumer.lineage`), each column spelled as the table it belongs to spells it (plans
often use another case than the catalog or the parquet files).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from substrait_spark.consumer.analysis.lineage import DIRECT, Lineage, Output
from substrait_spark.consumer.running.report import (
    Durability,
    RootOutput,
    RunReport,
    TableRead,
    changed_tables,
    plain,
)

log = logging.getLogger(__name__)

ROW_COUNT = "dagster/row_count"
COLUMN_SCHEMA = "dagster/column_schema"
COLUMN_LINEAGE = "dagster/column_lineage"
TABLE_NAME = "dagster/table_name"
URI = "dagster/uri"
PLAN_SHA256 = "substrait/plan_sha256"
PLAN_URI = "substrait/plan_uri"
STEPS = "substrait/steps"
RUN_KEY = "substrait/run_key"
ROWS_CHANGED = "substrait/rows_changed"
PARAMETERS = "substrait/parameters"
# A durable run (`RunReport.durability`): whether a later try resumes it, and how each root output came about
# (fresh, reattached to an earlier try's operation, run again, finished earlier) with its operations' ids.
DURABILITY = "substrait/durability"
RESUMED = "substrait/resumed"

# How a Dagster user gives a dynamic parameter's value (what an `UnboundParameterError` says, in process and remote).
DAGSTER_BIND_HINT = (
    'substrait_assets(parameters={{"{anchor}": VALUE}}) (a component plan\'s `parameters`)'
    " or partition_parameter={anchor}"
)


class TableKeys:
    """Plan table names (a NamedTable's parts, a write target's) → asset key parts (see the module docstring)."""

    def __init__(self, catalogs: Any = None, table_map: Collection[str] = ()):
        self.catalogs = catalogs
        self.table_map = {n.lower() for n in table_map}

    def parts(self, names: Sequence[str]) -> list[str]:
        lowered = [n.lower() for n in names]
        if ".".join(lowered) in self.table_map or (lowered and lowered[-1] in self.table_map):
            return lowered
        if self.catalogs is None or not self.catalogs.catalogs:
            return lowered
        catalog, inner = self.catalogs.split(names)
        return [catalog.lower(), *(p.lower() for p in inner)]

    def of_name(self, dotted: str) -> list[str]:
        """The key of a dotted name: the plan's (`demo.big_orders`) or a resolved identity (`lake.demo.…`)."""
        return self.parts(dotted.split("."))


def table_map(settings: Any) -> dict[str, Any]:
    """The static table maps' bindings of `RunSettings` (lower-case name → `TableBinding`)."""
    from substrait_spark.hooks.plan_run import PlanRunner

    return {n: b for r in PlanRunner(settings).table_maps for n, b in r.tables.items()}


@dataclass
class Materialization:
    """One asset's materialization: its key, its metadata (external form) and its data version."""

    key: list[str]
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    data_version: str | None = None

    def put(self, name: str, kind: str, value: Any) -> None:
        if value is not None:
            self.metadata[name] = {"type": kind, "raw_value": value}


class Spellings:
    """Column names as each table read spells them: lower-case name → name, per plan table name (lower case)."""

    def __init__(self, report: RunReport, catalogs: Any = None):
        self.by_table: dict[str, dict[str, str]] = {}
        for t in report.tables_read:
            names = _columns_of_read(t, catalogs)
            if names:
                self.by_table[t.name.lower()] = {n.lower(): n for n in names}

    def spell(self, table: str, column: str) -> str:
        return self.by_table.get(table.lower(), {}).get(column.lower(), column)


def _columns_of_read(entry: TableRead, catalogs: Any) -> list[str]:
    """The column names of a table read: its Iceberg metadata's schema, or a parquet file's; [] when unknown."""
    try:
        if entry.metadata_location:
            from pyiceberg.table import StaticTable

            config = catalogs.find(entry.catalog) if catalogs is not None and entry.catalog else None
            props = dict(config.properties) if config is not None else {}
            table = StaticTable.from_metadata(entry.metadata_location, properties=props)
            return [f.name for f in table.schema().fields]
        if str(entry.format or "").lower() == "parquet":
            return parquet_schema(entry.identity).names
    except Exception:  # spelling is a courtesy: the plan's own names stand
        log.info("no column names for %s", entry.identity, exc_info=True)
    return []


def parquet_schema(location: str) -> Any:
    import pyarrow.dataset as ds

    return ds.dataset(location, format="parquet").schema


def current_table(catalogs: Any, identity: str) -> Any:
    """The Iceberg table `catalog.namespace.table` as it is now, or None."""
    if catalogs is None:
        return None
    catalog, inner = catalogs.split(identity.split("."))
    try:
        return catalogs.load(catalog).load_table(tuple(inner))
    except Exception:
        return None


def iceberg_schema(table: Any) -> dict[str, Any]:
    return {
        "columns": [
            {
                "name": f.name,
                "type": str(f.field_type),
                "description": f.doc,
                "constraints": {"nullable": not f.required},
            }
            for f in table.schema().fields
        ]
    }


def column_lineage(
    outputs: Iterable[Output], keys: TableKeys, spellings: Spellings, own: list[str], spelled: Mapping[str, str]
) -> dict[str, Any]:
    """Each column's direct sources (DIRECT: identity, transformation, aggregation), as upstream asset keys and the
    upstream's column names; a table's own columns (a DELETE reading its target) are not its lineage."""
    deps: dict[str, dict[tuple[tuple[str, ...], str], None]] = {}
    for out in outputs:
        for name, sources in out.columns:
            column = spelled.get(name.lower(), name)
            for f, ts in sources.items():
                if not any(t.type == DIRECT for t in ts):
                    continue
                key = keys.of_name(f.dataset.name)
                if key == own:
                    continue
                deps.setdefault(column, {})[(tuple(key), spellings.spell(f.dataset.name, f.field))] = None
    return {
        "deps_by_column": {c: [{"asset_key": list(k), "column_name": n} for k, n in found] for c, found in deps.items()}
    }


def table_materializations(
    report: RunReport, lineage: Lineage, keys: TableKeys, catalogs: Any, run_key: str | None = None
) -> list[Materialization]:
    """One per table the run changed (committed now, or by an earlier try of the same run)."""
    spellings = Spellings(report, catalogs)
    found = []
    for target, change in changed_tables(report).items():
        extra = change.extra()
        m = Materialization(keys.of_name(target))
        m.put(TABLE_NAME, "text", target)
        m.put(PLAN_URI, "text", report.plan_uri)
        m.put(PLAN_SHA256, "text", change.plan_sha256)
        m.put(STEPS, "json", extra["steps"])
        m.put(ROWS_CHANGED, "int", change.rows_changed)
        m.put(RUN_KEY, "text", run_key)
        m.put(DURABILITY, "text", report.durability.value if report.durability is not None else None)
        spelled: dict[str, str] = {}
        table = current_table(catalogs, target)
        if table is not None:
            schema = iceberg_schema(table)
            spelled = {c["name"].lower(): c["name"] for c in schema["columns"]}
            m.put(COLUMN_SCHEMA, "table_schema", schema)
            m.put(URI, "text", table.metadata.location)
            snapshot = table.current_snapshot()
            total = (
                snapshot.summary.additional_properties.get("total-records") if snapshot and snapshot.summary else None
            )
            m.put(ROW_COUNT, "int", int(total) if total is not None else None)
        written = [o for o in lineage.written if o.dataset is not None and keys.of_name(o.dataset.name) == m.key]
        if written:
            m.put(COLUMN_LINEAGE, "table_column_lineage", column_lineage(written, keys, spellings, m.key, spelled))
        m.data_version = str(change.snapshot_id) if change.snapshot_id is not None else None
        found.append(m)
    return found


def root_materialization(
    report: RunReport, lineage: Lineage, keys: TableKeys, key: list[str], catalogs: Any = None
) -> Materialization:
    """The first root's rows as an asset: its row count, its location, its columns and their lineage."""
    out = report.outputs[0] if report.outputs else RootOutput(0, [])
    m = Materialization(list(key))
    m.put(PLAN_URI, "text", report.plan_uri)
    m.put(PLAN_SHA256, "text", report.plan_sha256)
    m.put(PARAMETERS, "json", plain(report.parameters))
    m.put(ROW_COUNT, "int", out.rows)
    m.put(URI, "text", out.location)
    m.put(DURABILITY, "text", report.durability.value if report.durability is not None else None)
    m.put(RESUMED, "json", resumed(report))
    if out.columns:
        m.put(COLUMN_SCHEMA, "table_schema", {"columns": _result_columns(out)})
    roots = [r for r in lineage.roots if (r.index or 0) == out.index]
    if roots:
        lineage_value = column_lineage(roots, keys, Spellings(report, catalogs), m.key, {})
        m.put(COLUMN_LINEAGE, "table_column_lineage", lineage_value)
    return m


def resumed(report: RunReport) -> list[dict[str, Any]] | None:
    """How each root output of a durable run came about, with its Spark Connect operations (None: not durable)."""
    if report.durability is not Durability.DURABLE:
        return None
    return [
        {
            "output": o.index,
            "resumed": o.resumed.value if o.resumed is not None else None,
            "operations": [
                {"operation_id": op.operation_id, "session_id": op.session_id, "resumed": op.resumed.value}
                for op in o.operations
            ],
        }
        for o in report.outputs
    ]


def _result_columns(out: RootOutput) -> list[dict[str, Any]]:
    """A root result's columns: with their types when written as parquet (read back with pyarrow)."""
    types: dict[str, str] = {}
    if out.location and str(out.format or "parquet").lower() == "parquet":
        try:
            types = {f.name: str(f.type) for f in parquet_schema(out.location)}
        except Exception:
            log.info("result at %s not readable as parquet", out.location, exc_info=True)
    return [{"name": c, "type": types.get(c, "unknown")} for c in out.columns]


def materializations(
    report: RunReport | Mapping[str, Any],
    lineage: Lineage,
    keys: TableKeys,
    catalogs: Any,
    run_key: str | None = None,
    root_key: list[str] | None = None,
) -> list[Materialization]:
    """Everything a run materialized: the tables it changed, then the root result's asset when there is one."""
    report = RunReport.of(report)
    found = table_materializations(report, lineage, keys, catalogs, run_key)
    if root_key is not None:
        found.append(root_materialization(report, lineage, keys, root_key, catalogs))
    return found
