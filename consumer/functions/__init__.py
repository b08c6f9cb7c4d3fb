"""The function table: Substrait function base names mapped to native Spark builders, as data.

`SCALAR` and `AGGREGATE` are plain dicts so that users can add or replace entries (and `docs/functions.md`
can be generated from them). Names are matched on their base name (`equal` for `equal:any_any`).
"""

from __future__ import annotations

from .aggregate import AGGREGATE, AggregateHandler
from .call import Call, Handler
from .scalar import SCALAR

__all__ = ["AGGREGATE", "SCALAR", "AggregateHandler", "Call", "Handler"]
