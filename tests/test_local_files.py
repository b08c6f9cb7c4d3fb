"""ReadRel.local_files: parquet and ORC files, folders and globs; delimited text with its options; slices refused."""

from __future__ import annotations

from decimal import Decimal

import pytest
from plan_builder import PlanBuilder, _schema, decimal_, field, filter_, i32, lit, run, string
from substrait import algebra_pb2 as alg
from substrait_spark.consumer.errors import UnsupportedFeatureError

pytestmark = [pytest.mark.spark]

Rel = alg.Rel
FileOrFiles = alg.ReadRel.LocalFiles.FileOrFiles
NAMES = ["k", "s"]
TYPES = [i32(), string()]


def local_read(items: list[FileOrFiles], names=NAMES, types=TYPES) -> Rel:
    read = alg.ReadRel(base_schema=_schema(names, types))
    read.local_files.items.extend(items)
    return Rel(read=read)


def item(fmt: str, **path) -> FileOrFiles:
    f = FileOrFiles(**path)
    getattr(f, fmt).SetInParent()
    return f


@pytest.fixture(scope="module")
def files(spark, tmp_path_factory):
    """The same four rows as a parquet folder (two files) and an ORC folder."""
    root = tmp_path_factory.mktemp("local_files")
    df = spark.sql("SELECT * FROM VALUES (1, 'a'), (2, 'b'), (3, NULL), (4, 'd') AS t(k, s)").repartition(2)
    df.write.parquet(str(root / "pq"))
    df.write.orc(str(root / "orc"))
    return root


ROWS = {(1, "a"), (2, "b"), (3, None), (4, "d")}


def rows(df) -> set[tuple]:
    return {tuple(r) for r in df.collect()}


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_folder_glob_and_single_file(spark, files, fmt):
    b = PlanBuilder()
    folder = files / ("pq" if fmt == "parquet" else "orc")
    parts = sorted(p for p in folder.iterdir() if p.name.startswith("part-"))
    assert len(parts) == 2
    by_folder = run(b.plan(local_read([item(fmt, uri_folder=folder.as_uri())]), NAMES), spark)
    assert rows(by_folder) == ROWS
    by_glob = run(b.plan(local_read([item(fmt, uri_path_glob=str(folder / "part-*"))]), NAMES), spark)
    assert rows(by_glob) == ROWS
    both_files = [item(fmt, uri_file=p.as_uri()) for p in parts]
    assert rows(run(b.plan(local_read(both_files), NAMES), spark)) == ROWS
    one = rows(run(b.plan(local_read(both_files[:1]), NAMES), spark))
    assert one and one < ROWS


def test_read_filter_applies_to_local_files(spark, files):
    b = PlanBuilder()
    rel = local_read([item("parquet", uri_folder=(files / "pq").as_uri())])
    rel.read.filter.CopyFrom(b.call("gt", field(0), lit(2)))
    assert rows(run(b.plan(rel, NAMES), spark)) == {(3, None), (4, "d")}


def test_delimited_text_with_options(spark, tmp_path):
    """Pipe-delimited, one header line, quoted fields, a custom NULL marker, typed by the base schema."""
    text = tmp_path / "t.txt"
    text.write_text('id|name|amount\n1|"a|b"|1.50\n2|NA|NA\n3|c|-2.25\n')
    f = item("text", uri_file=text.as_uri())
    f.text.field_delimiter = "|"
    f.text.quote = '"'
    f.text.header_lines_to_skip = 1
    f.text.value_treated_as_null = "NA"
    names, types = ["id", "name", "amount"], [i32(), string(), decimal_(10, 2)]
    b = PlanBuilder()
    df = run(b.plan(local_read([f], names, types), names), spark)
    assert [tuple(r) for r in df.orderBy("id").collect()] == [
        (1, "a|b", Decimal("1.50")),
        (2, None, None),
        (3, "c", Decimal("-2.25")),
    ]
    filtered = run(b.plan(filter_(local_read([f], names, types), b.call("lt", field(2), lit(0))), names), spark)
    assert rows(filtered) == {(3, "c", Decimal("-2.25"))}


def test_byte_range_slices_are_refused_with_their_path(spark, files):
    part = next(p for p in (files / "pq").iterdir() if p.name.startswith("part-"))
    f = item("parquet", uri_file=part.as_uri())
    f.start, f.length = 0, 100
    with pytest.raises(UnsupportedFeatureError, match="start/length") as info:
        run(PlanBuilder().plan(local_read([f]), NAMES), spark)
    assert info.value.path == "relations[0].root.input.read.local_files.items[0]"


def test_more_than_one_header_line_is_refused(spark, tmp_path):
    text = tmp_path / "h.txt"
    text.write_text("a\nb\n1|x\n")
    f = item("text", uri_file=text.as_uri())
    f.text.field_delimiter = "|"
    f.text.header_lines_to_skip = 2
    with pytest.raises(UnsupportedFeatureError, match="header lines"):
        run(PlanBuilder().plan(local_read([f]), NAMES), spark)
