"""What a Spark Connect server ran, from its UI's REST API: how many SQL executions an operation caused.

A Connect server tags every job of an operation `SparkConnect_OperationTag_User_<user>_Session_<session>_
Operation_<operation id>` (the jobs endpoint's `jobTags`); a SQL execution lists its job ids. An operation's SQL
executions are those with a job carrying its tag: a query submitted twice is two, one reattached to is one.
"""

from __future__ import annotations

import json
import time
import urllib.request
from dataclasses import dataclass
from functools import cached_property
from typing import Any

OPERATION_TAG = "_Operation_"


@dataclass
class ConnectUI:
    url: str  # http://127.0.0.1:<ui port>

    def _get(self, path: str) -> Any:
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}", timeout=10) as response:
            return json.load(response)

    @cached_property
    def app_id(self) -> str:
        return str(self._get("applications")[0]["id"])

    def jobs(self) -> list[dict[str, Any]]:
        return list(self._get(f"applications/{self.app_id}/jobs"))

    def sql(self) -> list[dict[str, Any]]:
        return list(self._get(f"applications/{self.app_id}/sql?details=false&length=100000"))

    def job_ids_of(self, operation_id: str) -> set[int]:
        marker = f"{OPERATION_TAG}{operation_id}"
        return {j["jobId"] for j in self.jobs() if any(t.endswith(marker) for t in j.get("jobTags") or [])}

    def executions_of(self, operation_id: str) -> int:
        """The SQL executions that ran jobs of `operation_id`."""
        jobs = self.job_ids_of(operation_id)
        executions = self.sql()
        return sum(
            1
            for e in executions
            if jobs & {*e.get("runningJobIds", []), *e.get("successJobIds", []), *e.get("failedJobIds", [])}
        )

    def running_jobs_of(self, operation_id: str) -> int:
        marker = f"{OPERATION_TAG}{operation_id}"
        return sum(
            1
            for j in self.jobs()
            if j["status"] == "RUNNING" and any(t.endswith(marker) for t in j.get("jobTags") or [])
        )

    def wait_until_ended(self, operation_id: str, timeout_s: float = 60) -> None:
        """Until no job of the operation runs (it finished, failed or was interrupted)."""
        deadline = time.monotonic() + timeout_s
        while self.running_jobs_of(operation_id):
            if time.monotonic() > deadline:
                raise TimeoutError(f"operation {operation_id} still running after {timeout_s} s")
            time.sleep(0.5)
