"""The `substrait-spark` command line: run (files, formats, stdout, table bindings), explain, exit codes.

Commands run in-process through `substrait_spark.cli.main`, which reuses the test Spark session. Plans are
IBM's q06 (one row) and q01 (four rows); the oracle is IBM's expected CSV (q06) and row counts.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import CLI, stub_java, timed
from substrait_spark.cli import main

# Each test carries its tier: `unit` (pure Python) or `spark`.
pytestmark = [pytest.mark.corpus]

IBM = "ibm-substrait-compliance-tpch"
Q06_REVENUE = 1193053.2253  # expected/q06.csv (sf 0.01); q06 reads only numeric columns, so tpchgen matches
EMPTY_URL = "type.googleapis.com/google.protobuf.Empty"  # an extension relation no consumer class registers


@pytest.fixture
def q06(corpus) -> Path:
    return corpus / IBM / "q06.json"


@pytest.fixture
def q01(corpus) -> Path:
    return corpus / IBM / "q01.bin"


def q06_doc(corpus: Path) -> dict[str, Any]:
    text = (corpus / IBM / "q06.json").read_text()
    return json.loads("\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//")))


def error_lines(err: str) -> list[str]:
    """The error lines of a command's stderr (progress lines and the summary table of `run` are not errors)."""
    return [line for line in err.splitlines() if line.startswith("substrait-spark: ")]


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- run ---------------------------------------------------------------------------------------------------


@pytest.mark.spark
def test_run_writes_one_csv_per_plan_and_a_summary(spark, tpch_dir, tmp_path, q06, q01, capsys):
    out_dir = tmp_path / "out"
    code, out, err = cli(capsys, "run", str(q06), str(q01), "--tables-dir", str(tpch_dir), "--output-dir", str(out_dir))
    assert code == 0, err
    assert out == "" and error_lines(err) == []  # stderr: progress lines and the summary table
    assert sorted(p.name for p in out_dir.iterdir()) == ["q01.csv", "q06.csv", "summary.json"]

    with (out_dir / "q06.csv").open() as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["REVENUE"] and len(rows) == 2
    assert float(rows[1][0]) == pytest.approx(Q06_REVENUE, rel=1e-9)
    with (out_dir / "q01.csv").open() as f:
        q01_rows = list(csv.reader(f))
    assert [r[:2] for r in q01_rows[1:]] == [["A", "F"], ["N", "F"], ["N", "O"], ["R", "F"]]

    summary = json.loads((out_dir / "summary.json").read_text())
    entries = {Path(p["plan"]).name: p for p in summary["plans"]}
    assert set(entries) == {"q06.json", "q01.bin"}
    for name, rows_expected in (("q06.json", 1), ("q01.bin", 4)):
        entry = entries[name]
        assert entry["status"] == "success" and entry["error"] is None
        assert entry["plan_sha256"] and entry["spec_version"]
        (output,) = entry["outputs"]
        assert output["rows"] == rows_expected
        assert output["format"] == "csv" and Path(output["location"]).name == name.split(".")[0] + ".csv"
        (table,) = entry["tables_read"]
        assert table["name"].lower() == "lineitem"
        assert table["identity"] == str((tpch_dir / "lineitem.parquet").resolve())
        assert table["format"] == "parquet"


@pytest.mark.spark
def test_run_records_a_failed_plan_in_the_summary_and_goes_on(corpus, spark, tpch_dir, tmp_path, q06, capsys):
    doc = q06_doc(corpus)
    doc["relations"][0]["root"]["input"]["aggregate"]["measures"][0]["measure"]["functionReference"] = 99
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    out_dir = tmp_path / "out"
    code, _, err = cli(capsys, "run", str(bad), str(q06), "--tables-dir", str(tpch_dir), "--output-dir", str(out_dir))
    assert code == 2
    assert len(error_lines(err)) == 1 and "function reference 99" in err
    assert (out_dir / "q06.csv").is_file() and not (out_dir / "bad.csv").exists()
    first, second = json.loads((out_dir / "summary.json").read_text())["plans"]
    assert first["status"] == "failed"
    assert first["error"]["exit_code"] == 2 and first["error"]["kind"] == "invalid plan"
    assert first["error"]["path"] == "relations[0].root.input.aggregate.measures[0].measure.function_reference"
    assert second["status"] == "success" and second["outputs"][0]["rows"] == 1


