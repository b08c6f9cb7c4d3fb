"""What `substrait-spark run` and `explain` tell a user while plans run, on a new user's own data (tests/shop.py,
DataFusion's plans): a progress line per plan and a batch summary on stderr (results alone on stdout), printed
results limited and aligned with the real row count, `--param` bound only to the plans that declare it, stage
progress of long Spark jobs, and `explain` of a plan with write steps (issue 28 items 7 and 11)."""

from __future__ import annotations

import itertools
import json
import re
import time
from pathlib import Path

import pytest
from plan_builder import i64, string
from shop import wrap_in_write
from substrait.algebra_pb2 import WriteRel
from substrait_spark.cli import main
from substrait_spark.consumer.running.narration import width
from substrait_spark.hooks.spark_progress import ProgressKind, StageProgress

# Each test carries its tier: `unit` (pure Python) or `spark`.

PROG = "substrait-spark: "
ORDERS_OF = {"orders_of_customer": "SELECT order_id, status FROM orders WHERE customer_id = $1 ORDER BY order_id"}


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def plan(shop_plans, name: str) -> str:
    return str(shop_plans[name].plan)


@pytest.fixture(scope="module")
def param_plan(shop_dir) -> str:
    """DataFusion's plan of a query with a placeholder (`$1`: the plan's dynamic parameter anchor 0, an i64)."""
    from producers import shop_plans as generate

    return str(generate.plans(shop_dir, ORDERS_OF)["orders_of_customer"].plan)


def bars(line: str) -> list[int]:
    """The terminal columns of a table line's `|` separators (wide characters take two)."""
    return [width(line[:i]) for i, ch in enumerate(line) if ch == "|"]


# --- progress lines and the summary: stderr; results: stdout ----------------------------------------------------


@pytest.mark.spark
def test_a_batch_says_each_plan_as_it_runs_and_ends_with_a_summary_table(
    spark, shop_dir, shop_plans, shop_oracle, tmp_path, capsys
):
    # The middle plan reads a table the folder does not hold: refused before Spark (exit 4).
    missing = tmp_path / "top_produkts.bin"
    missing.write_bytes(Path(plan(shop_plans, "top_products")).read_bytes().replace(b"products", b"produkts"))
    plans = [plan(shop_plans, "top_products"), str(missing), plan(shop_plans, "all_orders")]
    out_dir = tmp_path / "out"
    code, out, err = cli(capsys, "run", *plans, "--tables-dir", str(shop_dir), "--output-dir", str(out_dir))
    assert code == 4, err
    assert out == ""  # nothing about the run on stdout
    lines = err.splitlines()
    all_orders = shop_oracle.run("SELECT count(*) FROM orders").rows[0][0]
    # One line as each plan starts and one as it ends: status, rows, seconds, where its output went.
    assert f"[1/3] {plans[0]}: running" in lines and f"[3/3] {plans[2]}: running" in lines
    ended = {
        m.group(1): m
        for line in lines
        if (m := re.fullmatch(r"\[(\d)/3\] \S+: success, (.+) in ([\d.]+) s -> (.+)", line))
    }
    assert set(ended) == {"1", "3"}
    assert ended["1"].group(2) == "5 rows" and ended["1"].group(4) == str(out_dir / "shop-top_products.csv")
    assert ended["3"].group(2) == f"{all_orders} rows" and ended["3"].group(4) == str(out_dir / "shop-all_orders.csv")
    # The refused plan: its one error line (before Spark), no progress line of its own.
    errors = [line for line in lines if line.startswith(PROG)]
    assert len(errors) == 1 and "'produkts' not found" in errors[0] and plans[1] in errors[0]
    # The summary table: every plan, in the order given, aligned; where the files went.
    head = next(
        i
        for i, line in enumerate(lines)
        if line.split() == ["plan", "|", "status", "|", "rows", "|", "seconds", "|", "output"]
    )
    table = lines[head : head + 5]
    assert set(table[1]) <= {"-", "+"} and len({tuple(bars(line)) for line in [table[0], *table[2:]]}) == 1
    cells = [[c.strip() for c in line.split("|")] for line in table[2:]]
    assert [c[0] for c in cells] == plans
    assert [c[1] for c in cells] == ["success", "failed (exit 4)", "success"]
    assert [c[2] for c in cells] == ["5", "-", str(all_orders)]
    assert cells[2][4] == str(out_dir / "shop-all_orders.csv") and float(cells[2][3]) > 0
    assert lines[-1] == f"Results and summary.json in {out_dir}"
    # summary.json keeps its shape (other code reads it).
    summary = json.loads((out_dir / "summary.json").read_text())
    assert [p["plan"] for p in summary["plans"]] == plans and summary["plans"][2]["outputs"][0]["rows"] == all_orders

    code, out, err = cli(capsys, "run", *plans, "--quiet", "--tables-dir", str(shop_dir), "--output-dir", str(out_dir))
    assert code == 4 and out == "" and err.splitlines() == errors  # --quiet: the errors alone


# --- printed results: a row limit, aligned columns, NULL, the real count ----------------------------------------


