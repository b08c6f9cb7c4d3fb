"""Run inside the pinned DuckDB (tools/pinned_envs.py "duckdb-tpcds"): TPC-DS data and query texts from DuckDB's
`tpcds` extension, loaded by path.

    tpcds_dsdgen.py EXTENSION SCALE_FACTOR OUT_DIR QUERIES_DIR

Writes `<table>.parquet` for the 24 tables into OUT_DIR and `qNN.sql` for the 99 queries into QUERIES_DIR.
Only the standard library and that DuckDB are importable here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb


def main(extension: str, scale_factor: str, out_dir: str, queries_dir: str) -> int:
    con = duckdb.connect(
        config={
            "allow_unsigned_extensions": "true",
            "autoinstall_known_extensions": "false",
            "autoload_known_extensions": "false",
        }
    )
    con.execute("LOAD " + "'" + extension.replace("'", "''") + "'")
    queries = Path(queries_dir)
    queries.mkdir(parents=True, exist_ok=True)
    for number, text in con.execute("SELECT query_nr, query FROM tpcds_queries() ORDER BY query_nr").fetchall():
        (queries / f"q{number:02d}.sql").write_text(text)
    con.execute("CALL dsdgen(sf = ?)", [float(scale_factor)])
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for (table,) in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY table_name").fetchall():
        target = str(out / f"{table}.parquet").replace("'", "''")
        con.execute(f"COPY {table} TO '{target}' (FORMAT parquet)")  # names from dsdgen's own catalog
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
