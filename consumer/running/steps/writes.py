"""WriteRel: INSERT, DELETE, UPDATE and CTAS on catalog tables, each step one atomic Iceberg commit.

- INSERT appends (DataFrameWriterV2.append).
- DELETE and UPDATE change only the rows they change (`rowlevel`): Spark SQL's row-level commands on a staging
  copy of the table at the snapshot this run pinned, published as the table's next snapshot only if no one
  committed since the pin — copy-on-write rewrites the files holding changed rows, merge-on-read adds delete
  files, as the table's write modes say. A filter directly over a read of the same table deletes by that
  predicate; any other input deletes the table's rows equal (null-safe) to an input row.
- Where staging is not possible (a Spark Connect session, a session without Iceberg's SQL extensions, a format v3
  table, a DELETE predicate with a subquery or a non-deterministic function), DELETE and UPDATE rewrite the table:
  the rows to keep (DELETE) or the table with the after-images swapped in (UPDATE) are computed from the pinned
  snapshot and committed with `overwrite(true)` validated from that snapshot at serializable isolation — exact for
  any predicate, and a concurrent commit makes it fail, never lose rows. The step's `commit` record says which.
- UPDATE matches after-images to rows by a key: the caller's (`update_keys`), else the one the plan's WriteRel
  names in its advanced extension (a `google.protobuf.Struct` enhancement with field `substrait_spark.update_key`),
  else the table's identifier fields; refused with none (see `update_key`). The step record's `details` say which.
- CTAS creates the table (atomic create-with-data) with the table_schema's names and types, the input cast into
  them value by value exactly (`common.named`; a type that would lose information is refused up front, exit 4);
  if it exists the create mode decides. Its columns have the table_schema's nullability (`nullability`; the
  Iceberg catalogs are configured with `use-nullable-query-schema=false`, so Spark's CTAS and its atomic replace
  take the query's): a NULL in a REQUIRED column fails the step (RequiredColumnNullError) and nothing is created;
  a NULLABLE column is optional even when the input has no NULLs.
- INSERT into a table's required column: the input column is made non-nullable the same way, so a NULL there fails
  the step naming the column (Spark's own check would fail with a bare NullPointerException).
- The input's declared types may differ from the table_schema's only by a lossless cast (`conversions`);
  INSERT leaves the cast into the table's own column types to Spark's store assignment (an overflow fails).
Output: NO_OUTPUT (and UNSPECIFIED) give no rows; MODIFIED_RECORDS the rows inserted, deleted or after-images,
recomputed from pinned snapshots so they equal what was committed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import reduce
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from substrait import algebra_pb2 as alg

from ...errors import ExecutionError, PlanInvalidError, TargetRefusedError, UnsupportedFeatureError
from ...translation.nullability import with_nullability
from ...translation.relation import Relation
from ...translation.scope import Scope
from ...translation.steps import RECORDS as _RECORDS
from ...translation.steps import PendingStep, plain_named_read
from ..observe import observed
from ..report import Skip, Step, StepKind
from . import common as c
from . import rowlevel, update_key
from .log import KEY_PROPERTY, Outcome, StepLog
from .targets import WriteTarget

if TYPE_CHECKING:
    from ...translation.consumer import SubstraitConsumer
    from ..resolver import ResolvedTable

WriteRel = alg.WriteRel


@dataclass
class WriteJob:
    """One WriteRel being applied: its plan parts (the translated step), target and step record."""

    cx: SubstraitConsumer
    pending: PendingStep
    target: WriteTarget
    log: StepLog
    step: Step
    _input: Relation | None = field(default=None, repr=False)

    @property
    def rel(self) -> alg.WriteRel:
        return self.pending.rel

    @property
    def path(self) -> str:
        return self.pending.path

    @property
    def outer(self) -> Scope | None:
        return self.pending.outer

    @property
    def names(self) -> list[str]:
        return list(self.pending.names)

    @property
    def types(self) -> list[T.DataType]:
        return list(self.pending.types)

    @property
    def plan_key(self) -> list[str] | None:
        """The key the WriteRel's enhancement names (`update_key`)."""
        return list(self.pending.plan_key) if self.pending.plan_key else None

    @property
    def parts(self) -> list[str]:
        return list(self.rel.named_table.names)

    def input(self) -> Relation:
        """The input relation as translation left it (a DELETE that may be by predicate is translated here, on first
        use: by predicate it translates its parts instead), checked against the table_schema on first use."""
        if self.pending.failure is not None:
            raise self.pending.failure
        if self._input is None:
            self._input = self.pending.input or self.cx.rel(self.rel.input, f"{self.path}.input", self.outer)
            c.check_write_input(self._input, self.names, self.types, f"{self.path}.input")
        return self._input

    def table(self) -> ResolvedTable:
        return c.pinned(self.cx, self.target, self.parts, f"{self.path}.named_table")

    def columns(self, fields: list[T.StructField]) -> list[str]:
        return c.table_columns(fields, self.names, self.types, f"table {self.target.identity}", self.path)

    def current_fields(self) -> list[T.StructField]:
        """The table's columns as Spark sees them now (without recording a read of the table)."""
        return list(self.cx.spark.read.table(self.target.spark_name).schema.fields)

    @property
    def nullable(self) -> list[bool]:
        """The table_schema's nullability, column by column."""
        return list(self.pending.nullability)

    def created(self) -> DataFrame:
        """The input as the table to create: the table_schema's names, types (`c.named`) and nullability."""
        df = c.named(self.input(), self.names, self.types)
        return with_nullability(df, self.nullable, f"table {self.target.identity}")

    def writer(self, df: DataFrame, **options: str):
        return c.writer(df, self.target, self.log, self.step, **options)

    def records(self, df: DataFrame) -> DataFrame:
        """Modified rows under the plan's column names."""
        return df.toDF(*self.names)

    def records_if_wanted(self, df: Callable[[], DataFrame]) -> DataFrame | None:
        """`records` of `df()` if the plan reads them (MODIFIED_RECORDS): no DataFrame built otherwise."""
        return self.records(df()) if _RECORDS[self.rel.output] else None