@pytest.mark.spark
def test_printed_results_show_the_first_20_rows_aligned_and_the_real_count(
    spark, shop_dir, shop_plans, shop_oracle, capsys
):
    all_orders = plan(shop_plans, "all_orders")
    total = shop_oracle.run("SELECT count(*) FROM orders").rows[0][0]
    assert total > 20
    code, out, err = cli(capsys, "run", all_orders, "--tables-dir", str(shop_dir))
    assert code == 0, err
    lines = out.splitlines()
    shown = f"{total} rows, the first 20 shown: --limit N or --limit 0 for all"
    assert lines[0] == f"== {all_orders} (root 0, {shown})" and lines[-1] == f"({shown})"
    table = lines[1:-1]
    assert table[0].split(" | ")[0].strip() == "order_id" and set(table[1]) <= {"-", "+"}
    assert len(table) == 2 + 20 and len({tuple(bars(line)) for line in table if "|" in line}) == 1
    nulls = shop_oracle.run("SELECT count(*) FROM (SELECT * FROM orders LIMIT 20) WHERE customer_id IS NULL")
    customer = [line.split("|")[1].strip() for line in table[2:]]
    # DataFusion reads the file in order, as Spark does: the same first rows.
    assert customer.count("NULL") == nulls.rows[0][0] > 0
    assert all(c == "NULL" or c.isdigit() for c in customer)
    assert "stdout" in err and "running" in err  # progress on stderr, never in the results

    code, out, _ = cli(capsys, "run", all_orders, "--tables-dir", str(shop_dir), "--limit", "0")
    assert code == 0 and len(out.splitlines()) == 1 + 2 + total + 1 and out.splitlines()[-1] == f"({total} rows)"
    code, out, _ = cli(capsys, "run", all_orders, "--tables-dir", str(shop_dir), "--limit", "3")
    assert code == 0 and len(out.splitlines()) == 1 + 2 + 3 + 1 and f"{total} rows, the first 3 shown" in out


@pytest.mark.spark
def test_printed_results_align_wide_characters(spark, shop_dir, shop_plans, shop_oracle, capsys):
    code, out, err = cli(capsys, "run", plan(shop_plans, "unicode_names"), "--tables-dir", str(shop_dir))
    assert code == 0, err
    table = out.splitlines()[1:-1]
    names = {line.split("|")[0].strip() for line in table[2:]}
    assert any(width(n) > len(n) for n in names)  # 美: two columns wide
    assert names == {r[0] for r in shop_oracle.run(ORDER_FREE_UNICODE).rows}
    assert len({tuple(bars(line)) for line in table if "|" in line}) == 1


ORDER_FREE_UNICODE = "SELECT name FROM customers WHERE name LIKE '%ö%' OR name LIKE '%美%'"


@pytest.mark.unit
def test_limit_is_refused_with_output_dir(shop_plans, tmp_path, capsys):
    code, out, err = cli(capsys, "run", plan(shop_plans, "top_products"), "--output-dir", str(tmp_path), "--limit", "5")
    assert code == 2 and out == "" and "usage error: --limit applies to printed results" in err
    assert not list(tmp_path.iterdir())


# --- --param: bound only to the plans that declare it -------------------------------------------------------------


@pytest.mark.spark
def test_param_binds_only_to_the_plans_that_declare_it(
    spark, shop_dir, shop_plans, shop_oracle, param_plan, tmp_path, capsys
):
    out_dir = tmp_path / "out"
    top = plan(shop_plans, "top_products")
    code, _, err = cli(
        capsys, "run", param_plan, top, "--param", "0=28", "--tables-dir", str(shop_dir), "--output-dir", str(out_dir)
    )
    assert code == 0, err
    first, second = json.loads((out_dir / "summary.json").read_text())["plans"]
    expected = shop_oracle.run("SELECT count(*) FROM orders WHERE customer_id = 28").rows[0][0]
    assert first["outputs"][0]["rows"] == expected > 0
    assert first["parameters"] == [{"anchor": 0, "type": "i64?", "value": 28, "source": "caller"}]
    assert second["status"] == "success" and second["parameters"] == [] and second["outputs"][0]["rows"] == 5


@pytest.mark.unit
def test_a_param_no_plan_declares_is_a_usage_error_before_any_run(shop_dir, shop_plans, param_plan, tmp_path, capsys):
    out_dir = tmp_path / "out"
    top = plan(shop_plans, "top_products")
    argv = ["run", param_plan, top, "--param", "0=28", "--param", "$1=5", "--tables-dir", str(shop_dir)]
    code, out, err = cli(capsys, *argv, "--output-dir", str(out_dir))
    assert code == 2 and out == ""
    assert (
        err == f"{PROG}usage error: --param: parameter $1 is declared by no plan of the batch (their parameters: $0)\n"
    )
    assert list(out_dir.iterdir()) == []  # nothing ran, no summary
    code, _, err = cli(capsys, "run", top, "--param", "x=1", "--tables-dir", str(shop_dir))
    assert code == 2 and "usage error: --param:" in err and "'x'" in err


