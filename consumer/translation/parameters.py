"""Dynamic parameters: values bound by the caller (CLI `--param`, operator `parameters`) or by the plan itself.
A parameter with neither is an `UnboundParameterError`, which each front end words its own way (`PlanRunner`).

Substrait names a parameter by its anchor (`DynamicParameter.parameter_reference`); `Plan.parameter_bindings`
gives defaults. A caller's value is converted to the type the plan declares for that parameter, strictly:
`"2024-01-31"` becomes a date for a `date` parameter, never a string compared by Spark's coercion rules.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import types as T
from substrait import algebra_pb2 as alg
from substrait import type_pb2 as tp
from substrait.plan_pb2 import Plan

from ..errors import (
    PlanInvalidError,
    TargetRefusedError,
    UnboundParameterError,
    UnsupportedFeatureError,
    UnusedParameterError,
)
from ..records import BoundParameter, ParameterSource
from ..type_text import literal_type, type_str
from ..walk import nodes
from .literals import python_value, to_column
from .scope import Typed

Literal = alg.Expression.Literal
_EPOCH_DATE = dt.date(1970, 1, 1)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_INT_BITS = {"i8": 8, "i16": 16, "i32": 32, "i64": 64}


def parse_anchor(name: str | int) -> int:
    """`0`, `"0"` and `"$0"` all name parameter anchor 0."""
    text = str(name).strip().removeprefix("$")
    if not text.isdigit():
        raise PlanInvalidError(f"parameter name {name!r}: expected a parameter anchor such as 0 or $0")
    return int(text)


def uses(plan: Plan) -> dict[int, list[tuple[alg.DynamicParameter, str]]]:
    """Every DynamicParameter in the plan by anchor, with its path."""
    found: dict[int, list[tuple[alg.DynamicParameter, str]]] = {}
    for msg, path in nodes(plan):
        if isinstance(msg, alg.DynamicParameter):
            found.setdefault(msg.parameter_reference, []).append((msg, path))
    return found


def declared(plan: Plan) -> set[int]:
    """The anchors a plan declares: those its expressions use and those its own bindings give values to."""
    return set(uses(plan)) | {b.parameter_anchor for b in plan.parameter_bindings}


def batch_parameters(values: Mapping[str | int, Any], plans: Mapping[int, Plan]) -> dict[int, dict[str | int, Any]]:
    """A batch's caller values (CLI `--param`), each bound only to the plans that declare its anchor (a plan with
    `$0` and one without run side by side). A value no plan declares is refused, naming it, before any plan runs."""
    anchors = {name: parse_anchor(name) for name in values}
    have = {i: declared(p) for i, p in plans.items()}
    unused = [name for name, a in anchors.items() if not any(a in d for d in have.values())]
    if unused and plans:  # (no plan could be read: each has failed already)
        theirs = ", ".join(f"${a}" for a in sorted(set().union(*have.values()))) or "none"
        raise UnusedParameterError(
            f"parameter ${anchors[unused[0]]} is declared by no plan of the batch (their parameters: {theirs})"
        )
    return {i: {n: v for n, v in values.items() if anchors[n] in d} for i, d in have.items()}


@dataclass
class Parameters:
    """The values of a plan's dynamic parameters for one run."""

    literals: dict[int, Literal] = field(default_factory=dict)
    given: dict[int, Any] = field(default_factory=dict)

    @classmethod
    def bind(cls, plan: Plan, values: Mapping[str | int, Any] | None = None) -> Parameters:
        """Plan bindings as defaults, caller values over them; a value for a parameter the plan lacks is an error."""
        literals: dict[int, Literal] = {}
        for i, b in enumerate(plan.parameter_bindings):
            if not b.HasField("value"):
                raise PlanInvalidError("parameter binding without a value", f"parameter_bindings[{i}]")
            literals[b.parameter_anchor] = b.value
        given = {parse_anchor(k): v for k, v in (values or {}).items()}
        known = (set(uses(plan)) if given else set()) | set(literals)  # the walk only when values are given
        unknown = sorted(set(given) - known)
        if unknown:
            have = ", ".join(f"${a}" for a in sorted(known)) or "none"
            raise PlanInvalidError(f"parameter ${unknown[0]} is not used by the plan (its parameters: {have})")
        return cls(literals, given)

    def column(self, e: alg.DynamicParameter, path: str) -> Typed:
        """The parameter's value as a Spark literal of the declared type."""
        return to_column(self.literal(e, path)[0], path)

    def literal(self, e: alg.DynamicParameter, path: str) -> tuple[Literal, ParameterSource]:
        """The value bound to the parameter used at `path`, typed (a caller's value as the plan declares it)."""
        anchor = e.parameter_reference
        why = unbindable(e.type)
        if anchor in self.given:
            if why:  # the plan's own value would do: the caller's choice is refused, not the plan
                raise (TargetRefusedError if anchor in self.literals else UnsupportedFeatureError)(why, path)
            return literal_of(e.type, self.given[anchor], f"{path} (${anchor})"), ParameterSource.CALLER
        if anchor in self.literals:
            return self.literals[anchor], ParameterSource.PLAN
        if why:  # only a caller could bind it, and no caller's value fits
            raise UnsupportedFeatureError(why, path)
        raise UnboundParameterError(anchor, path)

    def bound(self, plan: Plan) -> list[BoundParameter]:
        """What the run report and the audit record hold: each parameter the plan uses, by anchor, with the
        Substrait type its value has, the value as JSON and where it came from. Raises what translation would
        for a value that does not fit its type or a parameter without one."""
        out: list[BoundParameter] = []
        for anchor, sites in sorted(uses(plan).items()):
            param, path = sites[0]
            lit, source = self.literal(param, path)
            value, spark = python_value(lit, path)
            # A caller's value has the type the plan declares for it; a plan binding, its literal's own.
            typ = type_str(param.type) if source is ParameterSource.CALLER else literal_type(lit)
            out.append(BoundParameter(anchor, typ, _json(value, spark), source))
        return out


