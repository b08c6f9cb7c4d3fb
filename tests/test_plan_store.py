"""The plan store against a real S3-compatible HTTP server (moto's server mode) and local files.

What a user relies on: plan bytes come back exactly (binary plans are not text), the object's version and ETag
are recorded, a pinned sha256 refuses changed plans, missing plans are exit 2 naming what is missing, transient
failures are retried and permanent ones are not, and the Airflow hook reads through a connection given only as
an environment variable.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import logging
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from s3_server import free_port, new_bucket, s3_client, s3_endpoint  # noqa: F401
from substrait_spark.consumer.errors import PlanInvalidError, PolicyError
from substrait_spark.consumer.loading.loader import parse_plan_bytes
from substrait_spark.hooks.plan_store import (
    PlanChangedError,
    PlanNotFoundError,
    PlanObject,
    PlanStore,
    PlanStoreError,
)

pytestmark = [pytest.mark.unit]

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "ibm-substrait-compliance-tpch"
BIN_PLAN = CORPUS / "q06.bin"
JSON_PLAN = CORPUS / "q06.json"
AWS_ENVIRONMENT = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_PROFILE",
)
NOT_UTF8 = b"\n\x00\xff\xfe\x80binary\r\n\x1a"  # would not survive a decode/encode round trip


def store_for(endpoint: str, retries: int = 3, **config: Any) -> PlanStore:
    """A store whose client makes one HTTP attempt per call, so attempts counted are the store's own."""
    return PlanStore(
        s3_client=lambda: s3_client(endpoint, retries={"total_max_attempts": 1}, **config),
        retries=retries,
        backoff_s=0,
    )


@pytest.fixture
def s3(s3_endpoint: str) -> Any:  # noqa: F811
    return s3_client(s3_endpoint)


@pytest.fixture
def bucket(s3: Any) -> str:
    return new_bucket(s3)


# --- bytes round trip ---------------------------------------------------------------------------------


@pytest.mark.parametrize("plan", [BIN_PLAN, JSON_PLAN], ids=["binary", "json"])
def test_s3_plan_bytes_round_trip_and_load(s3_endpoint: str, s3: Any, bucket: str, plan: Path):  # noqa: F811
    data = plan.read_bytes()
    s3.put_object(Bucket=bucket, Key=f"tpch/{plan.name}", Body=data)
    uri = f"s3://{bucket}/tpch/{plan.name}"

    obj = store_for(s3_endpoint).read(uri)

    assert obj.data == data
    assert obj.size == len(data)
    assert obj.sha256 == hashlib.sha256(data).hexdigest()
    assert obj.uri == uri
    assert obj.etag == hashlib.md5(data).hexdigest()  # single-part upload: the MD5, without S3's quotes
    assert obj.last_modified and obj.last_modified[:4].isdigit()
    loaded = parse_plan_bytes(obj.data, uri=obj.uri)
    assert loaded.sha256 == obj.sha256
    assert loaded.format == {".bin": "binary", ".json": "json"}[plan.suffix]
    assert loaded.plan.relations


def test_s3_non_utf8_bytes_are_returned_untouched(s3_endpoint: str, s3: Any, bucket: str):  # noqa: F811
    s3.put_object(Bucket=bucket, Key="raw.bin", Body=NOT_UTF8)
    assert store_for(s3_endpoint).read(f"s3://{bucket}/raw.bin").data == NOT_UTF8


def test_default_client_uses_standard_aws_environment(s3_endpoint: str, s3: Any, bucket: str, monkeypatch):  # noqa: F811
    """The CLI path: no client given, boto3 reads AWS_* and AWS_ENDPOINT_URL_S3 itself."""
    s3.put_object(Bucket=bucket, Key="q.bin", Body=NOT_UTF8)
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL_S3": s3_endpoint,
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    assert PlanStore().read(f"s3://{bucket}/q.bin").data == NOT_UTF8


# --- versions -----------------------------------------------------------------------------------------