Result = tuple[Outcome, DataFrame | None]


def execute_write(cx: SubstraitConsumer, log: StepLog, pending: PendingStep) -> DataFrame | None:
    """Run a WriteRel's step; the rows it modified when the relation outputs them (MODIFIED_RECORDS), else None."""
    path, rel = pending.path, pending.rel
    c.writable(log, path)
    target = c.locate(cx, log, pending.target, f"{path}.named_table")
    kind_name = StepKind.of_op(pending.op)
    modified = None
    with log.step(kind_name, target, path) as step:
        job = WriteJob(cx, pending, target, log, step)
        if not log.already_committed(step, target):
            outcome, modified = _OPS[rel.op](job)
            step.rows = outcome.rows
            if outcome.skipped:
                step.skipped(*outcome.skipped)
        elif rel.op != WriteRel.WRITE_OP_CTAS:
            job.input()  # still check the plan's input on a retry
    cx.forget_table(target.identity)  # later reads in this run see the new snapshot
    if not pending.records:
        return None
    if modified is None and step.skip is Skip.ALREADY_COMMITTED:
        modified = _committed_records(job)
    return modified


def _committed_records(job: WriteJob) -> DataFrame:
    """MODIFIED_RECORDS of a step an earlier try committed, read back from that commit's snapshot and its parent:
    the rows it added (INSERT, CTAS appending), all its rows (a CTAS that created or replaced the table), or the
    rows it removed (DELETE) — each exact as a multiset. UPDATE's after-images cannot be told from unchanged rows
    this way, so they are refused."""
    found = job.target.committed_snapshot(KEY_PROPERTY, job.log.found_key(job.step))
    if found is None or job.rel.op == WriteRel.WRITE_OP_UPDATE:
        raise TargetRefusedError(
            "MODIFIED_RECORDS of an UPDATE step an earlier try already committed (its after-images are not "
            "recoverable from the snapshots)",
            f"{job.path}.output",
        )
    snapshot, parent = found
    at = job.cx.spark.read.format("iceberg").option("snapshot-id", str(snapshot)).load(job.target.spark_name)
    columns = [c.column(n) for n in job.columns(list(at.schema.fields))]
    whole = job.rel.op == WriteRel.WRITE_OP_CTAS and (
        parent is None or job.rel.create_mode == WriteRel.CREATE_MODE_REPLACE_IF_EXISTS
    )
    if whole:
        return job.records(at.select(*columns))
    before = job.cx.spark.read.format("iceberg").option("snapshot-id", str(parent)).load(job.target.spark_name)
    after, before = at.select(*columns), before.select(*columns)
    changed = before.exceptAll(after) if job.rel.op == WriteRel.WRITE_OP_DELETE else after.exceptAll(before)
    return job.records(changed)