def _json(value: Any, spark: T.DataType) -> Any:
    """A literal's Python value as JSON: dates, timestamps (UTC offset for instants) and decimals as text."""
    if isinstance(value, dt.datetime) and isinstance(spark, T.TimestampType):
        return value.replace(tzinfo=dt.UTC).isoformat()
    if isinstance(value, dt.date):  # dates and timestamps without a time zone
        return value.isoformat()
    if isinstance(value, decimal.Decimal | dt.timedelta):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    return value


# --- caller values -> literals of a declared type -------------------------------------------------------------


def unbindable(t: tp.Type) -> str | None:
    """Why a caller cannot give a value for a parameter of type `t` (only scalar types convert), or None. A plan
    whose parameter of such a type has no binding of its own is unsupported (what `validate` lists)."""
    kind = t.WhichOneof("kind")
    if kind is not None and kind in _CONVERTERS:
        return None
    return f"dynamic parameter of type {kind}: only scalar types can be bound"


def literal_of(t: tp.Type, value: Any, path: str) -> Literal:
    """A Literal of Substrait type `t` holding `value` (a Python value or its text form)."""
    kind = t.WhichOneof("kind")
    if value is None:
        return Literal(null=t)
    why = unbindable(t)
    if why or kind is None:  # (unbindable says why for a type with no kind too)
        raise UnsupportedFeatureError(str(why), path)
    convert = _CONVERTERS[kind]
    nullable = getattr(t, kind).nullability == tp.Type.NULLABILITY_NULLABLE
    try:
        lit = convert(t, value)
    except (ValueError, TypeError, decimal.InvalidOperation, OverflowError) as exc:
        raise PlanInvalidError(f"value {value!r} is not a valid {kind}: {exc}", path) from None
    lit.nullable = nullable
    return lit


def _bool(t: tp.Type, v: Any) -> Literal:
    text = {"true": True, "false": False}
    if isinstance(v, bool):
        return Literal(boolean=v)
    if isinstance(v, str) and v.strip().lower() in text:
        return Literal(boolean=text[v.strip().lower()])
    raise ValueError("expected true or false")


def _set(kind: str, value: int | float) -> Literal:
    """A literal whose scalar member `kind` holds `value`."""
    lit = Literal()
    setattr(lit, kind, value)
    return lit