def test_versioned_bucket_records_version_and_reads_an_older_one(s3_endpoint: str, s3: Any):  # noqa: F811
    bucket = new_bucket(s3, versioned=True)
    old, new = BIN_PLAN.read_bytes(), JSON_PLAN.read_bytes()
    v1 = s3.put_object(Bucket=bucket, Key="q06", Body=old)["VersionId"]
    v2 = s3.put_object(Bucket=bucket, Key="q06", Body=new)["VersionId"]
    assert v1 != v2
    store = store_for(s3_endpoint)

    latest = store.read(f"s3://{bucket}/q06")
    pinned = store.read(f"s3://{bucket}/q06?versionId={v1}")

    assert (latest.data, latest.version_id) == (new, v2)
    assert (pinned.data, pinned.version_id) == (old, v1)
    assert pinned.sha256 == hashlib.sha256(old).hexdigest()
    assert pinned.etag == hashlib.md5(old).hexdigest()


def test_unknown_version_is_not_found(s3_endpoint: str, s3: Any):  # noqa: F811
    bucket = new_bucket(s3, versioned=True)
    s3.put_object(Bucket=bucket, Key="q06", Body=b"x")
    uri = f"s3://{bucket}/q06?versionId=nosuchversion"
    with pytest.raises(PlanNotFoundError) as err:
        store_for(s3_endpoint).read(uri)
    assert err.value.exit_code == 2
    assert uri in str(err.value) and "no version 'nosuchversion'" in str(err.value)


# --- sha256 pinning -----------------------------------------------------------------------------------


def test_expected_sha256_match_and_mismatch(s3_endpoint: str, s3: Any, bucket: str):  # noqa: F811
    data = BIN_PLAN.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    other = hashlib.sha256(b"the plan we reviewed").hexdigest()
    s3.put_object(Bucket=bucket, Key="q06.bin", Body=data)
    uri = f"s3://{bucket}/q06.bin"
    store = store_for(s3_endpoint)

    assert store.read(uri, expected_sha256=digest).data == data
    assert store.read(uri, expected_sha256=f"sha256:{digest.upper()}").sha256 == digest
    with pytest.raises(PlanChangedError) as err:
        store.read(uri, expected_sha256=other)
    assert err.value.exit_code == 5
    assert uri in str(err.value) and other[:12] in str(err.value) and digest[:12] in str(err.value)


def test_expected_sha256_applies_to_local_plans(tmp_path: Path):
    path = tmp_path / "q.bin"
    path.write_bytes(NOT_UTF8)
    with pytest.raises(PlanChangedError):
        PlanStore().read(path, expected_sha256="0" * 64)
    with pytest.raises(PolicyError, match="64 hex digits"):  # a truncated pin is refused, never prefix-matched
        PlanStore().read(path, expected_sha256=hashlib.sha256(NOT_UTF8).hexdigest()[:12])


# --- not found ----------------------------------------------------------------------------------------


def test_missing_key_names_uri_bucket_and_key(s3_endpoint: str, bucket: str):  # noqa: F811
    uri = f"s3://{bucket}/plans/missing.bin"
    with pytest.raises(PlanNotFoundError) as err:
        store_for(s3_endpoint).read(uri)
    assert isinstance(err.value, PlanInvalidError) and err.value.exit_code == 2
    message = str(err.value)
    assert uri in message and f"no key 'plans/missing.bin' in bucket '{bucket}'" in message
    # What every front end shows (CLI, Airflow task, Dagster check): the kind once (issue 28 item 12).
    assert err.value.describe() == f"plan not found: {uri}: no key 'plans/missing.bin' in bucket '{bucket}'"


def test_missing_bucket_names_uri_and_bucket(s3_endpoint: str):  # noqa: F811
    uri = "s3://no-such-bucket-for-plans/q.bin"
    with pytest.raises(PlanNotFoundError) as err:
        store_for(s3_endpoint).read(uri)
    assert err.value.exit_code == 2
    assert uri in str(err.value) and "bucket 'no-such-bucket-for-plans' does not exist" in str(err.value)


# --- retries ------------------------------------------------------------------------------------------


S3_ERRORS = {
    503: b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>",
    500: b"<Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>",
    403: b"<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>",
}


