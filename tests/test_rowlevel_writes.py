"""DELETE and UPDATE as Iceberg row-level operations, on a table of 40+ data files, both catalog stores.

What a user relies on, checked through pyiceberg's snapshot summaries and against DuckDB running the same change
on the same rows: a change touching one file rewrites that one file under copy-on-write and writes delete files
only under merge-on-read; the table holds exactly DuckDB's answer afterwards; the commit is one snapshot on top of
the pinned one, carrying the step key; a commit by someone else between the pin and the step's commit fails the
step and leaves the table as the other writer left it; a try that crashed between staging and publishing is
applied once by the retry; conditions Spark cannot take as a DELETE's rewrite the table, saying why.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from iceberg_stack import CATALOG_STORES, Lake, store_lake
from plan_builder import (
    PlanBuilder,
    WriteRel,
    field,
    filter_,
    fp64,
    i64,
    in_subquery,
    lit,
    named,
    string,
    virtual,
    write,
)
from substrait_spark.consumer.errors import ConcurrentCommitError, ExecutionError
from substrait_spark.consumer.loading.loader import LoadedPlan
from substrait_spark.consumer.running.runner import run_loaded
from substrait_spark.consumer.running.sinks import Sink
from substrait_spark.consumer.running.steps import writes
from substrait_spark.consumer.running.steps.log import KEY_PROPERTY
from substrait_spark.hooks import iceberg_jvm, iceberg_stage
from substrait_spark.hooks.iceberg import Catalogs
from substrait_spark.hooks.iceberg_writes import WritableIcebergResolver
from substrait_spark.hooks.spark import job_group

pytestmark = [pytest.mark.spark, pytest.mark.iceberg]

W = WriteRel
SLOT_SHA = "0/000000000000"  # in a step key: slot 0, the first digits of the sha256 `run` gives every plan
NAMES = ["id", "grp", "amount"]
TYPES = [i64(), string(), fp64()]
ARROW = pa.schema([("id", pa.int64()), ("grp", pa.string()), ("amount", pa.float64())])
FILES, PER_FILE = 40, 50  # ids 0..1999, file k holds ids 50k..50k+49
MODES = ["copy-on-write", "merge-on-read"]


@pytest.fixture(scope="module", params=CATALOG_STORES)
def lake(request, iceberg_spark, tmp_path_factory) -> Lake:
    return store_lake(request, iceberg_spark, tmp_path_factory, "rl")


@pytest.fixture(scope="module")
def catalogs(lake: Lake) -> Catalogs:
    return lake.catalogs()


@pytest.fixture
def ns(lake: Lake, request) -> str:
    import hashlib

    test = request.node.name
    name = f"rl_{test.split('[')[0].removeprefix('test_')[:40]}_{hashlib.sha1(test.encode()).hexdigest()[:8]}"
    lake.catalog.create_namespace_if_not_exists(name)
    return name


def source_rows() -> pa.Table:
    """2000 rows; every 7th amount NULL, every 50th row twice (duplicates in the table)."""
    rows = [{"id": i, "grp": f"g{i % 5}", "amount": None if i % 7 == 0 else i * 1.5} for i in range(FILES * PER_FILE)]
    rows += [dict(rows[i]) for i in range(0, len(rows), PER_FILE)]
    return pa.Table.from_pylist(sorted(rows, key=lambda r: r["id"]), schema=ARROW)


def make_table(lake: Lake, ns: str, mode: str = "copy-on-write", **modes: str) -> Any:
    """ns.t holding `source_rows()` in 40 data files, file k the ids 50k..50k+49 (added in one commit), the table's
    DELETE, UPDATE and MERGE in `mode` unless `modes` says otherwise (`update="merge-on-read"`)."""
    from pathlib import Path

    import pyarrow.parquet as pq

    modes = {f"write.{command}.mode": modes.get(command, mode) for command in ("delete", "update", "merge")}
    table = lake.catalog.create_table(f"{ns}.t", schema=ARROW, properties=modes)
    rows = source_rows().to_pylist()
    paths = []
    Path(table.location().removeprefix("file://"), "data").mkdir(parents=True, exist_ok=True)
    for k in range(FILES):
        path = f"{table.location()}/data/seed-{k:02d}.parquet"
        part = [r for r in rows if k * PER_FILE <= r["id"] < (k + 1) * PER_FILE]
        pq.write_table(pa.Table.from_pylist(part, schema=ARROW), path.removeprefix("file://"))
        paths.append(path)
    table.add_files(paths)
    table = lake.catalog.load_table(f"{ns}.t")
    assert len(table.inspect.files()) == FILES  # the premise: a change of one file's rows among 40
    return table


@dataclass
class Oracle:
    """DuckDB holding the same rows; runs the SQL that says what the plan does."""

    con: Any

    @classmethod
    def start(cls) -> Oracle:
        con = duckdb.connect(":memory:")
        rows = source_rows()  # noqa: F841 - read by DuckDB through the Python scope
        con.execute("CREATE TABLE source AS SELECT * FROM rows")
        con.execute("CREATE TABLE t AS SELECT * FROM source")
        return cls(con)

    def after(self, *statements: str) -> list[tuple]:
        for s in statements:
            self.con.execute(s)
        return sorted_multiset(self.con.execute("SELECT id, grp, amount FROM t").fetchall())

    def count(self, sql: str) -> int:
        return self.con.execute(sql).fetchone()[0]


@pytest.fixture
def oracle() -> Iterator[Oracle]:
    o = Oracle.start()
    yield o
    o.con.close()


def sorted_multiset(rows) -> list[tuple]:
    return sorted((tuple(r) for r in rows), key=lambda r: tuple((v is None, v) for v in r))


def content(lake: Lake, ns: str, name: str = "t") -> list[tuple]:
    """The table's rows as pyiceberg reads its current snapshot (delete files applied)."""
    rows = lake.catalog.load_table(f"{ns}.{name}").scan().to_arrow().to_pylist()
    return sorted_multiset((r["id"], r["grp"], r["amount"]) for r in rows)