def _int(kind: str) -> Callable[[tp.Type, Any], Literal]:
    bits = _INT_BITS[kind]

    def convert(t: tp.Type, v: Any) -> Literal:
        if isinstance(v, (bool, float)):
            raise TypeError(f"expected an integer, got {type(v).__name__}")
        n = int(str(v).strip()) if isinstance(v, str) else int(v)
        if not -(2 ** (bits - 1)) <= n < 2 ** (bits - 1):
            raise ValueError(f"out of range for {kind}")
        return _set(kind, n)

    return convert


def _float(kind: str) -> Callable[[tp.Type, Any], Literal]:
    def convert(t: tp.Type, v: Any) -> Literal:
        if isinstance(v, bool):
            raise TypeError("expected a number, got bool")
        return _set(kind, float(v))

    return convert


def _text(v: Any) -> str:
    if not isinstance(v, str):
        raise TypeError(f"expected a string, got {type(v).__name__}")
    return v


def _date(t: tp.Type, v: Any) -> Literal:
    if isinstance(v, dt.datetime):
        raise TypeError("expected a date, got a datetime")
    d = v if isinstance(v, dt.date) else dt.date.fromisoformat(_text(v).strip())
    return Literal(date=(d - _EPOCH_DATE).days)


def _datetime(v: Any) -> dt.datetime:
    if isinstance(v, dt.datetime):
        return v
    if isinstance(v, dt.date):
        return dt.datetime(v.year, v.month, v.day)
    return dt.datetime.fromisoformat(_text(v).strip())


def _micros(d: dt.datetime) -> int:
    aware = d if d.tzinfo else d.replace(tzinfo=dt.UTC)
    return (aware - _EPOCH) // dt.timedelta(microseconds=1)


def _precision_timestamp(kind: str) -> Callable[[tp.Type, Any], Literal]:
    def convert(t: tp.Type, v: Any) -> Literal:
        precision = getattr(t, kind).precision
        d = _datetime(v)
        if d.tzinfo is not None and kind == "precision_timestamp":
            raise ValueError("a timestamp without time zone cannot take a value with an offset")
        if d.tzinfo is None and kind == "precision_timestamp_tz":
            raise ValueError("a timestamp with time zone needs an offset (e.g. +00:00)")
        micros = _micros(d)  # a Python datetime holds microseconds: a finer precision scales up exactly
        step = 10 ** (6 - precision) if precision <= 6 else 1
        if micros % step:
            raise ValueError(f"more digits than precision {precision}")
        value = micros // step if precision <= 6 else micros * 10 ** (precision - 6)
        lit = Literal()
        getattr(lit, kind).CopyFrom(Literal.PrecisionTimestamp(precision=precision, value=value))
        return lit

    return convert


def _decimal(t: tp.Type, v: Any) -> Literal:
    if isinstance(v, (bool, float)):
        raise TypeError(f"expected a decimal as text or Decimal, got {type(v).__name__} (inexact)")
    d = decimal.Decimal(str(v).strip())
    scale, precision = t.decimal.scale, t.decimal.precision or 38
    unscaled = d.scaleb(scale, decimal.Context(prec=80))
    if unscaled != unscaled.to_integral_value():
        raise ValueError(f"more than {scale} digits after the point")
    n = int(unscaled)
    if abs(n) >= 10**precision:
        raise ValueError(f"does not fit decimal({precision},{scale})")
    return Literal(
        decimal=Literal.Decimal(value=n.to_bytes(16, "little", signed=True), precision=precision, scale=scale)
    )


_CONVERTERS: dict[str, Callable[[tp.Type, Any], Literal]] = {
    "bool": _bool,
    **{k: _int(k) for k in _INT_BITS},
    "fp32": _float("fp32"),
    "fp64": _float("fp64"),
    "string": lambda t, v: Literal(string=_text(v)),
    "varchar": lambda t, v: Literal(var_char=Literal.VarChar(value=_text(v), length=t.varchar.length)),
    "fixed_char": lambda t, v: Literal(fixed_char=_text(v)),
    "date": _date,
    "precision_timestamp": _precision_timestamp("precision_timestamp"),
    "precision_timestamp_tz": _precision_timestamp("precision_timestamp_tz"),
    "decimal": _decimal,
}