class FlakyProxy:
    """An HTTP server on 127.0.0.1 that answers its first requests with canned S3 errors, then forwards to
    upstream: what a store under load or behind a failing load balancer looks like to a client."""

    def __init__(self, upstream: str, failures: list[int], port: int = 0):
        self.upstream = urlsplit(upstream).netloc
        self.failures = list(failures)
        self.requests: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                proxy.requests.append(self.path)
                if proxy.failures:
                    status = proxy.failures.pop(0)
                    self._reply(status, {"Content-Type": "application/xml"}, S3_ERRORS[status])
                else:
                    self._forward()

            def _forward(self) -> None:
                conn = http.client.HTTPConnection(proxy.upstream, timeout=10)
                try:
                    conn.request("GET", self.path, headers=dict(self.headers))
                    response = conn.getresponse()
                    body = response.read()
                    skip = {"transfer-encoding", "connection", "content-length"}
                    headers = {k: v for k, v in response.getheaders() if k.lower() not in skip}
                    self._reply(response.status, headers, body)
                finally:
                    conn.close()

            def _reply(self, status: int, headers: dict[str, str], body: bytes) -> None:
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"

    @contextmanager
    def running(self) -> Iterator[FlakyProxy]:
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()
            thread.join()


def test_transient_errors_are_retried_with_backoff(s3_endpoint: str, s3: Any, bucket: str):  # noqa: F811
    data = BIN_PLAN.read_bytes()
    s3.put_object(Bucket=bucket, Key="q06.bin", Body=data)
    with FlakyProxy(s3_endpoint, failures=[503, 500]).running() as proxy:
        store = store_for(proxy.endpoint, retries=3)
        store.backoff_s = 0.2
        delays: list[float] = []
        store._sleep = delays.append
        obj = store.read(f"s3://{bucket}/q06.bin")
    assert obj.data == data
    assert len(proxy.requests) == 3
    assert len(delays) == 2 and 0.1 <= delays[0] <= 0.2 and 0.2 <= delays[1] <= 0.4  # doubling, jittered


def test_transient_errors_exhausted_is_a_store_error(s3_endpoint: str, bucket: str):  # noqa: F811
    with FlakyProxy(s3_endpoint, failures=[503] * 3).running() as proxy, pytest.raises(PlanStoreError) as err:
        store_for(proxy.endpoint, retries=2).read(f"s3://{bucket}/q06.bin")
    assert len(proxy.requests) == 3
    assert err.value.exit_code == 1
    assert "SlowDown" in str(err.value) and "3 attempts" in str(err.value) and "retries exhausted" in str(err.value)


def test_connection_refused_is_retried_until_the_server_is_up(s3_endpoint: str, s3: Any, bucket: str):  # noqa: F811
    """Nothing listens on the port at first; the server starts during the store's backoff."""
    s3.put_object(Bucket=bucket, Key="q.bin", Body=NOT_UTF8)
    port = free_port()
    proxies: list[FlakyProxy] = []
    with ExitStack() as stack:

        def start_proxy(_delay: float) -> None:
            proxies.append(stack.enter_context(FlakyProxy(s3_endpoint, failures=[], port=port).running()))

        store = store_for(f"http://127.0.0.1:{port}", retries=2)
        store._sleep = start_proxy
        obj = store.read(f"s3://{bucket}/q.bin")
    assert obj.data == NOT_UTF8
    assert len(proxies) == 1 and len(proxies[0].requests) == 1  # one refused attempt, one served


def test_nothing_listening_gives_up_with_a_store_error():
    store = store_for(f"http://127.0.0.1:{free_port()}", retries=1)
    attempts: list[float] = []
    store._sleep = attempts.append
    with pytest.raises(PlanStoreError) as err:
        store.read("s3://b/q.bin")
    assert len(attempts) == 1
    assert "EndpointConnectionError" in str(err.value) and "2 attempts" in str(err.value)


