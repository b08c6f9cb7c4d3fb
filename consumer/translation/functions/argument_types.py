"""What a scalar call's argument types must be for its function to mean what it says, as one rule for `run` and
`validate`: the translator applies it to the types of the translated arguments (`SubstraitConsumer.call_scalar`),
`validate` to the types the plan states (`analysis.analyze`). A call that breaks it is an invalid plan (exit 2),
never left to a silent Spark coercion (a string compared with a number, arithmetic on strings).

The rule reads type families (`types.family`: 'int', 'string', 'date', ...); `None` is an argument whose type the
caller cannot tell (validate, where the plan does not state it): such an argument is not judged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ...loading.extensions import FunctionRef
from . import COMPARISONS

NUMERIC = frozenset({"int", "float", "decimal"})
TEMPORAL = frozenset({"date", "timestamp", "interval_day", "interval_year"})
# The types a string compared with them is read as (ibis compares a date column with '1995-03-15').
TEMPORAL_FROM_STRING = frozenset({"date", "timestamp"})
ARITHMETIC = frozenset({"add", "subtract", "multiply", "divide", "modulus"})
# String functions whose every value argument must be a string (Spark would cast an integer silently).
STRING_ONLY = frozenset({
    "contains", "starts_with", "ends_with", "like", "upper", "lower", "concat", "strpos", "count_substring",
    "replace", "string_split", "regexp_string_split", "swapcase", "capitalize", "initcap",
})  # fmt: skip


def comparable(families: set[str]) -> bool:
    """Whether values of these families (NULL's aside) compare as they are: one family, numbers, or strings with
    binaries."""
    return len(families) <= 1 or families <= NUMERIC or families == {"string", "binary"}


def string_read_as(families: set[str]) -> str | None:
    """The temporal family a string compared with values of it is read as (`comparison` coerces it), or None."""
    temporal = families - {"string"}
    if "string" in families and len(temporal) == 1 and (target := next(iter(temporal))) in TEMPORAL_FROM_STRING:
        return target
    return None


def _comparison(families: set[str]) -> str | None:
    if comparable(families) or string_read_as(families) is not None:
        return None
    return f"arguments of incompatible types {sorted(families)}"


def _arithmetic(families: set[str]) -> str | None:
    if families <= NUMERIC or (families & TEMPORAL and families <= TEMPORAL | {"int"}):
        return None
    return f"arithmetic on {sorted(families)}"


def _string_only(families: set[str]) -> str | None:
    return None if families <= {"string"} else f"a string function given {sorted(families - {'string'})}"


Check = Callable[[set[str]], str | None]
CHECKS: dict[str, Check] = {
    **dict.fromkeys(COMPARISONS, _comparison),
    **dict.fromkeys(ARITHMETIC, _arithmetic),
    **dict.fromkeys(STRING_ONLY, _string_only),
}


def argument_type_refusal(ref: FunctionRef, families: Iterable[str | None]) -> str | None:
    """Why a scalar call of `ref` with arguments of these families is invalid (`<name as written>: <why>`), or
    None. NULLs and arguments of unknown type (None) are not judged."""
    check = CHECKS.get(ref.base)
    why = check({f for f in families if f is not None and f != "null"}) if check is not None else None
    return f"{ref.name}: {why}" if why else None
