"""The REST catalog server the Iceberg tests run on (tests/rest_catalog_server.py) refuses whoever has no token from
its OAuth2 token endpoint, and the token endpoint refuses a wrong client secret: the `rest` store really exercises
OAuth2 client credentials, and a wrong secret fails naming the catalog without showing the secret."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request

import pytest
from substrait_spark.consumer.errors import ResolutionError
from substrait_spark.hooks.iceberg import Catalogs

pytestmark = [pytest.mark.iceberg]


def call(url: str, *, data: dict[str, str] | None = None, token: str | None = None) -> tuple[int, dict]:
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    request = urllib.request.Request(url, data=body, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def token(server, secret: str) -> tuple[int, dict]:
    form = {"grant_type": "client_credentials", "client_id": server.client_id, "client_secret": secret}
    return call(f"{server.uri}/v1/oauth/tokens", data=form)


def test_requests_without_a_valid_token_are_refused(rest_catalog_server):
    server = rest_catalog_server
    for path in ("/v1/config?warehouse=authcheck", "/v1/authcheck/namespaces"):
        status, body = call(server.uri + path)
        assert status == 401 and body["error"]["type"] == "NotAuthorizedException", path
        status, _ = call(server.uri + path, token="not-a-token-it-issued")
        assert status == 401, path
    status, body = token(server, server.client_secret + "x")
    assert status == 401 and body["error"] == "invalid_client" and "access_token" not in body
    status, body = token(server, server.client_secret)
    assert status == 200 and body["token_type"] == "bearer"
    status, config = call(f"{server.uri}/v1/config?warehouse=authcheck", token=body["access_token"])
    assert status == 200 and config["overrides"]["prefix"] == "authcheck"
    status, listed = call(f"{server.uri}/v1/authcheck/namespaces", token=body["access_token"])
    assert status == 200 and listed["namespaces"] == []


def test_a_wrong_client_secret_fails_naming_the_catalog_without_the_secret(rest_catalog_server):
    wrong = "wrong-" + rest_catalog_server.client_secret
    props = {**rest_catalog_server.properties("authcheck"), "credential": f"{rest_catalog_server.client_id}:{wrong}"}
    catalogs = Catalogs.from_mapping({"catalogs": {"guarded": props}})
    with pytest.raises(ResolutionError, match="catalog 'guarded' cannot be opened") as caught:
        catalogs.load("guarded")
    assert wrong not in str(caught.value)
