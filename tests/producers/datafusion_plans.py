"""Plans written by DataFusion's Substrait producer (``datafusion.substrait.Serde``), at the version the ``test``
extra pins, from SQL over the TPC-H parquet files and consumer-testing's table ``t``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from importlib.metadata import version as installed_version
from pathlib import Path
from typing import Any

from function_corpus import table_t_arrow
from oracles import TPCH_TABLES

from .cache import Generated, Generator, cached_plans

PRODUCER = "datafusion"
TABLE_T = "t"


def version() -> str:
    return installed_version("datafusion")


def _context(tpch_dir: Path):
    ctx = _parquet_context(tpch_dir, TPCH_TABLES)
    ctx.register_record_batches(TABLE_T, [table_t_arrow().to_batches()])
    return ctx


def _parquet_context(tables_dir: Path, tables: Iterable[str]):
    from datafusion import SessionContext

    ctx = SessionContext()
    for table in tables:
        ctx.register_parquet(table, str(tables_dir / f"{table}.parquet"))
    return ctx


def answer(tpch_dir: Path, sql: str) -> tuple[list[str], list[tuple]]:
    """DataFusion's own result for the SQL (columns, rows): the evidence where DuckDB answers differently."""
    table = _context(tpch_dir).sql(sql).to_arrow_table()
    return table.column_names, [tuple(r.values()) for r in table.to_pylist()]


def plans(tpch_dir: Path, sqls: dict[str, str]) -> dict[str, Generated]:
    """The plan of each SQL text (by name), from the cache or written now by DataFusion."""

    return cached_plans(PRODUCER, version(), sqls, generator(lambda: _context(tpch_dir), sqls))


def plans_over(tables_dir: Path, tables: Iterable[str], sqls: dict[str, str]) -> dict[str, Generated]:
    """The plan of each SQL text over `<tables_dir>/<table>.parquet` (TPC-DS), cached as `plans`."""
    return cached_plans(PRODUCER, version(), sqls, generator(lambda: _parquet_context(tables_dir, tables), sqls))


def generator(context: Callable[[], Any], sqls: dict[str, str]) -> Generator:
    """What writes each named SQL text's plan (or the producer's error) with the SessionContext `context()` makes."""

    def generate(out: Path, names: list[str]) -> None:
        from datafusion.substrait import Serde

        ctx = context()
        for name in names:
            try:
                (out / f"{name}.bin").write_bytes(Serde.serialize_bytes(sqls[name], ctx))
            except Exception as exc:  # the producer refused the SQL: recorded, the test decides
                lines = str(exc).strip().splitlines()
                (out / f"{name}.error").write_text(f"{type(exc).__name__}: {lines[0] if lines else ''}")

    return generate
