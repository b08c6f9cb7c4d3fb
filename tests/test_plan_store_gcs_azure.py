"""Plans in GCS and Azure Blob Storage, read by the plan store through fsspec against real emulators on 127.0.0.1
(fake-gcs-server, Azurite), one per session, reached the way the stores' own clients are: `STORAGE_EMULATOR_HOST`,
`AZURE_STORAGE_CONNECTION_STRING`.

What a user relies on, per store: the bytes come back exactly, the generation or version and the ETag are in the
report's identity, a pinned generation reads that generation, the sha256 pin refuses other bytes, a plan over the
size bound is refused before its bytes are read, and a missing object, bucket or credentials are typed errors
naming what is missing (never a credential).
"""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path
from typing import Any

import pytest
from substrait_spark.consumer.loading.limits import Limits, PlanTooLargeError
from substrait_spark.hooks.plan_store import PlanChangedError, PlanNotFoundError, PlanStore, PlanStoreError

pytestmark = [pytest.mark.unit]

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "ibm-substrait-compliance-tpch"
PLAN = (CORPUS / "q06.bin").read_bytes()
OTHER = (CORPUS / "q06.json").read_bytes()
NOT_UTF8 = b"\n\x00\xff\xfe\x80binary\r\n\x1a"


@pytest.fixture
def gcs(gcs_endpoint: str, monkeypatch) -> Any:
    """The emulator as the environment names it, and a filesystem to seed it."""
    from gcsfs.core import GCSFileSystem

    monkeypatch.setenv("STORAGE_EMULATOR_HOST", gcs_endpoint)
    return GCSFileSystem(token="anon", project="test", version_aware=True, skip_instance_cache=True)


@pytest.fixture
def az(azurite: str, monkeypatch) -> Any:
    from adlfs import AzureBlobFileSystem

    for name in ("AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_SAS_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", azurite)
    return AzureBlobFileSystem(connection_string=azurite, skip_instance_cache=True)


def _new_container(fs: Any) -> str:
    name = f"plans-{uuid.uuid4().hex[:12]}"
    fs.mkdir(name)
    return name


def _put(fs: Any, path: str, data: bytes) -> dict[str, Any]:
    fs.pipe_file(path, data)
    fs.invalidate_cache()
    return fs.info(path)


STORES = ["gs", "az"]


@pytest.fixture(params=STORES)
def store_fs(request) -> tuple[str, Any]:
    """(scheme, a filesystem seeding that store)."""
    return request.param, request.getfixturevalue({"gs": "gcs", "az": "az"}[request.param])


@pytest.mark.parametrize("data", [PLAN, NOT_UTF8], ids=["plan", "not-utf8"])
def test_bytes_identity_and_sha256_pin(store_fs: tuple[str, Any], data: bytes):
    scheme, fs = store_fs
    bucket = _new_container(fs)
    info = _put(fs, f"{bucket}/tpch/q06.bin", data)
    uri = f"{scheme}://{bucket}/tpch/q06.bin"
    digest = hashlib.sha256(data).hexdigest()

    obj = PlanStore().read(uri, expected_sha256=digest)

    assert (obj.data, obj.size, obj.sha256, obj.uri) == (data, len(data), digest, uri)
    assert obj.etag and obj.etag == str(info["etag"]).strip('"')
    assert obj.last_modified and obj.last_modified[:4].isdigit()
    if scheme == "gs":  # GCS gives every object a generation; Azurite keeps no blob versions
        assert obj.version_id == str(info["generation"])
    with pytest.raises(PlanChangedError) as err:
        PlanStore().read(uri, expected_sha256=hashlib.sha256(b"reviewed").hexdigest())
    assert err.value.exit_code == 5 and uri in str(err.value)


