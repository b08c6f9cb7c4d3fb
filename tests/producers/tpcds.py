"""TPC-DS as the test set-up provisions it (`make data-tpcds`, tools/provision_tpcds.py): DuckDB's dsdgen data at
sf 0.1 and DuckDB's 99 query texts, the SQL every producer is given and DuckDB answers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from provision_tpcds import TABLES  # tools/ (on the path through conftest): the one list of tables

from .cache import REPO_ROOT

__all__ = ["TABLES", "TPCDS_DIR", "ensure_tpcds_data", "name", "query_texts"]

TPCDS_DIR = REPO_ROOT / ".data" / "tpcds" / "sf0.1"
SCALE = "0.1"
QUERIES = range(1, 100)


def ensure_tpcds_data(target: Path = TPCDS_DIR) -> Path:
    """The provisioned folder, generated now when `make data-tpcds` has not run (a test run outside make)."""
    subprocess.run(
        [sys.executable, str(REPO_ROOT / "tools" / "provision_tpcds.py"), "-s", SCALE, "-o", str(target)],
        check=True,
        capture_output=True,
    )
    return target


def name(q: int) -> str:
    return f"tpcds-q{q:02d}"


def query_texts(tpcds_dir: Path) -> dict[str, str]:
    """Every query's SQL by test name (`tpcds-q01` …)."""
    return {name(q): (tpcds_dir / "queries" / f"q{q:02d}.sql").read_text() for q in QUERIES}
