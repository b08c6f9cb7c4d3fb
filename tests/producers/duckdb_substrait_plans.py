"""Plans written by DuckDB's substrait extension (`get_substrait`) at the pinned release, the last on PyPI
(duckdb 1.1.3 with duckdb-extension-substrait 1.1.3, tools/pinned_envs.py), run in a child process because the
extension loads only into its own DuckDB."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pinned_envs  # tools/, on the path through conftest

from .cache import Generated, Generator, cached_plans

PRODUCER = "duckdb"
ENV = "duckdb-substrait"
CHILD = Path(__file__).resolve().parent / "duckdb_substrait_child.py"


def version() -> str:
    return pinned_envs.version(ENV, "duckdb")


def plans(tables: Mapping[str, Path], sqls: dict[str, str]) -> dict[str, Generated]:
    """The plan of each SQL text (by name) over the parquet files `tables`, from the cache or written now."""
    return cached_plans(PRODUCER, version(), sqls, generator(tables, sqls))


def generator(tables: Mapping[str, Path], sqls: dict[str, str]) -> Generator:
    def generate(out: Path, names: list[str]) -> None:
        job = {
            "extension": str(pinned_envs.extension(ENV)),
            "tables": {t: str(p) for t, p in tables.items()},
            "sqls": {n: sqls[n] for n in names},
            "out": str(out),
        }
        pinned_envs.run_python(ENV, [str(CHILD)], stdin=json.dumps(job))

    return generate
