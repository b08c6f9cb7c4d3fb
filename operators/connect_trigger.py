"""The trigger a deferrable `SubstraitSparkOperator` waits on: one Spark Connect operation, in the triggerer.

The task submitted the operation as a reattachable execution and closed its stream (`connect_operations`); the
trigger reattaches to it and reads its responses to the end without releasing them, so the task, when it resumes,
reattaches once more and collects the result (row counts included) in its own process. What the trigger holds is
serialisable and secret-free: the connection id (the token is read from the connection in the triggerer), the
session, user and operation ids. A triggerer that dies mid-wait is replaced by one that reattaches again.

Events: `done` (the operation finished: the task collects it), `gone` (the server no longer holds it: the task
runs it again), `failed` (its error, in Spark's words: the task fails as a run that failed in its own process).
`on_kill` (the task marked failed, cleared or killed while deferred) interrupts the operation on the server.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from enum import StrEnum
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent
from substrait_spark.consumer.redact import redact

CLASSPATH = "substrait_spark.operators.connect_trigger.ConnectOperationTrigger"
GONE = ("INVALID_HANDLE.", "INVALID_CURSOR.")


class OperationEnd(StrEnum):
    DONE = "done"
    GONE = "gone"
    FAILED = "failed"


class ConnectOperationTrigger(BaseTrigger):
    """Waits for the Spark Connect operation `operation_id` of session `session_id` on the server of
    `spark_conn_id`, without a worker slot."""

    def __init__(self, spark_conn_id: str | None, session_id: str, operation_id: str, user_id: str = "") -> None:
        super().__init__()
        self.spark_conn_id, self.session_id = spark_conn_id, session_id
        self.operation_id, self.user_id = operation_id, user_id

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return CLASSPATH, {
            "spark_conn_id": self.spark_conn_id,
            "session_id": self.session_id,
            "operation_id": self.operation_id,
            "user_id": self.user_id,
        }

    async def run(self) -> AsyncIterator[TriggerEvent]:
        self.log.info("Waiting for Spark Connect operation %s (session %s)", self.operation_id, self.session_id)
        end, message = await asyncio.to_thread(self._wait)
        yield TriggerEvent({"end": end.value, "operation_id": self.operation_id, "message": message})

    async def on_kill(self) -> None:
        await asyncio.to_thread(self._interrupt)

    # --- blocking gRPC, in a thread ---------------------------------------------------------------------------

    def _client(self) -> tuple[Any, Any]:
        from pyspark.sql.connect.client import ChannelBuilder
        from pyspark.sql.connect.proto import base_pb2_grpc
        from substrait_spark.hooks.spark_hook import SubstraitSparkHook

        builder = ChannelBuilder(SubstraitSparkHook(self.spark_conn_id).target.master)
        return builder, base_pb2_grpc.SparkConnectServiceStub(builder.toChannel())

    def _request(self, cls: Any, **fields: Any) -> Any:
        req = cls(session_id=self.session_id, operation_id=self.operation_id, **fields)
        if self.user_id:
            req.user_context.user_id = self.user_id
        return req

    def _wait(self) -> tuple[OperationEnd, str]:
        import pyspark.sql.connect.proto as pb2

        builder, stub = self._client()
        last: str | None = None
        while True:
            req = self._request(pb2.ReattachExecuteRequest, client_type=builder.userAgent)
            if last:
                req.last_response_id = last
            try:
                for response in stub.ReattachExecute(req, metadata=builder.metadata()):
                    last = response.response_id or last
                    if response.HasField("result_complete"):
                        return OperationEnd.DONE, ""
            except Exception as exc:  # grpc.RpcError: the server's status text
                details = getattr(exc, "details", None)
                text = redact(str(details() if callable(details) else exc))
                if any(marker in text for marker in GONE):
                    return OperationEnd.GONE, text
                return OperationEnd.FAILED, text
            # the server ended the stream before the result: read on from the last response

    def _interrupt(self) -> None:
        import pyspark.sql.connect.proto as pb2

        builder, stub = self._client()
        req = pb2.InterruptRequest(
            session_id=self.session_id,
            client_type=builder.userAgent,
            interrupt_type=pb2.InterruptRequest.InterruptType.INTERRUPT_TYPE_OPERATION_ID,
            operation_id=self.operation_id,
        )
        if self.user_id:
            req.user_context.user_id = self.user_id
        self.log.info("Interrupting Spark Connect operation %s", self.operation_id)
        stub.Interrupt(req, metadata=builder.metadata())
