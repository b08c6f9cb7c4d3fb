"""`consumer/redact.redact`, the one scrubbing function of logs, errors, run reports and audit records."""

from __future__ import annotations

import pytest
from substrait_spark.consumer.redact import MASK, is_secret_key, redact

pytestmark = pytest.mark.unit

S = "s3cr3t-VALUE"


@pytest.mark.parametrize(
    "text, kept",
    [
        (f"postgresql+psycopg2://postgres:{S}@127.0.0.1:5432/iceberg", "postgresql+psycopg2://***@127.0.0.1:5432/"),
        (f"https://bucket.s3.amazonaws.com/k?X-Amz-Signature={S}&versionId=7", "versionId=7"),
        (f"sc://spark.example:15002/;user_id=ann;token={S}", ";user_id=ann;token=***"),
        (f"cannot open: password={S} at host", "password=***"),
        (f"{{'s3.secret-access-key': '{S}', 'type': 'sql'}}", "'type': 'sql'"),
        (f'{{"aws_access_key_id": "{S}"}}', '"aws_access_key_id'),
        (f"spark.hadoop.fs.s3a.secret.key={S}", "spark.hadoop.fs.s3a.secret.key=***"),
        (f"s3.session-token: {S}", "s3.session-token: ***"),
    ],
)
def test_secrets_in_text_are_masked(text: str, kept: str) -> None:
    out = redact(text)
    assert S not in out and kept in out, out


def test_text_without_secrets_is_unchanged() -> None:
    for text in ("table 'LINEITEM' not found (at relations[0].root.input.read)", "s3://bucket/plans/q06.json", ""):
        assert redact(text) == text


def test_mappings_and_lists_are_redacted_by_key_and_value() -> None:
    props = {
        "uri": f"postgresql://u:{S}@h/db",
        "s3.access-key-id": S,
        "credential": S,
        "warehouse": "file:///w",
        "nested": [{"jdbc.password": S, "n": 1}],
        "empty-token": "",
    }
    out = redact(props)
    assert S not in repr(out)
    assert out["warehouse"] == "file:///w" and out["nested"][0]["n"] == 1 and out["empty-token"] == ""
    assert out["s3.access-key-id"] == MASK == out["credential"] == out["nested"][0]["jdbc.password"]


@pytest.mark.parametrize(
    "key, secret",
    [
        ("aws_secret_access_key", True),
        ("s3.access-key-id", True),
        ("spark.hadoop.fs.s3a.access.key", True),
        ("aws_session_token", True),
        ("jdbc.password", True),
        ("warehouse", False),
        ("region_name", False),
        ("uri", False),
    ],
)
def test_secret_keys(key: str, secret: bool) -> None:
    assert is_secret_key(key) is secret