def test_gcs_generation_pin_reads_that_generation(gcs: Any):
    bucket = _new_container(gcs)
    first = _put(gcs, f"{bucket}/q06", PLAN)["generation"]
    second = _put(gcs, f"{bucket}/q06", OTHER)["generation"]
    assert first != second
    store = PlanStore()

    latest = store.read(f"gs://{bucket}/q06")
    pinned = store.read(f"gs://{bucket}/q06#{second}")

    assert (latest.data, latest.version_id) == (OTHER, str(second))
    assert (pinned.data, pinned.version_id) == (OTHER, str(second))
    with pytest.raises(PlanNotFoundError) as err:
        store.read(f"gs://{bucket}/q06#1")
    assert f"no version '1' of 'q06' in bucket '{bucket}'" in str(err.value)


def test_missing_object_and_bucket_are_not_found(store_fs: tuple[str, Any]):
    scheme, fs = store_fs
    bucket = _new_container(fs)
    word = {"gs": "bucket", "az": "container"}[scheme]
    with pytest.raises(PlanNotFoundError) as err:
        PlanStore().read(f"{scheme}://{bucket}/plans/missing.bin")
    assert err.value.exit_code == 2
    assert (
        str(err.value) == f"{scheme}://{bucket}/plans/missing.bin: no object 'plans/missing.bin' in {word} '{bucket}'"
    )
    with pytest.raises(PlanNotFoundError) as err:
        PlanStore().read(f"{scheme}://no-such-{bucket}/q.bin")
    assert f"{word} 'no-such-{bucket}' does not exist" in str(err.value)


def test_over_the_size_bound_is_refused_before_the_bytes(store_fs: tuple[str, Any], monkeypatch):
    scheme, fs = store_fs
    bucket = _new_container(fs)
    _put(fs, f"{bucket}/big.json", b" " * 5000 + b"{}")
    reads: list[str] = []
    cls = type(fs)
    original = cls.cat_file
    monkeypatch.setattr(
        cls, "cat_file", lambda self, path, *a, **k: reads.append(path) or original(self, path, *a, **k)
    )
    with pytest.raises(PlanTooLargeError, match="5002 bytes, more than max_plan_bytes 1000"):
        PlanStore().read(f"{scheme}://{bucket}/big.json", limits=Limits(max_plan_bytes=1000))
    assert reads == []


def test_storage_options_reach_the_client(az: Any, azurite: str, monkeypatch):
    """A front end's connection (Airflow, a Dagster resource) gives options; the environment then needs nothing."""
    bucket = _new_container(az)
    _put(az, f"{bucket}/q.bin", PLAN)
    monkeypatch.delenv("AZURE_STORAGE_CONNECTION_STRING")
    options = {"az": {"connection_string": azurite}}
    assert PlanStore(storage_options=options).read(f"az://{bucket}/q.bin").data == PLAN


