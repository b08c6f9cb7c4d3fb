"""Provision TPC-H sample data as parquet with tpchgen-cli (one `<table>.parquet` per table).

Idempotent: a finished directory holds a `_PROVISIONED.json` stamp naming the generator version and
scale factor; when it matches, nothing is done. Generation goes to a temporary sibling directory that is
renamed into place only when every table was written, so an interrupted run never leaves half a data set.

    python tools/provision_data.py --scale-factor 0.01 --output-dir .data/tpch/sf0.01
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

TABLES = ("customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier")
STAMP = "_PROVISIONED.json"


def find_tpchgen() -> str:
    """tpchgen-cli from the running interpreter's environment (the venv), else from PATH."""
    beside = Path(sys.executable).parent / "tpchgen-cli"
    if beside.exists():
        return str(beside)
    found = shutil.which("tpchgen-cli")
    if not found:
        sys.exit("error: tpchgen-cli not found; install the test extra: pip install -e '.[test]'")
    return found


def generator_version(exe: str) -> str:
    out = subprocess.run([exe, "--version"], check=True, capture_output=True, text=True).stdout
    return out.strip()


def stamp_of(out_dir: Path, wanted: dict) -> dict | None:
    """The folder's stamp when it names what is wanted (every key of `wanted` equal), else None."""
    try:
        have = json.loads((out_dir / STAMP).read_text())
    except (OSError, ValueError):
        return None
    return have if all(have.get(k) == v for k, v in wanted.items()) else None


def is_complete(out_dir: Path, wanted: dict, tables: tuple[str, ...] = TABLES) -> bool:
    return stamp_of(out_dir, wanted) is not None and all((out_dir / f"{t}.parquet").exists() for t in tables)


def row_counts(out_dir: Path, tables: tuple[str, ...] = TABLES) -> dict[str, int] | None:
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow comes with the test extra
        return None
    return {t: pq.ParquetFile(out_dir / f"{t}.parquet").metadata.num_rows for t in tables}


def publish(tmp: Path, out_dir: Path, stamp: dict) -> None:
    """Stamp the finished temporary folder and put it in place of `out_dir` (never half a data set there)."""
    (tmp / STAMP).write_text(json.dumps(stamp, indent=2) + "\n")
    shutil.rmtree(out_dir, ignore_errors=True)
    tmp.rename(out_dir)


def main_for(provision, what: str, example: str, doc: str | None, argv: list[str] | None) -> int:
    """The command line of a scale-factor data set: --scale-factor, --output-dir, --force."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale-factor", "-s", required=True, help=f"{what} scale factor, e.g. {example}")
    parser.add_argument("--output-dir", "-o", required=True, type=Path)
    parser.add_argument("--force", action="store_true", help="regenerate even when up to date")
    args = parser.parse_args(argv)
    provision(args.scale_factor, args.output_dir, args.force)
    return 0


def provision(scale_factor: str, out_dir: Path, force: bool) -> None:
    exe = find_tpchgen()
    wanted = {"generator": generator_version(exe), "scale_factor": scale_factor}
    if not force and is_complete(out_dir, wanted):
        (out_dir / STAMP).touch()  # newer than the venv stamp: make sees it up to date
        print(f"TPC-H sf {scale_factor}: up to date in {out_dir}")
        return

    tmp = out_dir.with_name(out_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    print(f"TPC-H sf {scale_factor}: generating with {wanted['generator']} into {out_dir} ...", flush=True)
    started = time.monotonic()
    subprocess.run(
        [exe, "parquet", "--scale-factor", scale_factor, "--output-dir", str(tmp), "--quiet"],
        check=True,
    )
    missing = [t for t in TABLES if not (tmp / f"{t}.parquet").exists()]
    if missing:
        sys.exit(f"error: tpchgen-cli did not write: {', '.join(missing)}")

    stamp = dict(wanted, seconds=round(time.monotonic() - started, 1), rows=row_counts(tmp))
    publish(tmp, out_dir, stamp)
    print(f"TPC-H sf {scale_factor}: done in {stamp['seconds']} s; rows: {stamp['rows']}")


def main(argv: list[str] | None = None) -> int:
    return main_for(provision, "TPC-H", "0.01 or 1", __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