def run(lake: Lake, catalogs: Catalogs, plan, run_key=None, update_keys=None, resolver=None):
    loaded = LoadedPlan(plan, None, "0" * 64, "binary", plan.version.producer, None)
    resolver = resolver or WritableIcebergResolver(catalogs)
    return run_loaded(loaded, lake.spark, resolver, sink=Sink("preview", max_rows=None), run_key=run_key,
                      update_keys=update_keys)  # fmt: skip


def delete_where(ns: str, lo: int, hi: int, output=W.OUTPUT_MODE_NO_OUTPUT):
    """DELETE FROM ns.t WHERE id >= lo AND id < hi, as a plan."""
    b = PlanBuilder()
    cond = b.call("and", b.call("gte", field(0), lit(lo, i64())), b.call("lt", field(0), lit(hi, i64())))
    rel = write([ns, "t"], filter_(named([ns, "t"], NAMES, TYPES), cond), NAMES, TYPES, op=W.WRITE_OP_DELETE,
                output=output)  # fmt: skip
    return b.plan(rel, NAMES)


def summary(table) -> dict[str, str]:
    return dict(table.current_snapshot().summary.additional_properties)


def counts(s: dict[str, str]) -> tuple[int, int, int, int]:
    """(data files added, data files removed, delete files added, delete files removed)."""
    return tuple(int(s.get(k, 0)) for k in ("added-data-files", "deleted-data-files", "added-delete-files",
                                            "removed-delete-files"))  # fmt: skip


def committed_on_pinned(lake: Lake, ns: str, pinned: int, key: str) -> dict[str, str]:
    """The table's new snapshot is one commit on the pinned one, carrying the step key; no staging branch left."""
    table = lake.catalog.load_table(f"{ns}.t")
    assert table.current_snapshot().parent_snapshot_id == pinned
    s = summary(table)
    assert s[KEY_PROPERTY] == key
    assert set(table.refs()) == {"main"}
    return s


