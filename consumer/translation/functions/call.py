"""One function invocation, as the function table sees it: typed arguments, enum arguments, options."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pyspark.sql import Column
from pyspark.sql import types as T

from ...errors import PlanInvalidError, UnsupportedFeatureError
from ...loading.extensions import FunctionRef
from ...types import cast, family
from ..scope import Typed


@dataclass(frozen=True)
class Option:
    """A function option a handler reads: its name, the values it supports (the spec's spelling) and its
    default. Handlers read options through these (`Call.read`); `validate` reads the same declarations
    (`OptionRule` tables next to the handlers), so the two cannot disagree on what is supported."""

    name: str
    supported: tuple[str, ...]
    default: str

    def choose(self, preferences: list[str]) -> str | None:
        """The first of the producer's preferences we support (spec: in order); the default when there are
        none; None when none is supported."""
        if not preferences:
            return self.default
        return next((p.upper() for p in preferences if p.upper() in self.supported), None)

    def refusal(self, function: str, preferences: list[str]) -> str:
        """The unsupported-feature message for `preferences` none of which is supported."""
        return f"{function}: option {self.name}={'|'.join(preferences)} (supported: {', '.join(self.supported)})"


@dataclass
class Call:
    """A function invocation with its arguments translated.

    `arguments` keeps the plan's order; an enum argument is a plain string there. `values` are the value
    arguments only. `options` maps an option name to the producer's preference list.
    """

    ref: FunctionRef
    arguments: list[Typed | str]
    options: dict[str, list[str]] = field(default_factory=dict)
    output_type: T.DataType | None = None
    path: str = ""

    @property
    def name(self) -> str:
        return self.ref.base

    @property
    def values(self) -> list[Typed]:
        return [a for a in self.arguments if isinstance(a, Typed)]

    @property
    def cols(self) -> list[Column]:
        return [a.col for a in self.values]

    @property
    def enums(self) -> list[str]:
        return [a for a in self.arguments if isinstance(a, str)]

    def families(self) -> tuple[str, ...]:
        return tuple(family(a.type) for a in self.values)

    def arity(self, *allowed: int) -> Call:
        n = len(self.values)
        if n not in allowed:
            want = " or ".join(str(a) for a in allowed)
            raise PlanInvalidError(f"{self.ref.name} takes {want} argument(s), got {n}", self.path)
        return self

    def option(self, name: str, supported: tuple[str, ...], default: str) -> str:
        """The first of the producer's preferences for option `name` that we support (spec: in order)."""
        return self.read(Option(name, supported, default))

    def prefers(self, option: Option) -> bool:
        """Whether the plan states a preference for `option` (without one the spec lets the consumer choose)."""
        return bool(self.options.get(option.name.lower()))

    def read(self, option: Option) -> str:
        """The value of a declared option (`options.Option`): unsupported preferences are refused."""
        prefs = self.options.get(option.name.lower()) or []
        chosen = option.choose(prefs)
        if chosen is None:
            raise UnsupportedFeatureError(option.refusal(self.ref.name, prefs), self.path)
        return chosen

    def declared(self, col: Column) -> Column:
        """`col` in the type the plan declares for the call, if it declares one (Spark often widens)."""
        return cast(col, self.output_type) if self.output_type is not None else col

    def unsupported(self, what: str) -> UnsupportedFeatureError:
        return UnsupportedFeatureError(f"{self.ref.name}: {what}", self.path)

    def check(self, rule: ArgumentRule) -> Call:
        """Refuse the call if its handler's argument rule (declared next to it, read by `validate` too) does."""
        why = rule(self)
        if why:
            raise self.unsupported(why)
        return self


class Argument(Protocol):
    """What an argument rule reads of a value argument: whether it is a constant, and its value."""

    @property
    def is_literal(self) -> bool: ...

    @property
    def value(self) -> Any: ...


class Arguments(Protocol):
    """What an argument rule reads of a call: its value arguments and its enum arguments, in plan order."""

    @property
    def values(self) -> Sequence[Argument]: ...

    @property
    def enums(self) -> Sequence[str]: ...


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()
"""The value of a constant the plan does not hold (a dynamic parameter, bound at run time): rules pass it."""

# What a handler refuses in its arguments beyond their types (a constant it needs, a format's directives), as data
# next to the handler: the refusal's words (`<function>: <words>`), or None. The handler applies it (`Call.check`)
# and `validate` applies the same rule to the plan's arguments (`StaticCall`).
ArgumentRule = Callable[[Arguments], str | None]


@dataclass(frozen=True)
class StaticArgument:
    """A value argument as the plan states it: a literal (or a dynamic parameter: a constant of UNKNOWN value)
    or something computed."""

    is_literal: bool
    value: Any = None


@dataclass(frozen=True)
class StaticCall:
    """A call as the plan states it, for `validate` to apply argument rules to."""

    values: tuple[StaticArgument, ...]
    enums: tuple[str, ...]


Handler = Callable[[Call], Column]