# --- the ops -----------------------------------------------------------------------------------------------


def _insert(job: WriteJob) -> Result:
    fields = job.current_fields()
    df = c.named(job.input(), job.columns(fields))  # Spark casts into the table's types (store assignment)
    # A required table column takes a non-nullable input only (Iceberg's check): a NULL fails the step.
    df = with_nullability(df, [f.nullable for f in fields], f"table {job.target.identity}", widen=False)
    counted, obs = observed(df, rows=c.count_rows())
    job.writer(counted).append()
    return Outcome(int(obs.get["rows"])), job.records(df)


def _ctas(job: WriteJob) -> Result:
    if not job.target.exists():  # the table_schema's types and nullability, not the input's
        df = job.created()
        counted, obs = observed(df, rows=c.count_rows())
        job.writer(counted).create()
        return Outcome(int(obs.get["rows"])), job.records(df)
    mode = _CREATE_MODES.get(job.rel.create_mode)
    if mode is None:
        raise UnsupportedFeatureError(f"create mode {job.rel.create_mode}", f"{job.path}.create_mode")
    return mode(job)


def _append_if_exists(job: WriteJob) -> Result:
    return _insert(job)


def _replace_if_exists(job: WriteJob) -> Result:
    """An atomic replace: new schema (the table_schema's types) and rows in one commit; the table's history (and
    keys) are kept."""
    df = job.created()
    counted, obs = observed(df, rows=c.count_rows())
    job.writer(counted).replace()
    return Outcome(int(obs.get["rows"])), job.records(df)


def _ignore_if_exists(job: WriteJob) -> Result:
    job.input()
    return Outcome(0, skipped=(Skip.TABLE_EXISTS, "table exists (CREATE_MODE_IGNORE_IF_EXISTS)")), None


def _error_if_exists(job: WriteJob) -> Result:
    mode = WriteRel.CreateMode.Name(job.rel.create_mode)
    raise ExecutionError(f"table {job.target.identity} already exists ({mode})", f"{job.path}.create_mode")


def _delete(job: WriteJob) -> Result:
    by_predicate = _same_table_predicate(job)
    return by_predicate if by_predicate is not None else _delete_matching(job)