def test_azure_without_credentials_is_a_store_error_naming_where_they_were_looked_for(monkeypatch):
    pytest.importorskip("adlfs")
    for name in ("AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ACCOUNT_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(PlanStoreError) as err:
        PlanStore().read("az://plans/q.bin")
    assert err.value.exit_code == 1
    assert "no Azure Blob Storage credentials found (AZURE_STORAGE_CONNECTION_STRING" in str(err.value)


def test_azure_wrong_key_is_access_denied_without_the_key(az: Any, azurite: str, monkeypatch):
    bucket = _new_container(az)
    _put(az, f"{bucket}/q.bin", PLAN)
    wrong = "d3Jvbmcta2V5LW5ldmVyLXNob3du"  # base64 of a key that is not the account's
    monkeypatch.setenv(
        "AZURE_STORAGE_CONNECTION_STRING", azurite.replace(azurite.split("AccountKey=")[1].split(";")[0], wrong)
    )
    with pytest.raises(PlanStoreError) as err:
        PlanStore().read(f"az://{bucket}/q.bin")
    assert "access denied by Azure Blob Storage" in str(err.value) and wrong not in str(err.value)


@pytest.mark.parametrize(
    "uri", ["gs://bucket-only", "gs://b/k?generation=1", "az://container-only", "az://c/b?snapshot=1"]
)
def test_malformed_uris_are_invalid_input(uri: str):
    from substrait_spark.consumer.errors import PlanInvalidError

    with pytest.raises(PlanInvalidError) as err:
        PlanStore().read(uri)
    assert err.value.exit_code == 2 and uri in str(err.value)


def test_pinned_uri_spells_each_stores_version():
    from substrait_spark.hooks.plan_store import pinned_uri

    assert pinned_uri("s3://b/k.json", "v1") == "s3://b/k.json?versionId=v1"
    assert pinned_uri("gs://b/k.json", "17") == "gs://b/k.json#17"
    assert pinned_uri("az://c/k.json", "2026-01-01T00:00:00Z") == "az://c/k.json?versionid=2026-01-01T00:00:00Z"
    assert pinned_uri("gs://b/k.json#16", "17") == "gs://b/k.json#16"  # already pinned: as the user wrote it
    assert pinned_uri("/plans/k.json", "17") == "/plans/k.json" and pinned_uri("gs://b/k", None) == "gs://b/k"


# --- Airflow: plan_conn_id ------------------------------------------------------------------------------


def test_airflow_plan_conn_id_that_does_not_exist_is_an_error_naming_it(gcs: Any, monkeypatch):
    """Reachable through the environment, but the connection named is not there: refused, not read quietly."""
    pytest.importorskip("airflow")
    from substrait_spark.consumer.errors import ConfigurationError
    from substrait_spark.hooks.plan_store_hook import PlanStoreHook

    bucket = _new_container(gcs)
    _put(gcs, f"{bucket}/q.bin", PLAN)
    monkeypatch.delenv("AIRFLOW_CONN_PLANS_GCS", raising=False)
    with pytest.raises(ConfigurationError) as err:
        PlanStoreHook(plan_conn_id="plans_gcs").read(f"gs://{bucket}/q.bin")
    assert err.value.exit_code == 2
    assert "plan_conn_id 'plans_gcs': no such Airflow connection" in str(err.value)
    assert "AIRFLOW_CONN_PLANS_GCS" in str(err.value)
    assert PlanStoreHook().read(f"gs://{bucket}/q.bin").data == PLAN  # no plan_conn_id: the environment's


@pytest.mark.parametrize("scheme", ["gs", "az"])
def test_airflow_plan_conn_id_without_the_stores_provider_names_the_provider(scheme: str, monkeypatch):
    pytest.importorskip("airflow")
    from airflow.sdk.io.fs import has_fs
    from substrait_spark.consumer.errors import ConfigurationError
    from substrait_spark.hooks.plan_store_hook import PlanStoreHook

    if has_fs("abfs" if scheme == "az" else scheme):  # az:// is read as the provider's abfs://
        pytest.skip(f"a provider registers {scheme}:// here")
    monkeypatch.setenv("AIRFLOW_CONN_PLANS_STORE", '{"conn_type": "generic", "password": "s3cr3t-never-shown"}')
    with pytest.raises(ConfigurationError) as err:
        PlanStoreHook(plan_conn_id="plans_store").read(f"{scheme}://plans/q.bin")
    provider = {"gs": "apache-airflow-providers-google", "az": "apache-airflow-providers-microsoft-azure"}[scheme]
    assert f"Airflow has no filesystem for {scheme}:// plans; install {provider}" in str(err.value)
    assert "s3cr3t" not in str(err.value)


# --- Dagster: the plan store resource's storage options --------------------------------------------------


def test_dagster_resource_reads_through_its_storage_options(az: Any, azurite: str, monkeypatch):
    pytest.importorskip("dagster")
    from substrait_spark.dagster import PlanStoreResource

    bucket = _new_container(az)
    version = _put(az, f"{bucket}/q.bin", PLAN)
    monkeypatch.delenv("AZURE_STORAGE_CONNECTION_STRING")
    resource = PlanStoreResource(storage_options={"az": {"connection_string": azurite}})
    obj = resource.read(f"az://{bucket}/q.bin", hashlib.sha256(PLAN).hexdigest())
    assert obj.data == PLAN and obj.etag == str(version["etag"]).strip('"')


def test_uris_name_container_key_version_and_account():
    from substrait_spark.hooks.plan_store_fsspec import AZURE, GCS, ObjectLocation

    assert ObjectLocation.parse("gs://b/dir/q.bin#17", GCS) == ObjectLocation("b", "dir/q.bin", "17")
    assert ObjectLocation.parse("az://c/dir/q.bin?versionid=V", AZURE) == ObjectLocation("c", "dir/q.bin", "V")
    abfs = ObjectLocation.parse("abfs://c@acct.dfs.core.windows.net/q.bin", AZURE)
    assert abfs == ObjectLocation("c", "q.bin", None, account="acct")


def test_a_filesystem_given_that_is_not_version_aware_reads_pins_through_a_version_aware_copy(
    gcs: Any, gcs_endpoint: str, monkeypatch
):
    """What Airflow's storage layer hands over (a provider's filesystem from a connection, built without
    version_aware, which would read 'q.bin#GENERATION' as a key): a pinned URI reads that generation, through a
    copy with the filesystem's own options (its endpoint: the environment no longer names the emulator)."""
    from gcsfs.core import GCSFileSystem

    bucket = _new_container(gcs)
    generation = _put(gcs, f"{bucket}/q.bin", PLAN)["generation"]
    monkeypatch.delenv("STORAGE_EMULATOR_HOST")
    plain = GCSFileSystem(token="anon", endpoint_url=gcs_endpoint, skip_instance_cache=True)
    assert not plain.exists(f"{bucket}/q.bin#{generation}")  # what the provider's filesystem itself would do
    store = PlanStore(filesystem=lambda uri: plain)
    pinned = store.read(f"gs://{bucket}/q.bin#{generation}")
    assert (pinned.data, pinned.version_id) == (PLAN, str(generation))
    with pytest.raises(PlanNotFoundError, match=f"no version '1' of 'q.bin' in bucket '{bucket}'"):
        store.read(f"gs://{bucket}/q.bin#1")


def test_a_store_whose_client_is_not_installed_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "adlfs", None)  # what `import adlfs` meets where it is not installed
    from substrait_spark.consumer.errors import ConfigurationError

    with pytest.raises(ConfigurationError) as err:
        PlanStore().read("az://plans/q.bin")
    assert err.value.exit_code == 2
    assert "reading Azure Blob Storage plans needs adlfs: pip install 'substrait-spark[azure]'" in str(err.value)


