"""Types and values of the test-file grammar: Substrait types, literal expressions, expected Python values."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
from typing import Any

import plan_builder as pb

from conformance.cases import split_top

Type = pb.Type


class NotBuildable(Exception):
    """The runner cannot express this case as a plan (yet): the case counts as failing with this reason."""


_TYPE = re.compile(r"^([A-Za-z_!0-9]+?)(\?)?(?:<(.*)>)?$", re.S)


def split_type(text: str) -> tuple[str, bool, str]:
    m = _TYPE.match(text.strip())
    if not m:
        raise NotBuildable(f"type {text!r} not understood")
    return m.group(1), bool(m.group(2)), (m.group(3) or "").strip()


def parse_type(text: str, force_nullable: bool = False) -> Type:
    name, q, params = split_type(text)
    n = q or force_nullable
    simple = {
        "i8": pb.i8,
        "i16": pb.i16,
        "i32": pb.i32,
        "i64": pb.i64,
        "fp32": pb.fp32,
        "fp64": pb.fp64,
        "str": pb.string,
        "string": pb.string,
        "bool": pb.boolean,
        "boolean": pb.boolean,
        "date": pb.date,
        "iyear": pb.interval_year,
        "iday": pb.interval_day,
        "binary": pb.binary,
        "vbin": pb.binary,
    }
    if name in simple:
        return simple[name](nullable=n)
    if name in ("dec", "decimal"):
        p, s = (int(x) for x in split_top(params)) if params else (38, 0)
        return pb.decimal_(p, s, nullable=n)
    if name in ("vchar", "varchar"):
        return pb.varchar(int(params), nullable=n)
    if name in ("fchar", "fixedchar"):
        return pb.fixed_char(int(params), nullable=n)
    if name in ("pts", "precision_timestamp"):
        return pb.precision_timestamp(int(params or 6), nullable=n)
    if name in ("ptstz", "precision_timestamp_tz"):
        return pb.precision_timestamp_tz(int(params or 6), nullable=n)
    if name == "list":
        return pb.list_(parse_type(params), nullable=n)
    if name.startswith("u!"):
        return unsigned_type(name, n)
    if name == "func":
        return _func_type(params, n)
    if name in ("pt", "precision_time"):
        return pb._simple("precision_time", n, precision=int(params or 6))
    raise NotBuildable(f"type {name} not supported by the runner")


def _unquote(text: str) -> str:
    if not (len(text) >= 2 and text[0] == "'" and text[-1] == "'"):
        raise NotBuildable(f"string literal {text!r} not understood")
    return text[1:-1].replace("\\'", "'").replace("''", "'")


_DUR = re.compile(r"^(-)?P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$")


def _duration(text: str) -> tuple[int, int, dt.timedelta]:
    m = _DUR.match(text.strip())
    if not m:
        raise NotBuildable(f"interval {text!r} not understood")
    sign = -1 if m.group(1) else 1
    y, mo, d, h, mi = (int(g or 0) for g in m.groups()[1:6])
    s = decimal.Decimal(m.group(7) or 0)
    td = dt.timedelta(days=d, hours=h, minutes=mi, microseconds=int(s * 1_000_000))
    return sign * y, sign * mo, td * sign


def _is_null(text: str) -> bool:
    return text.strip().lower() == "null"


def python_value(text: str, type_text: str) -> Any:
    """The expected Python value of `text` typed `type_text` (as Spark would return it)."""
    text = text.strip()
    if _is_null(text):
        return None
    name, _, params = split_type(type_text)
    if name in ("i8", "i16", "i32", "i64"):
        return int(text)
    if name in ("fp32", "fp64"):
        return float(text)
    if name in ("str", "string", "vchar", "varchar", "fchar", "fixedchar"):
        return _unquote(text)
    if name in ("bool", "boolean"):
        if text.lower() not in ("true", "false"):
            raise NotBuildable(f"boolean {text!r}")
        return text.lower() == "true"
    if name in ("dec", "decimal"):
        return decimal.Decimal(text)
    if name == "date":
        return dt.date.fromisoformat(text)
    if name in ("pts", "precision_timestamp"):
        return dt.datetime.fromisoformat(text)
    if name in ("ptstz", "precision_timestamp_tz"):
        v = dt.datetime.fromisoformat(text)
        return v if v.tzinfo else v.replace(tzinfo=dt.UTC)
    if name in ("pt", "precision_time"):
        return dt.time.fromisoformat(text)
    if name == "iday":
        return _duration(text)[2]
    if name == "iyear":
        y, mo, _ = _duration(text)
        return (y, mo)
    if name == "list":
        inner = text.strip()
        if not (inner.startswith("[") and inner.endswith("]")):
            raise NotBuildable(f"list {text!r}")
        return [python_value(v, params) for v in split_top(inner[1:-1])]
    if name in UNSIGNED:  # `('200')::u!u8`: the digits of the `value: string` structure, in parentheses
        inner = text[1:-1].strip() if text.startswith("(") and text.endswith(")") else text
        return int(_unquote(inner))
    parse_type(type_text)  # raises NotBuildable with the reason
    raise NotBuildable(f"value of type {name}")


def _func_type(params: str, nullable: bool) -> Type:
    """`func<i32 -> bool?>` (one parameter) or `func<(i32, i32) -> i32>`."""
    arg_text, arrow, ret_text = params.rpartition("->")
    if not arrow:
        raise NotBuildable(f"function type func<{params}> not understood")
    arg_text = arg_text.strip()
    if arg_text.startswith("(") and arg_text.endswith(")"):
        arg_text = arg_text[1:-1]
    t = Type()
    t.func.parameter_types.extend(parse_type(a) for a in split_top(arg_text))
    t.func.return_type.CopyFrom(parse_type(ret_text.strip()))
    t.func.nullability = pb.NULLABLE if nullable else pb.REQUIRED
    return t


def literal_expr(text: str, type_text: str, force_nullable: bool = False) -> pb.Expr:
    t = parse_type(type_text, force_nullable)
    name, _, params = split_type(type_text)
    value = python_value(text, type_text)
    if value is None:
        return pb.null(t)
    if name in ("pts", "ptstz"):
        prec = int(params or 6)
        epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC if name == "ptstz" else None)
        delta = value - epoch
        units = delta.days * 86400 * 10**prec + delta.seconds * 10**prec + delta.microseconds * 10**prec // 10**6
        lit = pb.Expr.Literal(nullable=t.WhichOneof("kind") is not None and _nullable(t))
        sub = lit.precision_timestamp if name == "pts" else lit.precision_timestamp_tz
        sub.precision = prec
        sub.value = units
        return pb.Expr(literal=lit)
    if name in ("pt", "precision_time"):
        prec = int(params or 6)
        micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 10**6 + value.microsecond
        lit = pb.Expr.Literal(nullable=_nullable(t))
        lit.precision_time.precision = prec
        lit.precision_time.value = micros * 10**prec // 10**6
        return pb.Expr(literal=lit)
    if name in UNSIGNED:
        # The type's structure is `value: string` (unsigned_integers.yaml): a one-field struct of the digits.
        lit = pb.Expr.Literal(nullable=_nullable(t))
        lit.user_defined.type_reference = UNSIGNED[name]
        lit.user_defined.struct.fields.add().string = str(value)
        return pb.Expr(literal=lit)
    return pb.lit(value, t)


# User-defined types of unsigned_integers.yaml: type anchor in the runner's plans (declared by `declare_types`).
UNSIGNED_URN = "extension:io.substrait:unsigned_integers"
UNSIGNED = {"u!u8": 8, "u!u16": 16, "u!u32": 32, "u!u64": 64}
_UNSIGNED_SPARK = {"u!u8": "smallint", "u!u16": "int", "u!u32": "bigint", "u!u64": "decimal(20,0)"}


def unsigned_type(name: str, nullable: bool) -> Type:
    if name not in UNSIGNED:
        raise NotBuildable(f"user-defined type {name} is not built by the runner")
    t = Type()
    t.user_defined.type_reference = UNSIGNED[name]
    t.user_defined.nullability = pb.NULLABLE if nullable else pb.REQUIRED
    return t


def _user_type_refs(msg: Any) -> set[int]:
    refs: set[int] = set()
    for fd, value in msg.ListFields():
        if fd.message_type is None:
            continue
        repeated = fd.is_repeated if hasattr(fd, "is_repeated") else fd.label == fd.LABEL_REPEATED
        items = value if repeated else [value]
        for item in items:
            if fd.message_type.name == "UserDefined":
                refs.add(item.type_reference)
            refs |= _user_type_refs(item)
    return refs


def declare_types(plan: Any) -> None:
    """Declare the unsigned types the plan's literals and types refer to (extension type anchors)."""
    used = _user_type_refs(plan)
    if not used:
        return
    urns = {u.urn: u.extension_urn_anchor for u in plan.extension_urns}
    if UNSIGNED_URN not in urns:
        urns[UNSIGNED_URN] = max(urns.values(), default=0) + 1
        plan.extension_urns.add(extension_urn_anchor=urns[UNSIGNED_URN], urn=UNSIGNED_URN)
    for name, anchor in UNSIGNED.items():
        if anchor in used:
            decl = plan.extensions.add().extension_type
            decl.extension_urn_reference, decl.type_anchor, decl.name = urns[UNSIGNED_URN], anchor, name[2:]


