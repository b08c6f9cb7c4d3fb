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
from .build import substring
from .call import Argument, ArgumentRule, Arguments, Call, Handler
from .options import Option, OptionRule, always

_CASE = {"CASE_SENSITIVE": "", "CASE_INSENSITIVE": "iu", "CASE_INSENSITIVE_ASCII": "i"}
_MULTILINE = {"MULTILINE_DISABLED": "", "MULTILINE_ENABLED": "m"}
_DOTALL = {"DOTALL_DISABLED": "", "DOTALL_ENABLED": "s"}


REGEX_CASE = Option("case_sensitivity", tuple(_CASE), "CASE_SENSITIVE")
MULTILINE = Option("multiline", tuple(_MULTILINE), "MULTILINE_DISABLED")
DOTALL = Option("dotall", tuple(_DOTALL), "DOTALL_DISABLED")


def flags(c: Call) -> str:
    """Java's embedded-flag prefix for the call's regex options (`''` when all are off)."""
    f = _CASE[c.read(REGEX_CASE)] + _MULTILINE[c.read(MULTILINE)] + _DOTALL[c.read(DOTALL)]
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
    return substring(s, position.col)


def _is_literal(arg: Typed | None, value: int) -> bool:
    return arg is None or (arg.is_literal and arg.value == value)


def _int(col: Column) -> Column:
    """Spark's array index and regex group number are int; Substrait declares them i64."""
    return col.cast(T.IntegerType())


def _match_substring(c: Call) -> Column:
    """`occurrence`-th match (1-based) of capture `group`, searching from `position`; NULL when there is none."""
    s, p, *rest = c.arity(2, 5).values
    position, occurrence, group = rest or (None, None, None)
    matches = F.call_function(
        "regexp_extract_all", _from(s.col, position), pattern(c, p), _int(group.col) if group else F.lit(0)
    )
    return F.call_function("try_element_at", matches, _int(occurrence.col) if occurrence else F.lit(1))


def _match_substring_all(c: Call) -> Column:
    s, p, position, group = c.arity(4).values
    return F.call_function("regexp_extract_all", _from(s.col, position), pattern(c, p), _int(group.col))


def _count_substring(c: Call) -> Column:
    s, p, *position = c.arity(2, 3).values
    count = F.call_function("regexp_count", _from(s.col, position[0] if position else None), pattern(c, p))
    return c.declared(count)


def _lengths(xs: Column, k: Column) -> Column:
    """Total length of the first `k` strings of `xs`."""
    return F.aggregate(F.slice(xs, 1, k), F.lit(0), lambda acc, x: acc + F.length(x))


def _nth_match(text: Column, regex: Column, n: Column) -> tuple[Column, Column, Column]:
    """(0-based character offset, matched text, whether it exists) of the `n`-th match of `regex` in `text`.

    regexp_extract_all gives the matches and Java's split (limit n+1) the text between them, both from the same
    Matcher.find sequence; split drops the empty piece before a zero-width match at the start, so it is put back.
    Offsets are in characters (code points), unlike regexp_instr's UTF-16 units.
    """
    matches = F.call_function("regexp_extract_all", text, regex, F.lit(0))
    first = F.call_function("try_element_at", matches, F.lit(1))
    pieces = F.call_function("split", text, regex, n + 1)
    skipped = (F.call_function("regexp_instr", text, regex) == 1) & (F.length(first) == 0)
    aligned = F.when(skipped, F.concat(F.array(F.lit("")), pieces)).otherwise(pieces)
    offset = _lengths(aligned, n) + _lengths(matches, n - 1)
    return offset, F.call_function("try_element_at", matches, n), F.size(matches) >= n


def _occurrence(occurrence: Typed | None, default: int) -> Column:
    return F.lit(default) if occurrence is None else _int(occurrence.col)


def _occurrence_problem(occurrence: Argument) -> str | None:
    """A constant occurrence must be positive (the n-th match, counted from 1)."""
    if occurrence.is_literal and isinstance(occurrence.value, int) and occurrence.value < 1:
        return f"occurrence {occurrence.value} (the spec wants a positive number)"
    return None


def _strpos_rule(c: Arguments) -> str | None:
    return _occurrence_problem(c.values[3]) if len(c.values) == 4 else None


def _strpos(c: Call) -> Column:
    """Position (in characters) of the `occurrence`-th match at or after `position`, 0 when there is none."""
    s, p, position, occurrence = c.arity(4).check(_strpos_rule).values
    offset, _, found = _nth_match(_from(s.col, position), pattern(c, p), _occurrence(occurrence, 1))
    start = offset + 1 if _is_literal(position, 1) else offset + position.col
    return c.declared(F.when(found, start).otherwise(F.when(offset.isNotNull(), F.lit(0))))


