"""Progress messages of a Spark 4 server read by the pyspark 3.5 client, whose protocol does not know them: the
stages come out of the response's unknown field as pyspark 4's client would read them."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.unit]


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, value: int | bytes) -> bytes:
    if isinstance(value, bytes):
        return _varint(number << 3 | 2) + _varint(len(value)) + value
    return _varint(number << 3) + _varint(value)


def test_a_progress_message_the_client_does_not_know_is_read_from_its_unknown_field():
    import pyspark.sql.connect.proto as pb2
    from substrait_spark.consumer.running import connect_progress
    from substrait_spark.consumer.running.connect_progress import StageInfo

    stage = lambda i, n, done, read, fin: b"".join(  # noqa: E731
        [_field(1, i), _field(2, n), _field(3, done), _field(4, read), _field(5, int(fin))]
    )
    progress = _field(1, stage(4, 200, 120, 3_000_000, False)) + _field(1, stage(3, 8, 8, 10, True)) + _field(2, 6)
    wire = _field(12, b"op-1") + _field(18, progress)  # operation_id, execution_progress (Spark 4's field 18)
    response = pb2.ExecutePlanResponse.FromString(wire)
    if "execution_progress" in pb2.ExecutePlanResponse.DESCRIPTOR.fields_by_name:
        pytest.skip("this client's protocol knows the message: pyspark 4 reads it itself")
    assert response.operation_id == "op-1"
    assert connect_progress.unknown_progress(response) == (
        [StageInfo(4, 200, 120, 3_000_000, False), StageInfo(3, 8, 8, 10, True)],
        6,
    )
    seen = []
    listener = lambda **kw: seen.append(kw)  # noqa: E731
    connect_progress.add_listener(listener)
    try:
        connect_progress.notify(response)
    finally:
        connect_progress.remove_listener(listener)
    assert seen and seen[0]["operation_id"] == "op-1" and seen[0]["inflight_tasks"] == 6
    assert connect_progress.unknown_progress(pb2.ExecutePlanResponse(operation_id="x")) is None