@pytest.mark.parametrize("failure", ["missing", "denied"])
def test_permanent_errors_are_not_retried(s3_endpoint: str, bucket: str, failure: str, caplog):  # noqa: F811
    secret = "s3cr3t-never-shown"
    failures, expected = {"missing": ([], PlanNotFoundError), "denied": ([403], PlanStoreError)}[failure]
    caplog.set_level(logging.DEBUG)
    with FlakyProxy(s3_endpoint, failures=failures).running() as proxy:
        store = PlanStore(s3_client=lambda: _client_with_secret(proxy.endpoint, secret), retries=3, backoff_s=0)
        with pytest.raises(expected) as err:
            store.read(f"s3://{bucket}/nothing-here.bin")
    assert len(proxy.requests) == 1
    assert secret not in str(err.value) and secret not in caplog.text
    if failure == "denied":
        assert err.value.exit_code == 1 and "access denied" in str(err.value)


def _client_with_secret(endpoint: str, secret: str) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="AKIDPLANSTORETEST",
        aws_secret_access_key=secret,
        config=Config(retries={"total_max_attempts": 1}),
    )


# --- local plans and URIs -----------------------------------------------------------------------------


def test_local_path_and_file_uri(tmp_path: Path):
    path = tmp_path / "plan dir" / "q06.bin"
    path.parent.mkdir()
    path.write_bytes(BIN_PLAN.read_bytes())
    store = PlanStore(s3_client=_no_s3)

    by_path, by_pathlike, by_uri = store.read(str(path)), store.read(path), store.read(path.as_uri())

    assert by_path.data == by_pathlike.data == by_uri.data == BIN_PLAN.read_bytes()
    assert by_uri.uri == path.as_uri() and by_path.uri == str(path)
    assert by_path.sha256 == hashlib.sha256(BIN_PLAN.read_bytes()).hexdigest()
    assert (by_path.version_id, by_path.etag) == (None, None)
    assert parse_plan_bytes(by_uri.data).sha256 == by_uri.sha256


def test_bad_uris_are_invalid_input(tmp_path: Path):
    store = PlanStore(s3_client=_no_s3)
    cases = {
        str(tmp_path / "missing.bin"): "missing.bin",
        "ftp://host/q.bin": "'ftp'",  # gs:// and az:// are read through fsspec (test_plan_store_gcs_azure.py)
        "s3://bucket-only": "s3://bucket/key",
        "s3:///key-without-bucket": "s3://bucket/key",
    }
    for uri, named in cases.items():
        with pytest.raises(PlanInvalidError) as err:
            store.read(uri)
        assert err.value.exit_code == 2 and named in str(err.value), uri


def _no_s3() -> Any:
    raise AssertionError("an S3 client must not be created for a local read")


def test_plan_object_is_frozen():
    obj = PlanObject.of("x", b"abc")
    with pytest.raises(AttributeError):
        obj.data = b"other"  # type: ignore[misc]


# --- Airflow hook -------------------------------------------------------------------------------------


def test_airflow_hook_reads_through_env_connection(s3_endpoint: str, s3: Any, tmp_path: Path, monkeypatch):  # noqa: F811
    pytest.importorskip("airflow.providers.amazon")
    bucket = new_bucket(s3, versioned=True)
    data = BIN_PLAN.read_bytes()
    version = s3.put_object(Bucket=bucket, Key="q06.bin", Body=data)["VersionId"]
    connection = {
        "conn_type": "aws",
        "login": "testing",
        "password": "testing",
        "extra": {"endpoint_url": s3_endpoint, "region_name": "us-east-1"},
    }
    for name in AWS_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AIRFLOW_CONN_PLANS_S3", json.dumps(connection))
    from substrait_spark.hooks.plan_store_hook import PlanStoreHook

    hook = PlanStoreHook(aws_conn_id="plans_s3", retries=1)
    assert hook.store._s3 is None  # no client until an s3:// plan is read

    obj = hook.read(f"s3://{bucket}/q06.bin", expected_sha256=hashlib.sha256(data).hexdigest())

    assert obj.data == data and obj.version_id == version and obj.etag == hashlib.md5(data).hexdigest()
    assert parse_plan_bytes(obj.data, uri=obj.uri).format == "binary"
    with pytest.raises(PlanNotFoundError):
        hook.read(f"s3://{bucket}/missing.bin")


