"""String functions (functions_string.yaml)."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from .build import binary, cast_to_output, sql, unary
from .call import Call, Handler


def _like(c: Call) -> Column:
    """SQL LIKE; an explicit escape character is rewritten into Spark's default escape (backslash)."""
    s, pattern, *escape = c.arity(2, 3).values
    if escape and not (escape[0].is_literal and escape[0].value is None):
        esc = escape[0].value if escape[0].is_literal else None
        if not (pattern.is_literal and isinstance(pattern.value, str) and isinstance(esc, str) and len(esc) == 1):
            raise c.unsupported("LIKE with an escape character needs literal pattern and escape")
        return s.col.like(_rewrite_escape(pattern.value, esc))
    if pattern.is_literal and isinstance(pattern.value, str):
        return s.col.like(pattern.value)
    return F.call_function("like", s.col, pattern.col)


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
    args = c.arity(2, 3).cols
    if len(args) == 2:
        return F.call_function("substring", *args)
    return args[0].substr(args[1], args[2])


def _trim(fn: str) -> Handler:
    def build(c: Call) -> Column:
        args = c.arity(1, 2).cols
        if len(args) == 1:
            return F.call_function(fn, args[0])
        # Spark SQL: TRIM(BOTH chars FROM s) is btrim(s, chars); ltrim/rtrim take the same order.
        return F.call_function({"trim": "btrim"}.get(fn, fn), args[0], args[1])

    return build


def _pad(fn: str) -> Handler:
    def build(c: Call) -> Column:
        args = c.arity(2, 3).cols
        if len(args) == 2:
            args = [*args, F.lit(" ")]
        return F.call_function(fn, *args)

    return build


def _concat(c: Call) -> Column:
    mode = c.option("null_handling", ("ACCEPT_NULLS", "IGNORE_NULLS"), "ACCEPT_NULLS")
    if mode == "IGNORE_NULLS":
        return F.concat_ws("", *c.cols)
    return F.concat(*c.cols)


STRING: dict[str, Handler] = {
    "like": _like,
    "substring": _substring,
    "concat": _concat,
    "concat_ws": sql("concat_ws"),
    "lower": unary(F.lower),
    "upper": unary(F.upper),
    "contains": binary(lambda s, sub: s.contains(sub)),
    "starts_with": binary(lambda s, p: s.startswith(p)),
    "ends_with": binary(lambda s, p: s.endswith(p)),
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
    "replace": sql("replace"),
    "reverse": unary(F.reverse),
    "repeat": sql("repeat"),
    "left": sql("left"),
    "right": sql("right"),
    "strpos": cast_to_output(sql("instr")),
}
