"""Date and time functions (functions_datetime.yaml).

Substrait `precision_timestamp` is Spark's TIMESTAMP_NTZ (a wall-clock time) and `precision_timestamp_tz` is
Spark's TIMESTAMP (an instant). Functions on instants that name a time zone are computed without the session
time zone: the instant's offset from the epoch is an exact interval, and wall-clock times in a named zone come
from `from_utc_timestamp`/`to_utc_timestamp`, which take the zone as an argument.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ...types import cast, family
from .arithmetic import ARITHMETIC
from .build import binary, cast_to_output
from .call import UNKNOWN, ArgumentRule, Arguments, Call, Handler

_NTZ_EPOCH = "1970-01-01 00:00:00"


def _unix_seconds(x: Column, kind: str) -> Column:
    """Seconds since 1970-01-01 00:00:00 UTC (a wall-clock time counts as UTC; floor for earlier times)."""
    if kind == "date":
        return F.unix_date(x).cast(T.LongType()) * F.lit(86400)
    if kind == "timestamp_tz":
        return F.unix_seconds(x)
    days = F.unix_date(F.to_date(x)).cast(T.LongType())
    return days * F.lit(86400) + F.hour(x) * F.lit(3600) + F.minute(x) * F.lit(60) + F.second(x)


def _seconds(x: Column) -> Column:
    """Seconds with their fraction (decimal(8,6)): exact."""
    return F.call_function("date_part", F.lit("SECOND"), x)


def _monday_day_of_week(x: Column) -> Column:
    return (F.dayofweek(x) + F.lit(5)) % F.lit(7) + F.lit(1)


# Components whose value depends on the indexing option (ONE: the natural numbering, ZERO: one less).
_INDEXED: dict[str, Callable[[Column], Column]] = {
    "QUARTER": F.quarter,
    "MONTH": F.month,
    "DAY": F.dayofmonth,
    "DAY_OF_YEAR": F.dayofyear,
    "SUNDAY_DAY_OF_WEEK": F.dayofweek,  # Spark: Sunday = 1 ... Saturday = 7
    "MONDAY_DAY_OF_WEEK": _monday_day_of_week,
    "ISO_WEEK": F.weekofyear,  # Spark's week of year is ISO 8601
    # DataFusion/older plans: plain names
    "WEEK": F.weekofyear,
    "DAY_OF_WEEK": F.dayofweek,
}
_PLAIN: dict[str, Callable[[Column], Column]] = {
    "YEAR": F.year,
    "ISO_YEAR": lambda x: F.call_function("date_part", F.lit("YEAROFWEEK"), x),
    "HOUR": F.hour,
    "MINUTE": F.minute,
    "SECOND": F.second,
    # Seconds and fraction in the unit, as Calcite's, PostgreSQL's and DuckDB's EXTRACT (and the spec's tests).
    "MILLISECOND": lambda x: F.floor(_seconds(x) * F.lit(1000)),
    "MICROSECOND": lambda x: (_seconds(x) * F.lit(1_000_000)).cast(T.LongType()),
    "SUBSECOND": lambda x: (_seconds(x) * F.lit(1_000_000)).cast(T.LongType()) % F.lit(1_000_000),
}

EXTRACT_COMPONENTS = frozenset(_INDEXED) | frozenset(_PLAIN) | {"UNIX_TIME"}
"""The extract components we translate (the validator checks plans against them)."""


def _component(component: str, x: Column, kind: str, indexing: str | None) -> Column:
    """(A component `_extract_rule` accepts.)"""
    if component == "UNIX_TIME":
        return _unix_seconds(x, kind)
    if component in _PLAIN:
        return _PLAIN[component](x)
    col = _INDEXED[component](x)
    return col - F.lit(1) if indexing == "ZERO" else col


def _extract_rule(c: Arguments) -> str | None:
    """The component (an enum, or DataFusion's string literal) and its indexing option must be ones we map."""
    if c.enums:
        component = c.enums[0].upper()
        indexing = c.enums[1].upper() if len(c.enums) > 1 else None
        if indexing not in (None, "ONE", "ZERO"):
            return f"indexing {indexing}"
        if len(c.values) not in (1, 2):
            return None  # (the handler's arity check: an invalid plan)
    else:
        if len(c.values) != 2 or c.values[0].value is UNKNOWN:
            return None
        part = c.values[0]
        if not (part.is_literal and isinstance(part.value, str)):
            return "date part must be a literal"
        component, indexing = part.value.upper(), None
    if component in _PLAIN and indexing is not None:
        return f"indexing option given for {component}"
    if component not in EXTRACT_COMPONENTS:
        return f"extract component {component}"
    return None


def _kind(t: T.DataType) -> str:
    if isinstance(t, T.TimestampType):
        return "timestamp_tz"
    return "date" if isinstance(t, T.DateType) else family(t)


def _extract(c: Call) -> Column:
    c.check(_extract_rule)
    if c.enums:
        component = c.enums[0].upper()
        indexing = c.enums[1].upper() if len(c.enums) > 1 else None
        value, *tz = c.arity(1, 2).values
        x = value.col
        kind = _kind(value.type)
        if tz:
            x, kind = _wall_clock(value.col, tz[0].col), "timestamp"
    else:  # date_part('year', x): the component as a string literal (DataFusion)
        part, value = c.arity(2).values
        component, indexing, x, kind = part.value.upper(), None, value.col, _kind(value.type)
    col = _component(component, x, kind, indexing)
    return cast(col, c.output_type or T.LongType())


def _instant_offset(x: Column) -> Column:
    """An instant's exact distance from the epoch, as a day-time interval (session-independent)."""
    return x - F.timestamp_seconds(F.lit(0))


def _wall_clock(x: Column, tz: Column) -> Column:
    """The wall-clock time (TIMESTAMP_NTZ) of instant `x` in zone `tz`."""
    return F.lit(_NTZ_EPOCH).cast(T.TimestampNTZType()) + _instant_offset(F.from_utc_timestamp(x, tz))


def _local_timestamp(c: Call) -> Column:
    x, tz = c.arity(2).cols
    return _wall_clock(x, tz)


def _assume(ntz: Column, tz: Column) -> Column:
    """The instant at which zone `tz`'s clocks show wall-clock time `ntz`."""
    as_utc = F.timestamp_seconds(F.lit(0)) + (ntz - F.lit(_NTZ_EPOCH).cast(T.TimestampNTZType()))
    return F.to_utc_timestamp(as_utc, tz)


def _assume_timezone(c: Call) -> Column:
    """A wall-clock time (a date: its midnight) in zone `tz`, as an instant."""
    x, tz, *_precision = c.arity(2, 3).values
    return _assume(x.col.cast(T.TimestampNTZType()), tz.col)


def _two_digits(col: Column, width: int = 2, pad: str = "0") -> Column:
    return F.lpad(col.cast(T.StringType()), width, pad)


# strftime conversions, as Spark columns over a wall-clock time (TIMESTAMP_NTZ or DATE): component functions
# on these types do not depend on the session time zone. Names (%a, %b) come from the date alone.
_STRFTIME: dict[str, Callable[[Column], Column]] = {
    "Y": lambda x: F.year(x).cast(T.StringType()),
    "y": lambda x: _two_digits(F.year(x) % F.lit(100)),
    "m": lambda x: _two_digits(F.month(x)),
    "d": lambda x: _two_digits(F.dayofmonth(x)),
    "e": lambda x: _two_digits(F.dayofmonth(x), pad=" "),
    "j": lambda x: _two_digits(F.dayofyear(x), 3),
    "H": lambda x: _two_digits(F.hour(x)),
    "I": lambda x: _two_digits((F.hour(x) + F.lit(11)) % F.lit(12) + F.lit(1)),
    "M": lambda x: _two_digits(F.minute(x)),
    "S": lambda x: _two_digits(F.second(x)),
    "f": lambda x: _two_digits((_seconds(x) * F.lit(1_000_000)).cast(T.LongType()) % F.lit(1_000_000), 6),
    "p": lambda x: F.when(F.hour(x) < F.lit(12), F.lit("AM")).otherwise(F.lit("PM")),
    "a": lambda x: F.date_format(F.to_date(x), "EEE"),
    "A": lambda x: F.date_format(F.to_date(x), "EEEE"),
    "b": lambda x: F.date_format(F.to_date(x), "MMM"),
    "h": lambda x: F.date_format(F.to_date(x), "MMM"),
    "B": lambda x: F.date_format(F.to_date(x), "MMMM"),
    "u": lambda x: _monday_day_of_week(x).cast(T.StringType()),
    "w": lambda x: (F.dayofweek(x) - F.lit(1)).cast(T.StringType()),
    "V": lambda x: _two_digits(F.weekofyear(x)),
    "G": lambda x: F.call_function("date_part", F.lit("YEAROFWEEK"), x).cast(T.StringType()),
}
_STRFTIME_ALIASES = {"F": "%Y-%m-%d", "T": "%H:%M:%S", "D": "%m/%d/%y", "R": "%H:%M"}

# strptime conversions as Java DateTimeFormatter pattern letters (Spark's parser).
_STRPTIME: dict[str, str] = {
    "Y": "yyyy", "y": "yy", "m": "MM", "d": "dd", "e": "d", "j": "DDD", "H": "HH", "I": "hh", "M": "mm",
    "S": "ss", "f": "SSSSSS", "p": "a", "a": "EEE", "A": "EEEE", "b": "MMM", "h": "MMM", "B": "MMMM",
    "z": "xx", "Z": "VV",
}  # fmt: skip


def _format_codes(fmt: str) -> list[tuple[bool, str]]:
    """(is_code, text) pieces of a strftime/strptime format, aliases (%F, %T, ...) expanded; a lone % at the end
    is the code ''."""
    out: list[tuple[bool, str]] = []
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if ch != "%":
            out.append((False, ch))
            i += 1
            continue
        code = fmt[i + 1 : i + 2]
        if code in _STRFTIME_ALIASES:
            out.extend(_format_codes(_STRFTIME_ALIASES[code]))
        elif code == "%":
            out.append((False, "%"))
        else:
            out.append((True, code))
        i += 2
    return out


def _format_rule(kind: str, conversions: Mapping[str, object], arities: tuple[int, ...]) -> ArgumentRule:
    """strftime/strptime: the format (the second argument) is a string literal of conversions we map."""

    def rule(c: Arguments) -> str | None:
        if len(c.values) not in arities or c.values[1].value is UNKNOWN:
            return None  # (a wrong arity is the handler's invalid plan; a parameter's value is not in the plan)
        fmt = c.values[1]
        if not (fmt.is_literal and isinstance(fmt.value, str)):
            return "the format must be a string literal"
        for is_code, text in _format_codes(fmt.value):
            if is_code and not text:
                return f"format {fmt.value!r} ends with a lone %"
            if is_code and text not in conversions:
                return f"{kind} conversion %{text}"
        return None

    return rule


_STRFTIME_RULE = _format_rule("strftime", _STRFTIME, (2, 3))
_STRPTIME_DATE_RULE = _format_rule("strptime", _STRPTIME, (2,))
_STRPTIME_TIMESTAMP_RULE = _format_rule("strptime", _STRPTIME, (3, 4))


def _strftime(c: Call) -> Column:
    x, fmt, *tz = c.arity(2, 3).check(_STRFTIME_RULE).values
    col = x.col
    if isinstance(x.type, T.TimestampType):  # an instant: format its wall-clock time in the zone (UTC if none)
        col = _wall_clock(col, tz[0].col if tz else F.lit("UTC"))
    pieces = [_STRFTIME[text](col) if is_code else F.lit(text) for is_code, text in _format_codes(fmt.value)]
    return F.concat(*pieces) if pieces else F.when(col.isNotNull(), F.lit(""))


def _java_pattern(fmt: str) -> str:
    out = []
    for is_code, text in _format_codes(fmt):
        if is_code:
            out.append(_STRPTIME[text])
        elif text.isalpha() or text == "'":
            out.append("''" if text == "'" else f"'{text}'")
        else:
            out.append(text)
    return "".join(out)


def _strptime_date(c: Call) -> Column:
    s, fmt = c.arity(2).check(_STRPTIME_DATE_RULE).values
    return F.to_date(s.col, _java_pattern(fmt.value))


def _strptime_timestamp(c: Call) -> Column:
    """An instant: a zone in the string wins, else the timezone argument, else UTC."""
    s, fmt_arg, *rest = c.arity(3, 4).check(_STRPTIME_TIMESTAMP_RULE).values
    fmt = fmt_arg.value
    pattern = _java_pattern(fmt)
    if "%z" in fmt or "%Z" in fmt:
        return F.to_timestamp(s.col, pattern)
    tz = rest[0].col if len(rest) == 2 else F.lit("UTC")
    return _assume(F.to_timestamp_ntz(s.col, F.lit(pattern)), tz)


def _is_leap_year(x: Column) -> Column:
    y = F.year(x)
    return ((y % F.lit(4) == 0) & (y % F.lit(100) != 0)) | (y % F.lit(400) == 0)


def _extract_boolean_rule(c: Arguments) -> str | None:
    component = c.enums[0].upper() if c.enums else ""
    if len(c.values) in (1, 2) and component != "IS_LEAP_YEAR":
        return f"extract_boolean component {component or '(none)'}"
    return None


def _extract_boolean(c: Call) -> Column:
    value, *tz = c.arity(1, 2).check(_extract_boolean_rule).values
    x = _wall_clock(value.col, tz[0].col) if tz else value.col
    return _is_leap_year(x)


_UNIT_MICROS: dict[str, int] = {
    "WEEK": 7 * 86_400_000_000,
    "DAY": 86_400_000_000,
    "HOUR": 3_600_000_000,
    "MINUTE": 60_000_000,
    "SECOND": 1_000_000,
    "MILLISECOND": 1000,
    "MICROSECOND": 1,
}


def _ntz_micros(ntz: Column) -> Column:
    """Microseconds of a wall-clock time since 1970-01-01 00:00 (exact: an interval added to the epoch instant)."""
    return F.unix_micros(F.timestamp_seconds(F.lit(0)) + (ntz - F.lit(_NTZ_EPOCH).cast(T.TimestampNTZType())))


def _micros_ntz(micros: Column) -> Column:
    return _wall_clock(F.timestamp_micros(micros), F.lit("UTC"))


def _round_micros(d: Column, step: Column, rounding: str) -> Column:
    """`d` rounded to a multiple of `step` (floor-based remainder, so negative distances round the same way)."""
    rem = F.pmod(d, step)
    lower = d - rem
    upper = F.when(rem == F.lit(0), lower).otherwise(lower + step)
    choose_upper = {
        "FLOOR": F.lit(False),
        "CEIL": F.lit(True),
        "ROUND_TIE_DOWN": rem * F.lit(2) > step,
        "ROUND_TIE_UP": rem * F.lit(2) >= step,
    }[rounding]
    return F.when(choose_upper, upper).otherwise(lower)


def _round_temporal_rule(c: Arguments) -> str | None:
    if len(c.enums) != 2:
        return "expects the rounding and unit enum arguments"
    rounding, unit = (e.upper() for e in c.enums)
    if rounding not in ("FLOOR", "CEIL", "ROUND_TIE_DOWN", "ROUND_TIE_UP"):
        return f"rounding {rounding}"
    if unit not in _UNIT_MICROS:
        return f"unit {unit}: only fixed-length units (WEEK to MICROSECOND) map to native arithmetic"
    return None


def _round_temporal(c: Call) -> Column:
    """Rounding to a multiple of a fixed-length unit from an origin; an instant is rounded on its wall clock in
    the given zone. YEAR and MONTH (calendar lengths) are refused."""
    rounding, unit = (e.upper() for e in c.check(_round_temporal_rule).enums)
    x, multiple, *rest = c.arity(3, 4).values
    origin, tz = rest[-1], (rest[0].col if len(rest) == 2 else None)
    kind = _kind(x.type)
    if kind == "timestamp_tz":
        zone = tz if tz is not None else F.lit("UTC")
        xw, ow = _wall_clock(x.col, zone), _wall_clock(origin.col, zone)
    else:
        xw, ow = x.col.cast(T.TimestampNTZType()), origin.col.cast(T.TimestampNTZType())
    step = multiple.col.cast(T.LongType()) * F.lit(_UNIT_MICROS[unit])
    base = _ntz_micros(ow)
    rounded = _micros_ntz(base + _round_micros(_ntz_micros(xw) - base, step, rounding))
    if kind == "timestamp_tz":
        return _assume(rounded, tz if tz is not None else F.lit("UTC"))
    return F.to_date(rounded) if kind == "date" else rounded


# date_trunc units (DataFusion's, DuckDB's and Spark's spellings) -> Spark's `trunc` unit on the date (calendar
# units), or None for DAY and the fixed-length units of `_UNIT_MICROS`.
_TRUNC_UNITS: dict[str, str | None] = {
    "YEAR": "YEAR", "YYYY": "YEAR", "YY": "YEAR",
    "QUARTER": "QUARTER",
    "MONTH": "MONTH", "MON": "MONTH", "MM": "MONTH",
    "WEEK": "WEEK",  # weeks start on Monday (ISO 8601), as in DataFusion, DuckDB and Spark
    "DAY": None, "DD": None,
    **dict.fromkeys(("HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND")),
}  # fmt: skip


def _trunc_unit(c: Arguments) -> object:
    """The unit argument: an enum, else the first value argument (a string literal, as DataFusion writes it)."""
    if c.enums:
        return c.enums[0]
    return c.values[0].value if c.values and c.values[0].is_literal else None


def _date_trunc_rule(c: Arguments) -> str | None:
    if len(c.values) != (1 if c.enums else 2) or _trunc_unit(c) is UNKNOWN:
        return None  # (a wrong arity is the handler's invalid plan; a parameter's value is not in the plan)
    unit = _trunc_unit(c)
    if not isinstance(unit, str):
        return "the unit must be a string literal"
    if unit.upper() not in _TRUNC_UNITS:
        return f"unit {unit!r} (supported: {', '.join(u.lower() for u in _TRUNC_UNITS)})"
    return None


def _truncate_wall_clock(w: Column, unit: str) -> Column:
    """Wall-clock time `w` (TIMESTAMP_NTZ) truncated to `unit`. Spark's `date_trunc` takes an instant and
    truncates in the session time zone (a wall-clock time that does not exist there, in a DST gap, moves):
    calendar units truncate the date (`trunc`), the others count microseconds, neither sees a time zone."""
    if unit in ("DAY", "DD"):
        return F.to_date(w).cast(T.TimestampNTZType())
    calendar = _TRUNC_UNITS[unit]
    if calendar is not None:
        return F.trunc(F.to_date(w), calendar).cast(T.TimestampNTZType())
    micros, step = _ntz_micros(w), F.lit(_UNIT_MICROS[unit])
    return _micros_ntz(micros - F.pmod(micros, step))


def _date_trunc(c: Call) -> Column:
    """date_trunc(unit, x): a date or wall-clock time truncated to the unit; an instant on its UTC wall clock
    (the plan does not say the zone it was truncated in: Substrait instants are UTC). The result is the type the
    plan declares (DataFusion: a timestamp even for a date, which it casts first), else the argument's."""
    c.check(_date_trunc_rule)
    x = c.arity(1).values[0] if c.enums else c.arity(2).values[1]
    kind = _kind(x.type)
    wall = _wall_clock(x.col, F.lit("UTC")) if kind == "timestamp_tz" else x.col.cast(T.TimestampNTZType())
    truncated = _truncate_wall_clock(wall, str(_trunc_unit(c)).upper())
    out = c.output_type or x.type
    if isinstance(out, T.TimestampType):
        return _assume(truncated, F.lit("UTC"))
    return cast(truncated, out)


def _datetime_arithmetic(name: str) -> Handler:
    """date +/- interval_day is a timestamp in functions_datetime when the plan declares one; producers of SQL's
    `date - INTERVAL '3' DAY` declare a date (or nothing): the arithmetic table's add/subtract keep it a date."""
    general = ARITHMETIC[name]

    def build(c: Call) -> Column:
        fams = c.families()
        if fams[:2] == ("date", "interval_day") and family(c.output_type or T.DateType()) == "timestamp":
            a, b = c.arity(2).cols
            ts = a.cast(T.TimestampNTZType())
            return ts + b if name == "add" else ts - b
        return general(c)

    return build


DATETIME: dict[str, Handler] = {
    "extract": _extract,
    "date_part": _extract,
    "functions_datetime/add": _datetime_arithmetic("add"),
    "functions_datetime/subtract": _datetime_arithmetic("subtract"),
    "add_intervals": cast_to_output(binary(lambda a, b: a + b)),  # whole-day literals are INTERVAL DAY
    "local_timestamp": _local_timestamp,
    "assume_timezone": _assume_timezone,
    "strftime": _strftime,
    "strptime_date": _strptime_date,
    "strptime_timestamp": _strptime_timestamp,
    "extract_boolean": _extract_boolean,
    "round_temporal": _round_temporal,
    "date_trunc": _date_trunc,
}
# What the handlers above refuse in their arguments (`call.ArgumentRule`; `validate` applies the same rules).
DATETIME_RULES: dict[str, ArgumentRule] = {
    "extract": _extract_rule,
    "date_part": _extract_rule,
    "strftime": _STRFTIME_RULE,
    "strptime_date": _STRPTIME_DATE_RULE,
    "strptime_timestamp": _STRPTIME_TIMESTAMP_RULE,
    "extract_boolean": _extract_boolean_rule,
    "round_temporal": _round_temporal_rule,
    "date_trunc": _date_trunc_rule,
}
