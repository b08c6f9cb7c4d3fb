"""DataFusion's plans of the shop queries (``shop.SHOP_SQL``) over the shop's parquet files, at the version the
``test`` extra pins, cached like the TPC-H ones (``.data/producers/datafusion-<version>/shop-<name>.bin``)."""

from __future__ import annotations

from pathlib import Path

from shop import SHOP_SQL, SHOP_TABLES

from . import datafusion_plans
from .cache import Generated, cached_plans


def _context(shop_dir: Path):
    from datafusion import SessionContext

    ctx = SessionContext()
    for table in SHOP_TABLES:
        ctx.register_parquet(table, str(shop_dir / f"{table}.parquet"))
    return ctx


def plans(shop_dir: Path, sqls: dict[str, str] | None = None) -> dict[str, Generated]:
    """The plan of each shop query by name (all of ``SHOP_SQL`` by default), cached or written now."""
    texts = {f"shop-{name}": sql for name, sql in (sqls or SHOP_SQL).items()}

    generate = datafusion_plans.generator(lambda: _context(shop_dir), texts)
    made = cached_plans(datafusion_plans.PRODUCER, datafusion_plans.version(), texts, generate)
    return {name.removeprefix("shop-"): g for name, g in made.items()}