# --- Airflow: Azure through a connection (the microsoft.azure provider's filesystem) ---------------------------


def _azure_connection(monkeypatch, conn_id: str, connection: dict[str, Any]) -> None:
    """`conn_id` as an `AIRFLOW_CONN_...` variable, and no Azure credentials left in the environment: a read
    that succeeds went through the connection."""
    import json

    pytest.importorskip("airflow.providers.microsoft.azure")
    for name in ("AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ACCOUNT_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}", json.dumps(connection))


def _account_key(connection_string: str) -> str:
    return connection_string.split("AccountKey=")[1].split(";")[0]


def _account_form(connection_string: str) -> dict[str, Any]:
    """The Azurite account as a wasb connection's fields: login (account), password (key), host (blob endpoint)."""
    fields = dict(part.split("=", 1) for part in connection_string.split(";") if part)
    return {
        "conn_type": "wasb",
        "login": fields["AccountName"],
        "password": fields["AccountKey"],
        "host": fields["BlobEndpoint"],
        "extra": {"account_name": fields["AccountName"]},
    }


@pytest.mark.parametrize("scheme", ["az", "abfs"])
def test_airflow_azure_connection_reads_the_plan(az: Any, azurite: str, monkeypatch, scheme: str):
    """The form docs/guides/plan-stores.md shows: a wasb connection whose connection_string extra names the
    endpoint. An id per case: Airflow keeps one filesystem per scheme and connection id for the life of the process,
    so a second connection under the same id would be read through the first one's filesystem."""
    from substrait_spark.hooks.plan_store_hook import PlanStoreHook

    container = _new_container(az)
    info = _put(az, f"{container}/dir/q.bin", PLAN)
    conn_id = f"plans_azure_{scheme}"
    _azure_connection(monkeypatch, conn_id, {"conn_type": "wasb", "extra": {"connection_string": azurite}})
    obj = PlanStoreHook(plan_conn_id=conn_id).read(
        f"{scheme}://{container}/dir/q.bin", hashlib.sha256(PLAN).hexdigest()
    )
    assert obj.data == PLAN and obj.etag == str(info["etag"]).strip('"')