# --- the figures the issue asks for -------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_delete_by_predicate_touches_one_file(lake, catalogs, ns, oracle, mode):
    pinned = make_table(lake, ns, mode).current_snapshot().snapshot_id
    report = run(lake, catalogs, delete_where(ns, 510, 530, W.OUTPUT_MODE_MODIFIED_RECORDS), run_key=f"rl/{ns}")
    s = committed_on_pinned(lake, ns, pinned, f"rl/{ns}/{SLOT_SHA}/step-0")
    if mode == "copy-on-write":
        assert counts(s) == (1, 1, 0, 0)  # the one file holding ids 500..549 rewritten, no delete files
    else:
        assert counts(s) == (0, 0, 1, 0)  # one delete file, no data file touched
    expected = oracle.after("DELETE FROM t WHERE id >= 510 AND id < 530")
    assert content(lake, ns) == expected
    step = report.steps[0]
    assert step.rows == oracle.count("SELECT count(*) FROM source WHERE id >= 510 AND id < 530") == 20
    assert step.commit == {
        "method": "row-level",
        "statement": "delete-where",
        "mode": mode,
        "isolation_level": "serializable",
        "snapshot_id": step.snapshot_after,
        "added_data_files": counts(s)[0],
        "removed_data_files": counts(s)[1],
        "added_delete_files": counts(s)[2],
        "removed_delete_files": counts(s)[3],
    }
    removed = oracle.con.execute("SELECT id, grp, amount FROM source WHERE id >= 510 AND id < 530").fetchall()
    assert sorted_multiset(report.outputs[0].preview) == sorted_multiset(removed)  # MODIFIED_RECORDS


# (write.update.mode, write.merge.mode) -> the statement that ran, the files it wrote, a note
UPDATE_MODES = {
    ("copy-on-write", "copy-on-write"): ("merge-by-key", (1, 1, 0, 0), False),
    ("merge-on-read", "merge-on-read"): ("merge-by-key", (1, 0, 1, 0), False),  # new row versions + a delete file
    ("copy-on-write", "merge-on-read"): ("update-by-key", (1, 1, 0, 0), False),  # the update mode, honoured
    ("merge-on-read", "copy-on-write"): ("merge-by-key", (1, 1, 0, 0), True),  # Spark 3.5 cannot: said so
}


@pytest.mark.parametrize(("update", "merge"), list(UPDATE_MODES), ids=lambda m: m.split("-")[0])
def test_update_by_key_touches_one_file(lake, catalogs, ns, oracle, update, merge):
    pinned = make_table(lake, ns, update=update, merge=merge).current_snapshot().snapshot_id
    after = [(i, "updated", i * 100.0) for i in (1200, 1210, 1249)] + [(99999, "nobody", 0.0)]  # 1200: twice
    plan = PlanBuilder().plan(write([ns, "t"], virtual(NAMES, TYPES, after), NAMES, TYPES, op=W.WRITE_OP_UPDATE),
                              NAMES)  # fmt: skip
    report = run(lake, catalogs, plan, run_key=f"rl/{ns}", update_keys={f"{ns}.t": ["id"]})
    s = committed_on_pinned(lake, ns, pinned, f"rl/{ns}/{SLOT_SHA}/step-0")
    statement, files, noted = UPDATE_MODES[(update, merge)]
    assert counts(s) == files
    expected = oracle.after(
        "CREATE TABLE a (id BIGINT, grp VARCHAR, amount DOUBLE)",
        "INSERT INTO a VALUES " + ", ".join(f"({i}, '{g}', {x})" for i, g, x in after),
        "UPDATE t SET grp = a.grp, amount = a.amount FROM a WHERE t.id = a.id",
    )
    assert content(lake, ns) == expected
    step = report.steps[0]
    assert step.rows == oracle.count("SELECT count(*) FROM source WHERE id IN (1200, 1210, 1249)") == 4
    mode = merge if statement == "merge-by-key" else update
    assert [step.commit[k] for k in ("method", "statement", "mode")] == ["row-level", statement, mode]
    assert ("note" in step.commit) == noted
    assert step.details == {"update_key": ["id"], "update_key_source": "caller"}


