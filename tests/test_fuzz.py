"""The fuzz target (`tests/fuzz_plans.py`): seeded mutations of every corpus plan through `validate` and `run`.

`make test` runs `FUZZ_CASES` (default 200) cases of seed `FUZZ_SEED` (default 18); `make fuzz` runs 10,000 or
more and writes the figure to test-artifacts/fuzz/summary.json. `FUZZ_ONLY=N` runs case N alone (a reproducer).
Every case must end with exit 0-5 and one line on stderr: a traceback, an internal error or a hang fails the test,
listing each such case with its reproducer.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fuzz_plans import Setup, Summary, discover, fuzz

pytestmark = [pytest.mark.spark, pytest.mark.iceberg, pytest.mark.corpus]

DEFAULT_CASES = 200
DEFAULT_SEED = 18
SUMMARY = Path(
    os.environ.get("FUZZ_SUMMARY", Path(__file__).resolve().parent.parent / "test-artifacts" / "fuzz" / "summary.json")
)


@pytest.fixture(scope="module")
def fuzz_setup(spark, lake, tpch_dir, tmp_path_factory) -> Setup:
    """TPC-H sf0.01 and consumer-testing's table `t` as tables, the scratch catalog `lake` as the default."""
    import pyarrow.parquet as pq
    from function_corpus import table_t_arrow

    root = tmp_path_factory.mktemp("fuzz")
    tables = root / "tables"
    tables.mkdir()
    for table in tpch_dir.glob("*.parquet"):
        (tables / table.name).symlink_to(table.resolve(), target_is_directory=table.is_dir())
    pq.write_table(table_t_arrow(), tables / "t.parquet")
    plans = root / "plans"
    plans.mkdir()

    def cancel() -> None:  # a case past its limit: its Spark jobs must not run on into the next case
        spark.sparkContext.cancelAllJobs()

    def alive() -> bool:
        try:
            return not spark.sparkContext._jsc.sc().isStopped()
        except Exception:  # the gateway itself is gone
            return False

    limit = float(os.environ.get("FUZZ_CASE_SECONDS", "120"))
    config = lake.write_config(root / "catalogs.yaml")
    return Setup(plans, tables, config, limit=limit, on_timeout=cancel, alive=alive)


def test_every_mutated_plan_ends_cleanly(fuzz_setup: Setup, corpus: Path) -> None:
    plans = discover(corpus)
    assert len(plans) > 600, f"only {len(plans)} corpus plans found in {corpus}"
    seed = int(os.environ.get("FUZZ_SEED", DEFAULT_SEED))
    only = os.environ.get("FUZZ_ONLY")
    indices = [int(only)] if only else range(int(os.environ.get("FUZZ_CASES", DEFAULT_CASES)))
    SUMMARY.parent.mkdir(parents=True, exist_ok=True)

    def write(summary: Summary) -> None:  # also every 250 cases: a long run shows its figure so far
        SUMMARY.write_text(json.dumps(summary.to_dict(), indent=2, default=str) + "\n")

    summary = fuzz(plans, fuzz_setup, seed, indices, progress=write)
    write(summary)
    # Every command ended: a case whose endings were all refusals would not exercise `run` at all.
    assert sum(summary.endings["run"].values()) == summary.cases
    assert not summary.failures, "\n".join(
        f"case {f['index']} ({f['plan']}, {f['mutation']}): {'; '.join(f['problems'])}\n  {f['reproducer']}"
        for f in summary.failures
    )