# --- stage progress of a long Spark job ---------------------------------------------------------------------------


@pytest.mark.spark
def test_a_long_spark_job_reports_its_stages_every_few_seconds(spark):
    """The active stages (classic Spark: the status tracker; Spark Connect on pyspark 4: the progress handler), at
    most every `every_s`, once past `after_s`."""
    if StageProgress(spark, "x", print).kind is ProgressKind.CONNECT_STREAM:
        pytest.skip(
            "the pyspark 3.5 Spark Connect client has no progress API: a run's progress comes from its commands' "
            "streams (tests/test_connect_progress.py; the chaos tests' task logs), not from a collect"
        )
    lines: list[tuple[float, str]] = []
    sleepy = spark.range(0, 6, 1, 6).selectExpr("java_method('java.lang.Thread', 'sleep', cast(500 as bigint)) as z")
    start = time.monotonic()
    with StageProgress(
        spark, "[1/1] slow.bin", lambda s: lines.append((time.monotonic(), s)), after_s=0.5, every_s=0.4, poll_s=0.05
    ):
        assert len(sleepy.collect()) == 6
    took = time.monotonic() - start
    assert lines, f"no progress line in {took:.1f} s"
    assert all(
        re.fullmatch(
            r"\[1/1\] slow\.bin: \d+ s, stage \d+: \d/6 tasks done( \(\d running\)|, \d task\(s\) running)?", s
        )
        for _, s in lines
    ), lines
    assert lines[0][0] - start >= 0.5  # quiet while the job is short
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(lines)]
    assert all(g >= 0.39 for g in gaps), gaps  # at most one line per `every_s`
    with StageProgress(spark, "quick", lambda s: lines.append((0, s)), after_s=60):
        spark.range(10).collect()
    assert not any(s.startswith("quick") for _, s in lines)
    if StageProgress(spark, "x", print).kind is ProgressKind.STATUS_TRACKER:  # classic: a task's own job group only
        mine: list[str] = []
        others: list[str] = []
        fast = {"after_s": 0.2, "every_s": 0.2, "poll_s": 0.05}
        from substrait_spark.hooks.spark import job_group

        with (
            job_group(spark, "mine", "stage progress of one job group"),  # restores the thread's properties
            StageProgress(spark, "mine", mine.append, job_group="mine", **fast),
            StageProgress(spark, "others", others.append, job_group="someone else's", **fast),
        ):
            sleepy.collect()
        assert mine and not others


# --- explain of a plan with write steps ---------------------------------------------------------------------------


def write_plan(shop_plans, tmp_path: Path, table: list[str], op: int) -> Path:
    data = wrap_in_write(
        Path(plan(shop_plans, "top_products")).read_bytes(), table, ["name", "units"], [string(), i64()], op
    )
    path = tmp_path / f"{WriteRel.WriteOp.Name(op).lower()}.bin"
    path.write_bytes(data)
    return path


@pytest.mark.spark
@pytest.mark.parametrize("op", [WriteRel.WRITE_OP_CTAS, WriteRel.WRITE_OP_INSERT])
def test_explain_of_a_write_plan_shows_the_steps_and_the_input_plan_without_a_catalog(
    spark, shop_dir, shop_plans, tmp_path, capsys, op
):
    path = write_plan(shop_plans, tmp_path, ["shop", "top5"], op)
    code, out, err = cli(capsys, "explain", str(path), "--tables-dir", str(shop_dir))
    assert code == 0, err
    kind, does = {
        WriteRel.WRITE_OP_CTAS: ("ctas", "creates the table with the rows of its input (fails if it exists)"),
        WriteRel.WRITE_OP_INSERT: ("insert", "appends the rows of its input"),
    }[op]
    assert f"Step 0 at relations[0].root.input.write: {kind} shop.top5: {does}" in out.splitlines()
    assert "  target: not resolved: no catalog given (--catalog-config); a run needs one to apply the step" in out
    assert "read named_table products" in out  # the tree
    physical = out.split("== Spark physical plan of step 0's input (relations[0].root.input.write.input) ==")[1]
    assert "TakeOrderedAndProject" in physical and re.search(r"Output \[2\]: \[name#\d+, units#\d+L\]", physical)


@pytest.mark.spark
@pytest.mark.iceberg
def test_explain_of_a_write_plan_resolves_its_target_and_commits_nothing(lake, shop_dir, shop_plans, tmp_path, capsys):
    lake.catalog.create_namespace_if_not_exists("explain_ns")
    path = write_plan(shop_plans, tmp_path, [lake.name, "explain_ns", "top5"], WriteRel.WRITE_OP_CTAS)
    config = lake.write_config(tmp_path / "catalogs.yaml")
    code, out, err = cli(capsys, "explain", str(path), "--tables-dir", str(shop_dir), "--catalog-config", str(config))
    assert code == 0, err
    assert f"  target: {lake.name}.explain_ns.top5 (does not exist yet)" in out
    assert not lake.catalog.table_exists("explain_ns.top5")