def update_plan(ns: str, after: list[tuple]):
    return PlanBuilder().plan(write([ns, "t"], virtual(NAMES, TYPES, after), NAMES, TYPES, op=W.WRITE_OP_UPDATE),
                              NAMES)  # fmt: skip


@pytest.mark.parametrize(("update", "merge"), list(UPDATE_MODES), ids=lambda m: m.split("-")[0])
def test_two_after_images_for_one_key_are_refused_and_change_nothing(lake, catalogs, ns, oracle, update, merge):
    """Which of two after-images for one key is the row's new value cannot be told: the step fails naming the key,
    in every write mode, and the table stays at the pinned snapshot."""
    pinned = make_table(lake, ns, update=update, merge=merge).current_snapshot().snapshot_id
    plan = update_plan(ns, [(1210, "one", 1.0), (1211, "other", 2.0), (1210, "two", 3.0)])
    with pytest.raises(ExecutionError, match=r"several after-images for key \{'id': 1210\}") as info:
        run(lake, catalogs, plan, run_key=f"rl/{ns}", update_keys={f"{ns}.t": ["id"]})
    assert info.value.report.steps[0].status == "failed"
    after = lake.catalog.load_table(f"{ns}.t")
    assert after.current_snapshot().snapshot_id == pinned and set(after.refs()) == {"main"}
    assert content(lake, ns) == oracle.after()


def counting(monkeypatch, seen: dict[str, Any], fail: bool = False) -> None:
    """Record where the step's count of updated rows runs (a copy-on-write UPDATE counts them: Iceberg's
    summary counts the rewritten files' rows); with `fail`, the count fails once it has run."""
    matched = writes._matched_rows

    def matched_rows(*args, **kwargs):
        count = matched(*args, **kwargs)

        def observed() -> int:
            seen["thread"] = threading.current_thread()
            seen["group"] = args[0].sparkSession.sparkContext.getLocalProperty("spark.jobGroup.id")
            n = count()
            if fail:
                raise ExecutionError("the count failed")
            return n

        return observed

    monkeypatch.setattr(writes, "_matched_rows", matched_rows)


def test_the_update_count_runs_beside_the_statement_in_the_run_job_group(lake, catalogs, ns, oracle, monkeypatch):
    """The count of rows a copy-on-write UPDATE replaces runs while its statement runs — on a thread of its own,
    in the caller's Spark job group (cancelling the run's jobs cancels it too) — and stays exact."""
    pinned = make_table(lake, ns).current_snapshot().snapshot_id
    seen: dict[str, Any] = {}
    counting(monkeypatch, seen)
    after = [(i, "updated", 1.0) for i in (0, 50, 100, 1999)] + [(-5, "nobody", 0.0)]  # 0, 50, 100: twice each
    with job_group(lake.spark, f"group-{ns}", "the run's jobs"):
        report = run(lake, catalogs, update_plan(ns, after), run_key=f"rl/{ns}", update_keys={f"{ns}.t": ["id"]})
    committed_on_pinned(lake, ns, pinned, f"rl/{ns}/{SLOT_SHA}/step-0")
    assert seen["thread"] is not threading.main_thread() and seen["group"] == f"group-{ns}"
    step = report.steps[0]
    assert step.rows == oracle.count("SELECT count(*) FROM source WHERE id IN (0, 50, 100, 1999)") == 7
    expected = oracle.after("UPDATE t SET grp = 'updated', amount = 1.0 WHERE id IN (0, 50, 100, 1999)")
    assert content(lake, ns) == expected


