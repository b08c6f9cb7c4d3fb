"""pytest plugin (registered by conftest.py): no translated plan holds a cartesian product Spark SQL would not build,
and `validate` agrees with translation on every plan the suite translates.

Around each test phase (setup, call, teardown) the engine's test hook records every root it translates
(`substrait_spark.consumer.translation.plan_record`, switched on through the environment, so the subprocesses a
test starts — the CLI, `airflow dags test`, drivers on a standalone cluster or through Spark Connect — record too).
After the phase each recorded plan is checked (`cartesian_check`): a CartesianProduct or BroadcastNestedLoopJoin between
inputs the Substrait plan joins by an equality fails the test, naming the equality's path in the plan, the Spark
operator and the plan (producer, sha256, output names).

Validate agrees (issue 14: "validate exits 0 iff every feature is supported"): for every root the default
consumer class translates, `validate` lists nothing under that root (or the shared relations); for every root it
refuses as unsupported, `validate` lists that very feature at that very path — except a `TargetRefusedError` (the
table's current schema, its snapshots, the caller's keys: the run's target, not the plan), counted. A consumer
subclass (a test's own functions or extension relations) is validated with itself only in-process; others are
skipped and counted.

The session ends with one line: plans checked (how many in subprocesses), plans whose links could not be worked
out and why, and the time the checks took (`explain` in the engine, the analysis here).
`SUBSTRAIT_SPARK_PLAN_INVARIANT=off` switches the plugin off (to time the suite without it).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest
from cartesian_check import Analysis, equi_links, offences
from substrait.plan_pb2 import Plan
from substrait_spark.consumer.translation.plan_record import ENV as RECORD_ENV

SWITCH = "SUBSTRAIT_SPARK_PLAN_INVARIANT"


def register(config: pytest.Config) -> None:
    if os.environ.get(SWITCH, "").lower() != "off":
        config.pluginmanager.register(PlanInvariant(), "plan_invariant")


class PlanInvariant:
    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="substrait-plan-record-"))
        self.phases = 0
        self.plans = 0
        self.in_subprocesses = 0
        self.not_planned = 0
        self.unanalysed: Counter[str] = Counter()
        self.explain_ms = 0.0
        self.check_s = 0.0
        self.offending = 0
        self._analyses: dict[str, Analysis] = {}
        self.validated = 0
        self.disagreeing = 0
        self.target_refusals = 0
        self._findings: dict[str, list[Any]] = {}

    # --- hooks -------------------------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, Any, Any]:
        return (yield from self._phase())

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, Any]:
        return (yield from self._phase())

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, Any, Any]:
        return (yield from self._phase())

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        why = "; ".join(f"{n} x {reason}" for reason, n in self.unanalysed.most_common(5))
        terminalreporter.write_line(
            f"plan invariant (no cartesian product the plan does not ask for): {self.plans} plans checked "
            f"({self.in_subprocesses} in subprocesses), {self.offending} offending, {self.not_planned} not "
            f"plannable by Spark, {sum(self.unanalysed.values())} with links not worked out"
            f"{' (' + why + ')' if why else ''}; explain {self.explain_ms / 1000:.1f} s, checks {self.check_s:.1f} s"
        )
        terminalreporter.write_line(
            f"validate agrees with translation: {self.validated} roots checked, {self.disagreeing} disagreeing, "
            f"{self.target_refusals} refusals for the run's target or settings (TargetRefusedError, not the plan's "
            "to show)"
        )

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    # --- checking ----------------------------------------------------------------------------------------

    def _phase(self) -> Generator[None, Any, Any]:
        record = self.folder / f"{self.phases}.jsonl"
        self.phases += 1
        self._findings.clear()  # validate reads process-wide registrations (extension relations) a test may change
        previous = os.environ.get(RECORD_ENV)
        os.environ[RECORD_ENV] = str(record)
        try:
            result = yield
        except BaseException:
            self._check(record)  # counted; the phase fails for its own reason
            raise
        finally:
            if previous is None:
                os.environ.pop(RECORD_ENV, None)
            else:
                os.environ[RECORD_ENV] = previous
        problems = self._check(record)
        if problems:
            pytest.fail("\n".join(problems), pytrace=False)
        return result

    def _check(self, record: Path) -> list[str]:
        if not record.exists():
            return []
        problems = []
        for line in record.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            disagreement = self._validate(entry)
            if disagreement:
                problems.append(disagreement)
            if "refused" in entry:
                continue
            self.plans += 1
            self.in_subprocesses += entry["pid"] != os.getpid()
            self.explain_ms += entry.get("explain_ms", 0.0)
            if "physical" not in entry:
                self.not_planned += 1
                continue
            start = time.perf_counter()
            data = base64.b64decode(entry["plan"])
            key = hashlib.sha256(data).hexdigest()
            analysis = self._analyses.get(key)
            if analysis is None:
                analysis = self._analyses[key] = equi_links(_plan(data))
            if analysis.error:
                self.unanalysed[analysis.error[:120]] += 1
            found = offences(analysis.links, entry["physical"])
            self.check_s += time.perf_counter() - start
            if found:
                self.offending += 1
                problems.append(_describe(_plan(data), key, found, entry["physical"]))
        record.unlink()
        return problems

    def _validate(self, entry: dict[str, Any]) -> str | None:
        """Whether validate (for the default consumer class) says what translating this root said."""
        from substrait_spark.consumer.analysis.analyze import Finding, validate_plan
        from substrait_spark.consumer.errors import SubstraitSparkError, UnsupportedFeatureError

        if entry.get("consumer") != DEFAULT_CONSUMER or not entry.get("root"):
            return None
        data = base64.b64decode(entry["plan"])
        key = hashlib.sha256(data).hexdigest()
        if key not in self._findings:
            try:
                self._findings[key] = validate_plan(_plan(data))
            except UnsupportedFeatureError as exc:  # the loader refuses the whole plan: run exits 3 before any root
                self._findings[key] = [Finding(f"{WHOLE_PLAN}{exc.message}", exc.path or "")]
            except SubstraitSparkError as exc:  # malformed: translation of some root says so too
                self._findings[key] = [Finding(f"invalid: {exc.message}", exc.path or "")]
        findings = self._findings[key]
        self.validated += 1
        root = entry["root"]
        if entry.get("refused", {}).get("target"):  # TargetRefusedError: the target's state, not the plan
            self.target_refusals += 1
            return None
        if "refused" in entry:
            refused = Finding(entry["refused"]["feature"], entry["refused"]["path"] or "")
            if any(_same_place(f, refused) or f.feature.startswith(WHOLE_PLAN) for f in findings):
                return None
            problem = f"translation refused {refused} but validate lists {findings or 'nothing'}"
        else:
            mine = [f for f in findings if f.path.startswith(root + ".") or _shared_path(f.path)]
            if not mine:
                return None
            problem = f"translation of {root} succeeded but validate lists {mine}"
        self.disagreeing += 1
        return f"validate disagrees with translation (plan sha256 {key[:16]}): {problem}"


# A plan the loader refuses as unsupported (e.g. per-record evaluation of context variables): validate and run both
# exit 3 on loading it, so every refusal a translation of its roots makes is foreseen.
WHOLE_PLAN = "unsupported plan: "
DEFAULT_CONSUMER = "substrait_spark.consumer.translation.consumer.SubstraitConsumer"
# (Every refusal translation makes is foreseen by validate: a disagreement fails the test. The six that were
# tolerated here once — regexp_replace's literal rule, a RANGE offset over a date sort key, a lateral join over a
# count, a stray rel_reference, strftime's directives, a parameter of a non-scalar type — are each declared as data
# next to their translator now, with a regression test in test_validate.py.)


def _same_place(found: Any, refused: Any) -> bool:
    """Validate's finding names what translation refused: the same path (the words may differ), or the same
    feature at a path one inside the other (validate names the condition, translation the argument in it)."""
    if found.path == refused.path:
        return True
    nested = found.path.startswith(refused.path + ".") or refused.path.startswith(found.path + ".")
    return nested and found.feature == refused.feature


def _shared_path(path: str) -> bool:
    """A path inside a shared relation (`relations[i].rel...`), which any root may reference."""
    head = path.split(".", 2)
    return len(head) > 1 and head[0].startswith("relations[") and head[1] == "rel"


def _describe(plan: Plan, sha256: str, found: list, physical: str) -> str:
    roots = [list(r.root.names) for r in plan.relations if r.WhichOneof("rel_type") == "root"]
    lines = [
        "a translated plan holds a cartesian product the Substrait plan does not ask for "
        f"(plan sha256 {sha256[:16]}, producer {plan.version.producer or '?'!r}, output {roots[:1]}):",
        *[f"  {o}" for o in found],
        "Spark's physical plan:",
        physical,
    ]
    return "\n".join(lines)


def _plan(data: bytes) -> Plan:
    """A recorded plan parsed as the loader parses it (protobuf's own parser stops at 100 levels; plans may nest up
    to the loader's bound)."""
    from substrait_spark.consumer.loading.loader import parse_plan_bytes

    return parse_plan_bytes(data).plan
