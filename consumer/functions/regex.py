"""Regular-expression string functions (functions_string.yaml) on Spark's Java regex engine.

Substrait specifies ICU regular expressions; Spark compiles patterns with `java.util.regex`. The two agree on
the syntax plans use in practice (classes, quantifiers, lazy/possessive, lookaround, backreferences, `\\A`/`\\z`,
`\\p{..}`). Known differences: ICU's POSIX bracket sets (`[[:alpha:]]`), `\\N{name}`, `\\X` and ICU's set
operations (`[[a-z]--[aeiou]]`) are not Java syntax. Spark's regexp_instr counts UTF-16 code units; regexp_strpos
converts to characters (code points) as the spec counts them.

The options become Java's embedded flags in front of the pattern: `case_sensitivity` -> `(?iu)` (Unicode case
folding) or `(?i)` (ASCII only), `multiline` -> `(?m)`, `dotall` -> `(?s)`. `position` becomes a substring of
the input (Java's default region bounds: `^` matches at `position`, lookbehind does not see before it), which is
how ICU's `region` behaves too.
"""

from __future__ import annotations

import re

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..scope import Typed
from ..types import cast
from .call import Call, Handler

_CASE = {"CASE_SENSITIVE": "", "CASE_INSENSITIVE": "iu", "CASE_INSENSITIVE_ASCII": "i"}
_MULTILINE = {"MULTILINE_DISABLED": "", "MULTILINE_ENABLED": "m"}
_DOTALL = {"DOTALL_DISABLED": "", "DOTALL_ENABLED": "s"}


def flags(c: Call) -> str:
    """Java's embedded-flag prefix for the call's regex options (`''` when all are off)."""
    f = (
        _CASE[c.option("case_sensitivity", tuple(_CASE), "CASE_SENSITIVE")]
        + _MULTILINE[c.option("multiline", tuple(_MULTILINE), "MULTILINE_DISABLED")]
        + _DOTALL[c.option("dotall", tuple(_DOTALL), "DOTALL_DISABLED")]
    )
    return f"(?{f})" if f else ""


def pattern(c: Call, arg: Typed) -> Column:
    """The pattern argument with the option flags prepended (a literal stays a literal for Catalyst)."""
    prefix = flags(c)
    if not prefix:
        return arg.col
    if arg.is_literal:
        return F.lit(None).cast(T.StringType()) if arg.value is None else F.lit(prefix + arg.value)
    return F.concat(F.lit(prefix), arg.col)


def _from(s: Column, position: Typed | None) -> Column:
    """The input from character `position` on (1-based); the whole input when the position is absent or 1."""
    if position is None or (position.is_literal and position.value == 1):
        return s
    return F.call_function("substr", s, position.col)


def _is_literal(arg: Typed | None, value: int) -> bool:
    return arg is None or (arg.is_literal and arg.value == value)


def _to_output(c: Call, col: Column) -> Column:
    return cast(col, c.output_type) if c.output_type is not None else col


def _match_substring(c: Call) -> Column:
    """`occurrence`-th match (1-based) of capture `group`, searching from `position`; NULL when there is none."""
    s, p, *rest = c.arity(2, 5).values
    position, occurrence, group = rest or (None, None, None)
    matches = F.call_function(
        "regexp_extract_all", _from(s.col, position), pattern(c, p), group.col if group else F.lit(0)
    )
    return F.call_function("try_element_at", matches, occurrence.col if occurrence else F.lit(1))


def _match_substring_all(c: Call) -> Column:
    s, p, position, group = c.arity(4).values
    return F.call_function("regexp_extract_all", _from(s.col, position), pattern(c, p), group.col)


def _count_substring(c: Call) -> Column:
    s, p, *position = c.arity(2, 3).values
    return _to_output(
        c, F.call_function("regexp_count", _from(s.col, position[0] if position else None), pattern(c, p))
    )


def _strpos(c: Call) -> Column:
    """Position (in characters) of the first match at or after `position`, 0 when none.

    Spark's regexp_instr counts UTF-16 code units; the character position is the length of the text before the
    match, which Java's split (limit 2) yields, except for a zero-width match at the start, which split skips
    (regexp_instr says 1 there, which is also right in characters). Only occurrence 1 maps exactly.
    """
    s, p, position, occurrence = c.arity(4).values
    if not _is_literal(occurrence, 1):
        raise c.unsupported(
            "occurrence other than a literal 1 (Spark's regexp_instr finds only the first match; an n-th match "
            "position cannot be derived exactly from Spark's regex functions)"
        )
    text, regex = _from(s.col, position), pattern(c, p)
    units = F.call_function("regexp_instr", text, regex)
    before = F.length(F.element_at(F.call_function("split", text, regex, F.lit(2)), 1))
    found = F.when(units <= 1, units).otherwise(before + 1)
    if _is_literal(position, 1):
        return _to_output(c, found)
    return _to_output(c, F.when(found > 0, found + position.col - 1).otherwise(found))


_BACKREF = re.compile(r"\\(\\|\d|\$)|\$")


def _java_replacement(text: str) -> str:
    """ICU's replacement syntax (`\\1` or `$1` for a group, `\\$`, `\\\\`) as Java's (`$1`, `\\$`, `\\\\`)."""

    def swap(m: re.Match[str]) -> str:
        g = m.group(1)
        if g is None:
            return "$"  # `$n` is a group reference in both
        return "$" + g if g.isdigit() else "\\" + g

    return _BACKREF.sub(swap, text)


def _replace(c: Call) -> Column:
    """Replace every match (`occurrence` 0) from `position` on; ICU's `\\n` group references become Java's `$n`."""
    s, p, r, *rest = c.arity(3, 5).values
    position, occurrence = rest or (None, None)
    if not _is_literal(occurrence, 0):
        raise c.unsupported(
            "occurrence other than a literal 0 (all matches): Spark's regexp_replace replaces every match"
        )
    if r.is_literal:
        replacement = F.lit(None).cast(T.StringType()) if r.value is None else F.lit(_java_replacement(r.value))
    else:
        replacement = F.regexp_replace(r.col, r"\\(\d)", r"\$$1")
    args = [s.col, pattern(c, p), replacement]
    if not _is_literal(position, 1):
        if not (position.is_literal and isinstance(position.value, int)):
            raise c.unsupported("position must be a literal (Spark's regexp_replace takes a constant position)")
        args.append(position.col)
    return F.call_function("regexp_replace", *args)


def _string_split(c: Call) -> Column:
    """Every piece around the matches, trailing empty pieces kept (Java's split with limit -1)."""
    s, p = c.arity(2).values
    return F.call_function("split", s.col, pattern(c, p), F.lit(-1))


REGEX: dict[str, Handler] = {
    "regexp_match_substring": _match_substring,
    "regexp_match_substring_all": _match_substring_all,
    "regexp_count_substring": _count_substring,
    "regexp_strpos": _strpos,
    "regexp_replace": _replace,
    "regexp_string_split": _string_split,
}