def _same_table_predicate(job: WriteJob) -> Result | None:
    """`DELETE … WHERE p`: the input is a filter directly over a plain read of the target table.

    The read is the target when its name *resolves* to the target's identity (`["t"]` and `["main", "t"]` name
    the same catalog table; raw names are not compared). Its pinned snapshot is the one the rewrite keeps rows
    from and validates against: the target is not resolved a second time under its other spelling (a commit
    between two resolutions would otherwise be lost). Anything that makes the input more than "the table's rows
    where p" — a read filter, a projection, an emit, columns in another order than the table_schema — takes the
    exact general path instead (`_delete_matching`)."""
    inp = job.rel.input
    if inp.WhichOneof("rel_type") != "filter" or inp.filter.common.WhichOneof("emit_kind") == "emit":
        return None
    read = inp.filter.input
    resolved = _plain_read_of_target(job, read, f"{job.path}.input.filter.input")
    if resolved is None:
        return None
    path = f"{job.path}.input.filter"
    source = job.cx.rel(read, f"{path}.input", job.outer)
    c.check_input(source, job.names, job.types, f"{job.path}.input")
    columns = job.columns(resolved.fields)
    row_level = rowlevel.writer(job, resolved)
    if row_level is not None:
        table = Relation(resolved.df, columns, list(source.types))  # the table's own names: see `_condition_on`
        hit = _condition_on(job, table, inp.filter.condition, f"{path}.condition")
        if hit is not None and row_level.is_plain_filter(resolved.df.filter(hit)):
            removed = rowlevel.delete_where(job, row_level, resolved, hit)
            cond: Column = hit
            return Outcome(removed), job.records_if_wanted(lambda: resolved.df.filter(cond).select(*table.cols()))
        rowlevel.rewritten(job, "the DELETE's condition has a subquery or a non-deterministic function")
    # Materialized first: the condition's Columns must name what `source.df` holds (the read may rename lazily).
    scope = Scope(source.materialized(), job.outer)
    hit = F.coalesce(job.cx.expression(inp.filter.condition, scope, f"{path}.condition").col, F.lit(False))
    rows = scope.rel.df  # the table's rows, with the columns a subquery in the condition joined on (one per row)
    counted, obs = observed(rows, removed=c.count_if(hit))
    keep = counted.filter(~hit)
    job.writer(c.named(source.with_df(keep), columns), **c.validated_from(resolved.snapshot_id)).overwrite(F.lit(True))
    rowlevel.rewrite_committed(job)
    return Outcome(int(obs.get["removed"])), job.records(rows.filter(hit).select(*source.cols()))


def _condition_on(job: WriteJob, table: Relation, condition: alg.Expression, path: str) -> Column | None:
    """The DELETE's condition over the table's own column names — so one Column filters the pinned read and the
    staging copy alike — if it needs nothing but the table's row (no subquery joined in). As it is: a filter and
    Spark's DELETE both keep the rows where it is NULL, and Spark prunes files only by a condition it can push."""
    scope = Scope(table, job.outer)
    hit = job.cx.expression(condition, scope, path).col
    return hit if scope.rel is table else None


def _plain_read_of_target(job: WriteJob, read: alg.Rel, path: str) -> ResolvedTable | None:
    """The target as this run pinned it, if `read` yields exactly its rows with the columns in the table_schema's
    order; else None. A read filter (exact or best-effort: both are applied) would leave the rows it drops out of
    the rewrite, i.e. delete them too."""
    body = plain_named_read(read, job.names)  # its columns are positional: another order means other values
    if body is None:
        return None
    resolved = job.cx.resolve_table(list(body.named_table.names), f"{path}.read.named_table")
    return resolved if resolved.identity == job.target.identity else None


def _delete_matching(job: WriteJob) -> Result:
    """Remove the table's rows equal, null-safe, to any input row."""
    inp, resolved = job.input().materialized(), job.table()
    columns = job.columns(resolved.fields)
    before = _aliased(resolved.df, columns, "__t")
    rows = inp.df.select(*[inp.col(i).alias(f"__d{i}") for i in range(len(columns))])
    match = _all(column_pairs(len(columns), "__t", "__d", null_safe=True))
    back = [c.column(f"__t{i}").alias(n) for i, n in enumerate(columns)]
    row_level = rowlevel.writer(job, resolved)
    if row_level is not None:

        def removed() -> DataFrame:
            return before.join(rows, match, "left_semi").select(*back)

        deleted = rowlevel.delete_matching(job, row_level, resolved, c.named(inp, columns), lambda: removed().count())
        return Outcome(deleted), job.records_if_wanted(removed)
    counted, obs = observed(before, total=c.count_rows())
    keep, kept = observed(counted.join(rows, match, "left_anti"), kept=c.count_rows())
    job.writer(keep.select(*back), **c.validated_from(resolved.snapshot_id)).overwrite(F.lit(True))
    rowlevel.rewrite_committed(job)
    removed_rows = before.join(rows, match, "left_semi").select(*back)
    return Outcome(int(obs.get["total"]) - int(kept.get["kept"])), job.records(removed_rows)


