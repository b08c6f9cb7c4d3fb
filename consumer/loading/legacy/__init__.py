"""Upgrades for plans written against older Substrait specs than the bundled protobuf (0.108).

The loader parses strictly, so anything the schema does not know would be an error. Some such things have
a known, exact meaning: renamed enum values (same numbers, so binary plans need nothing; rewritten here in
the text before parsing) and the fields 0.108 removed (``fields``: rewritten after parsing against the
``superset`` schema). Each rule returns a note, so a run report can say which upgrades were applied.
Anything else stays an error. Plan.execution_behavior is a real field now; ``execution_behavior_note``
says whether Spark can honour it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...errors import PlanInvalidError, UnsupportedFeatureError


@dataclass(frozen=True)
class EnumRename:
    """An enum value renamed between spec versions; the number stayed the same."""

    holder: str  # JSON key of the message that holds the enum field (same in camelCase and snake_case)
    field: str
    old: str
    new: str


# Older specs named JoinRel.JoinType 5, 6, 7 SEMI, ANTI, SINGLE; they are now LEFT_SEMI/LEFT_ANTI/LEFT_SINGLE.
# HashJoinRel, MergeJoinRel and NestedLoopJoinRel always had the LEFT_/RIGHT_ names.
ENUM_RENAMES: tuple[EnumRename, ...] = (
    EnumRename("join", "type", "JOIN_TYPE_SEMI", "JOIN_TYPE_LEFT_SEMI"),
    EnumRename("join", "type", "JOIN_TYPE_ANTI", "JOIN_TYPE_LEFT_ANTI"),
    EnumRename("join", "type", "JOIN_TYPE_SINGLE", "JOIN_TYPE_LEFT_SINGLE"),
)

VARIABLE_EVAL_MODES = {
    "VARIABLE_EVALUATION_MODE_UNSPECIFIED": 0,
    "VARIABLE_EVALUATION_MODE_PER_PLAN": 1,
    "VARIABLE_EVALUATION_MODE_PER_RECORD": 2,
}
_EVAL_MODE_NAMES = {v: k for k, v in VARIABLE_EVAL_MODES.items()}
EVAL_MODE_PATH = "execution_behavior.variable_eval_mode"


def snake(key: str) -> str:
    """JSON (camelCase) field name to the proto name used in plan paths."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", key).lower()


def _rename_note(rule: EnumRename, paths: list[str]) -> str:
    more = f" and {len(paths) - 1} more" if len(paths) > 1 else ""
    return f"{rule.old} read as {rule.new} at {paths[0]}{more}"


def upgrade_json(plan: dict[str, Any]) -> list[str]:
    """Rename old enum values in a plan's JSON dict in place; return one note per rule used.

    executionBehavior is checked here for what json_format lets through (a boolean mode reads as 1).
    """
    notes: list[str] = []
    behavior = _get_either(plan, "executionBehavior", "execution_behavior")
    if behavior is not _MISSING:
        _check_json_execution_behavior(behavior)
    hits: dict[EnumRename, list[str]] = {}
    _walk_renames(plan, "", None, hits)
    notes.extend(_rename_note(rule, paths) for rule, paths in hits.items())
    return notes


def _walk_renames(node: Any, path: str, key: str | None, hits: dict[EnumRename, list[str]]) -> None:
    if isinstance(node, list):
        for i, item in enumerate(node):
            _walk_renames(item, f"{path}[{i}]", key, hits)
        return
    if not isinstance(node, dict):
        return
    for rule in ENUM_RENAMES:
        if key == rule.holder and node.get(rule.field) == rule.old:
            node[rule.field] = rule.new
            hits.setdefault(rule, []).append(path)
    for k, v in node.items():
        if isinstance(v, dict | list):
            _walk_renames(v, f"{path}.{snake(k)}" if path else snake(k), k, hits)


_MISSING = object()


def _get_either(d: dict[str, Any], *keys: str) -> Any:
    found = [k for k in keys if k in d]
    if len(found) > 1:
        raise PlanInvalidError(f"plan JSON sets both {found[0]} and {found[1]}", path=snake(found[0]))
    return d[found[0]] if found else _MISSING


def _check_json_execution_behavior(behavior: Any) -> None:
    if not isinstance(behavior, dict):
        raise PlanInvalidError("executionBehavior must be an object", path="execution_behavior")
    behavior = dict(behavior)
    mode = _get_either(behavior, "variableEvalMode", "variable_eval_mode")
    behavior.pop("variableEvalMode", None)
    behavior.pop("variable_eval_mode", None)
    if behavior:
        name = next(iter(behavior))
        raise PlanInvalidError(f'ExecutionBehavior has no field named "{name}"', path="execution_behavior")
    if mode is _MISSING or (isinstance(mode, str) and mode in VARIABLE_EVAL_MODES):
        return
    if not isinstance(mode, int) or isinstance(mode, bool):
        raise PlanInvalidError(f"invalid variableEvalMode {mode!r}", path=EVAL_MODE_PATH)


def execution_behavior_note(mode: int) -> str:
    """Accept modes Spark honours (once per query) with a note; refuse per-record evaluation."""
    name = _EVAL_MODE_NAMES.get(mode, str(mode))
    if mode in (0, 1):
        return (
            f"executionBehavior.variableEvalMode {name} accepted: "
            "Spark evaluates non-deterministic variables once per query"
        )
    raise UnsupportedFeatureError(
        f"executionBehavior.variableEvalMode {name} is not supported: "
        "Spark evaluates non-deterministic variables once per query",
        path=EVAL_MODE_PATH,
    )


# Quoted strings and comments are kept; a bare upper-case identifier in textproto is an enum value.
_TEXT_TOKEN = re.compile(r"(\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|#[^\n]*)|\b([A-Z][A-Z0-9_]*)\b")


def upgrade_textproto(text: str) -> tuple[str, list[str]]:
    """Rename old enum value names in a textproto plan; return the new text and notes."""
    renames = {rule.old: rule for rule in ENUM_RENAMES}
    hits: dict[EnumRename, list[str]] = {}

    def sub(m: re.Match[str]) -> str:
        rule = renames.get(m.group(2) or "")
        if rule is None:
            return m.group(0)
        line = text.count("\n", 0, m.start()) + 1
        hits.setdefault(rule, []).append(f"line {line}")
        return rule.new

    upgraded = _TEXT_TOKEN.sub(sub, text)
    return upgraded, [_rename_note(rule, paths) for rule, paths in hits.items()]
