"""Row-level DELETE and UPDATE on an Iceberg table, staged on a branch at the snapshot the run pinned
(`consumer/running/steps/targets.py`: `RowLevelWriter`, `RowLevelStage`).

Spark SQL's row-level commands (`DELETE FROM`, `UPDATE`, `MERGE INTO`) read, and validate their commit against,
the table's snapshot when the statement starts — not the one the run pinned and computed the change from. So the
statement runs on a branch created at the pinned snapshot (`<catalog>.<ns>.<table>.branch_<name>`), where it reads
exactly what the run read. Publishing is one catalog commit that moves `main` to the staged snapshot and drops
the branch, on the condition that `main` is still at the pinned snapshot (pyiceberg's requirement, checked by the
catalog's compare-and-set): a concurrent commit fails the step with `ConcurrentCommitError` and the table stays as
the other writer left it. `main` gains exactly the staged snapshot, whose parent is the pinned one.

The staged commit carries the step's key and `STAGED_PROPERTY` (`iceberg_jvm.commit_properties`); such a
snapshot counts as the step's commit only once it is in `main`'s history (`iceberg_writes._snapshot_with`), so a
try that crashed before publishing is retried, not skipped. A discarded staging branch is dropped and its snapshot
expired (best effort: a retry of the step first cleans up what a crashed try left). The data files of a
discarded commit stay until orphan-file cleanup, as with any failed Iceberg commit.

The table's own settings decide what the statement writes: `write.delete.mode` / `write.update.mode` /
`write.merge.mode` (copy-on-write or merge-on-read) and the isolation levels. Publishing requires `main` unchanged
whatever the isolation level: the run computed the change from the pinned snapshot, so even an append that
snapshot isolation would let through fails the step (as the rewrite from the pinned snapshot, serializable,
always did).
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from substrait_spark.consumer.clients import is_connect
from substrait_spark.consumer.errors import ConcurrentCommitError, ExecutionError
from substrait_spark.consumer.running.steps.log import KEY_PROPERTY
from substrait_spark.consumer.running.steps.targets import RowLevelCommand, RowLevelSettings, WriteMode
from substrait_spark.consumer.translation.relation import quote
from substrait_spark.hooks import iceberg_jvm
from substrait_spark.hooks.iceberg_spark import ICEBERG_EXTENSIONS

log = logging.getLogger(__name__)

# In the summary of a staged commit: the staging branch's name (published commits keep it, telling how they came).
STAGED_PROPERTY = "substrait-spark.staged-on"
STAGE_PREFIX = "substrait_spark_stage_"
_MODE_PROPERTY = {c: f"write.{c.value}.mode" for c in RowLevelCommand}  # write.delete.mode, ...
_ISOLATION_PROPERTY = {c: f"write.{c.value}.isolation-level" for c in RowLevelCommand}
_DEFAULT_ISOLATION = "serializable"  # Iceberg's default for row-level commands
_PYICEBERG_FORMAT_VERSION = 2  # the newest table format pyiceberg 0.12 commits to
_PUBLISH_ATTEMPTS = 3  # a concurrent metadata-only commit (properties, another branch) is retried over


@dataclass
class IcebergRowLevel:
    """`RowLevelWriter` of one Iceberg table (`iceberg_writes.IcebergTarget`) in one Spark session."""

    target: Any  # IcebergTarget (not imported: it imports this module)
    spark: SparkSession

    @cached_property
    def _table(self) -> Any:
        """The table as loaded first: its properties and the snapshots it had (staging reloads it)."""
        return self.target._table()

    @cached_property
    def unavailable(self) -> str | None:
        if is_connect(self.spark):
            return "a Spark Connect session: Iceberg takes a SQL command's snapshot properties only in the JVM"
        if ICEBERG_EXTENSIONS not in (self.spark.conf.get("spark.sql.extensions", None) or ""):
            return f"Iceberg's SQL extensions are not enabled on this session ({ICEBERG_EXTENSIONS})"
        try:
            iceberg_jvm.commit_properties_holder(self.spark)
        except LookupError as exc:
            return str(exc)
        version = self._table.format_version
        if version > _PYICEBERG_FORMAT_VERSION:
            return f"a format v{version} table: pyiceberg 0.12 cannot commit its staging branch"
        return None

    def settings(self, command: RowLevelCommand) -> RowLevelSettings:
        properties = self._table.properties
        key = _MODE_PROPERTY[command]
        value = properties.get(key, WriteMode.COPY_ON_WRITE.value)
        try:
            mode = WriteMode(value.lower())
        except ValueError:
            raise ExecutionError(
                f"table {self.target.identity}: {key}={value!r} is neither copy-on-write nor merge-on-read"
            ) from None
        return RowLevelSettings(mode, properties.get(_ISOLATION_PROPERTY[command], _DEFAULT_ISOLATION).lower())

    def summary(self, snapshot_id: int) -> dict[str, str]:
        snapshot = self._table.snapshot_by_id(snapshot_id) or self.target._table().snapshot_by_id(snapshot_id)
        if snapshot is None or snapshot.summary is None:
            return {}
        return {"operation": snapshot.summary.operation.value, **snapshot.summary.additional_properties}

    def is_plain_filter(self, rows: DataFrame) -> bool:
        return iceberg_jvm.is_plain_filter(rows)

    @contextmanager
    def stage(self, pinned: int, properties: Mapping[str, str]) -> Iterator[IcebergStage]:
        key = properties[KEY_PROPERTY]
        table = self.target._table()
        _refuse_moved(self.target.identity, table, pinned)
        prefix = _branch_prefix(key)
        stale = [name for name in table.refs() if name.startswith(prefix)]
        for name in stale:  # left by a crashed try
            _discard(self.target, name)
        branch = f"{prefix}{uuid.uuid4().hex[:8]}"
        (self.target._table() if stale else table).manage_snapshots().create_branch(pinned, branch).commit()
        stage = IcebergStage(self.spark, self.target, branch, {**properties, STAGED_PROPERTY: branch})
        try:
            self._refresh()
            yield stage
            stage.snapshot_id = _publish(self.target, branch, pinned, key)
        except BaseException:
            _discard(self.target, branch)
            raise
        finally:
            self._refresh()

    def _refresh(self) -> None:
        """Spark's Iceberg catalog may cache the table (Iceberg's default, 30 s; our SQL catalogs turn it off): the
        statement must see the branch just made, and later steps the snapshot just published."""
        caching = self.spark.conf.get(f"spark.sql.catalog.{self.target.catalog_name}.cache-enabled", None)
        if (caching or "true").lower() != "false":
            self.spark.catalog.refreshTable(self.target.spark_name)


@dataclass
class IcebergStage:
    """`RowLevelStage`: the staging branch of one step."""

    spark: SparkSession
    target: Any
    branch: str
    properties: dict[str, str]
    snapshot_id: int | None = field(default=None)

    @property
    def spark_name(self) -> str:
        return ".".join(quote(p) for p in (self.target.catalog_name, *self.target.ident, f"branch_{self.branch}"))

    def read(self) -> DataFrame:
        return self.spark.read.table(self.spark_name)

    def sql(self, statement: str) -> None:
        with iceberg_jvm.commit_properties(self.spark, self.properties):
            self.spark.sql(statement)

    def delete_where(self, rows: DataFrame) -> None:
        with iceberg_jvm.commit_properties(self.spark, self.properties):
            iceberg_jvm.delete_where(rows)


def _branch_prefix(step_key: str) -> str:
    """Staging branches of one step share this prefix (a retry finds what a crashed try left)."""
    return f"{STAGE_PREFIX}{hashlib.sha256(step_key.encode()).hexdigest()[:16]}_"


def _refuse_moved(identity: str, table: Any, pinned: int) -> None:
    current = table.current_snapshot()
    if current is None or current.snapshot_id != pinned:
        now = current.snapshot_id if current is not None else None
        raise ConcurrentCommitError(
            f"table {identity} changed since this run read its snapshot {pinned} (now {now}): the step was not "
            "applied; a new run reads the new snapshot"
        )


def _publish(target: Any, branch: str, pinned: int, key: str) -> int | None:
    """Move `main` from `pinned` to the branch's one new snapshot and drop the branch, in one catalog commit; None
    when the statement committed nothing (the branch is dropped)."""
    from pyiceberg.exceptions import CommitFailedException

    table = target._table()
    ref = table.refs().get(branch)
    if ref is None:
        raise ExecutionError(f"the staging branch {branch} of {target.identity} is gone: the step was not applied")
    if ref.snapshot_id == pinned:
        table.manage_snapshots().remove_branch(branch).commit()
        return None
    staged = table.snapshot_by_id(ref.snapshot_id)
    carried = staged.summary.additional_properties.get(KEY_PROPERTY) if staged.summary is not None else None
    if staged.parent_snapshot_id != pinned or carried != key:
        raise ExecutionError(
            f"the staged commit {staged.snapshot_id} of {target.identity} is not one commit on snapshot {pinned} "
            f"carrying the step key (parent {staged.parent_snapshot_id}, key {carried!r}): the step was not applied"
        )
    for attempt in range(_PUBLISH_ATTEMPTS):
        _refuse_moved(target.identity, table, pinned)
        try:
            table.manage_snapshots().set_current_snapshot(snapshot_id=staged.snapshot_id).remove_branch(branch).commit()
            return staged.snapshot_id
        except CommitFailedException:  # `main` moved (refused above on reload), or another metadata change won
            if attempt == _PUBLISH_ATTEMPTS - 1:
                raise
            table = target._table()
    raise AssertionError("unreachable")


def _discard(target: Any, branch: str) -> None:
    """Drop a staging branch and expire its snapshots that are not in `main`'s history; best effort."""
    from pyiceberg.table.snapshots import ancestors_of

    try:
        table = target._table()
        ref = table.refs().get(branch)
        if ref is None:
            return
        current = table.current_snapshot()
        published = {s.snapshot_id for s in ancestors_of(current, table.metadata)} if current is not None else set()
        staged = []
        for snapshot in ancestors_of(table.snapshot_by_id(ref.snapshot_id), table.metadata):
            if snapshot.snapshot_id in published:
                break
            staged.append(snapshot.snapshot_id)
        table.manage_snapshots().remove_branch(branch).commit()
        if staged:
            target._table().maintenance.expire_snapshots().by_ids(staged).commit()
    except Exception as exc:  # the step's own error (or success) matters more; a retry cleans up again
        log.warning("could not discard staging branch %s of %s: %s", branch, target.identity, exc)