_BACKREF = re.compile(r"\\(\\|\d|\$)|\$")
_JAVA_REPLACEMENT = re.compile(r"\\(.)|\$(\d)|\$|([^\\$]+)", re.S)


def _java_replacement(text: str) -> str:
    """ICU's replacement syntax (`\\1` or `$1` for a group, `\\$`, `\\\\`) as Java's (`$1`, `\\$`, `\\\\`)."""

    def swap(m: re.Match[str]) -> str:
        g = m.group(1)
        if g is None:
            return "$"  # `$n` is a group reference in both
        return "$" + g if g.isdigit() else "\\" + g

    return _BACKREF.sub(swap, text)


def _expand(c: Call, replacement: str, text: Column, regex: Column, n: Column) -> Column:
    """The replacement for the `n`-th match, its `$k` references read from that match's group k."""
    parts: list[Column] = []
    for m in _JAVA_REPLACEMENT.finditer(replacement):
        escaped, group, plain = m.groups()
        if group is not None:
            groups = F.call_function("regexp_extract_all", text, regex, F.lit(int(group)))
            parts.append(F.call_function("try_element_at", groups, n))
        else:  # (a '$' without a group number is refused by `_replace_rule`)
            parts.append(F.lit(escaped if escaped is not None else plain))
    return F.concat(*parts) if parts else F.lit("")


def _replace_rule(c: Arguments) -> str | None:
    """Replacing only the n-th match cuts the text at that match and assembles its replacement: both constants."""
    if len(c.values) != 5:
        return None
    _, _, r, _, occurrence = c.values
    if (r.is_literal and r.value is None) or (occurrence.is_literal and occurrence.value == 0):
        return None  # NULL, or every match: Spark's regexp_replace
    if not (occurrence.is_literal and r.is_literal):
        return "replacing one occurrence needs a literal occurrence and a literal replacement"
    return _occurrence_problem(occurrence) or (_replacement_problem(r.value) if isinstance(r.value, str) else None)


def _replacement_problem(icu: str) -> str | None:
    """Why an (ICU) replacement cannot be assembled from the groups of one match, or None."""
    replacement = _java_replacement(icu)
    if any(m.group(0) == "$" for m in _JAVA_REPLACEMENT.finditer(replacement)):
        return f"replacement {replacement!r}: '$' without a group number"
    return None


def _replace(c: Call) -> Column:
    """Replace every match (`occurrence` 0) or only the n-th, from `position` on.

    ICU's `\\n` group references become Java's `$n`. Every match is Spark's regexp_replace; the n-th is cut out
    at its character offset (see `_nth_match`) and its replacement assembled from that match's groups.
    """
    s, p, r, *rest = c.arity(3, 5).check(_replace_rule).values
    position, occurrence = rest or (None, None)
    regex = pattern(c, p)
    if r.is_literal:
        if r.value is None:
            return F.lit(None).cast(T.StringType())
        replacement = F.lit(_java_replacement(r.value))
    else:
        replacement = F.regexp_replace(r.col, r"\\(\d)", r"\$$1")
    if occurrence is None or _is_literal(occurrence, 0):
        # Not Spark's own position argument: it must be a constant and counts UTF-16 units, not characters.
        every = F.call_function("regexp_replace", _from(s.col, position), regex, replacement)
        if position is None or _is_literal(position, 1):
            return every
        return F.concat(substring(s.col, F.lit(1), position.col - 1), every)
    n = _occurrence(occurrence, 1)
    text = _from(s.col, position)
    offset, match, found = _nth_match(text, regex, n)
    expanded = _expand(c, _java_replacement(r.value), text, regex, n)
    cut = F.concat(
        substring(text, F.lit(1), offset),
        expanded,
        substring(text, offset + F.length(match) + 1),
    )
    out = F.when(found, cut).otherwise(text)
    if position is None or _is_literal(position, 1):
        return out
    return F.concat(substring(s.col, F.lit(1), position.col - 1), out)


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

# The options each handler above reads (what `validate` checks): every one reads the pattern's flags.
REGEX_OPTIONS: dict[str, OptionRule] = dict.fromkeys(REGEX, always(REGEX_CASE, MULTILINE, DOTALL))
# What they refuse in their arguments (`call.ArgumentRule`; `validate` applies the same rules).
REGEX_RULES: dict[str, ArgumentRule] = {"regexp_replace": _replace_rule, "regexp_strpos": _strpos_rule}
