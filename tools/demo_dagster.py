"""`make demo`, the Dagster part: the example definitions (dags_examples/dagster/definitions.py) materialized with the
real `dagster asset materialize` on the embedded stack (local Spark, the SQLite Iceberg catalog `lake` in
.data/dagster/lake), in one process (the definitions' in-process executor: one Spark JVM), then each asset's
materialization as the Dagster instance recorded it.

    .venv/bin/python tools/demo_dagster.py [--date 1995-06-17] [--tables-dir .data/tpch/sf0.01]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFINITIONS = ROOT / "dags_examples" / "dagster" / "definitions.py"
HOME = ROOT / ".data" / "dagster"


def environment(tables_dir: Path, home: Path = HOME) -> dict[str, str]:
    """The example definitions' settings, and a Dagster instance of their own (telemetry and pop-ups off)."""
    instance = home / "home"
    instance.mkdir(parents=True, exist_ok=True)
    (instance / "dagster.yaml").write_text("telemetry:\n  enabled: false\nnux:\n  enabled: false\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DAGSTER")}
    env.update(
        DAGSTER_HOME=str(instance),
        SUBSTRAIT_DAGSTER_LAKE=str(home / "lake"),
        SUBSTRAIT_TABLES_DIR=str(tables_dir.resolve()),
        SUBSTRAIT_REPORTS_DIR=str(home / "reports"),
        SPARK_LOCAL_IP="127.0.0.1",
        PYSPARK_PYTHON=sys.executable,
    )
    return env


def show(value: object) -> str:
    """A metadata value as one readable line."""
    from dagster import TableColumnLineage, TableSchema

    inner = getattr(value, "value", value)
    if isinstance(inner, TableSchema):
        return ", ".join(f"{c.name} {c.type}" for c in inner.columns)
    if isinstance(inner, TableColumnLineage):
        return "; ".join(
            f"{col} <- " + ", ".join(f"{'/'.join(d.asset_key.path)}.{d.column_name}" for d in deps)
            for col, deps in inner.deps_by_column.items()
        )
    return json.dumps(inner) if isinstance(inner, list | dict) else str(inner)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--date", default="1995-06-17", help="the daily report's partition")
    ap.add_argument("--tables-dir", default=str(ROOT / ".data" / "tpch" / "sf0.01"))
    args = ap.parse_args(argv)
    env = environment(Path(args.tables_dir))
    exe = Path(sys.executable).parent / "dagster"
    cmd = [str(exe), "asset", "materialize", "-f", str(DEFINITIONS), "--select", "*", "--partition", args.date]
    print(f"\n== {' '.join(cmd[1:])}")
    t0 = time.monotonic()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    print(f"   exit {done.returncode} in {time.monotonic() - t0:.0f} s")
    if done.returncode:
        print(done.stderr[-6000:], file=sys.stderr)
        return 1
    os.environ["DAGSTER_HOME"] = env["DAGSTER_HOME"]
    from dagster import AssetKey, DagsterInstance

    instance = DagsterInstance.get()
    for key in (["lake", "demo", "big_orders"], ["reports", "pricing_summary"]):
        event = instance.get_latest_materialization_event(AssetKey(key))
        m = event.asset_materialization
        partition = f" partition {m.partition}" if m.partition else ""
        print(f"\n-- materialization of {'/'.join(key)}{partition} (data version {m.tags.get('dagster/data_version')})")
        for name, value in m.metadata.items():
            print(f"   {name}: {show(value)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
