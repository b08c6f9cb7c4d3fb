"""The policy (`consumer/analysis/policy.py`): what a plan may read, write and run, decided by whoever runs the
platform.

Each rule refuses (exit 5, every violation named with its plan path, checked before any Spark session — the
session factory proves it — and nothing committed: pyiceberg's snapshots unchanged) and allows. Views read through
NamedTable are checked with their stored definitions. `validate --policy` lists exactly what `run --policy`
refuses. The policy reaches every front end through `PlanRunner`: the CLI, `run_plan`, the Airflow operator
(`policy=` and the connection's `policy` extra, `airflow dags test`) and the Dagster resource."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
import yaml
from google.protobuf import json_format
from google.protobuf.any_pb2 import Any as AnyProto
from plan_builder import DdlRel, PlanBuilder, WriteRel, ddl, i64, named, string, update, virtual, write
from substrait import algebra_pb2 as alg
from substrait_spark.consumer.analysis.policy import (
    DEFAULT_STEPS,
    Policy,
    PolicyConfigError,
    PolicyRefusedError,
    Rule,
    StepKind,
    normal_uri,
)
from substrait_spark.consumer.errors import UnsupportedFeatureError
from substrait_spark.consumer.loading.limits import DEFAULT_MAX_PLAN_BYTES
from substrait_spark.consumer.running.sinks import Sink
from substrait_spark.hooks.plan_run import PlanRunner, RunSettings

NAMES, TYPES = ["id", "name"], [i64(), string()]
SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])
EXT_URL = "type.googleapis.com/example.Sample"


def no_session(catalog_conf):
    raise AssertionError("a Spark session was asked for")


# --- the policy's shape ------------------------------------------------------------------------------------------


POLICY_YAML = """
read_locations: ["s3://lake-bucket/shared/", "/data/tpch"]
read_namespaces: ["lake.sales", "lake.ref_*"]
write_namespaces: ["lake.staging"]
steps: [insert, ctas, drop]
extensions: ["type.googleapis.com/example.Sample"]
max_plan_bytes: 1048576
max_relations: 200
max_depth: 120
max_result_rows: 1000
sha256: ["sha256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"]
"""


@pytest.mark.unit
def test_a_policy_file_is_typed_and_refuses_what_it_does_not_know(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY_YAML)
    policy = Policy.from_file(path)
    assert policy.read_locations == ("s3://lake-bucket/shared/", "file:///data/tpch")
    assert policy.read_namespaces == ("lake.sales", "lake.ref_*")
    assert policy.steps == {StepKind.INSERT, StepKind.CTAS, StepKind.DROP}
    assert (policy.max_plan_bytes, policy.max_relations, policy.max_depth, policy.max_result_rows) == (
        1048576,
        200,
        120,
        1000,
    )
    assert policy.sha256 == {"a" * 64}
    as_json = tmp_path / "policy.json"  # JSON is YAML: the same policy
    as_json.write_text(json.dumps(yaml.safe_load(POLICY_YAML)))
    assert Policy.from_file(as_json) == policy == Policy.from_mapping(policy.to_dict())
    # Without `steps`, DROP and CREATE OR REPLACE are off; every other rule left out does not restrict.
    assert Policy.from_mapping({}).steps == DEFAULT_STEPS == set(StepKind) - {StepKind.DROP, StepKind.CREATE_OR_REPLACE}

    bad = {
        "write_namespace: []": "unknown key(s) ['write_namespace']",
        "steps: [insert, truncate]": "unknown step kind(s) ['truncate']",
        "max_depth: deep": "max_depth must be a whole number >= 0",
        "read_locations: /data": "read_locations must be a list of strings",
        "sha256: [abc]": "sha256 holds values that are not 64 hex digits",
        "- read_locations": "expected a mapping of rules",
    }
    for text, message in bad.items():
        path.write_text(text)
        with pytest.raises(PolicyConfigError) as info:
            Policy.from_file(path)
        assert message in str(info.value) and info.value.exit_code == 2


@pytest.mark.unit
def test_read_locations_compare_whole_path_segments_and_refuse_climbing_out():
    assert normal_uri("/data/tpch/./lineitem.parquet") == "file:///data/tpch/lineitem.parquet"
    assert normal_uri("S3://bucket/a/./b/") == "s3://bucket/a/b/"
    assert normal_uri("/data/tpch/../../etc/passwd") is None
    assert normal_uri("s3://b/shared/{x,../secret}") is None
    policy = Policy.from_mapping({"read_locations": ["s3://b/team", "/data/tpch/"]})
    checker_uris = {
        "s3://b/team/x.parquet": True,
        "s3://b/team": True,
        "s3://b/team-other/x.parquet": False,
        "s3a://b/team/x.parquet": False,
        "file:///data/tpch/lineitem.parquet": True,
        "/data/tpch/lineitem.parquet": True,
        "file:///data/tpchx": False,
        "file:///etc/passwd": False,
    }
    for uri, allowed in checker_uris.items():
        got = policy.check(plan_of(local_files(uri)))
        assert (got == []) is allowed, (uri, got)


# --- each rule, refusing and allowing, before Spark -------------------------------------------------------------


def local_files(*uris: str) -> alg.Rel:
    rel = named("x", NAMES, TYPES)
    rel.read.ClearField("named_table")
    for uri in uris:
        rel.read.local_files.items.add(uri_file=uri).parquet.SetInParent()
    return rel


def iceberg_direct(metadata_uri: str) -> alg.Rel:
    rel = named("x", NAMES, TYPES)
    rel.read.ClearField("named_table")
    rel.read.iceberg_table.direct.metadata_uri = metadata_uri
    return rel


def extension_leaf(url: str) -> alg.Rel:
    return alg.Rel(extension_leaf=alg.ExtensionLeafRel(detail=AnyProto(type_url=url)))


def rows() -> alg.Rel:
    return virtual(NAMES, TYPES, [(7, "seven")])


def plan_of(*rels: alg.Rel):
    return PlanBuilder().plan(rels[0], NAMES, more=[(r, NAMES) for r in rels[1:]])


@pytest.fixture(name="lake_ns")
def lake_ns_fixture(lake, request) -> dict[str, str]:
    """Namespaces of this test's own: sales, staging and secret, each with a table `t` of two rows."""
    prefix = "p_" + request.node.name.split("[")[0].removeprefix("test_")[:20]
    spaces = {role: f"{prefix}_{role}" for role in ("sales", "staging", "secret")}
    for ns in spaces.values():
        lake.catalog.create_namespace_if_not_exists(ns)
        if not lake.catalog.table_exists(f"{ns}.t"):
            t = lake.catalog.create_table(f"{ns}.t", schema=SCHEMA)
            t.append(pa.Table.from_pylist([{"id": 1, "name": "a"}, {"id": 2, "name": "b"}], schema=SCHEMA))
    return spaces


