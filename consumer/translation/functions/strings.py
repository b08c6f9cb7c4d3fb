"""String functions (functions_string.yaml); the regular-expression ones are in regex.py.

`case_sensitivity` folds both sides before comparing: CASE_INSENSITIVE with Spark's `lower` (Java's Unicode
lower-casing; 'ß' does not fold to 'ss' as full case folding would), CASE_INSENSITIVE_ASCII with a
`translate` of A-Z only, so other letters still compare exactly.
"""

from __future__ import annotations

import string
from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from .build import cast_to_output, sql, substring, unary
from .call import UNKNOWN, ArgumentRule, Arguments, Call, Handler
from .options import Option, OptionRule, always
from .regex import REGEX, REGEX_OPTIONS, REGEX_RULES

CASE_SENSITIVITY = Option(
    "case_sensitivity", ("CASE_SENSITIVE", "CASE_INSENSITIVE", "CASE_INSENSITIVE_ASCII"), "CASE_SENSITIVE"
)
CHAR_SET = Option("char_set", ("UTF8", "ASCII_ONLY"), "UTF8")
NEGATIVE_START = Option("negative_start", ("WRAP_FROM_END", "LEFT_OF_BEGINNING", "ERROR"), "WRAP_FROM_END")
PADDING = Option("padding", ("RIGHT", "LEFT"), "RIGHT")
NULL_HANDLING = Option("null_handling", ("ACCEPT_NULLS", "IGNORE_NULLS"), "ACCEPT_NULLS")


def _ascii_lower(col: Column) -> Column:
    return F.translate(col, string.ascii_uppercase, string.ascii_lowercase)


def _ascii_upper(col: Column) -> Column:
    return F.translate(col, string.ascii_lowercase, string.ascii_uppercase)


_FOLD: dict[str, Callable[[Column], Column]] = {
    "CASE_SENSITIVE": lambda col: col,
    "CASE_INSENSITIVE": F.lower,
    "CASE_INSENSITIVE_ASCII": _ascii_lower,
}


def _folded(c: Call, n: int) -> list[Column]:
    """The `n` value arguments, case-folded as the call's `case_sensitivity` option asks."""
    fold = _FOLD[c.read(CASE_SENSITIVITY)]
    return [fold(col) for col in c.arity(n).cols]


def _compare(fn: Callable[[Column, Column], Column]) -> Handler:
    """A two-string predicate or position (contains, starts_with, strpos, ...) honouring case_sensitivity."""

    def build(c: Call) -> Column:
        s, sub = _folded(c, 2)
        return fn(s, sub)

    return build


def _count_substring(s: Column, sub: Column) -> Column:
    """Non-overlapping occurrences: the length `replace` removes, over the needle's length (NULL for '')."""
    removed = F.length(s) - F.length(F.call_function("replace", s, sub, F.lit("")))
    return F.when(F.length(sub) > 0, removed / F.length(sub)).cast(T.LongType())


def _like_rule(c: Arguments) -> str | None:
    """An escape character is rewritten into the pattern: both constants (or the escape NULL: none)."""
    if len(c.values) != 3:
        return None
    _, pattern, escape = c.values
    if (escape.is_literal and escape.value is None) or pattern.value is UNKNOWN or escape.value is UNKNOWN:
        return None
    literal_pattern = pattern.is_literal and isinstance(pattern.value, str)
    if not (literal_pattern and escape.is_literal and isinstance(escape.value, str) and len(escape.value) == 1):
        return "LIKE with an escape character needs literal pattern and escape"
    return None


def _like(c: Call) -> Column:
    """SQL LIKE; an explicit escape character is rewritten into Spark's default escape (backslash)."""
    s, pattern, *escape = c.arity(2, 3).values
    mode = c.read(CASE_SENSITIVITY)
    fold = _FOLD["CASE_INSENSITIVE_ASCII" if mode == "CASE_INSENSITIVE_ASCII" else "CASE_SENSITIVE"]
    text = pattern.value if pattern.is_literal and isinstance(pattern.value, str) else None
    if escape and not (escape[0].is_literal and escape[0].value is None):
        c.check(_like_rule)
        text = _rewrite_escape(text, escape[0].value)  # type: ignore[arg-type]  # (both strings: `_like_rule`)
    if mode == "CASE_INSENSITIVE":
        return s.col.ilike(text) if text is not None else F.call_function("ilike", s.col, pattern.col)
    if text is not None:
        if mode == "CASE_INSENSITIVE_ASCII":
            text = text.translate(str.maketrans(string.ascii_uppercase, string.ascii_lowercase))
        return fold(s.col).like(text)
    return F.call_function("like", fold(s.col), fold(pattern.col))


