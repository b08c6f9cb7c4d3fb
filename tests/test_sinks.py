"""Result sinks name their kind and format with enums (`SinkKind`, `OutputFormat`) that still read as the strings
callers pass and reports show."""

from __future__ import annotations

import json

import pytest
from substrait_spark.cli import main
from substrait_spark.consumer.errors import PlanInvalidError
from substrait_spark.consumer.running.sinks import FILE_FORMATS, TYPED_SINKS, OutputFormat, Sink, SinkKind

pytestmark = [pytest.mark.unit]


def test_strings_become_the_enums_and_still_compare_as_strings():
    by_string = Sink("file", "/out/q.csv", format="csv")
    by_enum = Sink(SinkKind.FILE, "/out/q.csv", format=OutputFormat.CSV)
    assert by_string == by_enum and hash(by_string) == hash(by_enum)
    assert by_string.kind is SinkKind.FILE and by_string.format is OutputFormat.CSV
    assert by_string.kind == "file" and by_string.format == "csv"
    assert json.dumps({"kind": by_string.kind, "format": by_string.format}) == '{"kind": "file", "format": "csv"}'
    assert repr(by_string) == "Sink(kind='file', target='/out/q.csv', format='csv', mode='overwrite', max_rows=20)"
    assert "table" in TYPED_SINKS and Sink.parse("table:db.t").kind in TYPED_SINKS


@pytest.mark.parametrize(
    "spec, kind, fmt",
    [
        (None, SinkKind.DISCARD, OutputFormat.PARQUET),
        ("preview:5", SinkKind.PREVIEW, OutputFormat.PARQUET),
        ("table:db.t", SinkKind.TABLE, OutputFormat.PARQUET),
        ({"path": "/out/r", "format": "jsonl"}, SinkKind.FOLDER, OutputFormat.JSONL),
        ({"path": "/out/r", "format": "orc", "mode": "append"}, SinkKind.FOLDER, OutputFormat.ORC),
    ],
)
def test_parse_gives_enum_kinds_and_formats(spec, kind, fmt):
    sink = Sink.parse(spec)
    assert sink.kind is kind and sink.format is fmt


@pytest.mark.parametrize(
    "spec, says",
    [
        ({"path": "/out/r", "format": "avro"}, "unknown output format 'avro' (one of csv, parquet, jsonl, json, orc)"),
        ({"path": "/out/r", "format": "jsonl", "mode": "merge"}, "invalid folder sink Sink(kind='folder'"),
    ],
)
def test_an_unknown_format_is_invalid_output_naming_the_known_ones(spec, says):
    with pytest.raises(PlanInvalidError) as info:
        Sink.parse(spec)
    assert says in str(info.value) and info.value.exit_code == 2


def test_an_unknown_kind_is_invalid_output():
    with pytest.raises(PlanInvalidError, match=r"unknown sink kind 'bucket' \(one of discard, preview, file"):
        Sink("bucket", "/out/r")


def test_a_file_sink_takes_only_the_file_formats():
    assert [str(f) for f in FILE_FORMATS] == ["csv", "parquet", "jsonl"]
    Sink("file", "/out/q.jsonl", format="jsonl").checked()
    with pytest.raises(PlanInvalidError, match="invalid file sink"):
        Sink("file", "/out/q.orc", format="orc").checked()


def test_the_clis_output_formats_are_the_file_formats(tmp_path, capsys):
    plan = tmp_path / "never_read.json"  # the command line is refused first
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(plan), "--output-dir", str(tmp_path), "--output-format", "orc"])
    _, err = capsys.readouterr()
    assert exit_.value.code == 2
    assert "argument --output-format: invalid choice: 'orc' (choose from" in err
    assert all(f"'{f}'" in err or f" {f}" in err for f in ("csv", "parquet", "jsonl"))
