"""A run report as Dagster `MaterializeResult`s: the figures are `substrait_spark.materializations`' (built once for
in-process assets and the Pipes remote side alike); this turns them into Dagster's values."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from dagster import AssetKey, DataVersion, MaterializeResult
from dagster._core.definitions.metadata.external_metadata import metadata_map_from_external
from substrait_spark.consumer.analysis.lineage import Lineage
from substrait_spark.consumer.running.report import RunReport
from substrait_spark.materializations import (  # noqa: F401  (the metadata names, for callers and tests)
    COLUMN_LINEAGE,
    COLUMN_SCHEMA,
    DURABILITY,
    PARAMETERS,
    PLAN_SHA256,
    PLAN_URI,
    RESUMED,
    ROW_COUNT,
    ROWS_CHANGED,
    RUN_KEY,
    STEPS,
    TABLE_NAME,
    URI,
    Materialization,
    TableKeys,
    materializations,
)


def result(m: Materialization) -> MaterializeResult:
    return MaterializeResult(
        asset_key=AssetKey(m.key),
        metadata=metadata_map_from_external(m.metadata),
        data_version=DataVersion(m.data_version) if m.data_version is not None else None,
    )


def results(
    report: RunReport | Mapping[str, Any],
    lineage: Lineage,
    keys: TableKeys,
    catalogs: Any,
    run_key: str | None = None,
    root_key: AssetKey | None = None,
) -> Iterator[MaterializeResult]:
    root = list(root_key.path) if root_key is not None else None
    for m in materializations(report, lineage, keys, catalogs, run_key, root):
        yield result(m)
