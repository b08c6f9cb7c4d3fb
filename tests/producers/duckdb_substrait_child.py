"""Run inside the pinned DuckDB 1.1.3 (tools/pinned_envs.py "duckdb-substrait"): its substrait extension's
`get_substrait` for each SQL text. Reads a JSON job on stdin: extension, tables ({name: parquet path}), sqls
({name: text}), out (folder). Writes `<name>.bin`, or `<name>.error` with the producer's first error line.
Only the standard library and that DuckDB are importable here."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import duckdb


def main() -> int:
    job = json.load(sys.stdin)
    con = duckdb.connect(
        config={
            "allow_unsigned_extensions": "true",
            "autoinstall_known_extensions": "false",
            "autoload_known_extensions": "false",
        }
    )
    con.execute("LOAD '" + job["extension"].replace("'", "''") + "'")
    for table, path in job["tables"].items():
        quoted, literal = table.replace('"', '""'), path.replace("'", "''")
        con.execute(f"CREATE VIEW \"{quoted}\" AS SELECT * FROM read_parquet('{literal}')")
    out = Path(job["out"])
    for name, sql in job["sqls"].items():
        try:
            (out / f"{name}.bin").write_bytes(con.execute("CALL get_substrait(?)", [sql]).fetchone()[0])
        except duckdb.Error as exc:  # the producer refused the SQL: recorded, the test decides
            lines = str(exc).strip().splitlines()
            (out / f"{name}.error").write_text(f"{type(exc).__name__}: {lines[0] if lines else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