def _only_environment_credentials(monkeypatch, endpoint: str | None) -> None:
    """The environment's AWS credentials (moto's), or none at all when `endpoint` is None; no profile files,
    no instance metadata."""
    for name in AWS_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    if endpoint is not None:
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)


def test_a_named_aws_connection_that_does_not_exist_is_an_error_naming_it(
    s3_endpoint: str,  # noqa: F811
    s3: Any,
    monkeypatch,
):
    """Issue 28 item 8: the provider's S3Hook quietly falls back to the environment's credentials; the plan was
    read with credentials nobody named. Now the connection is looked up first, as `spark_conn_id` is."""
    pytest.importorskip("airflow.providers.amazon")
    from substrait_spark.consumer.errors import ConfigurationError
    from substrait_spark.hooks.plan_store_hook import PlanStoreHook

    bucket = new_bucket(s3)
    s3.put_object(Bucket=bucket, Key="q06.bin", Body=BIN_PLAN.read_bytes())
    _only_environment_credentials(monkeypatch, s3_endpoint)  # they could read it
    monkeypatch.delenv("AIRFLOW_CONN_PLANS_TYPO", raising=False)
    with pytest.raises(ConfigurationError) as err:
        PlanStoreHook(aws_conn_id="plans_typo", retries=0).read(f"s3://{bucket}/q06.bin")
    assert err.value.exit_code == 2
    assert "aws_conn_id 'plans_typo': no such Airflow connection" in str(err.value)
    assert "AIRFLOW_CONN_PLANS_TYPO" in str(err.value)


def test_the_default_aws_connection_may_be_missing_and_an_error_without_credentials_names_it(monkeypatch):
    """`aws_default` missing means the environment's credentials (Airflow's convention); with none there, the error
    says which connection was not there."""
    pytest.importorskip("airflow.providers.amazon")
    from substrait_spark.hooks.plan_store_hook import PlanStoreHook

    _only_environment_credentials(monkeypatch, None)
    monkeypatch.delenv("AIRFLOW_CONN_AWS_DEFAULT", raising=False)
    with pytest.raises(PlanStoreError) as err:
        PlanStoreHook(retries=0).read("s3://any-bucket/q06.bin")
    assert "no AWS credentials found" in str(err.value) and "aws_conn_id 'aws_default' is not defined" in str(err.value)


# --- bounds -----------------------------------------------------------------------------------------------


def test_an_s3_plan_over_the_size_bound_is_refused_by_its_content_length_unread(s3_endpoint, s3, bucket):  # noqa: F811
    """The real server's Content-Length decides: the body is never read (a client wrapper counts reads)."""
    from substrait_spark.consumer.loading.limits import Limit, Limits, PlanTooLargeError

    s3.put_object(Bucket=bucket, Key="big.json", Body=b" " * 5000 + b"{}")
    reads: list[int] = []

    class Counting:
        def __init__(self, client: Any):
            self.client = client

        def get_object(self, **args: Any) -> Any:
            response = self.client.get_object(**args)
            body = response["Body"]
            read = body.read
            body.read = lambda *a: reads.append(1) or read(*a)
            return response

    store = PlanStore(s3_client=lambda: Counting(s3_client(s3_endpoint)), retries=0)
    with pytest.raises(PlanTooLargeError) as info:
        store.read(f"s3://{bucket}/big.json", limits=Limits(max_plan_bytes=1000))
    assert info.value.limit is Limit.MAX_PLAN_BYTES and "5002 bytes, more than max_plan_bytes 1000" in str(info.value)
    assert reads == []
    assert store.read(f"s3://{bucket}/big.json", limits=Limits(max_plan_bytes=5002)).size == 5002 and reads == [1]


def test_the_default_s3_client_reads_the_credentials_of_now(monkeypatch):
    """A long-lived process (a scheduler, a test run) whose environment's AWS credentials change signs with the new
    ones: boto3's default session would keep the first it resolved."""
    import boto3
    from substrait_spark.hooks.plan_store import _default_s3_client

    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "first-key")
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)
    boto3.client("s3")  # an earlier user of boto3's default session
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "rotated-key")
    assert _default_s3_client()._request_signer._credentials.access_key == "rotated-key"
