"""Pinned tools that cannot share the venv: each installed with `pip install --target` into `.data/pinned/<name>`
and imported by a child process through PYTHONPATH (`python -S`: the venv's packages are not seen).

DuckDB extensions load only into the DuckDB release they were built for, and the venv's DuckDB is the oracle
(a newer release): the TPC-DS generator (DuckDB's `tpcds` extension: `dsdgen`, `tpcds_queries()`) and the DuckDB
substrait producer (`get_substrait`, the last release of that extension on PyPI) each get a DuckDB of their own.
The `substrait` package pins substrait-protobuf 0.106.0 against the project's 0.108.0. Upgrading one is its line
here. Idempotent: a finished folder holds a stamp naming its requirements; when they match, nothing is installed.

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

# name -> (requirements, the DuckDB extension file inside it, if any)
PINNED: dict[str, tuple[tuple[str, ...], str | None]] = {
    "duckdb-tpcds": (("duckdb==1.5.5", "duckdb-extension-tpcds==1.5.5"), "tpcds.duckdb_extension"),
    "duckdb-substrait": (("duckdb==1.1.3", "duckdb-extension-substrait==1.1.3"), "substrait.duckdb_extension"),
    "substrait-python": (("substrait[sql,extensions]==0.37.1",), None),
}


def version(name: str, package: str) -> str:
    """The pinned version of `package` in environment `name`."""
    return next(r.split("==")[1] for r in PINNED[name][0] if r.split("==")[0].split("[")[0] == package)


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
    pip = [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--target", str(tmp)]
    done = subprocess.run([*pip, *requirements], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"pinned {name}: installing {' '.join(requirements)} failed:\n{done.stderr[-2000:]}")
    (tmp / STAMP).write_text(json.dumps({"requirements": list(requirements)}) + "\n")
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return target


def extension(name: str) -> Path:
    """The DuckDB extension file the environment ships (loaded by path: no download, no autoinstall)."""
    _, file_name = PINNED[name]
    found = sorted(ensure(name).rglob(file_name)) if file_name else []
    if not found:
        raise FileNotFoundError(f"pinned {name}: no {file_name} under {folder(name)}")
    return found[0]


def run_python(name: str, args: list[str], stdin: str | None = None) -> str:
    """`python -S args…` with only the environment on the import path; its stdout, or RuntimeError with stderr."""
    env = dict(os.environ, PYTHONPATH=str(ensure(name)), PYTHONNOUSERSITE="1")
    done = subprocess.run(
        [sys.executable, "-S", *args], env=env, input=stdin, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"pinned {name}: {' '.join(args)} failed:\n{done.stderr.strip()[-2000:]}")
    return done.stdout


def main() -> int:
    for name in PINNED:
        print(f"pinned {name}: {ensure(name).relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
