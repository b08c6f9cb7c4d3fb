"""Date and time functions (functions_datetime.yaml)."""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from ..types import cast
from .call import Call, Handler

_EXTRACT: dict[str, Callable[[Column], Column]] = {
    "YEAR": F.year,
    "QUARTER": F.quarter,
    "MONTH": F.month,
    "DAY": F.dayofmonth,
    "DAY_OF_YEAR": F.dayofyear,
    "DAY_OF_WEEK": F.dayofweek,
    "WEEK": F.weekofyear,
    "HOUR": F.hour,
    "MINUTE": F.minute,
    "SECOND": F.second,
}


def _extract(c: Call) -> Column:
    if c.enums:
        component = c.enums[0].upper()
        value = c.arity(1).cols[0]
    else:  # date_part('year', x): the component as a string literal (DataFusion)
        part, arg = c.arity(2).values
        if not (part.is_literal and isinstance(part.value, str)):
            raise c.unsupported("date part must be a literal")
        component, value = part.value.upper(), arg.col
    fn = _EXTRACT.get(component)
    if fn is None:
        raise c.unsupported(f"extract component {component}")
    col = fn(value)
    return cast(col, c.output_type) if c.output_type is not None else col


DATETIME: dict[str, Handler] = {
    "extract": _extract,
    "date_part": _extract,
}