def snapshots(lake, spaces) -> dict[str, list[int]]:
    """Every snapshot of every table in the namespaces, as pyiceberg reads the catalog."""
    found = {}
    for ns in spaces.values():
        for ident in lake.catalog.list_tables(ns):
            found[".".join(ident)] = [s.snapshot_id for s in lake.catalog.load_table(ident).snapshots()]
    return found


def cases(lake, ns: dict[str, str]) -> list[tuple[str, dict, object, object, list[tuple[Rule, str | None]]]]:
    """(name, policy, a plan it refuses, a plan it allows, the refused plan's violations: rule and plan path)."""
    sales, staging, secret = ns["sales"], ns["staging"], ns["secret"]
    big = plan_of(rows())
    return [
        (
            "read_locations: LocalFiles",
            {"read_locations": ["/data/tpch"]},
            plan_of(local_files("/data/tpch/ok.parquet", "file:///etc/passwd")),
            plan_of(local_files("/data/tpch/ok.parquet")),
            [(Rule.READ_LOCATIONS, "relations[0].root.input.read.local_files.items[1]")],
        ),
        (
            "read_locations: IcebergTable",
            {"read_locations": ["s3://lake/shared/"]},
            plan_of(iceberg_direct("s3://lake/secret/t/metadata/v1.metadata.json")),
            plan_of(iceberg_direct("s3://lake/shared/t/metadata/v1.metadata.json")),
            [(Rule.READ_LOCATIONS, "relations[0].root.input.read.iceberg_table.direct")],
        ),
        (
            "read_namespaces (with or without the catalog's name, any case)",
            {"read_namespaces": [f"{lake.name}.{sales}"]},
            plan_of(named([secret, "t"], NAMES, TYPES), named([lake.name, secret, "T"], NAMES, TYPES)),
            plan_of(named([sales, "t"], NAMES, TYPES), named([lake.name, sales.upper(), "t"], NAMES, TYPES)),
            [
                (Rule.READ_NAMESPACES, "relations[0].root.input.read.named_table"),
                (Rule.READ_NAMESPACES, "relations[1].root.input.read.named_table"),
            ],
        ),
        (
            "write_namespaces: insert, DDL and UpdateRel targets",
            {"write_namespaces": [f"{lake.name}.{staging}"]},
            plan_of(
                write([secret, "t"], rows(), NAMES, TYPES),
                ddl([secret, "new"], DdlRel.DDL_OP_CREATE, names=NAMES, types=TYPES),
                update([secret, "t"], NAMES, TYPES, None, {}),
            ),
            plan_of(write([staging, "t"], rows(), NAMES, TYPES)),
            [
                (Rule.WRITE_NAMESPACES, "relations[0].root.input.write"),
                (Rule.WRITE_NAMESPACES, "relations[1].root.input.ddl"),
                (Rule.WRITE_NAMESPACES, "relations[2].root.input.update"),
            ],
        ),
        (
            "steps: DROP and CREATE OR REPLACE off unless named",
            {},
            plan_of(
                ddl([staging, "t"], DdlRel.DDL_OP_DROP),
                ddl([staging, "u"], DdlRel.DDL_OP_CREATE_OR_REPLACE, names=NAMES, types=TYPES),
            ),
            plan_of(ddl([staging, "u"], DdlRel.DDL_OP_CREATE, names=NAMES, types=TYPES)),
            [(Rule.STEPS, "relations[0].root.input.ddl.op"), (Rule.STEPS, "relations[1].root.input.ddl.op")],
        ),
        (
            "steps: only those named",
            {"steps": ["insert"]},
            plan_of(write([staging, "c"], rows(), NAMES, TYPES, op=WriteRel.WRITE_OP_CTAS)),
            plan_of(write([staging, "t"], rows(), NAMES, TYPES)),
            [(Rule.STEPS, "relations[0].root.input.write.op")],
        ),
        (
            "extensions",
            {"extensions": [EXT_URL]},
            plan_of(extension_leaf("type.googleapis.com/other.Thing")),
            plan_of(extension_leaf(EXT_URL)),
            [(Rule.EXTENSIONS, "relations[0].root.input.extension_leaf.detail")],
        ),
        (
            "max_relations",
            {"max_relations": 2},
            plan_of(rows(), rows(), rows()),
            plan_of(rows(), rows()),
            [(Rule.MAX_RELATIONS, None)],
        ),
        (
            "sha256",
            {"sha256": ["1" * 64]},
            big,
            big,  # allowed: the allow-list below holds its digest
            [(Rule.SHA256, None)],
        ),
    ]


