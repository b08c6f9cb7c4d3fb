"""Bounds on a plan's size and nesting, checked before it is parsed or walked.

A plan is untrusted input: a 100 MB plan or one nested 10,000 deep must end with a typed error at once, not with
a RecursionError deep in a walker, a hang or a memory blow-up. Every reader after the loader (legacy rewrite,
superset re-read, validate, lineage, the translator's PlanVisitor walk) recurses at most as deep as the plan is
nested, so the loader bounds nesting once, before any of them runs; the engine-wide defaults hold without a
policy, and a policy may only lower them (`consumer/analysis/policy.py`).

Depth is counted in protobuf messages (the plan is 1, each relation adds about two, each function call three;
the corpus reaches 51), so it can be measured on the raw input: the wire format, the JSON objects, the textproto
braces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import StrEnum

from ..errors import PlanInvalidError

DEFAULT_MAX_PLAN_BYTES = 32 * 1024 * 1024  # the largest corpus plan is under 1 MB
# Message nesting: the walkers (validate, lineage, explain, translation) recurse up to about three frames per level
# and Python stops at 1000 frames (400 left validate's walk a few frames short under pytest); the corpus reaches 51.
DEFAULT_MAX_DEPTH = 300


class Limit(StrEnum):
    """Which bound a plan exceeded (the policy rule of the same name lowers it)."""

    MAX_PLAN_BYTES = "max_plan_bytes"
    MAX_DEPTH = "max_depth"


class PlanTooLargeError(PlanInvalidError):
    """The plan is larger or nested deeper than the engine reads (exit 2; a policy's lower bound: exit 5)."""

    kind = "plan too large"

    def __init__(self, message: str, limit: Limit, path: str | None = None):
        super().__init__(message, path)
        self.limit = limit


@dataclass(frozen=True)
class Limits:
    """The bounds the loader applies: the engine's defaults, or a policy's lower ones (`lowered`)."""

    max_plan_bytes: int = DEFAULT_MAX_PLAN_BYTES
    max_depth: int = DEFAULT_MAX_DEPTH

    def lowered(self, max_plan_bytes: int | None = None, max_depth: int | None = None) -> Limits:
        """These bounds with `max_plan_bytes` / `max_depth` where lower (a policy never raises them)."""
        return replace(
            self,
            max_plan_bytes=min(self.max_plan_bytes, max_plan_bytes or self.max_plan_bytes),
            max_depth=min(self.max_depth, max_depth or self.max_depth),
        )

    def check_size(self, size: int, what: str = "plan") -> None:
        if size > self.max_plan_bytes:
            raise PlanTooLargeError(
                f"{what} is {size} bytes, more than max_plan_bytes {self.max_plan_bytes}", Limit.MAX_PLAN_BYTES
            )

    def too_deep(self) -> PlanTooLargeError:
        return PlanTooLargeError(f"plan nested deeper than {self.max_depth} messages (max_depth)", Limit.MAX_DEPTH)

    def check_depth(self, depth: int) -> None:
        """`depth`: as measured, counting stopped just past the bound (the measures do not walk deeper)."""
        if depth > self.max_depth:
            raise self.too_deep()


DEFAULT_LIMITS = Limits()


def json_depth(value: object, stop: int) -> int:
    """How deeply JSON objects nest in `value` (each object one message; lists add no level), without recursion;
    stops counting past `stop`."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            level += 1
            if level > deepest:
                deepest = level
                if deepest > stop:
                    return deepest
            stack.extend((v, level) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, level) for v in item)
    return deepest


# Textproto tokens that matter for nesting: strings and comments (skipped), and message delimiters.
_TEXT_TOKENS = re.compile(r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|#[^\n]*|[{}<>]""")
_OPEN = frozenset("{<")


def text_depth(text: str, stop: int) -> int:
    """How deeply messages nest in textproto `text` (braces outside strings and comments); stops past `stop`."""
    level = deepest = 0
    for m in _TEXT_TOKENS.finditer(text):
        token = m.group()
        if len(token) != 1:
            continue
        if token in _OPEN:
            level += 1
            if level > deepest:
                deepest = level
                if deepest > stop:
                    return deepest
        else:
            level -= 1
    return deepest + 1  # the plan itself is a message