@pytest.mark.spark
@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_run_output_formats(fmt, spark, tpch_dir, tmp_path, q06, capsys):
    out_dir = tmp_path / fmt
    code, _, err = cli(
        capsys,
        "run",
        str(q06),
        "--tables-dir",
        str(tpch_dir),
        "--output-dir",
        str(out_dir),
        "--output-format",
        fmt,
    )
    assert code == 0, err
    target = out_dir / f"q06.{fmt}"
    assert target.is_file()
    if fmt == "parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(target)
        assert table.column_names == ["REVENUE"]
        values = [float(v) for v in table.column("REVENUE").to_pylist()]
    else:
        lines = target.read_text().splitlines()
        values = [float(json.loads(line)["REVENUE"]) for line in lines]
    assert values == [pytest.approx(Q06_REVENUE, rel=1e-9)]
    (entry,) = json.loads((out_dir / "summary.json").read_text())["plans"]
    assert entry["outputs"][0]["format"] == fmt and entry["outputs"][0]["rows"] == 1


@pytest.mark.spark
def test_run_prints_results_without_output_dir(spark, tpch_dir, q06, capsys):
    code, out, err = cli(capsys, "run", str(q06), "--tables-dir", str(tpch_dir))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"== {q06} (root 0, 1 row)"
    assert lines[1].strip() == "REVENUE" and set(lines[2]) == {"-"}
    assert float(lines[3]) == pytest.approx(Q06_REVENUE, rel=1e-9)
    assert lines[4] == "(1 row)" and len(lines) == 5


@pytest.mark.spark
def test_run_binds_tables_by_name(spark, tpch_dir, q06, capsys):
    lineitem = tpch_dir / "lineitem.parquet"
    code, out, err = cli(capsys, "run", str(q06), "--table", f"lineitem={lineitem}:parquet")
    assert code == 0, err
    assert float(out.splitlines()[3]) == pytest.approx(Q06_REVENUE, rel=1e-9)


@pytest.mark.spark
def test_run_missing_table_is_a_resolution_failure(spark, tmp_path, q06, capsys):
    empty = tmp_path / "tables"
    empty.mkdir()
    code, out, err = cli(capsys, "run", str(q06), "--tables-dir", str(empty))
    assert code == 4
    assert out == ""
    assert len(error_lines(err)) == 1 and "Traceback" not in err
    assert "resolution failed" in err and "LINEITEM" in err
    assert "relations[0].root.input.aggregate.input.project.input.filter.input.read" in err


@pytest.mark.unit
@pytest.mark.parametrize("spec", ["orders", "orders=", "=id", "orders=id,"])
def test_run_update_key_needs_a_table_and_columns(q06, capsys, spec):
    """`--update-key TABLE=col1,col2` (its use: tests/test_write_steps.py); malformed, exit 2 before any work."""
    code, out, err = cli(capsys, "run", str(q06), "--update-key", spec)
    assert code == 2 and out == ""
    assert "invalid plan" in err and "--update-key expects TABLE=col1,col2" in err


@pytest.mark.spark
def test_run_failure_at_execution_exits_1(corpus, spark, tpch_dir, tmp_path, capsys):
    """A cast the plan says must throw on bad input (l_comment to i32) fails while Spark runs the query."""
    doc = q06_doc(corpus)
    project = doc["relations"][0]["root"]["input"]["aggregate"]["input"]["project"]
    comment = {"selection": {"directReference": {"structField": {"field": 15}}, "rootReference": {}}}
    project["expressions"][0] = {
        "cast": {"input": comment, "type": {"i32": {}}, "failureBehavior": "FAILURE_BEHAVIOR_THROW_EXCEPTION"}
    }
    doc["relations"][0]["root"]["input"]["aggregate"]["measures"][0]["measure"]["outputType"] = {"i64": {}}
    plan = tmp_path / "cast.json"
    plan.write_text(json.dumps(doc))
    code, _, err = cli(capsys, "run", str(plan), "--tables-dir", str(tpch_dir))
    assert code == 1
    assert len(error_lines(err)) == 1 and "execution failed" in err and "Traceback" not in err