def _nullable(t: Type) -> bool:
    return getattr(t, t.WhichOneof("kind")).nullability != pb.REQUIRED


_SPARK_TYPES = {
    "i8": "tinyint",
    "i16": "smallint",
    "i32": "int",
    "i64": "bigint",
    "fp32": "float",
    "fp64": "double",
    "str": "string",
    "string": "string",
    "bool": "boolean",
    "boolean": "boolean",
    "date": "date",
    "pts": "timestamp_ntz",
    "ptstz": "timestamp",
    "iday": "interval day to second",
    "iyear": "interval year to month",
}


def spark_type_ok(type_text: str, simple: str) -> bool:
    """Whether Spark's `simpleString()` of a result column is the Substrait type expected."""
    name, _, params = split_type(type_text)
    if name in _SPARK_TYPES:
        return simple == _SPARK_TYPES[name]
    if name in _UNSIGNED_SPARK:
        return simple == _UNSIGNED_SPARK[name]
    if name in ("vchar", "varchar", "fchar", "fixedchar"):
        return simple == "string" or simple.startswith(("varchar", "char"))
    if name in ("dec", "decimal"):
        p, s = (int(x) for x in split_top(params)) if params else (38, 0)
        return simple == f"decimal({p},{s})"
    if name == "list":
        return simple.startswith("array<") and spark_type_ok(params, simple[6:-1])
    return True


def same_value(got: Any, want: Any, type_text: str) -> bool:
    name, _, params = split_type(type_text)
    if want is None or got is None:
        return got is None and want is None
    if name in ("fp32", "fp64"):
        if not isinstance(got, (int, float)):
            return False
        if math.isnan(want):
            return math.isnan(got)
        if math.isinf(want):
            return got == want
        return math.isclose(got, want, rel_tol=1e-6 if name == "fp32" else 1e-12, abs_tol=1e-300)
    if name == "iyear":
        months = want[0] * 12 + want[1]
        return got in (months, want)
    if name == "ptstz" and isinstance(got, dt.datetime) and got.tzinfo is None:
        return got == want.astimezone().replace(tzinfo=None)
    if name == "list":
        return (
            isinstance(got, list)
            and len(got) == len(want)
            and all(same_value(g, w, params) for g, w in zip(got, want, strict=True))
        )
    if name in ("dec", "decimal"):
        return isinstance(got, decimal.Decimal) and got == want
    if name in ("bool", "boolean"):
        return got is want
    if name in UNSIGNED:
        return isinstance(got, (int, decimal.Decimal)) and not isinstance(got, bool) and got == want
    return type(got) is type(want) and got == want
