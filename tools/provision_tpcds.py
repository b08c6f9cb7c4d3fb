"""Provision TPC-DS sample data and the 99 query texts with DuckDB's `tpcds` extension (dsdgen), pinned.

The generator runs in its own DuckDB (tools/pinned_envs.py "duckdb-tpcds"): the extension loads only into the
release it was built for. Output: `<output-dir>/<table>.parquet` for the 24 tables and `<output-dir>/queries/qNN.sql`
(DuckDB's TPC-DS texts, the SQL every producer is given and DuckDB answers). Idempotent and atomic as
tools/provision_data.py: a `_PROVISIONED.json` stamp names the generator and scale factor; generation goes to a
temporary sibling renamed into place when complete.

    python tools/provision_tpcds.py --scale-factor 0.1 --output-dir .data/tpcds/sf0.1
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import pinned_envs

TABLES = (
    "call_center", "catalog_page", "catalog_returns", "catalog_sales", "customer", "customer_address",
    "customer_demographics", "date_dim", "household_demographics", "income_band", "inventory", "item", "promotion",
    "reason", "ship_mode", "store", "store_returns", "store_sales", "time_dim", "warehouse", "web_page",
    "web_returns", "web_sales", "web_site",
)  # fmt: skip
QUERIES = 99
STAMP = "_PROVISIONED.json"
ENV = "duckdb-tpcds"
DSDGEN = Path(__file__).resolve().parent / "tpcds_dsdgen.py"


def is_complete(out_dir: Path, wanted: dict) -> bool:
    stamp = out_dir / STAMP
    try:
        have = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return False
    return (
        all(have.get(k) == v for k, v in wanted.items())
        and all((out_dir / f"{t}.parquet").exists() for t in TABLES)
        and len(list((out_dir / "queries").glob("q*.sql"))) == QUERIES
    )


def provision(scale_factor: str, out_dir: Path, force: bool) -> None:
    wanted = {"generator": list(pinned_envs.PINNED[ENV][0]), "scale_factor": scale_factor}
    if not force and is_complete(out_dir, wanted):
        (out_dir / STAMP).touch()  # newer than the venv stamp: make sees it up to date
        print(f"TPC-DS sf {scale_factor}: up to date in {out_dir}")
        return
    extension = pinned_envs.extension(ENV)
    tmp = out_dir.with_name(out_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"TPC-DS sf {scale_factor}: generating with {' '.join(wanted['generator'])} into {out_dir} ...", flush=True)
    started = time.monotonic()
    pinned_envs.run_python(ENV, [str(DSDGEN), str(extension), scale_factor, str(tmp), str(tmp / "queries")])
    missing = [t for t in TABLES if not (tmp / f"{t}.parquet").exists()]
    written = len(list((tmp / "queries").glob("q*.sql")))
    if missing or written != QUERIES:
        sys.exit(f"error: dsdgen wrote {written} of {QUERIES} queries; tables missing: {', '.join(missing) or '-'}")
    import pyarrow.parquet as pq

    rows = {t: pq.ParquetFile(tmp / f"{t}.parquet").metadata.num_rows for t in TABLES}
    stamp = dict(wanted, seconds=round(time.monotonic() - started, 1), rows=rows)
    (tmp / STAMP).write_text(json.dumps(stamp, indent=2) + "\n")
    shutil.rmtree(out_dir, ignore_errors=True)
    tmp.rename(out_dir)
    print(f"TPC-DS sf {scale_factor}: done in {stamp['seconds']} s; store_sales rows: {rows['store_sales']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale-factor", "-s", required=True, help="TPC-DS scale factor, e.g. 0.1 or 1")
    parser.add_argument("--output-dir", "-o", required=True, type=Path)
    parser.add_argument("--force", action="store_true", help="regenerate even when up to date")
    args = parser.parse_args(argv)
    provision(args.scale_factor, args.output_dir, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