def runner(lake, policy, tmp_path, session=no_session) -> PlanRunner:
    settings = RunSettings(catalog_config=str(lake.write_config(tmp_path / "catalogs.yaml")), policy=policy)
    return PlanRunner(settings, session=session)


@pytest.mark.spark
@pytest.mark.iceberg
def test_each_rule_refuses_with_every_violation_and_its_path_and_allows_before_spark(lake, lake_ns, tmp_path):
    before = snapshots(lake, lake_ns)
    for name, policy, refused, allowed, expected in cases(lake, lake_ns):
        data = refused.SerializeToString()
        with pytest.raises(PolicyRefusedError) as info:
            runner(lake, policy, tmp_path).check(data)
        got = [(v.rule, v.path) for v in info.value.violations]
        assert got == expected, name
        assert info.value.exit_code == 5 and info.value.report.status == "failed", name
        assert info.value.to_dict()["violations"] == [v.to_dict() for v in info.value.violations]

        allowed_data = allowed.SerializeToString()
        if name == "sha256":
            import hashlib

            policy = {"sha256": [hashlib.sha256(allowed_data).hexdigest()]}
        try:
            runner(lake, policy, tmp_path).check(allowed_data)
        except UnsupportedFeatureError as exc:  # past the policy: what validate would refuse anyway
            assert name == "extensions", (name, exc)
    assert snapshots(lake, lake_ns) == before