def _rewrite_escape(pattern: str, esc: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == esc and i + 1 < len(pattern):
            out.append("\\" + pattern[i + 1])
            i += 2
            continue
        out.append("\\\\" if ch == "\\" else ch)
        i += 1
    return "".join(out)


def _substring(c: Call) -> Column:
    """Spark's substr wraps a negative start from the end (WRAP_FROM_END); LEFT_OF_BEGINNING counts the
    positions left of the first character against `length`; ERROR fails the query on a negative start."""
    s, start, *length = c.arity(2, 3).cols
    mode = c.read(NEGATIVE_START)
    if mode == "LEFT_OF_BEGINNING":
        if not length:
            return substring(s, F.greatest(start, F.lit(1)))
        shortened = F.greatest(length[0] + F.least(start, F.lit(1)) - 1, F.lit(0))
        return F.when(start < 1, substring(s, F.lit(1), shortened)).otherwise(substring(s, start, length[0]))
    out = substring(s, start, *length)
    if mode == "ERROR":
        return F.when(start < 0, F.raise_error(F.lit(f"{c.ref.name}: negative start"))).otherwise(out)
    return out


def _trim(fn: str) -> Handler:
    def build(c: Call) -> Column:
        args = c.arity(1, 2).cols
        if len(args) == 1:
            return F.call_function(fn, args[0])
        if fn in ("trim", "btrim"):
            return F.call_function("btrim", args[0], args[1])
        # Spark 3.5 has no ltrim(str, chars); its two-argument form is ltrim(chars, str) (TRIM LEADING chars FROM).
        return F.call_function(fn, args[1], args[0])

    return build


def _pad(fn: str) -> Handler:
    """lpad/rpad; Spark truncates a longer input to `length` from the right, as the spec's cases expect."""

    def build(c: Call) -> Column:
        args = c.arity(2, 3).cols
        if len(args) == 2:
            args = [*args, F.lit(" ")]
        return F.call_function(fn, *args)

    return build


def _center(c: Call) -> Column:
    """Pad both sides with `character`; the odd pad goes right (padding RIGHT) or left; a longer input is kept."""
    s, length, *char = c.arity(2, 3).cols
    pad_char = char[0] if char else F.lit(" ")
    side = c.read(PADDING)
    total = length - F.length(s)
    left = F.floor(total / 2) if side == "RIGHT" else F.ceil(total / 2)
    padded = F.call_function(
        "rpad", F.call_function("lpad", s, F.length(s) + left.cast("int"), pad_char), length, pad_char
    )
    return F.when(total <= 0, s).otherwise(padded)


def _concat(c: Call) -> Column:
    mode = c.read(NULL_HANDLING)
    if mode == "IGNORE_NULLS":
        return F.concat_ws("", *c.cols)
    return F.concat(*c.cols)


def _quote_regex(text: Column) -> Column:
    """A Java regex matching `text` literally: `\\Q..\\E`, with any `\\E` inside spelled out."""
    return F.concat(F.lit(r"\Q"), F.call_function("replace", text, F.lit(r"\E"), F.lit(r"\E\\E\Q")), F.lit(r"\E"))


def _replace(c: Call) -> Column:
    """Case-sensitive replace is Spark's; case-insensitive replace is a quoted regex (`\\Q..\\E`) replace."""
    s, sub, rep = c.arity(3).values
    mode = c.read(CASE_SENSITIVITY)
    if mode == "CASE_SENSITIVE":
        return F.call_function("replace", s.col, sub.col, rep.col)
    flag = F.lit("(?iu)" if mode == "CASE_INSENSITIVE" else "(?i)")
    quoted = F.concat(flag, _quote_regex(sub.col))
    literal_rep = F.regexp_replace(rep.col, r"([\\$])", r"\\$1")  # Matcher.quoteReplacement
    return F.when(F.length(sub.col) == 0, s.col).otherwise(F.regexp_replace(s.col, quoted, literal_rep))


def _string_split(c: Call) -> Column:
    """Split on a literal separator (quoted as a regex); a NULL separator leaves the input whole."""
    s, sep = c.arity(2).values
    whole = F.when(s.col.isNotNull(), F.array(s.col))
    if sep.is_literal and sep.value is None:
        return whole
    return F.when(sep.col.isNull(), whole).otherwise(F.call_function("split", s.col, _quote_regex(sep.col), F.lit(-1)))


def _replace_slice(c: Call) -> Column:
    """NULL for start outside 1..length(input) or a negative length, as the spec says; else Spark's overlay."""
    s, start, length, rep = c.arity(4).cols
    valid = (start >= 1) & (start <= F.length(s)) & (length >= 0)
    return F.when(valid, F.overlay(s, rep, start, length))


def _case(utf8: Callable[[Column], Column], ascii_only: Callable[[Column], Column]) -> Handler:
    """A case mapping with the `char_set` option: UTF8 (Spark's, Unicode) or ASCII_ONLY (A-Z/a-z only)."""

    def build(c: Call) -> Column:
        (s,) = c.arity(1).cols
        return (ascii_only if c.read(CHAR_SET) == "ASCII_ONLY" else utf8)(s)

    return build


def _swap(c: Column, upper: Callable[[Column], Column], lower: Callable[[Column], Column]) -> Column:
    return F.when(upper(c) == c, lower(c)).otherwise(upper(c))


def _swapcase(upper: Callable[[Column], Column], lower: Callable[[Column], Column]) -> Callable[[Column], Column]:
    """Per character (code point, via a `(?s).` match list) so that no Python UDF is needed."""

    def build(s: Column) -> Column:
        chars = F.call_function("regexp_extract_all", s, F.lit("(?s)."), F.lit(0))
        return F.array_join(F.transform(chars, lambda ch: _swap(ch, upper, lower)), "")

    return build


def _capitalize(upper: Callable[[Column], Column]) -> Callable[[Column], Column]:
    return lambda s: F.concat(upper(substring(s, F.lit(1), F.lit(1))), substring(s, F.lit(2)))


def _initcap_ascii(s: Column) -> Column:
    """Spark's initcap word split (on spaces), with only A-Z/a-z changed."""
    words = F.split(s, " ", -1)
    fixed = F.transform(words, lambda w: _capitalize(_ascii_upper)(_ascii_lower(w)))
    return F.array_join(fixed, " ")


# The options each handler above reads (what `validate` checks; keys as STRING's).
_CASE_RULE = always(CASE_SENSITIVITY)
STRING_OPTIONS: dict[str, OptionRule] = {
    **REGEX_OPTIONS,
    **dict.fromkeys(
        ("like", "contains", "starts_with", "ends_with", "strpos", "count_substring", "replace"), _CASE_RULE
    ),
    "substring": always(NEGATIVE_START),
    "center": always(PADDING),
    "concat": always(NULL_HANDLING),
    **dict.fromkeys(("lower", "upper", "swapcase", "capitalize", "initcap"), always(CHAR_SET)),
}

# What they refuse in their arguments (`call.ArgumentRule`; `validate` applies the same rules).
STRING_RULES: dict[str, ArgumentRule] = {**REGEX_RULES, "like": _like_rule}

STRING: dict[str, Handler] = {
    **REGEX,
    "like": _like,
    "substring": _substring,
    "concat": _concat,
    "concat_ws": sql("concat_ws"),
    "lower": _case(F.lower, _ascii_lower),
    "upper": _case(F.upper, _ascii_upper),
    "swapcase": _case(_swapcase(F.upper, F.lower), _swapcase(_ascii_upper, _ascii_lower)),
    "capitalize": _case(_capitalize(F.upper), _capitalize(_ascii_upper)),
    "initcap": _case(F.initcap, _initcap_ascii),
    "contains": _compare(lambda s, sub: s.contains(sub)),
    "starts_with": _compare(lambda s, p: s.startswith(p)),
    "ends_with": _compare(lambda s, p: s.endswith(p)),
    "strpos": cast_to_output(_compare(lambda s, sub: F.call_function("instr", s, sub))),
    "count_substring": cast_to_output(_compare(_count_substring)),
    "char_length": cast_to_output(unary(F.length)),
    "character_length": cast_to_output(unary(F.length)),
    "bit_length": cast_to_output(unary(F.bit_length)),
    "octet_length": cast_to_output(unary(F.octet_length)),
    "trim": _trim("trim"),
    "btrim": _trim("btrim"),
    "ltrim": _trim("ltrim"),
    "rtrim": _trim("rtrim"),
    "lpad": _pad("lpad"),
    "rpad": _pad("rpad"),
    "center": _center,
    "replace": _replace,
    "replace_slice": _replace_slice,
    "reverse": unary(F.reverse),
    "repeat": sql("repeat"),
    "left": sql("left"),
    "right": sql("right"),
    "string_split": _string_split,
}