def test_an_update_whose_count_fails_publishes_nothing(lake, catalogs, ns, oracle, monkeypatch):
    """The count is awaited before publishing: when it fails the step fails, the staged commit is discarded and the
    table stays at the pinned snapshot."""
    pinned = make_table(lake, ns).current_snapshot().snapshot_id
    counting(monkeypatch, {}, fail=True)
    plan = update_plan(ns, [(1200, "updated", 1.0)])
    with pytest.raises(ExecutionError, match="the count failed") as info:
        run(lake, catalogs, plan, run_key=f"rl/{ns}", update_keys={f"{ns}.t": ["id"]})
    assert info.value.report.steps[0].status == "failed"
    after = lake.catalog.load_table(f"{ns}.t")
    assert after.current_snapshot().snapshot_id == pinned and set(after.refs()) == {"main"}
    assert all(KEY_PROPERTY not in (s.summary.additional_properties if s.summary else {}) for s in after.snapshots())
    assert content(lake, ns) == oracle.after()


@pytest.mark.parametrize("mode", MODES)
def test_delete_of_matching_rows_is_a_multiset_null_safe_delete(lake, catalogs, ns, oracle, mode):
    """Every table row equal (null-safe) to an input row goes, as many times as the table holds it; duplicate
    input rows delete nothing more."""
    pinned = make_table(lake, ns, mode).current_snapshot().snapshot_id
    doomed = [(700, "g0", None), (700, "g0", None), (707, "g2", None), (708, "g3", 1.0), (99999, None, None)]
    plan = PlanBuilder().plan(write([ns, "t"], virtual(NAMES, TYPES, doomed), NAMES, TYPES, op=W.WRITE_OP_DELETE),
                              NAMES)  # fmt: skip
    report = run(lake, catalogs, plan, run_key=f"rl/{ns}")
    s = committed_on_pinned(lake, ns, pinned, f"rl/{ns}/{SLOT_SHA}/step-0")
    assert counts(s) == ((1, 1, 0, 0) if mode == "copy-on-write" else (0, 0, 1, 0))
    expected = oracle.after(
        "CREATE TABLE d (id BIGINT, grp VARCHAR, amount DOUBLE)",
        "INSERT INTO d VALUES (700, 'g0', NULL), (700, 'g0', NULL), (707, 'g2', NULL), (708, 'g3', 1.0), "
        "(99999, NULL, NULL)",
        "DELETE FROM t WHERE EXISTS (SELECT 1 FROM d WHERE d.id IS NOT DISTINCT FROM t.id "
        "AND d.grp IS NOT DISTINCT FROM t.grp AND d.amount IS NOT DISTINCT FROM t.amount)",
    )
    assert content(lake, ns) == expected
    assert report.steps[0].rows == 3  # id 700 twice (the table holds it twice), id 707; NULL amounts match NULL
    assert report.steps[0].commit["statement"] == "delete-matching"


# --- guarantees ----------------------------------------------------------------------------------------------


@dataclass
class AppendsAfterPinning(WritableIcebergResolver):
    """Another writer commits to `table` right after this run pinned its snapshot."""

    table: Any = None

    def resolve(self, spark, names):
        resolved = super().resolve(spark, names)
        if self.table is not None:
            self.table.append(pa.Table.from_pylist([{"id": -1, "grp": "late", "amount": 0.0}], schema=ARROW))
            self.table = None
        return resolved


def test_a_commit_between_pin_and_step_fails_the_step_and_loses_nothing(lake, catalogs, ns, oracle):
    table = make_table(lake, ns)
    resolver = AppendsAfterPinning(catalogs, table=table)
    with pytest.raises(ConcurrentCommitError, match="changed since this run read its snapshot") as info:
        run(lake, catalogs, delete_where(ns, 510, 530), run_key=f"rl/{ns}", resolver=resolver)
    assert info.value.exit_code == 1 and info.value.report.steps[0].status == "failed"
    after = lake.catalog.load_table(f"{ns}.t")
    assert [s.summary.additional_properties.get(KEY_PROPERTY) for s in after.snapshots()] == [None, None]
    assert set(after.refs()) == {"main"}
    assert content(lake, ns) == oracle.after("INSERT INTO t VALUES (-1, 'late', 0.0)")  # theirs kept, ours not applied