@pytest.mark.spark
@pytest.mark.iceberg
def test_max_plan_bytes_and_max_depth_lower_the_engines_bounds_as_the_policys_refusal(lake, tmp_path):
    from deep_plans import deep_json

    deep = deep_json(60).encode()  # 124 levels: under the engine's bound, over the policy's
    for policy, refused, allowed in [
        ({"max_plan_bytes": 1000}, b" " * 1001 + deep, deep),
        ({"max_depth": 100}, deep, deep_json(40).encode()),
    ]:
        with pytest.raises(PolicyRefusedError) as info:
            runner(lake, policy, tmp_path).check(refused)
        [violation] = info.value.violations
        assert violation.rule == Rule(next(iter(policy))) and str(next(iter(policy.values()))) in violation.message
        if "max_plan_bytes" not in policy:
            runner(lake, policy, tmp_path).check(allowed)
    runner(lake, {"max_plan_bytes": 10 * DEFAULT_MAX_PLAN_BYTES}, tmp_path).check(deep)  # never raises the bound
    assert runner(lake, {"max_plan_bytes": 10 * DEFAULT_MAX_PLAN_BYTES}, tmp_path).limits.max_plan_bytes == (
        DEFAULT_MAX_PLAN_BYTES
    )


@pytest.mark.spark
@pytest.mark.iceberg
def test_a_view_is_checked_with_its_stored_definition(lake, lake_ns, tmp_path):
    """A view in an allowed namespace reading a table in a forbidden one is refused at the read inside the view."""
    from test_write_steps import run

    sales, secret = lake_ns["sales"], lake_ns["secret"]
    view = ddl(
        [sales, "v"], DdlRel.DDL_OP_CREATE, DdlRel.DDL_OBJECT_VIEW, NAMES, TYPES, named([secret, "t"], NAMES, TYPES)
    )
    run(lake, lake.catalogs(), plan_of(view))  # the view is in the catalog now
    reading = plan_of(named([sales, "v"], NAMES, TYPES)).SerializeToString()
    with pytest.raises(PolicyRefusedError) as info:
        runner(lake, {"read_namespaces": [f"{lake.name}.{sales}"]}, tmp_path).check(reading)
    [violation] = info.value.violations
    assert violation.rule == Rule.READ_NAMESPACES and secret in violation.message
    assert violation.path == (
        f"relations[0].root.input.read.named_table<view {sales}.v>.relations[0].root.input.read.named_table"
    )
    runner(lake, {"read_namespaces": [f"{lake.name}.p_*"]}, tmp_path).check(reading)


# --- the CLI: run refuses what validate lists, nothing committed ------------------------------------------------