def _update(job: WriteJob) -> Result:
    """After-images replace the rows with the same key values; other input rows match nothing."""
    key = _update_key(job)
    inp, resolved = job.input().materialized(), job.table()
    columns = job.columns(resolved.fields)
    at = _key_positions(job, key, columns)
    keys = [columns[i] for i in at]
    job.step.details = {"update_key": keys, "update_key_source": key.source}  # the table's spelling
    after = inp.df.select(*[inp.col(i).alias(f"__u{i}") for i in range(len(columns))], F.lit(True).alias("__m"))
    before = _aliased(resolved.df, columns, "__t")
    match = _all([c.column(f"__t{i}") == c.column(f"__u{i}") for i in at])

    def images() -> DataFrame:
        return after.join(before, match, "left_semi").select(*[c.column(f"__u{i}") for i in range(len(columns))])

    row_level = rowlevel.writer(job, resolved)
    if row_level is not None:
        named = c.named(inp, columns).persist()  # checked, counted and read by the statement: computed once

        def check(count: bool) -> rowlevel.Count | None:
            """Refuse duplicate keys (computing the after-images into the cache); with `count`, what counts the
            table rows they match."""
            if not count:
                _refuse_duplicate_keys(named, keys, keys, job.path)
                return None
            return _matched_rows(named, before, at, keys, job.path)

        try:
            updated = rowlevel.update_by_key(job, row_level, resolved, named, keys, check)
        finally:
            named.unpersist()
        return Outcome(updated), job.records_if_wanted(images)
    _refuse_duplicate_keys(after, [f"__u{i}" for i in at], keys, job.path)
    joined, obs = observed(before.join(after, match, "left"), updated=c.count_if(c.column("__m").isNotNull()))
    new = joined.select(
        *[
            F.when(c.column("__m").isNotNull(), c.column(f"__u{i}")).otherwise(c.column(f"__t{i}")).alias(n)
            for i, n in enumerate(columns)
        ]
    )
    job.writer(new, **c.validated_from(resolved.snapshot_id)).overwrite(F.lit(True))
    rowlevel.rewrite_committed(job)
    return Outcome(int(obs.get["updated"])), job.records(images())


def _update_key(job: WriteJob) -> update_key.UpdateKey:
    """The caller's key, else the plan's, else the table's identifier fields (`update_key`)."""
    given = update_key.caller_key(job.log.update_keys, job.target.identity, job.parts)
    if given:
        return update_key.UpdateKey(given, update_key.CALLER)
    if job.plan_key:
        return update_key.UpdateKey(job.plan_key, update_key.PLAN)
    fields = job.target.identifier_fields()
    if fields:
        return update_key.UpdateKey(fields, update_key.IDENTIFIER_FIELDS)
    raise TargetRefusedError(
        f"UPDATE write: table {job.target.identity} has no identifier fields to match after-images by, and no key "
        f"was given: {update_key.HOW_TO_GIVE_ONE}",
        f"{job.path}.op",
    )


_KEY_AT = {  # where a key column the table_schema lacks is reported, by the key's source
    update_key.CALLER: ("the caller's update_keys", "table_schema"),
    update_key.PLAN: (f"the plan's {update_key.UPDATE_KEY_FIELD!r}", "advanced_extension.enhancement"),
    update_key.IDENTIFIER_FIELDS: ("the table's identifier fields", "table_schema"),
}


def _key_positions(job: WriteJob, key: update_key.UpdateKey, columns: list[str]) -> list[int]:
    """Each key column's position in the table_schema (named in any case, each once)."""
    lowered = [n.lower() for n in columns]
    missing = [k for k in key.columns if k.lower() not in lowered]
    if missing:
        what, where = _KEY_AT[key.source]
        raise PlanInvalidError(
            f"UPDATE write: key column(s) {missing} from {what} not in the table_schema {columns}",
            f"{job.path}.{where}",
        )
    return list(dict.fromkeys(lowered.index(k.lower()) for k in key.columns))