@pytest.mark.parametrize("mode", MODES)
def test_a_commit_while_the_statement_runs_fails_the_publish(lake, catalogs, ns, oracle, monkeypatch, mode):
    """The other writer commits after the staged statement ran, before it is published: the compare-and-set on
    `main` refuses it, the staged snapshot is discarded."""
    make_table(lake, ns, mode)
    staged = iceberg_stage.IcebergStage.delete_where

    def then_someone_commits(self, rows):
        staged(self, rows)
        late = pa.Table.from_pylist([{"id": -1, "grp": "late", "amount": 0.0}], schema=ARROW)
        lake.catalog.load_table(f"{ns}.t").append(late)

    monkeypatch.setattr(iceberg_stage.IcebergStage, "delete_where", then_someone_commits)
    with pytest.raises(ConcurrentCommitError):
        run(lake, catalogs, delete_where(ns, 510, 530), run_key=f"rl/{ns}")
    after = lake.catalog.load_table(f"{ns}.t")
    assert set(after.refs()) == {"main"}
    assert all(KEY_PROPERTY not in s.summary.additional_properties for s in after.snapshots())  # expired
    assert content(lake, ns) == oracle.after("INSERT INTO t VALUES (-1, 'late', 0.0)")


def test_a_try_that_crashed_before_publishing_is_applied_once_by_the_retry(lake, catalogs, ns, oracle):
    """What a crash between the staged commit and its publication leaves — a staging branch whose snapshot carries
    the step key — is neither taken for the step's commit nor left behind by the retry."""
    table = make_table(lake, ns)
    pinned = table.current_snapshot().snapshot_id
    key = f"rl/{ns}/{SLOT_SHA}/step-0"
    branch = f"{iceberg_stage._branch_prefix(key)}crashed0"
    table.manage_snapshots().create_branch(pinned, branch).commit()
    with iceberg_jvm.commit_properties(lake.spark, {KEY_PROPERTY: key, iceberg_stage.STAGED_PROPERTY: branch}):
        lake.spark.sql(f"DELETE FROM {lake.name}.{ns}.t.branch_{branch} WHERE id >= 510 AND id < 530")
    crashed = lake.catalog.load_table(f"{ns}.t").refs()[branch].snapshot_id

    report = run(lake, catalogs, delete_where(ns, 510, 530), run_key=f"rl/{ns}")
    assert report.steps[0].status == "committed" and report.steps[0].rows == 20
    committed_on_pinned(lake, ns, pinned, key)
    after = lake.catalog.load_table(f"{ns}.t")
    assert after.snapshot_by_id(crashed) is None  # the crashed try's snapshot expired with its branch
    assert content(lake, ns) == oracle.after("DELETE FROM t WHERE id >= 510 AND id < 530")
    again = run(lake, catalogs, delete_where(ns, 510, 530), run_key=f"rl/{ns}")
    assert again.steps[0].status == "skipped" and lake.catalog.load_table(f"{ns}.t").snapshots() == after.snapshots()


def test_a_delete_whose_condition_has_a_subquery_rewrites_the_table_and_says_why(lake, catalogs, ns, oracle):
    make_table(lake, ns)
    b = PlanBuilder()
    cond = in_subquery([field(0)], virtual(["k"], [i64()], [(3,), (515,), (1999,)]))
    rel = write([ns, "t"], filter_(named([ns, "t"], NAMES, TYPES), cond), NAMES, TYPES, op=W.WRITE_OP_DELETE)
    report = run(lake, catalogs, b.plan(rel, NAMES))
    assert content(lake, ns) == oracle.after("DELETE FROM t WHERE id IN (3, 515, 1999)")
    commit = report.steps[0].commit
    assert commit["method"] == "rewrite" and "subquery" in commit["reason"]
    assert commit["removed_data_files"] >= 40  # what the row-level path avoids