@pytest.mark.spark
@pytest.mark.iceberg
def test_cli_run_refuses_with_exit_5_commits_nothing_and_validate_lists_the_same(lake, lake_ns, tmp_path, capsys):
    from substrait_spark.cli import main

    staging, secret = lake_ns["staging"], lake_ns["secret"]
    config = lake.write_config(tmp_path / "catalogs.yaml")
    policy = tmp_path / "policy.yaml"
    policy.write_text(yaml.safe_dump({"write_namespaces": [f"{lake.name}.{staging}"], "steps": ["insert"]}))
    plan = tmp_path / "plan.json"
    plan.write_text(
        json_format.MessageToJson(
            plan_of(
                write([staging, "t"], rows(), NAMES, TYPES),  # allowed on its own: not committed either
                write([secret, "t"], rows(), NAMES, TYPES),
                ddl([staging, "t"], DdlRel.DDL_OP_DROP),
            )
        )
    )
    before = snapshots(lake, lake_ns)
    out = tmp_path / "out"
    common = ["--catalog-config", str(config), "--policy", str(policy)]
    code = main(["run", str(plan), *common, "--output-dir", str(out)])
    _, err = capsys.readouterr()
    assert code == 5 and len([line for line in err.splitlines() if line.startswith("substrait-spark: ")]) == 1
    assert "refused by policy: 2 violations: write_namespaces: write to" in err
    assert "; steps: drop steps are not allowed (DdlRel DDL_OP_DROP) (at relations[2].root.input.ddl.op)" in err
    assert snapshots(lake, lake_ns) == before
    refused = json.loads((out / "summary.json").read_text())["plans"][0]["error"]["violations"]

    assert main(["validate", str(plan), *common, "--json"]) == 5
    [listed] = json.loads(capsys.readouterr().out)
    assert listed["violations"] == refused and len(refused) == 2
    assert [v["path"] for v in refused] == ["relations[1].root.input.write", "relations[2].root.input.ddl.op"]

    allowed = tmp_path / "allowed.json"
    allowed.write_text(json_format.MessageToJson(plan_of(write([staging, "t"], rows(), NAMES, TYPES))))
    assert main(["validate", str(allowed), *common]) == 0
    assert main(["run", str(allowed), *common]) == 0
    assert len(snapshots(lake, lake_ns)[f"{staging}.t"]) == len(before[f"{staging}.t"]) + 1


@pytest.mark.spark
@pytest.mark.iceberg
def test_max_result_rows_bounds_what_a_run_hands_back(lake, lake_ns, tmp_path, capsys):
    from substrait_spark.cli import main

    sales = lake_ns["sales"]
    reading = plan_of(named([sales, "t"], NAMES, TYPES))
    run = runner(lake, {"max_result_rows": 1}, tmp_path)  # no session: refused before one is asked for
    with pytest.raises(PolicyRefusedError, match="max_result_rows: the run's preview of root rows asks for 20 rows"):
        run.run(run.check(reading.SerializeToString()), sink=Sink("preview", max_rows=20))
    with pytest.raises(PolicyRefusedError, match="asks for all rows, more than 1"):
        run.run(run.check(reading.SerializeToString()), sink=Sink("preview", max_rows=None))
    allowed = runner(lake, {"max_result_rows": 1}, tmp_path, session=lake.spark)
    report = allowed.run(allowed.check(reading.SerializeToString()), sink=Sink("preview", max_rows=1))
    assert (report.outputs[0].rows, len(report.outputs[0].preview)) == (2, 1)

    # The CLI prints as many rows as the policy lets a run return, and says so.
    plan = tmp_path / "read.json"
    plan.write_text(json_format.MessageToJson(reading))
    policy = tmp_path / "policy.yaml"
    policy.write_text("max_result_rows: 1\n")
    config = lake.write_config(tmp_path / "catalogs.yaml")
    assert main(["run", str(plan), "--catalog-config", str(config), "--policy", str(policy)]) == 0
    out = capsys.readouterr().out
    assert "(root 0, 2 rows, the first 1 shown (policy))" in out and len(out.strip().splitlines()) == 5


