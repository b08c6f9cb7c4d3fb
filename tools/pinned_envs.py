"""Pinned tools that cannot share the venv: each installed with `pip install --target` into `.data/pinned/<name>`.

DuckDB extensions load only into the DuckDB release they were built for, and the venv's DuckDB is the oracle
(a newer release). So the TPC-DS generator (DuckDB's `tpcds` extension: `dsdgen`, `tpcds_queries()`) and the
DuckDB substrait producer (`get_substrait`, the last release of that extension on PyPI) each get a DuckDB of their
own, imported by a child process through PYTHONPATH. Idempotent: a finished folder holds a stamp naming its
requirements; when they match, nothing is installed.

    python tools/pinned_envs.py            # install every pinned environment
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
PINNED_ROOT = REPO_ROOT / ".data" / "pinned"
STAMP = "_PINNED.json"

# name -> (requirements, the DuckDB extension file inside it)
PINNED: dict[str, tuple[tuple[str, ...], str]] = {
    "duckdb-tpcds": (("duckdb==1.5.5", "duckdb-extension-tpcds==1.5.5"), "tpcds.duckdb_extension"),
    "duckdb-substrait": (("duckdb==1.1.3", "duckdb-extension-substrait==1.1.3"), "substrait.duckdb_extension"),
}


def folder(name: str) -> Path:
    return PINNED_ROOT / name


def ensure(name: str) -> Path:
    """The environment's folder, installed now unless its stamp names the same requirements."""
    requirements, _ = PINNED[name]
    target = folder(name)
    stamp = target / STAMP
    if stamp.is_file() and json.loads(stamp.read_text()).get("requirements") == list(requirements):
        return target
    tmp = target.with_name(f".{name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"pinned {name}: pip install --target {target} {' '.join(requirements)}", flush=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(tmp), *requirements],
        check=True,
    )
    (tmp / STAMP).write_text(json.dumps({"requirements": list(requirements)}) + "\n")
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return target


def extension(name: str) -> Path:
    """The DuckDB extension file the environment ships (loaded by path: no download, no autoinstall)."""
    _, file_name = PINNED[name]
    found = sorted(ensure(name).rglob(file_name))
    if not found:
        raise FileNotFoundError(f"pinned {name}: no {file_name} under {folder(name)}")
    return found[0]


def run_python(name: str, args: list[str], **kwargs) -> subprocess.CompletedProcess:
    """`python args…` with the environment first on the import path (the venv's DuckDB is not seen)."""
    env = dict(os.environ, PYTHONPATH=str(ensure(name)), PYTHONNOUSERSITE="1")
    return subprocess.run([sys.executable, "-S", *args], env=env, check=True, **kwargs)


def main() -> int:
    for name in PINNED:
        print(f"pinned {name}: {extension(name).relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
