"""Plan loader: every corpus plan loads strictly; bad input is one line of PlanInvalidError. No Spark."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from google.protobuf import text_format
from substrait import algebra_pb2
from substrait.plan_pb2 import Plan
from substrait_spark.consumer.errors import PlanInvalidError, UnsupportedFeatureError
from substrait_spark.consumer.loading.loader import (
    MAX_DEPTH,
    LoadedPlan,
    UnknownField,
    iter_unknown_fields,
    load_plan,
    parse_plan_bytes,
    read_plan_bytes,
)

pytestmark = [pytest.mark.unit, pytest.mark.corpus]

ROOT = Path(__file__).resolve().parents[1]
CORPUS = (ROOT / ".." / "shared" / "corpus").resolve()
BAD = Path(__file__).resolve().parent / "data" / "bad_plans"
IBM = CORPUS / "ibm-substrait-compliance-tpch"
FRAGMENTS = CORPUS / "substrait-spec-examples" / "proto-textformat"
ROUNDTRIP = CORPUS / "substrait-java-isthmus-sql" / "plan-roundtrip"

# The corpus is fixed test data (never edited): these counts catch a missing or partly copied corpus.
EXPECTED_JSON, EXPECTED_BIN, EXPECTED_FRAGMENTS = 656, 22, 7


def _corpus(*patterns: str) -> list[Path]:
    return sorted(p for pattern in patterns for p in CORPUS.rglob(pattern) if FRAGMENTS not in p.parents)


PLANS = _corpus("*.json", "*.bin")
TEXTPROTO_FRAGMENTS = sorted(FRAGMENTS.rglob("*.textproto"))


def _id(path: Path) -> str:
    return str(path.relative_to(CORPUS))


def _minimal(**root: object) -> dict[str, object]:
    """The smallest valid plan JSON: one read of table t."""
    rel = root.pop("input", {"read": {"namedTable": {"names": ["t"]}}})
    return {"relations": [{"root": {"input": rel, "names": ["a"]}}], **root}


def _one_line(err: pytest.ExceptionInfo[BaseException]) -> str:
    text = str(err.value)
    assert "\n" not in text and len(text) < 800, text
    return text


# --- the corpus ----------------------------------------------------------------------------------------


def test_corpus_present_and_counted() -> None:
    assert CORPUS.is_dir(), f"plan corpus missing at {CORPUS}"
    assert sum(p.suffix == ".json" for p in PLANS) == EXPECTED_JSON
    assert sum(p.suffix == ".bin" for p in PLANS) == EXPECTED_BIN
    assert len(TEXTPROTO_FRAGMENTS) == EXPECTED_FRAGMENTS


@pytest.mark.parametrize("path", PLANS, ids=_id)
def test_corpus_plan_loads(path: Path) -> None:
    loaded = load_plan(path)
    assert isinstance(loaded, LoadedPlan)
    assert isinstance(loaded.plan, Plan) and len(loaded.plan.relations) >= 1
    assert loaded.format == ("binary" if path.suffix == ".bin" else "json")
    assert loaded.uri == str(path)
    assert loaded.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert not list(iter_unknown_fields(loaded.plan))


@pytest.mark.parametrize("path", TEXTPROTO_FRAGMENTS, ids=_id)
def test_textproto_fragments_are_not_plans(path: Path) -> None:
    with pytest.raises(PlanInvalidError) as err:
        load_plan(path)
    assert "invalid plan textproto" in _one_line(err)


def test_execution_behavior_plans_load_with_a_note() -> None:
    paths = sorted(ROUNDTRIP.glob("*.json"))
    assert len(paths) == 6
    for path in paths:
        loaded = load_plan(path)
        assert any("VARIABLE_EVALUATION_MODE_PER_PLAN accepted" in note for note in loaded.notes), path


@pytest.mark.parametrize("n", range(1, 23), ids=lambda n: f"q{n:02d}")
def test_ibm_json_and_bin_are_the_same_plan(n: int) -> None:
    from_json = load_plan(IBM / f"q{n:02d}.json")
    from_bin = load_plan(IBM / f"q{n:02d}.bin")
    assert from_json.plan == from_bin.plan
    assert (from_json.producer, from_json.spec_version) == (from_bin.producer, from_bin.spec_version)
    assert from_json.sha256 != from_bin.sha256


def test_identity_fields() -> None:
    path = IBM / "q01.bin"
    loaded = load_plan(path)
    v = loaded.plan.version
    assert loaded.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert loaded.producer == v.producer and loaded.producer
    assert loaded.spec_version == f"{v.major_number}.{v.minor_number}.{v.patch_number}"
    assert any(note.startswith("extension_uris read as extension_urns") for note in loaded.notes)
    unversioned = parse_plan_bytes(json.dumps(_minimal()).encode())
    assert (unversioned.producer, unversioned.spec_version, unversioned.uri) == (None, None, None)
    assert unversioned.notes == ()


# --- strictness ----------------------------------------------------------------------------------------


def test_json_unknown_field_is_named() -> None:
    with pytest.raises(PlanInvalidError) as err:
        load_plan(BAD / "unknown_field.json")
    text = _one_line(err)
    assert '"countMode"' in text and "FetchRel" in text
    assert err.value.path == "relations[0].root.input.fetch"


def _q01() -> Plan:
    return load_plan(IBM / "q01.bin").plan


def test_binary_unknown_field_in_a_relation_is_named() -> None:
    plan = _q01()
    rel = plan.relations[0].root.input
    kind = rel.WhichOneof("rel_type")
    inner = getattr(rel, kind)
    inner.MergeFromString(b"\xb8\x3e\x2a")  # field 999, varint 42: kept as an unknown field
    with pytest.raises(PlanInvalidError) as err:
        parse_plan_bytes(plan.SerializeToString())
    text = _one_line(err)
    assert err.value.path == f"relations[0].root.input.{kind}"
    assert "unknown field 999" in text and f"relations[0].root.input.{kind}" in text


def test_binary_unknown_field_at_top_level() -> None:
    data = (IBM / "q01.bin").read_bytes() + b"\xa2\x06\x02hi"  # field 100, length-delimited
    with pytest.raises(PlanInvalidError) as err:
        parse_plan_bytes(data)
    text = _one_line(err)
    assert "unknown field 100" in text and "substrait.Plan" in text and err.value.path is None


def test_iter_unknown_fields_reports_paths() -> None:
    plan = _q01()
    assert list(iter_unknown_fields(plan)) == []
    plan.relations[0].root.names.append("x")
    plan.relations[0].root.MergeFromString(b"\xf8\x01\x07")  # field 31, varint 7
    plan.MergeFromString(b"\xa8\x06\x01")  # field 101, varint 1
    found = list(iter_unknown_fields(plan))
    assert UnknownField("", "substrait.Plan", 101, 0, 1) in found
    assert UnknownField("relations[0].root", "substrait.RelRoot", 31, 0, 7) in found
    assert len(found) == 2


def test_textproto_is_strict() -> None:
    with pytest.raises(PlanInvalidError) as err:
        load_plan(BAD / "unknown_field.textproto")
    assert "bogus_field" in _one_line(err) and "line 2" in str(err.value)


# --- bad input -----------------------------------------------------------------------------------------

BAD_FILES = {
    "unknown_field.json": "no field named",
    "relations_not_a_list.json": "relations",
    "top_level_list.json": "must be an object",
    "no_relations.json": "no relations",
    "comments_only.json": "empty plan",
    "empty.json": "empty plan",
    "bad_enum.json": "JOIN_TYPE_SIDEWAYS",
    "duplicate_key.json": 'duplicate key "count"',
    "unknown_field.textproto": "bogus_field",
}


def test_bad_fixtures_all_covered() -> None:
    assert sorted(p.name for p in BAD.iterdir()) == sorted(BAD_FILES)


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_fixture_is_plan_invalid(name: str) -> None:
    with pytest.raises(PlanInvalidError) as err:
        load_plan(BAD / name)
    assert BAD_FILES[name] in _one_line(err)
    assert err.value.exit_code == 2


def test_truncated_binary() -> None:
    data = (IBM / "q01.bin").read_bytes()
    with pytest.raises(PlanInvalidError) as err:
        parse_plan_bytes(data[: len(data) // 2])
    assert "truncated or corrupt protobuf" in _one_line(err)


@pytest.mark.parametrize(
    "text",
    [
        '{"relations": 5}',
        '{"relations": [{"root": 5}]}',
        '{"relations": [{"root": {"input": {"read": {"baseSchema": {"names": [1]}}}}}]}',
        '{"version": {"minorNumber": "x"}, "relations": [{}]}',
        "[1, 2]",
        '"a string"',
        "42",
        "null",
        '{"relations": [',
    ],
)
def test_json_of_the_wrong_shape(text: str) -> None:
    with pytest.raises(PlanInvalidError) as err:
        parse_plan_bytes(text.encode())
    assert "JSON" in _one_line(err)


@pytest.mark.parametrize("data", [b"", b"  \n\t", b"// only\n# comments\n"])
def test_empty_input(data: bytes) -> None:
    with pytest.raises(PlanInvalidError) as err:
        parse_plan_bytes(data)
    assert "empty plan" in _one_line(err)


def test_no_relations_in_any_format() -> None:
    plan = Plan()
    plan.version.minor_number = 81
    for data in (
        plan.SerializeToString(),
        b'{"version": {"minorNumber": 81}}',
        b"version { minor_number: 81 }",
    ):
        with pytest.raises(PlanInvalidError, match="no relations"):
            parse_plan_bytes(data)


def test_json_error_path_in_proto_names() -> None:
    with pytest.raises(PlanInvalidError) as err:
        parse_plan_bytes(b'{"version": {"minorNumber": "x"}, "relations": [{}]}')
    assert err.value.path == "version.minor_number"


# --- legacy and newer spellings ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("JOIN_TYPE_SEMI", algebra_pb2.JoinRel.JOIN_TYPE_LEFT_SEMI),
        ("JOIN_TYPE_ANTI", algebra_pb2.JoinRel.JOIN_TYPE_LEFT_ANTI),
        ("JOIN_TYPE_SINGLE", algebra_pb2.JoinRel.JOIN_TYPE_LEFT_SINGLE),
    ],
)
def test_old_join_type_names(old: str, new: int) -> None:
    read = {"read": {"namedTable": {"names": [old]}}}  # the same text in a string is data: kept
    js = _minimal(input={"join": {"left": read, "right": read, "type": old}})
    loaded = parse_plan_bytes(json.dumps(js).encode())
    join = loaded.plan.relations[0].root.input.join
    assert join.type == new
    assert join.left.read.named_table.names == [old]
    new_name = algebra_pb2.JoinRel.JoinType.Name(new)
    assert loaded.notes == (f"{old} read as {new_name} at relations[0].root.input.join",)


def test_old_join_type_in_textproto() -> None:
    text = (
        "# JOIN_TYPE_SEMI in a comment stays\nrelations { root { input { join { type: JOIN_TYPE_SEMI\n"
        'left { read { named_table { names: "JOIN_TYPE_SEMI" } } } } } } }\n'
    )
    loaded = parse_plan_bytes(text.encode())
    join = loaded.plan.relations[0].root.input.join
    assert loaded.format == "textproto"
    assert join.type == algebra_pb2.JoinRel.JOIN_TYPE_LEFT_SEMI
    assert join.left.read.named_table.names == ["JOIN_TYPE_SEMI"]
    assert loaded.notes == ("JOIN_TYPE_SEMI read as JOIN_TYPE_LEFT_SEMI at line 2",)


def test_corpus_duckdb_semi_join() -> None:
    loaded = load_plan(CORPUS / "consumer-testing-tpch-snapshots" / "q18-duckdb_plan.json")
    (note,) = [n for n in loaded.notes if n.startswith("JOIN_TYPE")]
    assert note.startswith("JOIN_TYPE_SEMI read as JOIN_TYPE_LEFT_SEMI at relations[0].root.input.")


@pytest.mark.parametrize(
    "behavior",
    [
        {"executionBehavior": {"variableEvalMode": "VARIABLE_EVALUATION_MODE_PER_PLAN"}},
        {"execution_behavior": {"variable_eval_mode": 1}},
        {"executionBehavior": {}},
    ],
)
def test_execution_behavior_compatible(behavior: dict[str, object]) -> None:
    loaded = parse_plan_bytes(json.dumps(_minimal(**behavior)).encode())
    assert loaded.plan.HasField("execution_behavior")
    loaded.plan.ClearField("execution_behavior")
    assert loaded.plan == parse_plan_bytes(json.dumps(_minimal()).encode()).plan
    assert len(loaded.notes) == 1 and "accepted" in loaded.notes[0]


@pytest.mark.parametrize("mode", ["VARIABLE_EVALUATION_MODE_PER_RECORD", 2])
def test_execution_behavior_per_record_is_unsupported(mode: object) -> None:
    js = _minimal(executionBehavior={"variableEvalMode": mode})
    with pytest.raises(UnsupportedFeatureError) as err:
        parse_plan_bytes(json.dumps(js).encode())
    assert "executionBehavior.variableEvalMode" in _one_line(err)
    assert err.value.path == "execution_behavior.variable_eval_mode" and err.value.exit_code == 3


@pytest.mark.parametrize(
    "behavior", [{"variableEvalMode": "PER_PLAN"}, {"mode": 1}, "per_plan", {"variableEvalMode": True}]
)
def test_execution_behavior_malformed(behavior: object) -> None:
    with pytest.raises(PlanInvalidError) as err:
        parse_plan_bytes(json.dumps(_minimal(executionBehavior=behavior)).encode())
    _one_line(err)


def _with_binary_behavior(mode: int) -> bytes:
    return (IBM / "q01.bin").read_bytes() + b"\x52\x02\x08" + bytes([mode])  # field 10 { field 1: mode }


def test_binary_execution_behavior() -> None:
    loaded = parse_plan_bytes(_with_binary_behavior(1))
    assert loaded.plan.execution_behavior.variable_eval_mode == 1
    loaded.plan.ClearField("execution_behavior")
    assert loaded.plan == _q01() and loaded.format == "binary"
    assert "PER_PLAN accepted" in loaded.notes[0] and loaded.notes[1:] == load_plan(IBM / "q01.bin").notes
    with pytest.raises(UnsupportedFeatureError):
        parse_plan_bytes(_with_binary_behavior(2))


# --- formats, sources ----------------------------------------------------------------------------------


def test_textproto_plan_with_comments() -> None:
    plan = _q01()
    text = "// exported by hand\n# proto-message: substrait.Plan\n" + text_format.MessageToString(plan)
    loaded = parse_plan_bytes(text.encode())
    assert loaded.format == "textproto" and loaded.plan == plan


def test_json_with_leading_comments_and_bom() -> None:
    body = "\ufeff// header\n#  more\n\n" + json.dumps(_minimal())
    assert parse_plan_bytes(body.encode()).format == "json"


def test_binary_that_decodes_as_text() -> None:
    plan = Plan()
    root = plan.relations.add().root
    root.input.read.named_table.names.append("t")
    root.names.append("a")
    data = plan.SerializeToString()
    data.decode("utf-8")  # every byte is ASCII, so text formats are tried too
    loaded = parse_plan_bytes(data)
    assert loaded.format == "binary" and loaded.plan == plan


def _nested_filters(n: int) -> Plan:
    plan = Plan()
    rel = plan.relations.add().root.input
    for _ in range(n):
        rel = rel.filter.input
    rel.read.named_table.names.append("t")
    return plan


def test_deep_binary_plan_beyond_protobufs_default_limit() -> None:
    plan = _nested_filters(120)  # about 245 messages deep; protobuf's own limit is 100
    assert parse_plan_bytes(plan.SerializeToString()).plan == plan


def test_too_deep_binary_plan_is_refused() -> None:
    with pytest.raises(PlanInvalidError, match=f"deeper than {MAX_DEPTH}"):
        parse_plan_bytes(_nested_filters(MAX_DEPTH).SerializeToString())


def test_sources(tmp_path: Path) -> None:
    path = IBM / "q01.bin"
    by_uri = load_plan(path.as_uri())
    assert by_uri.uri == path.as_uri() and by_uri.plan == _q01()
    assert load_plan(str(path)).uri == str(path)
    raw = load_plan(path.read_bytes())
    assert raw.uri is None and raw.sha256 == by_uri.sha256
    odd = tmp_path / "with space%.bin"
    odd.write_bytes(path.read_bytes())
    assert load_plan(odd.as_uri()).plan == by_uri.plan
    assert read_plan_bytes(str(path)) == path.read_bytes()


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("s3://bucket/plans/q01.bin", "unsupported plan URI scheme 's3'"),
        ("https://example.com/q01.json", "unsupported plan URI scheme 'https'"),
        ("file://otherhost/q01.bin", "remote host"),
        ("/nonexistent/plan.json", "/nonexistent/plan.json: no such file"),
        ("file:///nonexistent/plan.json", "/nonexistent/plan.json: no such file"),
    ],
)
def test_bad_sources(uri: str, message: str) -> None:
    with pytest.raises(PlanInvalidError) as err:
        load_plan(uri)
    assert message in _one_line(err)


def test_directory_is_not_a_plan(tmp_path: Path) -> None:
    with pytest.raises(PlanInvalidError, match="directory"):
        load_plan(tmp_path)