def test_airflow_azure_connection_whose_host_the_filesystem_ignores_is_a_configuration_error(azurite: str, monkeypatch):
    """Account, key and Azurite's endpoint as the host (what the provider's WasbHook reads): the provider's filesystem
    would read https://ACCOUNT.blob.core.windows.net instead and fail minutes later with a bare ServiceRequestError.
    Refused before any request, naming the connection, the host and the form that works."""
    from substrait_spark.consumer.errors import ConfigurationError
    from substrait_spark.hooks.plan_store_hook import PlanStoreHook

    connection = _account_form(azurite)
    _azure_connection(monkeypatch, "plans_azure_host", connection)
    with pytest.raises(ConfigurationError) as err:
        PlanStoreHook(plan_conn_id="plans_azure_host").read("az://plans/q.bin")
    message = str(err.value)
    assert err.value.exit_code == 2
    assert f"plan_conn_id 'plans_azure_host': the connection's host {connection['host']} is not used" in message
    assert "would read https://devstoreaccount1.blob.core.windows.net" in message
    assert "connection_string extra (DefaultEndpointsProtocol=http;" in message
    assert f"BlobEndpoint={connection['host']})" in message
    assert _account_key(azurite) not in message


def test_airflow_azure_connection_whose_host_is_the_accounts_endpoint_is_accepted(azurite: str, monkeypatch):
    """The host as the Airflow UI suggests it for Azure itself (the account's blob endpoint): the filesystem reads
    there, so nothing is refused (no request is made: Azure is not reachable from the tests)."""
    from airflow.sdk import ObjectStoragePath
    from substrait_spark.hooks.plan_store_hook import refuse_ignored_azure_host

    connection = {**_account_form(azurite), "host": "https://DevStoreAccount1.blob.core.windows.net/"}
    _azure_connection(monkeypatch, "plans_azure_public", connection)
    fs = ObjectStoragePath("abfs://plans/q.bin", conn_id="plans_azure_public").fs
    refuse_ignored_azure_host("plans_azure_public", connection["host"], fs)
    assert fs.account_url == "https://devstoreaccount1.blob.core.windows.net"


def test_an_azure_endpoint_that_does_not_answer_is_named_without_its_sas_token():
    """What azure-core raises when no request got through (DNS, refused, TLS): the error names the endpoint the
    client was built for, the usual cause, and never the SAS token in its URL."""
    pytest.importorskip("adlfs")
    from adlfs import AzureBlobFileSystem
    from azure.core.exceptions import ServiceRequestError
    from substrait_spark.hooks.plan_store_fsspec import AZURE, _translate

    sas = "sv=2024-01-01&sig=s3cr3t-never-shown"
    fs = AzureBlobFileSystem(
        account_name="acct", sas_token=sas, account_host="acct.example.net", skip_instance_cache=True
    )
    error = _translate(ServiceRequestError("no route"), AZURE, "az://c/q.bin", fs)
    assert isinstance(error, PlanStoreError)
    assert str(error) == (
        "cannot read plan az://c/q.bin from Azure Blob Storage: no answer from https://acct.example.net "
        "(ServiceRequestError)"
    )


