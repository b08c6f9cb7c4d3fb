"""Provision TPC-DS sample data and the 99 query texts with DuckDB's `tpcds` extension (dsdgen), pinned.

The generator runs in its own DuckDB (tools/pinned_envs.py "duckdb-tpcds"): the extension loads only into the
release it was built for. Output: `<output-dir>/<table>.parquet` for the 24 tables and `<output-dir>/queries/qNN.sql`
(DuckDB's TPC-DS texts, the SQL every producer is given and DuckDB answers). Idempotent and atomic as
tools/provision_data.py: a `_PROVISIONED.json` stamp names the generator and scale factor; generation goes to a
temporary sibling renamed into place when complete.

    python tools/provision_tpcds.py --scale-factor 0.1 --output-dir .data/tpcds/sf0.1
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import pinned_envs
import provision_data
from provision_data import STAMP

TABLES = (
    "call_center", "catalog_page", "catalog_returns", "catalog_sales", "customer", "customer_address",
    "customer_demographics", "date_dim", "household_demographics", "income_band", "inventory", "item", "promotion",
    "reason", "ship_mode", "store", "store_returns", "store_sales", "time_dim", "warehouse", "web_page",
    "web_returns", "web_sales", "web_site",
)  # fmt: skip
QUERIES = 99
ENV = "duckdb-tpcds"
DSDGEN = Path(__file__).resolve().parent / "tpcds_dsdgen.py"


def is_complete(out_dir: Path, wanted: dict) -> bool:
    queries = len(list((out_dir / "queries").glob("q*.sql")))
    return provision_data.is_complete(out_dir, wanted, TABLES) and queries == QUERIES


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
    rows = provision_data.row_counts(tmp, TABLES) or {}
    stamp = dict(wanted, seconds=round(time.monotonic() - started, 1), rows=rows)
    provision_data.publish(tmp, out_dir, stamp)
    print(f"TPC-DS sf {scale_factor}: done in {stamp['seconds']} s; store_sales rows: {rows.get('store_sales')}")


def main(argv: list[str] | None = None) -> int:
    return provision_data.main_for(provision, "TPC-DS", "0.1 or 1", __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
