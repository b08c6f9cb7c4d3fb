"""The engine's own fuzz target: seeded mutations of every corpus plan through `validate` and `run`, in process.

A case is (seed, index): `random.Random(f"{seed}:{index}")` picks a corpus plan and a mutation, so any case is
reproduced alone, without the ones before it (`python tests/fuzz_plans.py --seed S --case N` writes its plan and
prints the commands). Every case must end with an exit code 0-5 and one line on stderr naming the problem: a
traceback, an internal error (an exception that is not one of ours), a message over several lines or a case that
outlives its time limit is a failure. `tests/test_fuzz.py` runs `FUZZ_CASES` cases (a few hundred in `make test`,
10,000 or more in `make fuzz`).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import random
import shutil
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

PROG = "substrait-spark"
PLAN_SUFFIXES = (".json", ".bin", ".textproto")
CLEAN_EXIT_CODES = range(6)  # 0 ok · 1 execution failed · 2 invalid · 3 unsupported · 4 resolution · 5 policy

# Keys that hold a reference or an anchor into another part of the plan (extension declarations, fields,
# subtrees, common relations, outer scopes): the mutations corrupt these on purpose.
REFERENCE_KEYS = frozenset(
    {
        "functionReference",
        "functionAnchor",
        "typeReference",
        "typeAnchor",
        "typeVariationReference",
        "typeVariationAnchor",
        "extensionUriAnchor",
        "extensionUriReference",
        "extensionUrnAnchor",
        "extensionUrnReference",
        "field",
        "stepsOut",
        "subtreeOrdinal",
        "subqueryReference",
        "relReference",
        "commonId",
        "anchor",
        "outputMapping",
        "offset",
        "count",
        "precision",
        "scale",
        "length",
    }
)
# Substrait type kinds and literal kinds, for type swaps (a type or literal replaced with another kind's).
TYPE_SAMPLES: tuple[dict[str, Any], ...] = (
    {"bool": {"nullability": "NULLABILITY_NULLABLE"}},
    {"i8": {"nullability": "NULLABILITY_REQUIRED"}},
    {"i32": {"nullability": "NULLABILITY_NULLABLE"}},
    {"i64": {"nullability": "NULLABILITY_REQUIRED"}},
    {"fp64": {"nullability": "NULLABILITY_NULLABLE"}},
    {"string": {"nullability": "NULLABILITY_NULLABLE"}},
    {"varchar": {"length": 3, "nullability": "NULLABILITY_NULLABLE"}},
    {"fixedChar": {"length": 0, "nullability": "NULLABILITY_REQUIRED"}},
    {"decimal": {"precision": 40, "scale": 50, "nullability": "NULLABILITY_NULLABLE"}},
    {"decimal": {"precision": 15, "scale": 2, "nullability": "NULLABILITY_REQUIRED"}},
    {"date": {"nullability": "NULLABILITY_NULLABLE"}},
    {"timestamp": {"nullability": "NULLABILITY_NULLABLE"}},
    {"precisionTimestamp": {"precision": 13, "nullability": "NULLABILITY_NULLABLE"}},
    {"intervalDay": {"precision": 6, "nullability": "NULLABILITY_NULLABLE"}},
    {"binary": {"nullability": "NULLABILITY_NULLABLE"}},
    {"uuid": {"nullability": "NULLABILITY_NULLABLE"}},
    {"struct": {"types": [], "nullability": "NULLABILITY_REQUIRED"}},
    {"list": {"type": {"i32": {}}, "nullability": "NULLABILITY_NULLABLE"}},
    {"map": {"key": {"string": {}}, "value": {"fp64": {}}}},
    {"userDefined": {"typeReference": 99}},
)
TYPE_KINDS = frozenset(k for sample in TYPE_SAMPLES for k in sample)
LITERAL_SAMPLES: tuple[dict[str, Any], ...] = (
    {"boolean": True},
    {"i8": 300},
    {"i32": -2147483648},
    {"i64": "9223372036854775807"},
    {"fp64": "NaN"},
    {"fp32": 1e39},
    {"string": ""},
    {"string": "x" * 5},
    {"date": -1000000000},
    {"timestamp": "99999999999999999"},
    {"decimal": {"value": "AAAA", "precision": 38, "scale": 2}},
    {"decimal": {"value": "AAAAAAAAAAAAAAAAAAAAAA==", "precision": 3, "scale": 9}},
    {"null": {"i32": {}}},
    {"null": {}},
    {"intervalDayToSecond": {"days": 2147483647, "seconds": 86400}},
    {"list": {"values": []}},
    {"emptyList": {"type": {"i32": {}}}},
    {"struct": {"fields": [{"i32": 1}, {"string": "a"}]}},
    {"varChar": {"value": "abcdef", "length": 2}},
    {"fixedChar": "abc"},
)
LITERAL_KINDS = frozenset(k for sample in LITERAL_SAMPLES for k in sample)
SCALARS: tuple[Any, ...] = (
    None,
    True,
    0,
    -1,
    1,
    7,
    2**31,
    -(2**31) - 1,
    2**63,
    "",
    "x",
    "NULLABILITY_REQUIRED",
    "JOIN_TYPE_OUTER",
    "AGGREGATION_PHASE_INITIAL_TO_RESULT",
    "SORT_DIRECTION_CLUSTERED",
    "\u0000",
    1.5,
    [],
    {},
    [None],
    {"x": 1},
)


@dataclass
class PlanFile:
    """A corpus plan: its path (relative to the corpus) and its bytes."""

    rel: str
    data: bytes

    @property
    def suffix(self) -> str:
        return Path(self.rel).suffix

    def json_doc(self) -> Any | None:
        """The plan as JSON (comment lines dropped), or None for a binary or textproto plan."""
        if self.suffix != ".json":
            return None
        text = self.data.decode("utf-8", errors="replace")
        return json.loads("\n".join(line for line in text.splitlines() if not line.lstrip().startswith(("//", "#"))))


def discover(corpus: Path) -> list[PlanFile]:
    """Every plan file in the corpus (sorted: a seed picks the same plans on every machine)."""
    plans = []
    for path in sorted(corpus.rglob("*")):
        if path.suffix not in PLAN_SUFFIXES or not path.is_file():
            continue
        data = path.read_bytes()
        if path.suffix == ".json" and b'"relations"' not in data:
            continue  # a JSON file that is not a plan (no relations at all)
        plans.append(PlanFile(str(path.relative_to(corpus)), data))
    return plans


# ---- mutations ----------------------------------------------------------------------------------------------


def _nodes(doc: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every (path, value) in a JSON document, depth first."""
    yield path, doc
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _nodes(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _nodes(v, (*path, i))


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return doc


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path[:-1]:
        doc = doc[step]
    return doc


def byte_flips(rng: random.Random, plan: PlanFile) -> bytes:
    data = bytearray(plan.data)
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(len(data))
        data[i] ^= 1 << rng.randrange(8)
    return bytes(data)


def truncation(rng: random.Random, plan: PlanFile) -> bytes:
    return plan.data[: rng.randrange(len(plan.data))]


def json_edit(rng: random.Random, doc: Any) -> Any:
    """One structural edit: a key dropped, a value replaced by another scalar, a list element dropped or
    doubled, a subtree copied over another, a key renamed to another key of the plan."""
    nodes = list(_nodes(doc))[1:]
    path, value = rng.choice(nodes)
    parent = _parent(doc, path)
    op = rng.randrange(6)
    if op == 0:
        del parent[path[-1]]
    elif op == 1:
        parent[path[-1]] = copy.deepcopy(rng.choice(SCALARS))
    elif op == 2 and isinstance(parent, list):
        parent.insert(path[-1], copy.deepcopy(value))
    elif op == 3:
        other = rng.choice(nodes)[1]
        parent[path[-1]] = copy.deepcopy(other)
    elif op == 4 and isinstance(parent, dict):
        keys = [p[-1] for p, _ in nodes if isinstance(p[-1], str)]
        parent[rng.choice(keys)] = parent.pop(path[-1])
    else:
        parent[path[-1]] = {"unknownField": value} if rng.random() < 0.5 else [value]
    return doc


def reference_corruption(rng: random.Random, doc: Any) -> Any:
    """A reference or anchor set to a value no declaration has (or another reference's value)."""
    refs = [(p, v) for p, v in _nodes(doc) if p and p[-1] in REFERENCE_KEYS and not isinstance(v, dict | list)]
    if not refs:
        return json_edit(rng, doc)
    for path, value in rng.sample(refs, k=min(len(refs), rng.randint(1, 3))):
        choices = [-1, 0, 1, 2, 5, 1000, 2**31 - 1, 2**32, 2**63 - 1, "x", rng.choice(refs)[1]]
        if isinstance(value, int):
            choices += [value + 1, value - 1]
        _set(doc, path, rng.choice(choices))
    return doc


TYPE_FIELDS = frozenset({"outputType", "type", "returnType", "key", "value"})


def _type_slots(doc: Any) -> Iterator[tuple[tuple[Any, ...], Any, tuple[dict[str, Any], ...]]]:
    """Every literal, and every type where a type is expected (a declared type, a struct's or schema's types)."""
    for path, value in _nodes(doc):
        if not (path and isinstance(value, dict) and value):
            continue
        if path[-1] == "literal":
            yield path, value, LITERAL_SAMPLES
        elif next(iter(value)) in TYPE_KINDS and (
            path[-1] in TYPE_FIELDS or (isinstance(path[-1], int) and len(path) > 1 and path[-2] == "types")
        ):
            yield path, value, TYPE_SAMPLES


def type_swap(rng: random.Random, doc: Any) -> Any:
    """A type replaced with another kind (a declared output type, a cast target, a column type) or a literal
    with another kind's literal."""
    kinds = list(_type_slots(doc))
    if not kinds:
        return json_edit(rng, doc)
    path, _, samples = rng.choice(kinds)
    _set(doc, path, copy.deepcopy(rng.choice(samples)))
    return doc


Mutation = Callable[[random.Random, PlanFile], bytes]


def _on_json(edit: Callable[[random.Random, Any], Any]) -> Mutation:
    """A mutation of the plan's JSON; for a binary or textproto plan, its bytes flipped instead."""

    def mutate(rng: random.Random, plan: PlanFile) -> bytes:
        doc = plan.json_doc()
        if doc is None:
            return byte_flips(rng, plan)
        return json.dumps(edit(rng, doc)).encode()

    mutate.__name__ = edit.__name__
    return mutate


MUTATIONS: dict[str, Mutation] = {
    "byte_flips": byte_flips,
    "truncation": truncation,
    "json_edit": _on_json(json_edit),
    "reference_corruption": _on_json(reference_corruption),
    "type_swap": _on_json(type_swap),
}


@dataclass(frozen=True)
class Case:
    seed: int
    index: int
    plan: str
    mutation: str
    data: bytes = field(repr=False)
    suffix: str

    @property
    def name(self) -> str:
        return f"case-{self.seed}-{self.index}{self.suffix}"


def make_case(plans: list[PlanFile], seed: int, index: int) -> Case:
    rng = random.Random(f"{seed}:{index}")
    plan = rng.choice(plans)
    mutation = rng.choice(sorted(MUTATIONS))
    return Case(seed, index, plan.rel, mutation, MUTATIONS[mutation](rng, plan), plan.suffix)


# ---- running a case -----------------------------------------------------------------------------------------


class CaseTimeout(BaseException):
    """The case outlived its time limit."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    def expired(signum: int, frame: Any) -> None:
        raise CaseTimeout(f"no ending within {seconds:g}s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Ending:
    """How one command of a case ended."""

    command: str
    exit_code: int | None
    message: str
    seconds: float
    problem: str | None = None


def _problem(exit_code: int, stderr: str, stdout: str = "") -> str | None:
    """Why an ending is not clean, or None. `validate` lists unsupported features on stdout (exit 3), one line
    each, and writes nothing on stderr."""
    if exit_code == 3 and not stderr.strip() and "unsupported feature(s)" in stdout:
        return None
    if exit_code not in CLEAN_EXIT_CODES:
        return f"exit code {exit_code}"
    lines = [line for line in stderr.splitlines() if line.strip()]
    if "Traceback (most recent call last)" in stderr:
        return "a traceback"
    if any(f"{PROG}: internal error" in line for line in lines):
        return "an internal error (an exception that is not a typed error)"
    if exit_code and not lines:
        return "no message"
    messages = [line for line in lines if line.startswith(f"{PROG}: ")]
    if exit_code and (len(messages) != 1 or len(lines) != 1):
        return f"{len(lines)} lines on stderr, not one"
    return None


def run_command(argv: list[str], limit: float, on_timeout: Callable[[], None]) -> Ending:
    from substrait_spark.cli import main

    out, err = io.StringIO(), io.StringIO()
    started = time.perf_counter()
    try:
        with time_limit(limit), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    except CaseTimeout as exc:
        on_timeout()
        return Ending(argv[0], None, str(exc), time.perf_counter() - started, "a hang: " + str(exc))
    except SystemExit as exc:  # argparse: never expected with the arguments given here
        code = exc.code if isinstance(exc.code, int) else 2
    seconds = time.perf_counter() - started
    stderr = err.getvalue()
    first = next((line for line in (stderr or out.getvalue()).splitlines() if line.strip()), "") if code else ""
    return Ending(argv[0], code, first[:300], seconds, _problem(code, stderr, out.getvalue()))


@dataclass
class CaseResult:
    case: Case
    endings: list[Ending]

    @property
    def problems(self) -> list[str]:
        return [f"{e.command}: {e.problem} ({e.message})" for e in self.endings if e.problem]

    @property
    def seconds(self) -> float:
        return sum(e.seconds for e in self.endings)

    def reproducer(self) -> str:
        return (
            f"FUZZ_SEED={self.case.seed} FUZZ_ONLY={self.case.index} make fuzz   # or: python tests/fuzz_plans.py "
            f"--seed {self.case.seed} --case {self.case.index} --write DIR"
        )


@dataclass
class Setup:
    """Where cases run: a scratch folder for the mutated plans, the tables and the catalog configuration."""

    workdir: Path
    tables_dir: Path
    catalog_config: Path | None
    limit: float = 120.0
    on_timeout: Callable[[], None] = lambda: None
    alive: Callable[[], bool] = lambda: True  # whether the Spark driver still runs (a dead one ends the fuzz run)

    def commands(self, plan: Path, out: Path) -> list[list[str]]:
        """`validate`, then `run` writing its results as files (as a scheduled run does: a result of millions of
        rows, which a mutated join may well have, is written by Spark, never collected into the driver)."""
        run = ["run", str(plan), "--quiet", "--tables-dir", str(self.tables_dir), "--output-dir", str(out)]
        run += ["--output-format", "parquet"]
        if self.catalog_config is not None:
            run += ["--catalog-config", str(self.catalog_config)]
        return [["validate", str(plan)], run]


def run_case(case: Case, setup: Setup) -> CaseResult:
    path, out = setup.workdir / case.name, setup.workdir / f"out-{case.index}"
    path.write_bytes(case.data)
    try:
        commands = setup.commands(path, out)
        return CaseResult(case, [run_command(argv, setup.limit, setup.on_timeout) for argv in commands])
    finally:
        path.unlink(missing_ok=True)
        shutil.rmtree(out, ignore_errors=True)


class DriverDied(RuntimeError):
    """The Spark driver stopped during a case: the cases after it would only say so again."""


@dataclass
class Summary:
    """The figure of a fuzz run: cases, clean endings by command and exit code, the slowest case, failures."""

    seed: int
    cases: int = 0
    plans: int = 0
    endings: dict[str, Counter] = field(default_factory=dict)
    mutations: Counter = field(default_factory=Counter)
    slowest: dict[str, Any] = field(default_factory=dict)
    failures: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    seconds_by_ending: Counter = field(default_factory=Counter)  # where the time goes: "run 0", "validate 2"...

    def add(self, result: CaseResult) -> None:
        self.cases += 1
        self.mutations[result.case.mutation] += 1
        for e in result.endings:
            key = "hang" if e.exit_code is None else str(e.exit_code)
            self.endings.setdefault(e.command, Counter())[key if not e.problem else f"{key} (unclean)"] += 1
            self.seconds_by_ending[f"{e.command} {key}"] += e.seconds
        if not self.slowest or result.seconds > self.slowest["seconds"]:
            self.slowest = {
                "seconds": round(result.seconds, 2),
                "index": result.case.index,
                "plan": result.case.plan,
                "mutation": result.case.mutation,
                "endings": [f"{e.command} exit {e.exit_code}: {e.message}" for e in result.endings],
            }
        if result.problems:
            self.failures.append(
                {
                    "index": result.case.index,
                    "plan": result.case.plan,
                    "mutation": result.case.mutation,
                    "problems": result.problems,
                    "reproducer": result.reproducer(),
                }
            )

    def to_dict(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["endings"] = {k: dict(sorted(v.items())) for k, v in self.endings.items()}
        doc["mutations"] = dict(sorted(self.mutations.items()))
        doc["seconds_by_ending"] = {k: round(v, 1) for k, v in sorted(self.seconds_by_ending.items())}
        return doc


def fuzz(
    plans: list[PlanFile],
    setup: Setup,
    seed: int,
    indices: range | list[int],
    every: int = 250,
    progress: Callable[[Summary], None] | None = None,
) -> Summary:
    """Run the cases; `progress` gets the summary so far every `every` cases (a long run's partial figure)."""
    summary = Summary(seed, plans=len(plans))
    started = time.perf_counter()
    for n, index in enumerate(indices, 1):
        result = run_case(make_case(plans, seed, index), setup)
        summary.add(result)
        summary.seconds = round(time.perf_counter() - started, 1)
        if result.problems and not setup.alive():
            if progress is not None:
                progress(summary)
            raise DriverDied(
                f"the Spark driver died in case {index}: {'; '.join(result.problems)}\n  {result.reproducer()}"
            )
        if progress is not None and n % every == 0:
            progress(summary)
    return summary


def _main(argv: list[str] | None = None) -> int:
    """Write one case's mutated plan and print the commands that reproduce it."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", default=str(Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"))
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--case", type=int, required=True)
    p.add_argument("--write", metavar="DIR", required=True, help="write the mutated plan into DIR")
    args = p.parse_args(argv)
    case = make_case(discover(Path(args.corpus)), args.seed, args.case)
    out = Path(args.write)
    out.mkdir(parents=True, exist_ok=True)
    (out / case.name).write_bytes(case.data)
    print(f"# {case.plan}, {case.mutation}")
    print(f"substrait-spark validate {out / case.name}")
    print(f"substrait-spark run {out / case.name} --tables-dir .data/tpch/sf0.01")
    return 0


if __name__ == "__main__":
    sys.exit(_main())