@pytest.mark.spark
def test_read_locations_cover_the_files_table_maps_bind(spark, shop_dir, shop_plans, tmp_path, capsys):
    """Issue 28 item 12: a NamedTable `--tables-dir` or `--table` binds to files is a read of those files — refused
    outside `read_locations` (exit 5, before Spark: the failed report has no Spark application), naming the table,
    its binding and the rule; run when the files are inside."""
    from substrait_spark.cli import main

    plan = str(shop_plans["top_products"].plan)  # reads order_items and products
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    policy = tmp_path / "policy.yaml"
    policy.write_text(yaml.safe_dump({"read_locations": [str(inside)]}))

    def refused(*options: str) -> list[dict]:
        out = tmp_path / "out"
        assert main(["run", plan, "--policy", str(policy), "--output-dir", str(out), *options]) == 5
        [entry] = json.loads((out / "summary.json").read_text())["plans"]
        assert entry["status"] == "failed" and entry["spark_application_id"] is None
        errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("substrait-spark: ")]
        assert len(errors) == 1 and all(v["message"] in errors[0] for v in entry["error"]["violations"])
        return entry["error"]["violations"]

    shop = shop_dir.resolve()
    violations = refused("--tables-dir", str(shop_dir))
    assert [(v["rule"], v["message"]) for v in violations] == [
        (
            "read_locations",
            f"read of table {t!r} (bound by the tables directory {shop_dir} to '{shop / t}.parquet') "
            "is outside the allowed locations",
        )
        for t in ("order_items", "products")
    ]
    assert all(v["path"].endswith(".read.named_table") for v in violations)

    # --table: each binding on its own (order_items's file inside, never read: the plan is refused first).
    bindings = ["--table", f"products={outside}/products.parquet", "--table", f"order_items={inside}/i.parquet"]
    violations = refused(*bindings)
    assert [v["message"] for v in violations] == [
        f"read of table 'products' (bound by the table map to '{outside}/products.parquet') "
        "is outside the allowed locations"
    ]
    # A path climbing out of an allowed folder is judged where it lands (bindings are made absolute, `..` resolved).
    [climbing] = refused("--table", f"products={inside}/../outside/p.parquet", "--table", f"order_items={inside}/i")
    assert climbing["message"] == (
        f"read of table 'products' (bound by the table map to '{outside}/p.parquet') is outside the allowed locations"
    )

    # The same run with the files inside the allowed locations.
    policy.write_text(yaml.safe_dump({"read_locations": [str(shop_dir)]}))
    assert main(["run", plan, "--tables-dir", str(shop_dir), "--policy", str(policy)]) == 0
    assert "(root 0, 5 rows)" in capsys.readouterr().out


# --- run_plan, the operator, the Dagster resource ---------------------------------------------------------------


@pytest.mark.spark
@pytest.mark.iceberg
def test_run_plan_takes_a_policy(lake, lake_ns):
    from substrait_spark import run_plan
    from substrait_spark.hooks.iceberg_writes import WritableIcebergResolver

    staging, secret = lake_ns["staging"], lake_ns["secret"]
    before = snapshots(lake, lake_ns)
    resolver = WritableIcebergResolver(lake.catalogs())
    refused = plan_of(write([secret, "t"], rows(), NAMES, TYPES)).SerializeToString()
    with pytest.raises(PolicyRefusedError, match=f"write to '{secret}.t' is in namespace '{secret}'"):
        run_plan(refused, lake.spark, resolver, policy={"write_namespaces": [staging]})
    assert snapshots(lake, lake_ns) == before
    allowed = plan_of(write([staging, "t"], rows(), NAMES, TYPES)).SerializeToString()
    report = run_plan(allowed, lake.spark, resolver, policy={"write_namespaces": [staging]})
    assert report.steps[0].status == "committed"
    assert len(snapshots(lake, lake_ns)[f"{staging}.t"]) == len(before[f"{staging}.t"]) + 1