def test_a_format_v3_table_is_rewritten_and_the_record_says_why(lake, catalogs, ns, oracle):
    """pyiceberg 0.12 cannot commit to a format v3 table (the staging branch), so the step rewrites the table from
    the pinned snapshot, as before row-level steps, in one commit carrying the key."""
    lake.spark.sql(
        f"CREATE TABLE {lake.name}.{ns}.t (id bigint, grp string, amount double) USING iceberg "
        "TBLPROPERTIES ('format-version'='3')"
    )
    df = lake.spark.createDataFrame(source_rows().to_pylist(), schema="id bigint, grp string, amount double")
    df.writeTo(f"{lake.name}.{ns}.t").append()
    report = run(lake, catalogs, delete_where(ns, 510, 530), run_key=f"rl/{ns}")
    assert content(lake, ns) == oracle.after("DELETE FROM t WHERE id >= 510 AND id < 530")
    step = report.steps[0]
    assert step.rows == 20 and step.commit["method"] == "rewrite" and "format v3" in step.commit["reason"]
    assert summary(lake.catalog.load_table(f"{ns}.t"))[KEY_PROPERTY] == f"rl/{ns}/{SLOT_SHA}/step-0"


@pytest.mark.parametrize("mode", MODES)
def test_a_delete_matching_nothing_changes_no_file(lake, catalogs, ns, mode):
    table = make_table(lake, ns, mode)
    before = content(lake, ns)
    report = run(lake, catalogs, delete_where(ns, 5000, 6000), run_key=f"rl/{ns}")
    step = report.steps[0]
    assert (step.status, step.rows, step.commit["method"]) == ("committed", 0, "row-level")
    after = lake.catalog.load_table(f"{ns}.t")
    assert content(lake, ns) == before and set(after.refs()) == {"main"}
    if after.current_snapshot().snapshot_id != table.current_snapshot().snapshot_id:  # an empty commit, if any
        assert counts(summary(after)) == (0, 0, 0, 0) and summary(after)[KEY_PROPERTY] == f"rl/{ns}/{SLOT_SHA}/step-0"


def test_a_catalog_that_caches_tables_in_spark_sees_the_staging_branch(lake, ns, oracle):
    """Iceberg's Spark catalog caches tables unless told not to (as a REST catalog configured by `spark:` would):
    the staging branch made by pyiceberg, and the snapshot published, are seen all the same."""
    from substrait_spark.hooks.iceberg_spark import pyiceberg_catalog_properties

    name = f"{lake.name}cached"
    if lake.properties is None:
        props = pyiceberg_catalog_properties(name, uri=lake.uri, warehouse=lake.warehouse)
    else:  # REST: the same warehouse on the server, through a second catalog name
        props = lake.catalog_properties
    config = {**props, "spark": {"cache-enabled": "true"}}
    catalogs = Catalogs.from_mapping({"default": name, "catalogs": {name: config}})
    cached = Lake(name, lake.uri, lake.warehouse, lake.spark, catalogs.load(name), lake.properties)
    cached.catalog.create_namespace_if_not_exists(ns)
    make_table(cached, ns)
    run(cached, catalogs, delete_where(ns, 0, 1))  # Spark has loaded (and cached) the table
    assert lake.spark.conf.get(f"spark.sql.catalog.{name}.cache-enabled") == "true"
    report = run(cached, catalogs, delete_where(ns, 510, 530), run_key=f"rl/{ns}")
    assert report.steps[0].commit["method"] == "row-level" and report.steps[0].rows == 20
    expected = oracle.after("DELETE FROM t WHERE id >= 0 AND id < 1", "DELETE FROM t WHERE id >= 510 AND id < 530")
    assert content(cached, ns) == expected
    assert sorted_multiset(lake.spark.table(f"{name}.{ns}.t").collect()) == expected  # Spark sees the new snapshot