# --- plans that cannot run never wait for Spark ------------------------------------------------------------


def unsupported_plan(corpus: Path, tmp_path: Path) -> Path:
    """q06 under an extension relation no consumer class registers (validate: exit 3)."""
    doc = q06_doc(corpus)
    root = doc["relations"][0]["root"]
    root["input"] = {"extensionSingle": {"input": root["input"], "detail": {"@type": EMPTY_URL}}}
    path = tmp_path / "extension.json"
    path.write_text(json.dumps(doc))
    return path


def garbage_plan(tmp_path: Path) -> Path:
    path = tmp_path / "garbage.bin"
    path.write_bytes(b"\x0a\xff\xff\xff")
    return path


@pytest.mark.unit
def test_run_refuses_invalid_and_unsupported_plans_at_once_without_starting_spark(corpus, tpch_dir, tmp_path):
    """`run` loads and validates every plan before it starts Spark: an unparseable plan exits 2 and an unsupported
    one 3, and no JVM was started (the stub `java` never ran; control: a plan that can run does start it).

    Time: the whole command takes under 2 s of CPU (about 0.5 s: Python, PySpark's modules, validate) — what it
    takes on a machine with a free core. Wall clock is printed; it grows with the machine's load (this suite
    shares 2 cores with other work) and is asserted only far below the 9-11 s a Spark start costs."""
    env, marker = stub_java(tmp_path)
    cases = [
        ([str(garbage_plan(tmp_path))], 2, "invalid plan"),
        ([str(unsupported_plan(corpus, tmp_path))], 3, f"unsupported: extension relation {EMPTY_URL}"),
        ([str(unsupported_plan(corpus, tmp_path)), str(garbage_plan(tmp_path))], 3, "invalid plan"),
    ]
    for plans, code, message in cases:
        done, wall, cpu = timed([CLI, "run", *plans, "--tables-dir", str(tpch_dir)], env)
        print(f"run {[Path(p).name for p in plans]}: exit {done.returncode}, {wall:.2f} s wall, {cpu:.2f} s CPU")
        assert done.returncode == code, done.stderr
        assert message in done.stderr and "Traceback" not in done.stderr
        assert len(error_lines(done.stderr)) == len(plans)
        assert cpu < 2.0 and wall < 6.0, f"{plans}: {wall:.2f} s wall, {cpu:.2f} s CPU"
        assert not marker.exists(), f"Spark's JVM was started: {marker.read_text()}"
    done, _, _ = timed([CLI, "run", str(corpus / IBM / "q06.json"), "--tables-dir", str(tpch_dir)], env)
    assert done.returncode != 0 and marker.exists()


@pytest.mark.unit
def test_explain_refuses_an_unsupported_plan_without_starting_spark(corpus, tpch_dir, tmp_path):
    """`explain` (text: it needs Spark for the physical plan) checks the plan as `run` does before it starts Spark;
    control: explaining a plan that can run does start the (stub) JVM."""
    env, marker = stub_java(tmp_path)
    plan = unsupported_plan(corpus, tmp_path)
    done, wall, cpu = timed([CLI, "explain", str(plan), "--tables-dir", str(tpch_dir)], env)
    print(f"explain extension.json: exit {done.returncode}, {wall:.2f} s wall, {cpu:.2f} s CPU")
    assert done.returncode == 3, done.stderr
    assert f"unsupported: extension relation {EMPTY_URL}" in done.stderr and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert not marker.exists(), f"Spark's JVM was started: {marker.read_text()}"
    done, _, _ = timed([CLI, "explain", str(corpus / IBM / "q06.json"), "--tables-dir", str(tpch_dir)], env)
    assert done.returncode != 0 and marker.exists()


