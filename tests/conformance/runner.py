"""Run the spec's function test cases through the consumer on Spark, each case as a real Substrait plan.

Scalar cases of one file that expect a value run as the columns of one projection over a one-row VirtualTable
(one Spark job); a batch that fails is split in halves until the failing cases stand alone, so one case's error
never hides the others' results. Cases that expect an error run alone. Aggregate cases run one plan each
(an AggregateRel over a VirtualTable of their input columns). Window cases run one plan each too (a ProjectRel
with the window function over the VirtualTable of their DEFINEd table, in its row order).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import plan_builder as pb
from substrait import plan_pb2
from substrait.extensions import extensions_pb2 as ext

from conformance.cases import ERROR, UNDEFINED, Case, load_cases, parse_call, split_top
from conformance.values import (
    NotBuildable,
    declare_types,
    literal_expr,
    parse_type,
    python_value,
    same_value,
    spark_type_ok,
)


@dataclass
class Outcome:
    case: Case
    passed: bool
    reason: str = ""


# Signature names of argument types (`add:i8_i8`), as producers write them.
_SIG = {"str": "str", "string": "str", "bool": "bool", "boolean": "bool", "dec": "dec", "decimal": "dec"}


def _sig(type_text: str) -> str:
    name = re.split(r"[?<]", type_text.strip(), maxsplit=1)[0]
    return _SIG.get(name, name)


class _Plan:
    """Extension declarations (URN from the test file's include) and the plan."""

    def __init__(self) -> None:
        self.urns: dict[str, int] = {}
        self.fns: dict[tuple[str, str], int] = {}
        self.plan = plan_pb2.Plan()
        self.plan.version.minor_number = 108
        self.plan.version.producer = "tests/conformance"

    def fn(self, urn: str, name: str) -> int:
        if urn not in self.urns:
            self.urns[urn] = len(self.urns) + 1
            self.plan.extension_urns.append(ext.SimpleExtensionURN(extension_urn_anchor=self.urns[urn], urn=urn))
        if (urn, name) not in self.fns:
            anchor = self.fns[(urn, name)] = len(self.fns) + 1
            decl = ext.SimpleExtensionDeclaration()
            decl.extension_function.extension_urn_reference = self.urns[urn]
            decl.extension_function.function_anchor = anchor
            decl.extension_function.name = name
            self.plan.extensions.append(decl)
        return self.fns[(urn, name)]

    def root(self, rel: pb.Rel, names: Sequence[str]) -> plan_pb2.Plan:
        r = self.plan.relations.add().root
        r.input.CopyFrom(rel)
        r.names.extend(names)
        declare_types(self.plan)
        return self.plan


def lambda_expr(plan: _Plan, case: Case, value: str, type_text: str) -> pb.Expr:
    """`(x -> gt(x, 2::i32))::func<i32 -> bool>`: one parameter, a body of one call (functions of the file's
    SUBSTRAIT_DEPENDENCY extension)."""
    m = re.fullmatch(r"\(\s*(\w+)\s*->\s*(.*)\)", value.strip(), re.S)
    t = re.fullmatch(r"func\??<(.*)->(.*)>", type_text.strip(), re.S)
    if not m or not t or not case.deps:
        raise NotBuildable(f"lambda {value}::{type_text} not understood")
    param, body_text = m.groups()
    body = Case(case.file, case.line, "scalar", case.deps[0], case.group, body_text)
    if parse_call(body, body_text).strip():
        raise NotBuildable(f"lambda body {body_text} not understood")
    args = []
    for v, ty in body.args:
        if v == param:
            ref = pb.Expr.FieldReference(direct_reference=pb.seg_field(0))
            ref.lambda_parameter_reference.steps_out = 0
            args.append(pb.alg.FunctionArgument(value=pb.Expr(selection=ref)))
        else:
            args.append(pb.alg.FunctionArgument(value=literal_expr(v, ty)))
    sig = "_".join(_sig(ty) if v != param else _sig(t.group(1)) for v, ty in body.args)
    fn = pb.Expr.ScalarFunction(function_reference=plan.fn(body.urn, f"{body.function}:{sig}"), arguments=args)
    fn.output_type.CopyFrom(parse_type(t.group(2).strip()))
    lam = pb.Expr.Lambda(body=pb.Expr(scalar_function=fn))
    lam.parameters.types.append(parse_type(t.group(1).strip()))
    lam.parameters.nullability = pb.REQUIRED
    return pb.Expr(**{"lambda": lam})


def _arguments(plan: _Plan, case: Case, columns: dict[str, int] | None = None) -> list[pb.alg.FunctionArgument]:
    out = []
    for value, type_text in case.args:
        if type_text.startswith("func") and value.strip().lower() != "null":
            out.append(pb.alg.FunctionArgument(value=lambda_expr(plan, case, value, type_text)))
        elif type_text == "enum":
            out.append(pb.alg.FunctionArgument(enum=value))
        elif columns is not None and value in columns:
            out.append(pb.alg.FunctionArgument(value=pb.field(columns[value])))
        else:
            out.append(pb.alg.FunctionArgument(value=literal_expr(value, type_text)))
    return out


def _signature(case: Case) -> str:
    sig = "_".join(_sig(t) for _, t in case.args if t)
    return f"{case.function}:{sig}" if sig else case.function


def _out_type(case: Case):
    if isinstance(case.expected, tuple) and case.expected[1]:
        return parse_type(case.expected[1])
    return None


def scalar_expr(plan: _Plan, case: Case) -> pb.Expr:
    fn = pb.Expr.ScalarFunction(
        function_reference=plan.fn(case.urn, _signature(case)),
        arguments=_arguments(plan, case),
        options=[pb.alg.FunctionOption(name=k, preference=[v]) for k, v in case.options.items()],
    )
    out = _out_type(case)
    if out is not None:
        fn.output_type.CopyFrom(out)
    return pb.Expr(scalar_function=fn)


def scalar_plan(cases: Sequence[Case]) -> plan_pb2.Plan:
    plan = _Plan()
    exprs = [scalar_expr(plan, c) for c in cases]
    rel = pb.project(pb.virtual(["dummy"], [pb.i32()], [(0,)]), *exprs, emit=list(range(1, len(exprs) + 1)))
    return plan.root(rel, [f"c{i}" for i in range(len(exprs))])


def _case_table(case: Case) -> tuple[pb.Rel, dict[str, int]]:
    """The case's input table as a VirtualTable (`colN` columns, untyped ones i32) and its column positions."""
    table = case.table or []
    types = [parse_type(t or "i32", force_nullable=True) for t, _ in table]
    nrows = len(table[0][1]) if table else 0
    rows = [[literal_expr(vals[r], t or "i32", force_nullable=True) for t, vals in table] for r in range(nrows)]
    columns = {f"col{i}": i for i in range(len(table))}
    read = pb.virtual(list(columns) or ["dummy"], types or [pb.i32()], rows)
    return read, columns


def _function_fields(plan: _Plan, case: Case, columns: dict[str, int]) -> dict:
    """What an aggregate and a window invocation of the case share."""
    return {
        "function_reference": plan.fn(case.urn, _signature(case)),
        "arguments": _arguments(plan, case, columns),
        "options": [pb.alg.FunctionOption(name=k, preference=[v]) for k, v in case.options.items()],
        "phase": pb.alg.AGGREGATION_PHASE_INITIAL_TO_RESULT,
        "invocation": pb.AggregateFunction.AGGREGATION_INVOCATION_ALL,
    }


def aggregate_plan(case: Case) -> plan_pb2.Plan:
    plan = _Plan()
    read, columns = _case_table(case)
    fn = pb.AggregateFunction(**_function_fields(plan, case, columns))
    out = _out_type(case)
    if out is not None:
        fn.output_type.CopyFrom(out)
    return plan.root(pb.aggregate(read, measures=[fn]), ["c0"])


def window_plan(case: Case) -> plan_pb2.Plan:
    """The window function over the case's table: no partitions, no sort fields, the spec's default frame."""
    plan = _Plan()
    read, columns = _case_table(case)
    fn = pb.Expr.WindowFunction(**_function_fields(plan, case, columns))
    out = _out_type(case)
    if out is not None:
        fn.output_type.CopyFrom(out)
    rel = pb.project(read, pb.Expr(window_function=fn), emit=[len(columns)])
    return plan.root(rel, ["c0"])


def _reason(e: BaseException) -> str:
    msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
    msg = re.sub(r"\s+", " ", msg)
    msg = re.sub(r"`?_?[a-z]*_[0-9a-f]{6,}`?", "_", msg)  # internal column/view names differ per run
    return f"{type(e).__name__}: {msg[:160]}"


class Runner:
    def __init__(self, spark) -> None:
        self.spark = spark
        from substrait_spark.consumer.running.resolver import SessionCatalogResolver

        self.resolver = SessionCatalogResolver()

    def _run(self, plan: plan_pb2.Plan) -> tuple[list, list[str]]:
        """(rows, column types); raises (translate errors tagged)."""
        from substrait_spark.consumer.translation.consumer import SubstraitConsumer

        try:
            df = SubstraitConsumer(self.spark, plan, self.resolver).root(0)
        except Exception as e:
            raise _Translate(e) from e
        return df.collect(), [f.dataType.simpleString() for f in df.schema.fields]

    # --- judging ---------------------------------------------------------------------------------------------

    @staticmethod
    def _judge_value(case: Case, got, simple: str) -> Outcome:
        if case.expected == UNDEFINED:
            return Outcome(case, True)
        if case.expected == ERROR:
            return Outcome(case, False, f"no error: got {got!r}")
        value, type_text = case.expected
        want = python_value(value, type_text)
        if not same_value(got, want, type_text):
            return Outcome(case, False, f"wrong value: got {got!r}, want {want!r}")
        if not spark_type_ok(type_text, simple):
            return Outcome(case, False, f"wrong type: got {simple}, want {type_text}")
        return Outcome(case, True)

    @staticmethod
    @staticmethod
    def _judge_error(case: Case, e: BaseException) -> Outcome:
        """An error is the expected `<!ERROR>` (and allowed for `<!UNDEFINED>`) only when running the plan raised
        it: a plan the consumer rejects while translating does not run at all."""
        from substrait_spark.consumer.errors import ExecutionError

        inner = e.__cause__ if isinstance(e, _Translate) and e.__cause__ is not None else e
        at_translation = isinstance(e, _Translate) and not isinstance(inner, ExecutionError)
        if case.expected in (ERROR, UNDEFINED) and not at_translation:
            return Outcome(case, True)
        where = "translation" if at_translation else "execution"
        return Outcome(case, False, f"{where} error: {_reason(inner)}")

    # --- scalar --------------------------------------------------------------------------------------------

    def _scalar_batch(self, cases: list[Case]) -> list[Outcome]:
        try:
            rows, simple = self._run(scalar_plan(cases))
        except Exception as e:
            if len(cases) == 1:
                return [self._judge_error(cases[0], e)]
            mid = len(cases) // 2
            return self._scalar_batch(cases[:mid]) + self._scalar_batch(cases[mid:])
        if len(rows) != 1:
            return [Outcome(c, False, f"{len(rows)} rows from a one-row input") for c in cases]
        return [self._judge_value(c, rows[0][i], simple[i]) for i, c in enumerate(cases)]

    def run_scalar(self, cases: list[Case]) -> list[Outcome]:
        out: list[Outcome] = []
        batch: list[Case] = []
        for c in cases:
            try:
                if isinstance(c.expected, tuple):
                    python_value(*c.expected)
                scalar_plan([c])  # builds? (literals and types the runner understands)
            except NotBuildable as e:
                out.append(Outcome(c, False, f"not run: {e}"))
                continue
            if c.expected == ERROR:
                out.extend(self._scalar_batch([c]))
            else:
                batch.append(c)
        if batch:
            out.extend(self._scalar_batch(batch))
        return out

    # --- aggregate -----------------------------------------------------------------------------------------

    def run_aggregate(self, case: Case) -> Outcome:
        try:
            if isinstance(case.expected, tuple):
                python_value(*case.expected)
            plan = aggregate_plan(case)
        except NotBuildable as e:
            return Outcome(case, False, f"not run: {e}")
        try:
            rows, simple = self._run(plan)
        except Exception as e:
            return self._judge_error(case, e)
        if len(rows) != 1:
            return Outcome(case, False, f"{len(rows)} rows from a global aggregate")
        return self._judge_value(case, rows[0][0], simple[0])

    # --- window ------------------------------------------------------------------------------------------

    def run_window(self, case: Case) -> Outcome:
        """One value per row of the table, in the table's order."""
        try:
            wants = None
            if isinstance(case.expected, tuple):
                value, type_text = case.expected
                items = split_top(value.strip()[1:-1]) if value.strip().startswith("(") else None
                if items is None:
                    raise NotBuildable(f"expected {value} is not one value per row")
                wants = [python_value(v, type_text) for v in items]
            plan = window_plan(case)
        except NotBuildable as e:
            return Outcome(case, False, f"not run: {e}")
        try:
            rows, simple = self._run(plan)
        except Exception as e:
            return self._judge_error(case, e)
        if wants is None:
            return self._judge_value(case, [r[0] for r in rows], simple[0])
        got = [r[0] for r in rows]
        if len(got) != len(wants):
            return Outcome(case, False, f"{len(got)} rows, want {len(wants)}")
        for i, (g, w) in enumerate(zip(got, wants, strict=True)):
            if not same_value(g, w, type_text):
                return Outcome(case, False, f"wrong value in row {i}: got {got!r}, want {wants!r}")
        if not spark_type_ok(type_text, simple[0]):
            return Outcome(case, False, f"wrong type: got {simple[0]}, want {type_text}")
        return Outcome(case, True)

    # --- everything ----------------------------------------------------------------------------------------

    def run_all(self, cases: list[Case] | None = None) -> list[Outcome]:
        """Every case, three Spark jobs at a time on the one session (each job is small: the driver's planning,
        not the cores, bounds it)."""
        from concurrent.futures import ThreadPoolExecutor

        cases = load_cases() if cases is None else cases
        out: list[Outcome] = []
        work: list[Callable[[], list[Outcome]]] = []
        by_file: dict[str, list[Case]] = {}
        for c in cases:
            if c.parse_error:
                out.append(Outcome(c, False, c.parse_error))
            elif c.kind == "scalar":
                by_file.setdefault(c.file, []).append(c)
            elif c.kind == "aggregate":
                work.append(functools.partial(lambda c: [self.run_aggregate(c)], c))
            elif c.kind == "window":
                work.append(functools.partial(lambda c: [self.run_window(c)], c))
        work += [functools.partial(self.run_scalar, file_cases) for file_cases in by_file.values()]
        with ThreadPoolExecutor(max_workers=3) as pool:
            for outcomes in pool.map(lambda run: run(), work):
                out.extend(outcomes)
        out.sort(key=lambda o: (o.case.file, o.case.line))
        return out


class _Translate(Exception):
    """An error raised while the consumer translated the plan (the cause is the consumer's error)."""


EXPECTED_FAILURES = Path(__file__).with_name("expected_failures.txt")


def read_expected_failures() -> dict[str, str]:
    out = {}
    if EXPECTED_FAILURES.exists():
        for line in EXPECTED_FAILURES.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                case_id, _, reason = line.partition("  ")
                out[case_id.strip()] = reason.strip()
    return out