def _matched_rows(after: DataFrame, before: DataFrame, at: list[int], keys: list[str], path: str) -> rowlevel.Count:
    """What counts the rows of `before` (`__t<i>` columns) whose key equals an after-image's (`after`: the table's
    column names, cached), refusing duplicate keys now. One pass over the after-images gives both the duplicate
    check and each key column's range: the count then reads only the table's files whose statistics overlap the
    range (an UPDATE of clustered keys touches few), and joins what it reads with the keys."""
    per_key = after.groupBy(*[c.column(k) for k in keys]).agg(c.count_rows().alias("__n"))
    ranged = [(i, k) for i, k in zip(at, keys, strict=True) if isinstance(after.schema[k].dataType, _RANGED)]
    found = per_key.agg(F.max("__n"), *[f(c.column(k)) for _, k in ranged for f in (F.min, F.max)]).first()
    assert found is not None, "an aggregate without grouping keys has one row"
    if (found[0] or 0) > 1:
        _refuse_duplicate_keys(after, keys, keys, path)
    if found[0] is None:  # no after-images
        return lambda: 0
    bounds = iter(found[1:])
    within = [c.column(f"__t{i}").between(F.lit(next(bounds)), F.lit(next(bounds))) for i, _ in ranged]
    matched = after.select(*[c.column(k).alias(f"__u{i}") for i, k in zip(at, keys, strict=True)])
    match = _all([c.column(f"__t{i}") == c.column(f"__u{i}") for i in at])
    return before.filter(_all(within)).join(matched, match, "left_semi").count


# Key types whose values come back from Spark and compare by range exactly as by equality (floating point has NaN
# and -0.0; a local-time timestamp may not survive the trip through Python around a clock change).
_RANGED = (T.IntegralType, T.DecimalType, T.StringType, T.DateType, T.TimestampNTZType)


def _refuse_duplicate_keys(after: DataFrame, columns: list[str], keys: list[str], path: str) -> None:
    """Refuse several after-images with one key (`columns`: the key's columns in `after`; `keys`: their names)."""
    per_key = after.groupBy(*[c.column(n) for n in columns]).agg(c.count_rows().alias("__n"))
    dup = per_key.filter(F.col("__n") > 1).select(*[c.column(n) for n in columns]).limit(1).collect()
    if dup:
        raise ExecutionError(f"UPDATE write: several after-images for key {dict(zip(keys, dup[0], strict=True))}", path)


def _aliased(df: DataFrame, columns: list[str], prefix: str) -> DataFrame:
    return df.select(*[c.column(n).alias(f"{prefix}{i}") for i, n in enumerate(columns)])


def column_pairs(n: int, left: str, right: str, null_safe: bool) -> list[Column]:
    eq = (lambda a, b: a.eqNullSafe(b)) if null_safe else (lambda a, b: a == b)
    return [eq(c.column(f"{left}{i}"), c.column(f"{right}{i}")) for i in range(n)]


def _all(conds: list[Column]) -> Column:
    return reduce(lambda a, b: a & b, conds) if conds else F.lit(True)


_OPS: dict[int, Callable[[WriteJob], Result]] = {
    WriteRel.WRITE_OP_INSERT: _insert,
    WriteRel.WRITE_OP_DELETE: _delete,
    WriteRel.WRITE_OP_UPDATE: _update,
    WriteRel.WRITE_OP_CTAS: _ctas,
}
_CREATE_MODES: dict[int, Callable[[WriteJob], Result]] = {
    WriteRel.CREATE_MODE_UNSPECIFIED: _error_if_exists,  # as SQL's CREATE TABLE … AS
    WriteRel.CREATE_MODE_ERROR_IF_EXISTS: _error_if_exists,
    WriteRel.CREATE_MODE_APPEND_IF_EXISTS: _append_if_exists,
    WriteRel.CREATE_MODE_REPLACE_IF_EXISTS: _replace_if_exists,
    WriteRel.CREATE_MODE_IGNORE_IF_EXISTS: _ignore_if_exists,
}