@pytest.mark.spark
def test_run_batch_runs_the_plans_that_can_run_and_exits_with_the_first_failure(
    corpus, spark, tpch_dir, tmp_path, capsys
):
    """Plans refused before Spark and plans that run, mixed: the runnable ones run, in order; the exit code is the
    first failing plan's in the order given (as before), the summary lists every plan in that order."""
    unsupported, garbage = unsupported_plan(corpus, tmp_path), garbage_plan(tmp_path)
    q06 = corpus / IBM / "q06.json"
    out_dir = tmp_path / "out"
    code, _, err = cli(
        capsys,
        "run",
        str(q06),
        str(unsupported),
        str(garbage),
        "--tables-dir",
        str(tpch_dir),
        "--output-dir",
        str(out_dir),
    )
    assert code == 3
    assert len(error_lines(err)) == 2 and "unsupported" in err and "invalid plan" in err
    plans = json.loads((out_dir / "summary.json").read_text())["plans"]
    assert [p["plan"] for p in plans] == [str(q06), str(unsupported), str(garbage)]
    assert [p["status"] for p in plans] == ["success", "failed", "failed"]
    assert [p["error"] and p["error"]["exit_code"] for p in plans] == [None, 3, 2]
    assert plans[1]["plan_sha256"]  # refused after loading: its report identifies the plan
    with (out_dir / "q06.csv").open() as f:
        assert float(list(csv.reader(f))[1][0]) == pytest.approx(Q06_REVENUE, rel=1e-9)
    code, _, _ = cli(capsys, "run", str(garbage), str(unsupported), str(q06), "--tables-dir", str(tpch_dir))
    assert code == 2


# --- validate and explain ----------------------------------------------------------------------------------


@pytest.mark.unit
def test_validate_exit_codes(corpus, tmp_path, q06, capsys):
    assert cli(capsys, "validate", str(q06))[0] == 0
    doc = q06_doc(corpus)
    root = doc["relations"][0]["root"]
    root["input"] = {"extensionSingle": {"input": root["input"], "detail": {"@type": EMPTY_URL}}}
    unsupported = tmp_path / "extension.json"
    unsupported.write_text(json.dumps(doc))
    code, out, _ = cli(capsys, "validate", str(q06), str(unsupported))
    assert code == 3
    assert f"{q06}: supported" in out
    assert f"{unsupported}: 1 unsupported feature(s)" in out
    assert f"  - extension relation {EMPTY_URL} (at relations[0].root.input.extension_single)" in out
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"\x0a\xff\xff\xff")
    assert cli(capsys, "validate", str(q06), str(garbage))[0] == 2


@pytest.mark.spark
def test_explain_prints_the_tree_and_the_physical_plan(spark, tpch_dir, q06, capsys):
    code, out, err = cli(capsys, "explain", str(q06), "--tables-dir", str(tpch_dir))
    assert code == 0, err
    tree, _, physical = out.partition("== Spark physical plan ==")
    lines = tree.strip().splitlines()
    assert lines[0] == "root relations[0]  names=[REVENUE]"
    kinds = [line.split()[0] for line in lines[1:]]
    assert kinds == ["aggregate", "project", "filter", "read"]
    depth = [len(line) - len(line.lstrip()) for line in lines[1:]]
    assert depth == sorted(depth) and len(set(depth)) == 4
    assert lines[1].strip().startswith("aggregate keys=0 measures=1 [sum($0)]")
    assert lines[1].endswith("-> (decimal<19,4>?)")
    assert "emit=[16]" in lines[2]
    assert "condition=and(gte($10, date 1994-01-01)" in lines[3]
    read = lines[4]
    assert "read named_table LINEITEM" in read and str((tpch_dir / "lineitem.parquet").resolve()) in read
    assert "16 columns (i32?*4, decimal<15,2>?*4" in read
    assert "HashAggregate" in physical or "Aggregate" in physical
    assert "Scan parquet" in physical


def unsupported_window_plan(corpus: Path, tmp_path: Path) -> Path:
    """q06 under a window relation sorted by a comparison function (a sort Spark cannot do: exit 3)."""
    doc = q06_doc(corpus)
    root = doc["relations"][0]["root"]
    sort = {"expr": {"selection": {"directReference": {"structField": {}}}}, "comparisonFunctionReference": 1}
    root["input"] = {"window": {"input": root["input"], "sorts": [sort]}}
    plan = tmp_path / "window.json"
    plan.write_text(json.dumps(doc))
    return plan


