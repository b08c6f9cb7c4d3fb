"""What Iceberg's Spark integration offers only inside the JVM, for row-level steps (`iceberg_stage`).

- Snapshot properties of a SQL command's commit. Iceberg takes a write's snapshot properties from its write options
  (`snapshot-property.<key>`) — which `DELETE FROM`, `UPDATE` and `MERGE INTO` have no way to give — or from a
  thread-local of the driver thread that commits (`org.apache.iceberg.spark.CommitMetadata`; its public setter
  takes a Java `Callable`). PySpark pins each Python thread to one JVM thread, and a command commits on the thread
  that runs it, so setting that thread-local around `spark.sql(...)` gives the commit the step's key.
- A DELETE whose condition is a translated plan expression. The condition of a `df.filter(...)` over a table read is
  a Catalyst expression already; `DeleteFromTable(relation, condition)` hands it to Spark's row-level DELETE as
  Spark SQL's own `DELETE FROM … WHERE` would, so file pruning and metadata-only deletes work the same. No SQL text
  is built from the plan.

Classic sessions only (no JVM behind a Spark Connect session); `consumer/` never imports this.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from pyspark.sql import DataFrame, SparkSession

COMMIT_METADATA = "org.apache.iceberg.spark.CommitMetadata"
_THREAD_LOCAL_FIELD = "COMMIT_PROPERTIES"
_LOGICAL = "org.apache.spark.sql.catalyst.plans.logical."
_RELATION = "org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation"


_holders: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()  # per SparkContext


def commit_properties_holder(spark: SparkSession) -> Any:
    """Iceberg's thread-local of commit properties; raises LookupError when this Iceberg runtime has none."""
    context = spark.sparkContext
    if context not in _holders:
        jvm = spark._jvm  # type: ignore[attr-defined]
        try:
            loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
            field = jvm.java.lang.Class.forName(COMMIT_METADATA, True, loader).getDeclaredField(_THREAD_LOCAL_FIELD)
            field.setAccessible(True)
            _holders[context] = field.get(None)
        except Exception as exc:  # py4j wraps ClassNotFound / NoSuchField
            raise LookupError(f"{COMMIT_METADATA}.{_THREAD_LOCAL_FIELD} not found in this Iceberg runtime") from exc
    return _holders[context]


@contextmanager
def commit_properties(spark: SparkSession, properties: Mapping[str, str]) -> Iterator[None]:
    """Iceberg commits made by this thread inside the block carry `properties` in their snapshot summary."""
    holder = commit_properties_holder(spark)
    values = spark._jvm.java.util.HashMap()  # type: ignore[attr-defined]
    for key, value in properties.items():
        values.put(key, value)
    holder.set(values)
    try:
        yield
    finally:
        holder.remove()


def _plain_filter(rows: DataFrame) -> tuple[Any, Any] | None:
    """(the filter's child, its condition) if `rows` is a deterministic filter without subqueries directly over a
    DataSourceV2 table read (through a SubqueryAlias at most), else None."""
    jvm = rows.sparkSession._jvm  # type: ignore[attr-defined]
    plan = rows._jdf.queryExecution().analyzed()
    if plan.getClass().getName() != _LOGICAL + "Filter":
        return None
    condition, child = plan.condition(), plan.child()
    relation = child.child() if child.getClass().getName() == _LOGICAL + "SubqueryAlias" else child
    if relation.getClass().getName() != _RELATION:
        return None
    subqueries = jvm.org.apache.spark.sql.catalyst.expressions.SubqueryExpression
    if not condition.deterministic() or subqueries.hasSubquery(condition):
        return None
    return child, condition


def is_plain_filter(rows: DataFrame) -> bool:
    return _plain_filter(rows) is not None


def delete_where(rows: DataFrame) -> None:
    """Spark's row-level DELETE of the table `rows` filters, by the filter's own condition."""
    found = _plain_filter(rows)
    if found is None:
        raise ValueError("delete_where takes a deterministic filter without subqueries over a table read")
    spark = rows.sparkSession
    jvm = spark._jvm  # type: ignore[attr-defined]
    command = jvm.org.apache.spark.sql.catalyst.plans.logical.DeleteFromTable(*found)
    _datasets(jvm).ofRows(spark._jsparkSession, command)  # type: ignore[attr-defined]  # runs the command


def _datasets(jvm: Any) -> Any:
    """The class whose `ofRows` runs a logical plan: `classic.Dataset` from Spark 4 on, `Dataset` before."""
    from py4j.java_gateway import JavaClass

    classic = jvm.org.apache.spark.sql.classic.Dataset
    return classic if isinstance(classic, JavaClass) else jvm.org.apache.spark.sql.Dataset
