"""A run report as Dagster materializations: one `MaterializeResult` per table the plan changed (and one for a root
result asset), with Dagster's standard table metadata.

What is read where (no second reader of any of it): the changed tables and their steps from the report
(`consumer.report.changed_tables`, as the Airflow Asset events); schema, row count and location from the
catalog's current table (pyiceberg); column lineage from the plan (`consumer.lineage`), with each column spelled
as the table it belongs to spells it (plans often use another case than the catalog or the parquet files).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any

from dagster import (
    AssetKey,
    DataVersion,
    MaterializeResult,
    MetadataValue,
    TableColumn,
    TableColumnConstraints,
    TableColumnDep,
    TableColumnLineage,
    TableSchema,
)
from substrait_spark.consumer.lineage import DIRECT, Lineage, Output
from substrait_spark.consumer.report import changed_tables
from substrait_spark.dagster.keys import TableKeys

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


class Spellings:
    """Column names as each table spells them: lower-case name → name, per plan table name (lower case)."""

    def __init__(self, report: Mapping[str, Any], catalogs: Any = None):
        self.catalogs = catalogs
        self.by_table: dict[str, dict[str, str]] = {}
        for t in report.get("tables_read") or []:
            names = _columns_of_read(t, catalogs)
            if names:
                self.by_table[str(t.get("name", "")).lower()] = {n.lower(): n for n in names}

    def spell(self, table: str, column: str) -> str:
        return self.by_table.get(table.lower(), {}).get(column.lower(), column)


def _columns_of_read(entry: Mapping[str, Any], catalogs: Any) -> list[str]:
    """The column names of a table read: its Iceberg metadata's schema, or a parquet file's; [] when unknown."""
    try:
        if entry.get("metadata_location"):
            from pyiceberg.table import StaticTable

            config = catalogs.find(entry["catalog"]) if catalogs is not None and entry.get("catalog") else None
            props = dict(config.properties) if config is not None else {}
            table = StaticTable.from_metadata(entry["metadata_location"], properties=props)
            return [f.name for f in table.schema().fields]
        if str(entry.get("format", "")).lower() == "parquet":
            import pyarrow.dataset as ds

            return list(ds.dataset(str(entry["identity"]), format="parquet").schema.names)
    except Exception:  # spelling is a courtesy: the plan's own names stand
        log.info("no column names for %s", entry.get("identity"), exc_info=True)
    return []


def current_table(catalogs: Any, identity: str) -> Any:
    """The Iceberg table `catalog.namespace.table` as it is now, or None."""
    if catalogs is None:
        return None
    catalog, inner = catalogs.split(identity.split("."))
    try:
        return catalogs.load(catalog).load_table(tuple(inner))
    except Exception:
        return None


def column_schema(table: Any) -> TableSchema:
    return TableSchema(
        columns=[
            TableColumn(
                name=f.name,
                type=str(f.field_type),
                description=f.doc,
                constraints=TableColumnConstraints(nullable=not f.required),
            )
            for f in table.schema().fields
        ]
    )


def column_lineage(
    outputs: list[Output], keys: TableKeys, spellings: Spellings, own: AssetKey, spelled: Mapping[str, str]
) -> TableColumnLineage:
    """Each column's direct sources (DIRECT: identity, transformation, aggregation), as upstream asset keys and the
    upstream's column names; a table's own columns (a DELETE reading its target) are not its lineage."""
    deps: dict[str, dict[tuple[AssetKey, str], None]] = {}
    for out in outputs:
        for name, sources in out.columns:
            column = spelled.get(name.lower(), name)
            for f, ts in sources.items():
                if not any(t.type == DIRECT for t in ts):
                    continue
                key = keys.key(f.dataset.name.split("."))
                if key == own:
                    continue
                deps.setdefault(column, {})[(key, spellings.spell(f.dataset.name, f.field))] = None
    return TableColumnLineage(
        deps_by_column={c: [TableColumnDep(asset_key=k, column_name=n) for k, n in found] for c, found in deps.items()}
    )


def table_results(
    report: Mapping[str, Any],
    lineage: Lineage,
    keys: TableKeys,
    catalogs: Any,
    run_key: str | None = None,
) -> Iterator[MaterializeResult]:
    """One MaterializeResult per table the run changed (committed now, or by an earlier try of the same run)."""
    spellings = Spellings(report, catalogs)
    for target, change in changed_tables(dict(report)).items():
        key = keys.of_identity(target)
        table = current_table(catalogs, target)
        metadata: dict[str, Any] = {
            TABLE_NAME: target,
            PLAN_URI: report.get("plan_uri"),
            PLAN_SHA256: change["plan_sha256"],
            STEPS: MetadataValue.json(change["steps"]),
            "substrait/rows_changed": change["rows"],
        }
        if run_key:
            metadata[RUN_KEY] = run_key
        spelled: dict[str, str] = {}
        if table is not None:
            schema = column_schema(table)
            spelled = {c.name.lower(): c.name for c in schema.columns}
            metadata[COLUMN_SCHEMA] = schema
            metadata[URI] = table.metadata.location
            snapshot = table.current_snapshot()
            if snapshot is not None and snapshot.summary is not None:
                total = snapshot.summary.additional_properties.get("total-records")
                if total is not None:
                    metadata[ROW_COUNT] = int(total)
        written = [o for o in lineage.written if o.dataset is not None and keys.key(o.dataset.name.split(".")) == key]
        if written:
            metadata[COLUMN_LINEAGE] = column_lineage(written, keys, spellings, key, spelled)
        version = change["snapshot_id"]
        yield MaterializeResult(
            asset_key=key,
            metadata=metadata,
            data_version=DataVersion(str(version)) if version is not None else None,
        )


def root_result(
    report: Mapping[str, Any], lineage: Lineage, keys: TableKeys, key: AssetKey, catalogs: Any = None
) -> MaterializeResult:
    """The first root's rows as an asset: its row count, its location, its columns and their lineage."""
    out = (report.get("outputs") or [{}])[0]
    metadata: dict[str, Any] = {
        PLAN_URI: report.get("plan_uri"),
        PLAN_SHA256: report.get("plan_sha256"),
        "substrait/parameters": MetadataValue.json(report.get("parameters") or []),
    }
    if out.get("rows") is not None:
        metadata[ROW_COUNT] = int(out["rows"])
    if out.get("location"):
        metadata[URI] = out["location"]
    if out.get("columns"):
        metadata[COLUMN_SCHEMA] = TableSchema(columns=_result_columns(out))
    roots = [r for r in lineage.roots if (r.index or 0) == out.get("index", 0)]
    if roots:
        metadata[COLUMN_LINEAGE] = column_lineage(roots, keys, Spellings(report, catalogs), key, {})
    return MaterializeResult(asset_key=key, metadata=metadata)


def _result_columns(out: Mapping[str, Any]) -> list[TableColumn]:
    """A root result's columns: with their types when written as parquet (read back with pyarrow)."""
    types: dict[str, str] = {}
    if out.get("location") and str(out.get("format") or "parquet").lower() == "parquet":
        try:
            import pyarrow.dataset as ds

            types = {f.name: str(f.type) for f in ds.dataset(out["location"], format="parquet").schema}
        except Exception:
            log.info("result at %s not readable as parquet", out["location"], exc_info=True)
    return [TableColumn(name=c, type=types.get(c, "unknown")) for c in out["columns"]]