@pytest.mark.spark
def test_explain_of_an_unsupported_plan_exits_3(corpus, spark, tpch_dir, tmp_path, capsys):
    plan = unsupported_window_plan(corpus, tmp_path)
    code, out, err = cli(capsys, "explain", str(plan), "--tables-dir", str(tpch_dir))
    assert code == 3
    assert out == ""
    assert err.count("\n") == 1 and "comparison function (at relations[0].root.input.window.sorts[0])" in err


@pytest.mark.spark
def test_explain_report_reads_the_summary_run_writes_and_refuses_another_plans(
    spark, tpch_dir, tmp_path, q06, q01, capsys
):
    """`explain --report summary.json` draws this plan's entry of the file `run --output-dir` writes; a file with
    only another plan's report is refused in one line (exit 2), not drawn with the wrong plan's run data."""
    out_dir = tmp_path / "out"
    code, _, err = cli(capsys, "run", str(q06), str(q01), "--tables-dir", str(tpch_dir), "--output-dir", str(out_dir))
    assert code == 0, err
    summary = out_dir / "summary.json"
    entries = {Path(e["plan"]).name: e for e in json.loads(summary.read_text())["plans"]}
    q01_entry = entries["q01.bin"]
    assert q01_entry["status"] == "success" and q01_entry["tables_read"]

    code, svg, err = cli(capsys, "explain", str(q01), "--format", "svg", "--report", str(summary))
    assert code == 0, err
    assert f"sha256: {q01_entry['plan_sha256']}" in svg and "run: success in" in svg
    assert f"format: {q01_entry['tables_read'][0]['format']}" in svg  # the table read, from the report

    other = tmp_path / "q06_only.json"
    other.write_text(json.dumps({"plans": [entries["q06.json"]]}))
    code, out, err = cli(capsys, "explain", str(q01), "--format", "svg", "--report", str(other))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "invalid run report" in err and "not a report of this plan" in err
    assert entries["q06.json"]["plan_sha256"][:12] in err and q01_entry["plan_sha256"][:12] in err

    single = tmp_path / "q01_report.json"  # one run report, as the operator's XCom holds it
    single.write_text(json.dumps(q01_entry))
    assert cli(capsys, "explain", str(q01), "--format", "svg", "--report", str(single))[0] == 0


# --- plans in object storage -------------------------------------------------------------------------------


@pytest.mark.spark
def test_run_reads_a_binary_plan_from_s3(spark, tpch_dir, tmp_path, corpus, s3_endpoint, monkeypatch, capsys):
    from s3_server import CREDENTIALS, new_bucket, s3_client

    client = s3_client(s3_endpoint)
    bucket = new_bucket(client, versioned=True)
    version = client.put_object(Bucket=bucket, Key="tpch/q06.bin", Body=(corpus / IBM / "q06.bin").read_bytes())[
        "VersionId"
    ]
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", s3_endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", CREDENTIALS["aws_access_key_id"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", CREDENTIALS["aws_secret_access_key"])
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    out_dir = tmp_path / "out"
    uri = f"s3://{bucket}/tpch/q06.bin?versionId={version}"
    code, _, err = cli(capsys, "run", uri, "--tables-dir", str(tpch_dir), "--output-dir", str(out_dir))
    assert code == 0, err
    with (out_dir / "q06.csv").open() as f:
        rows = list(csv.reader(f))
    assert float(rows[1][0]) == pytest.approx(Q06_REVENUE, rel=1e-9)
    summary = json.loads((out_dir / "summary.json").read_text())["plans"][0]
    assert summary["plan_uri"] == uri and summary["plan_version_id"] == version and summary["plan_etag"]

    code, _, err = cli(capsys, "run", f"s3://{bucket}/tpch/missing.bin", "--tables-dir", str(tpch_dir))
    assert code == 2
    assert f"s3://{bucket}/tpch/missing.bin" in err and err.count("plan not found") == 1
