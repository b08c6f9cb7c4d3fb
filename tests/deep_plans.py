"""Plans built to be too deep or too large, in every format the loader reads (tests/test_deep_plans.py,
tests/test_policy.py). Built as bytes and text directly: protobuf's own classes cannot hold a 10,000-deep plan."""

from __future__ import annotations

import json
from pathlib import Path

from google.protobuf import json_format
from google.protobuf.internal.encoder import _VarintBytes
from plan_builder import PlanBuilder, i64, virtual
from substrait import algebra_pb2 as alg
from substrait.plan_pb2 import Plan, PlanRel

NAMES = ["a"]
DEEP = 10_000
HUGE_BYTES = 100 * 1024 * 1024


def leaf() -> alg.Rel:
    """A one-row virtual table: what every deep plan filters over and over."""
    return virtual(NAMES, [i64()], [(1,)])


def _message(field: int, body: bytes) -> bytes:
    return _VarintBytes(field << 3 | 2) + _VarintBytes(len(body)) + body


def deep_binary(depth: int = DEEP) -> bytes:
    """A binary plan whose root is `depth` FilterRels (condition TRUE) over a virtual table."""
    rel_filter = alg.Rel.DESCRIPTOR.fields_by_name["filter"].number
    filter_input = alg.FilterRel.DESCRIPTOR.fields_by_name["input"].number
    condition = alg.FilterRel(condition=alg.Expression(literal=alg.Expression.Literal(boolean=True)))
    rel = leaf().SerializeToString()
    cond = condition.SerializeToString()
    for _ in range(depth):
        rel = _message(rel_filter, cond + _message(filter_input, rel))
    root = alg.RelRoot(names=NAMES).SerializeToString() + _message(
        alg.RelRoot.DESCRIPTOR.fields_by_name["input"].number, rel
    )
    plan_rel = _message(PlanRel.DESCRIPTOR.fields_by_name["root"].number, root)
    return _message(Plan.DESCRIPTOR.fields_by_name["relations"].number, plan_rel)


def deep_json(depth: int = DEEP) -> str:
    """The same plan as protobuf JSON."""
    read = json_format.MessageToJson(leaf(), indent=None)
    head = '{"relations":[{"root":{"input":' + '{"filter":{"condition":{"literal":{"boolean":true}},"input":' * depth
    return head + read + "}}" * depth + ',"names":["a"]}}]}'


def deep_textproto(depth: int = DEEP) -> str:
    """The same plan as textproto."""
    read = str(leaf()).replace("\n", " ")
    head = "relations { root { input { " + "filter { condition { literal { boolean: true } } input { " * depth
    return head + read + " } }" * depth + ' } names: "a" } }'


def small_plan() -> Plan:
    return PlanBuilder().plan(leaf(), NAMES)


def huge_json(path: Path, size: int = HUGE_BYTES) -> Path:
    """A valid JSON plan of `size` bytes (a producer string padding it), written without holding it in memory
    twice."""
    doc = json.loads(json_format.MessageToJson(small_plan()))
    doc["version"] = {"producer": "@PAD@"}
    head, tail = json.dumps(doc).split("@PAD@")
    pad = size - len(head) - len(tail)
    with path.open("w") as f:
        f.write(head)
        chunk = "x" * (1 << 20)
        for _ in range(pad // len(chunk)):
            f.write(chunk)
        f.write("x" * (pad % len(chunk)))
        f.write(tail)
    return path


def deep_casts_json(depth: int) -> str:
    """A plan projecting `depth` nested casts (to i64, each two levels) of a virtual table's column, as JSON
    (protobuf's classes cannot copy a message nested deeper than 100)."""
    e = '{"selection":{"directReference":{"structField":{"field":0}},"rootReference":{}}}'
    for _ in range(depth):
        e = (
            '{"cast":{"type":{"i64":{"nullability":"NULLABILITY_REQUIRED"}},"input":'
            + e
            + ',"failureBehavior":"FAILURE_BEHAVIOR_THROW_EXCEPTION"}}'
        )
    read = json_format.MessageToJson(leaf(), indent=None)
    project = '{"project":{"input":' + read + ',"expressions":[' + e + '],"common":{"emit":{"outputMapping":[1]}}}}'
    return '{"relations":[{"root":{"input":' + project + ',"names":["b"]}}]}'
