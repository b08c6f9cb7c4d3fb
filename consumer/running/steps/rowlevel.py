"""DELETE and UPDATE row by row: Spark SQL's row-level commands on a staging copy of the target at the snapshot the
run pinned (`targets.RowLevelStage`). A commit then costs what the change costs: copy-on-write rewrites only the
data files holding changed rows, merge-on-read adds delete files — as the table's `write.delete.mode` /
`write.update.mode` say — instead of the whole table rewritten from the pinned snapshot (`writes`).

- DELETE by a predicate over the target: Spark gets the translated condition itself (`RowLevelStage.delete_where`,
  a filter over the staging copy), exactly as its own `DELETE FROM … WHERE` — so it prunes files by their
  statistics and deletes whole files without reading them.
- DELETE of matching rows: `DELETE FROM stage t WHERE EXISTS (SELECT 1 FROM v s WHERE s.c1 <=> t.c1 AND …)` with the
  input rows as the run's temp view `v`: every table row equal (null-safe) to an input row, as many times as the
  table holds it, whatever the input's duplicates.
- UPDATE: `MERGE INTO stage t USING v s ON s.k = t.k WHEN MATCHED THEN UPDATE SET …` with the after-images as `v`
  (one per key: `writes` refuses duplicates) where the table writes MERGE as it writes UPDATE; where it does not,
  `UPDATE stage t SET c = (SELECT first(s.c) FROM v s WHERE s.k = t.k), … WHERE EXISTS (…)` so that the update
  mode applies (`first` only satisfies Spark's rule that a correlated scalar subquery aggregate; see
  `update_by_key` for what Spark 3.5 cannot do).
Statements hold only quoted identifiers: the temp view, the staging copy, its columns — no value or expression
from the plan.

Rows affected come from the commit's snapshot summary where that is exact (no delete files at the pinned snapshot:
a DELETE removes `deleted-records - added-records` rows plus the positions it marks; a merge-on-read UPDATE one
position per row), else from a count over the pinned snapshot (a copy-on-write UPDATE: Iceberg's summary counts
the rewritten files' rows). That count runs beside the statement, on a thread of its own (`_beside`): it reads
the pinned snapshot, which the statement on the staging branch leaves as it is, so the step's wall time is the
statement's, not the statement's plus the count's; and it is awaited before publishing, so a failed count
publishes nothing. The step's `commit` record says
how it was committed — row-level (the statement, the write mode, the isolation level) or a rewrite, and why — and
the data and delete files the commit added and removed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from enum import Enum
from typing import TYPE_CHECKING

from pyspark import InheritableThread
from pyspark.sql import Column, DataFrame

from ...translation.relation import quote
from .targets import RowLevelCommand, RowLevelWriter, WriteMode

if TYPE_CHECKING:
    from ..resolver import ResolvedTable
    from .writes import WriteJob


Count = Callable[[], int]  # counts the rows a step changes, over the pinned snapshot (run beside the statement)


class Change(Enum):
    """What a row-level step runs, and the Spark SQL command it is (whose write mode the table applies)."""

    DELETE_WHERE = ("delete-where", RowLevelCommand.DELETE)  # DELETE by the plan's predicate over the table
    DELETE_MATCHING = ("delete-matching", RowLevelCommand.DELETE)  # DELETE of rows equal to input rows
    UPDATE_BY_KEY = ("update-by-key", RowLevelCommand.UPDATE)  # UPDATE with after-images matched by a key
    MERGE_BY_KEY = ("merge-by-key", RowLevelCommand.MERGE)  # the same as MERGE INTO … WHEN MATCHED THEN UPDATE

    def __init__(self, label: str, command: RowLevelCommand):
        self.label, self.command = label, command


class Method(Enum):
    """How a DELETE/UPDATE step committed."""

    ROW_LEVEL = "row-level"  # a row-level statement on a staging copy, published (this module)
    REWRITE = "rewrite"  # the table rewritten from the pinned snapshot (`writes`)


# Snapshot summary counters → the step's `commit` record.
_FILES = {
    "added_data_files": "added-data-files",
    "removed_data_files": "deleted-data-files",
    "added_delete_files": "added-delete-files",
    "removed_delete_files": "removed-delete-files",
}


def writer(job: WriteJob, resolved: ResolvedTable) -> RowLevelWriter | None:
    """The target's row-level writer if this step can stage with it; otherwise None, and the step's `commit`
    record says why (the step then rewrites the table)."""
    found: RowLevelWriter = job.target.row_level(job.cx.spark)
    why = found.unavailable
    if why is None and resolved.snapshot_id is None:
        why = "the table has no snapshot yet"
    if why is None:
        return found
    rewritten(job, why)
    return None


def rewritten(job: WriteJob, reason: str) -> None:
    """Record that the step rewrites the table from the pinned snapshot, and why."""
    job.step.commit = {"method": Method.REWRITE.value, "reason": reason}


def rewrite_committed(job: WriteJob) -> None:
    """After a rewrite committed: its snapshot and the files it added and removed, into the `commit` record."""
    snapshot = job.target.snapshot_id()
    if snapshot is not None and job.step.commit is not None:
        summary = job.target.row_level(job.cx.spark).summary(snapshot)
        job.step.commit.update(snapshot_id=snapshot, **_files(summary))


def delete_where(job: WriteJob, found: RowLevelWriter, resolved: ResolvedTable, hit: Column) -> int:
    """Delete the rows of the table where `hit` (a condition over its own column names); rows deleted."""
    change = Change.DELETE_WHERE
    rows = None if counts_rows(found, change, resolved) else resolved.df.filter(hit).count
    return _apply(job, found, resolved, change, rows, hit)


def delete_matching(
    job: WriteJob, found: RowLevelWriter, resolved: ResolvedTable, rows: DataFrame, count: Count
) -> int:
    """Delete the table's rows equal (null-safe) to a row of `rows` (the table's column names); `count` counts
    them (when the commit will not)."""
    view = quote(job.cx.register_view(rows))
    match = " AND ".join(f"s.{quote(c)} <=> t.{quote(c)}" for c in rows.columns)
    exists = f"EXISTS (SELECT 1 FROM {view} AS s WHERE {match})"

    def statement(target: str) -> str:
        return f"DELETE FROM {target} AS t WHERE {exists}"

    change = Change.DELETE_MATCHING
    return _apply(job, found, resolved, change, None if counts_rows(found, change, resolved) else count, statement)


def update_by_key(
    job: WriteJob,
    found: RowLevelWriter,
    resolved: ResolvedTable,
    after: DataFrame,
    keys: Sequence[str],
    check: Callable[[bool], Count | None],
) -> int:
    """Replace the table's rows whose `keys` equal an after-image's by that after-image (`after`: the table's
    column names; read several times, so best persisted by the caller). `check(count)` refuses several
    after-images for one key and, if `count`, returns what counts the table rows they match.

    `MERGE INTO … WHEN MATCHED THEN UPDATE` — one join — where the table writes MERGE as it writes UPDATE
    (`write.merge.mode` = `write.update.mode`, Iceberg's default). Where they differ, the mode of UPDATE is
    honoured by an UPDATE statement, which Spark 3.5 runs in copy-on-write only: its new values come from another
    relation, and merge-on-read writes an UPDATE as a delete plus an insert (an `Expand`), where Spark refuses
    correlated subqueries. So an update mode of merge-on-read with a copy-on-write merge mode runs as a MERGE in
    copy-on-write, and the `commit` record notes it."""
    match = " AND ".join(f"s.{quote(k)} = t.{quote(k)}" for k in keys)
    view = quote(job.cx.register_view(after))
    update, merge = (found.settings(c).mode for c in (RowLevelCommand.UPDATE, RowLevelCommand.MERGE))
    note = None
    if update is WriteMode.COPY_ON_WRITE and merge is WriteMode.MERGE_ON_READ:
        change = Change.UPDATE_BY_KEY
        sets = ", ".join(
            f"{quote(c)} = (SELECT first(s.{quote(c)}) FROM {view} AS s WHERE {match})" for c in after.columns
        )

        def statement(target: str) -> str:
            return f"UPDATE {target} AS t SET {sets} WHERE EXISTS (SELECT 1 FROM {view} AS s WHERE {match})"

    else:
        change = Change.MERGE_BY_KEY
        sets = ", ".join(f"t.{quote(c)} = s.{quote(c)}" for c in after.columns)
        if update is not merge:
            note = f"write.update.mode is {update.value}: Spark 3.5 ran the UPDATE as a MERGE, in write.merge.mode"

        def statement(target: str) -> str:
            return f"MERGE INTO {target} AS t USING {view} AS s ON {match} WHEN MATCHED THEN UPDATE SET {sets}"

    rows = check(not counts_rows(found, change, resolved))
    return _apply(job, found, resolved, change, rows, statement, note)


def _apply(
    job: WriteJob,
    found: RowLevelWriter,
    resolved: ResolvedTable,
    change: Change,
    rows: Count | None,
    statement: Callable[[str], str] | Column,
    note: str | None = None,
) -> int:
    """Stage, run the statement (SQL naming the staging copy, or a DELETE condition over it), publish; the rows
    it changed (`rows()`, run beside the statement, when the commit's summary cannot tell)."""
    pinned = resolved.snapshot_id
    assert pinned is not None  # `writer` sends tables without a snapshot to the rewrite
    settings = found.settings(change.command)
    with _beside(rows) as counted, found.stage(pinned, job.log.snapshot_properties(job.step)) as stage:
        if isinstance(statement, Column):
            stage.delete_where(stage.read().filter(statement))
        else:
            stage.sql(statement(stage.spark_name))
        changed = counted()  # before publishing: a count that fails leaves the table as it was
    summary = found.summary(stage.snapshot_id) if stage.snapshot_id is not None else {}
    job.step.commit = {
        "method": Method.ROW_LEVEL.value,
        "statement": change.label,
        "mode": settings.mode.value,
        "isolation_level": settings.isolation_level,
        "snapshot_id": stage.snapshot_id,
        **_files(summary),
        **({"note": note} if note else {}),
    }
    return changed if changed is not None else _rows_changed(change, summary)


@contextmanager
def _beside(count: Count | None) -> Iterator[Callable[[], int | None]]:
    """Run `count` on a thread of its own (one that inherits this thread's Spark job group and local properties,
    so cancelling the run cancels it too) while the block runs; the block calls what this yields for its
    result (or its error). Leaving the block waits for the thread: no Spark job outlives the step."""
    if count is None:
        yield lambda: None
        return
    outcome: list[int] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(count())
        except BaseException as exc:  # handed to the step's thread
            failure.append(exc)

    thread = InheritableThread(target=run, name="substrait-spark row count", daemon=True)
    thread.start()

    def result() -> int:
        thread.join()
        if failure:
            raise failure[0]
        return outcome[0]

    try:
        yield result
    finally:
        thread.join()


def counts_rows(found: RowLevelWriter, change: Change, resolved: ResolvedTable) -> bool:
    """Whether the commit's summary will count the rows `change` changes exactly: no delete files at the pinned
    snapshot (each data file's record count is its live rows), and a DELETE, or a merge-on-read UPDATE (one
    delete position per replaced row). Otherwise the step counts them before staging."""
    if resolved.snapshot_id is None or found.summary(resolved.snapshot_id).get("total-delete-files") != "0":
        return False
    return change.command is RowLevelCommand.DELETE or found.settings(change.command).mode is WriteMode.MERGE_ON_READ


def _rows_changed(change: Change, summary: Mapping[str, str]) -> int:
    def n(key: str) -> int:
        return int(summary.get(key, 0))

    marked = n("added-position-deletes") + n("added-equality-deletes")
    if change.command is RowLevelCommand.DELETE:
        return n("deleted-records") - n("added-records") + marked
    return marked  # an UPDATE (or MERGE) in merge-on-read: one position per row it replaced


def _files(summary: Mapping[str, str]) -> dict[str, int]:
    return {name: int(summary.get(key, 0)) for name, key in _FILES.items()}