def test_airflow_azure_connection_missing_container_and_object_are_not_found(az: Any, azurite: str, monkeypatch):
    from substrait_spark.hooks.plan_store_hook import PlanStoreHook

    container = _new_container(az)
    _azure_connection(monkeypatch, "plans_azure", {"conn_type": "wasb", "extra": {"connection_string": azurite}})
    hook = PlanStoreHook(plan_conn_id="plans_azure")
    with pytest.raises(PlanNotFoundError) as err:
        hook.read(f"az://{container}/absent.bin")
    assert str(err.value) == f"az://{container}/absent.bin: no object 'absent.bin' in container {container!r}"
    missing = f"plans-absent-{uuid.uuid4().hex[:8]}"
    with pytest.raises(PlanNotFoundError) as err:
        hook.read(f"abfs://{missing}/q.bin")
    assert str(err.value) == f"abfs://{missing}/q.bin: container {missing!r} does not exist"
    assert err.value.exit_code == 2


def test_airflow_azure_connection_without_an_account_name_is_a_configuration_error(az: Any, azurite: str, monkeypatch):
    from substrait_spark.consumer.errors import ConfigurationError
    from substrait_spark.hooks.plan_store_hook import PlanStoreHook

    connection = _account_form(azurite)
    del connection["extra"]
    _azure_connection(monkeypatch, "plans_azure_no_account", connection)
    with pytest.raises(ConfigurationError) as err:
        PlanStoreHook(plan_conn_id="plans_azure_no_account").read("az://plans/q.bin")
    assert "plan_conn_id 'plans_azure_no_account': the connection names no Azure storage account" in str(err.value)
    assert _account_key(azurite) not in str(err.value)


def test_airflow_azure_connection_with_a_malformed_connection_string_is_a_configuration_error(monkeypatch):
    from substrait_spark.consumer.errors import ConfigurationError
    from substrait_spark.hooks.plan_store_hook import PlanStoreHook

    malformed = {"conn_type": "wasb", "extra": {"connection_string": "AccountKey=s3cr3t-never-shown"}}
    _azure_connection(monkeypatch, "plans_azure_malformed", malformed)
    with pytest.raises(ConfigurationError) as err:
        PlanStoreHook(plan_conn_id="plans_azure_malformed").read("az://plans/q.bin")
    assert "plan_conn_id 'plans_azure_malformed': adlfs cannot use the connection's Azure credentials" in str(err.value)
    assert "s3cr3t" not in str(err.value)


def test_airflow_azure_connection_that_does_not_exist_is_an_error_naming_it(az: Any, azurite: str, monkeypatch):
    """The environment could read it (AZURE_STORAGE_CONNECTION_STRING is set), but the connection named is not
    there: refused, not read with other credentials."""
    pytest.importorskip("airflow.providers.microsoft.azure")
    from substrait_spark.consumer.errors import ConfigurationError
    from substrait_spark.hooks.plan_store_hook import PlanStoreHook

    container = _new_container(az)
    _put(az, f"{container}/q.bin", PLAN)
    monkeypatch.delenv("AIRFLOW_CONN_PLANS_AZURE", raising=False)
    with pytest.raises(ConfigurationError) as err:
        PlanStoreHook(plan_conn_id="plans_azure").read(f"az://{container}/q.bin")
    assert err.value.exit_code == 2
    assert "plan_conn_id 'plans_azure': no such Airflow connection" in str(err.value)


def test_airflow_azure_connection_with_a_wrong_key_is_access_denied_without_the_key(az: Any, azurite: str, monkeypatch):
    from substrait_spark.hooks.plan_store_hook import PlanStoreHook

    container = _new_container(az)
    _put(az, f"{container}/q.bin", PLAN)
    wrong = azurite.replace(_account_key(azurite), "d3Jvbmcta2V5LW5ldmVyLXNob3du")
    # Its own id: Airflow keeps one filesystem per scheme and connection id for the life of the process.
    _azure_connection(monkeypatch, "plans_azure_wrong", {"conn_type": "wasb", "extra": {"connection_string": wrong}})
    with pytest.raises(PlanStoreError) as err:
        PlanStoreHook(plan_conn_id="plans_azure_wrong").read(f"az://{container}/q.bin")
    assert "access denied by Azure Blob Storage" in str(err.value)
    assert "d3Jvbmcta2V5" not in str(err.value) and _account_key(azurite) not in str(err.value)