@pytest.mark.spark
@pytest.mark.iceberg
@pytest.mark.airflow
def test_the_operators_policy_and_the_connections_both_refuse_and_allow(lake, s3_endpoint, tpch_dir, tmp_path_factory):
    from local_stack import PLANS_BUCKET, AirflowStack, s3_client

    tests = Path(__file__).resolve().parent
    home = tmp_path_factory.mktemp("airflow-policy")
    stack = AirflowStack(home, s3_endpoint, tpch_dir, home / "reports", dags=tests / "airflow_dags")
    stack.migrate()
    lake.catalog.create_namespace_if_not_exists("pol_af_staging")
    lake.catalog.create_namespace_if_not_exists("pol_af_secret")
    if not lake.catalog.table_exists("pol_af_secret.t"):
        t = lake.catalog.create_table("pol_af_secret.t", schema=SCHEMA)
        t.append(pa.Table.from_pylist([{"id": i, "name": f"r{i}"} for i in range(8)], schema=SCHEMA))
    s3 = s3_client(s3_endpoint)
    if PLANS_BUCKET not in [b["Name"] for b in s3.list_buckets()["Buckets"]]:
        s3.create_bucket(Bucket=PLANS_BUCKET)
    for key, plan in {
        "policy/write.json": plan_of(write(["pol_af_secret", "t"], rows(), NAMES, TYPES)),
        "policy/read.json": plan_of(named(["pol_af_secret", "t"], NAMES, TYPES)),
    }.items():
        s3.put_object(Bucket=PLANS_BUCKET, Key=key, Body=json_format.MessageToJson(plan).encode())
    config = lake.write_config(home / "catalogs.yaml")
    policy_file = home / "policy.yaml"
    policy_file.write_text(yaml.safe_dump({"write_namespaces": [f"{lake.name}.pol_af_staging"], "max_result_rows": 5}))
    connection = json.loads(stack.env()["AIRFLOW_CONN_SUBSTRAIT_SPARK_DEFAULT"])
    connection["extra"]["policy"] = json.dumps({"steps": ["ctas"], "read_namespaces": [f"{lake.name}.pol_af_*"]})
    before = [s.snapshot_id for s in lake.catalog.load_table("pol_af_secret.t").snapshots()]

    run = stack.dags_test(
        "substrait_test_policy",
        "2024-06-01",
        AIRFLOW_VAR_CATALOG_CONFIG=str(config),
        AIRFLOW_VAR_POLICY_FILE=str(policy_file),
        AIRFLOW_CONN_SUBSTRAIT_SPARK_POLICY=json.dumps(connection),
    )
    states = {
        t: run.state_of(t) for t in ("refused_by_operator_policy", "refused_by_connection_policy", "allowed_read")
    }
    assert states == {
        "refused_by_operator_policy": "failed",
        "refused_by_connection_policy": "failed",
        "allowed_read": "success",
    }, run.log[-5000:]
    assert f"write to 'pol_af_secret.t' is in namespace '{lake.name}.pol_af_secret'" in run.log
    assert "steps: insert steps are not allowed (WriteRel WRITE_OP_INSERT)" in run.log
    report = run.value("allowed_read")
    assert report["outputs"][0]["rows"] == 8 and len(report["outputs"][0]["preview"]) == 5
    assert [s.snapshot_id for s in lake.catalog.load_table("pol_af_secret.t").snapshots()] == before


@pytest.mark.spark
@pytest.mark.iceberg
@pytest.mark.dagster
def test_the_dagster_resources_policy_refuses_before_spark_and_allows(lake, lake_ns, tmp_path):
    dagster = pytest.importorskip("dagster", reason="the dagster extra is not installed (make venv installs it)")
    from substrait_spark.dagster import IcebergCatalogsResource, SubstraitSparkResource, substrait_assets

    staging, secret = lake_ns["staging"], lake_ns["secret"]
    config = lake.write_config(tmp_path / "catalogs.yaml")
    plan = tmp_path / "write.json"
    plan.write_text(json_format.MessageToJson(plan_of(write([secret, "t"], rows(), NAMES, TYPES))))
    before = snapshots(lake, lake_ns)
    for policy, ok in [({"write_namespaces": [f"{lake.name}.{staging}"]}, False), ({"write_namespaces": ["*"]}, True)]:
        resource = SubstraitSparkResource(catalogs=IcebergCatalogsResource(config_path=str(config)), policy=policy)
        assets = substrait_assets(str(plan), resource=resource)
        result = dagster.materialize([assets], resources={"substrait": resource}, raise_on_error=False)
        [check] = result.get_asset_check_evaluations()
        assert result.success is ok and check.passed is ok
        if not ok:
            assert check.metadata["exit_code"].value == 5 and "write_namespaces" in check.metadata["error"].value
            assert snapshots(lake, lake_ns) == before
    assert len(snapshots(lake, lake_ns)[f"{secret}.t"]) == len(before[f"{secret}.t"]) + 1
