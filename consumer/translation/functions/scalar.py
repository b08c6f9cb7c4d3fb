"""Scalar functions: Substrait base name -> native Spark column builder.

Overloads are told apart by the argument types (integer vs decimal division, date arithmetic), never by the
signature string, which producers write differently. Every builder yields native Catalyst expressions.
"""

from __future__ import annotations

from .arithmetic import ARITHMETIC, ARITHMETIC_OPTIONS
from .call import ArgumentRule, Handler
from .comparison import COMPARISON
from .datetime import DATETIME, DATETIME_RULES
from .internal import INTERNAL
from .lists import LIST, LIST_OPTIONS
from .options import OptionRule
from .strings import STRING, STRING_OPTIONS, STRING_RULES
from .unsigned import UNSIGNED_SCALAR, UNSIGNED_SCALAR_OPTIONS

SCALAR: dict[str, Handler] = {
    **ARITHMETIC, **COMPARISON, **STRING, **LIST, **DATETIME, **UNSIGNED_SCALAR, **INTERNAL,
}  # fmt: skip
# The options each default handler reads, by the same keys (`options.OptionRule`; what `validate` checks).
SCALAR_OPTIONS: dict[str, OptionRule] = {
    **ARITHMETIC_OPTIONS,
    **STRING_OPTIONS,
    **LIST_OPTIONS,
    **UNSIGNED_SCALAR_OPTIONS,
}
# What each default handler refuses in its arguments beyond their types (`call.ArgumentRule`; `validate` applies them).
SCALAR_RULES: dict[str, ArgumentRule] = {**STRING_RULES, **DATETIME_RULES}
