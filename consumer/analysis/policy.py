"""What a plan may read, write and run: the platform operator's policy, checked on the loaded plan before Spark.

A plan in object storage is code that runs with the cluster's and the catalogs' credentials, so whoever runs the
platform — not the plan's author — says which files and tables plans may read, which namespaces they may change,
which kinds of step they may take, which extension relations they may use, how large they may be and how many rows
they may hand back. Every rule is checked statically on the loaded plan (views read through NamedTable with their
stored definitions expanded, through `TableNames`), every violation is listed with its plan path, and a refused
plan never reaches Spark: nothing is read, nothing committed (exit 5).

`read_locations` covers every file a run reads: the plan's own (LocalFiles items, an Iceberg table's metadata file)
and the files a NamedTable is bound to by the run's table maps (a tables directory, `--table`, a table-map file, an
Airflow connection's `tables`: `FileBindings`), checked on the binding's URI; a name the table maps do not bind is
a catalog table, which `read_namespaces` covers.

A rule left out of the policy does not restrict; a policy given always keeps DROP and CREATE OR REPLACE off unless
`steps` names them. `max_plan_bytes` and `max_depth` lower the engine's own bounds (`limits.py`), which the
loader applies before parsing.
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from google.protobuf.message import Message
from substrait import algebra_pb2 as alg
from substrait.plan_pb2 import Plan

from ..errors import ConfigurationError, PolicyError
from ..loading.limits import Limit, Limits, PlanTooLargeError
from ..walk import nodes

WriteRel, DdlRel = alg.WriteRel, alg.DdlRel


class Rule(StrEnum):
    """The policy's rules, by their key in the policy file."""

    READ_LOCATIONS = "read_locations"
    READ_NAMESPACES = "read_namespaces"
    WRITE_NAMESPACES = "write_namespaces"
    STEPS = "steps"
    EXTENSIONS = "extensions"
    MAX_PLAN_BYTES = "max_plan_bytes"
    MAX_RELATIONS = "max_relations"
    MAX_DEPTH = "max_depth"
    MAX_RESULT_ROWS = "max_result_rows"
    SHA256 = "sha256"


class StepKind(StrEnum):
    """A kind of step a plan takes: WriteRel ops, DdlRel ops (tables and views alike), UpdateRel (`update`)."""

    INSERT = "insert"
    DELETE = "delete"
    UPDATE = "update"
    CTAS = "ctas"
    CREATE = "create"
    CREATE_OR_REPLACE = "create_or_replace"
    ALTER = "alter"
    DROP = "drop"


# Allowed when a policy does not say: everything but the two kinds that destroy what is there.
DEFAULT_STEPS = frozenset(StepKind) - {StepKind.DROP, StepKind.CREATE_OR_REPLACE}

WRITE_STEPS: dict[int, StepKind] = {
    WriteRel.WRITE_OP_INSERT: StepKind.INSERT,
    WriteRel.WRITE_OP_DELETE: StepKind.DELETE,
    WriteRel.WRITE_OP_UPDATE: StepKind.UPDATE,
    WriteRel.WRITE_OP_CTAS: StepKind.CTAS,
}
DDL_STEPS: dict[int, StepKind] = {
    DdlRel.DDL_OP_CREATE: StepKind.CREATE,
    DdlRel.DDL_OP_CREATE_OR_REPLACE: StepKind.CREATE_OR_REPLACE,
    DdlRel.DDL_OP_ALTER: StepKind.ALTER,
    DdlRel.DDL_OP_DROP: StepKind.DROP,
    DdlRel.DDL_OP_DROP_IF_EXIST: StepKind.DROP,
}


@dataclass(frozen=True)
class Violation:
    """One thing the plan does that the policy forbids, and where in the plan (None: the plan as a whole)."""

    rule: Rule
    message: str
    path: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        return {"rule": str(self.rule), "message": self.message, "path": self.path}

    def __str__(self) -> str:
        return f"{self.rule}: {self.message}" + (f" (at {self.path})" if self.path else "")


class PolicyRefusedError(PolicyError):
    """The plan breaks the run's policy: every violation is listed (`violations`), the first one's path is the
    error's (exit 5; nothing was read or committed)."""

    kind = "refused by policy"

    def __init__(self, violations: Sequence[Violation]):
        self.violations = list(violations)
        listed = "; ".join(map(str, self.violations))
        count = f"{len(self.violations)} violations: " if len(self.violations) > 1 else ""
        super().__init__(count + listed, self.violations[0].path)

    def __str__(self) -> str:
        return self.message  # each violation names its own path

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "violations": [v.to_dict() for v in self.violations]}


class PolicyConfigError(ConfigurationError):
    """The policy itself cannot be read: not a mapping, an unknown key, a value of the wrong kind (exit 2)."""

    kind = "invalid policy"


class TableNames(Protocol):
    """What the check needs from the run's catalogs (`hooks/policy_names.py`): a NamedTable's `catalog.namespace`
    (None when it cannot be told) and, for a view, its stored definition (None for a table)."""

    def namespace(self, names: Sequence[str]) -> str | None: ...

    def view(self, names: Sequence[str]) -> Plan | None: ...


class FileBinding(Protocol):
    """Files a table map binds a name to (`consumer.running.resolver.TableBinding`)."""

    @property
    def uri(self) -> str: ...

    @property
    def source(self) -> str: ...  # which binding: "tables directory DIR", "table map FILE", ...

    @property
    def files(self) -> bool: ...  # False: a Spark table's name, no file


# What the run's table maps bind a NamedTable's names to (None: not bound, a catalog's table).
FileBindings = Callable[[Sequence[str]], FileBinding | None]


class _Unqualified:
    """No catalogs: a name's namespace is its parts before the table, as written."""

    def namespace(self, names: Sequence[str]) -> str | None:
        return ".".join(names[:-1]) or None

    def view(self, names: Sequence[str]) -> Plan | None:
        return None


def _strings(rule: Rule, value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise PolicyConfigError(f"policy: {rule} must be a list of strings, got {value!r}")
    return tuple(value)


def _count(rule: Rule, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise PolicyConfigError(f"policy: {rule} must be a whole number >= 0, got {value!r}")
    return value


def _steps(rule: Rule, value: Any) -> frozenset[StepKind]:
    names = _strings(rule, value)
    unknown = [n for n in names if n not in StepKind._value2member_map_]
    if unknown:
        raise PolicyConfigError(f"policy: unknown step kind(s) {unknown} (known: {', '.join(StepKind)})")
    return frozenset(StepKind(n) for n in names)


def _digests(rule: Rule, value: Any) -> frozenset[str]:
    digests = {d.strip().lower().removeprefix("sha256:") for d in _strings(rule, value)}
    bad = [d for d in digests if len(d) != 64 or any(c not in "0123456789abcdef" for c in d)]
    if bad:
        raise PolicyConfigError(f"policy: {rule} holds values that are not 64 hex digits: {bad}")
    return frozenset(digests)


def _locations(rule: Rule, value: Any) -> tuple[str, ...]:
    return tuple(normal_uri(u) or u for u in _strings(rule, value))


# How each key of a policy file is read.
_READERS: dict[Rule, Callable[[Rule, Any], Any]] = {
    Rule.READ_LOCATIONS: _locations,
    Rule.READ_NAMESPACES: lambda r, v: tuple(p.lower() for p in _strings(r, v)),
    Rule.WRITE_NAMESPACES: lambda r, v: tuple(p.lower() for p in _strings(r, v)),
    Rule.STEPS: _steps,
    Rule.EXTENSIONS: lambda r, v: frozenset(_strings(r, v)),
    Rule.MAX_PLAN_BYTES: _count,
    Rule.MAX_RELATIONS: _count,
    Rule.MAX_DEPTH: _count,
    Rule.MAX_RESULT_ROWS: _count,
    Rule.SHA256: _digests,
}


@dataclass(frozen=True)
class Policy:
    """A run's policy (see the module's docstring and docs/reference/policy.md). None: no limit."""

    read_locations: tuple[str, ...] | None = None
    read_namespaces: tuple[str, ...] | None = None
    write_namespaces: tuple[str, ...] | None = None
    steps: frozenset[StepKind] = DEFAULT_STEPS
    extensions: frozenset[str] | None = None
    max_plan_bytes: int | None = None
    max_relations: int | None = None
    max_depth: int | None = None
    max_result_rows: int | None = None
    sha256: frozenset[str] | None = None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], source: str = "policy") -> Policy:
        """A policy from its keys (`Rule`); an unknown key is refused, not ignored (a misspelt rule would
        otherwise silently allow what it meant to forbid)."""
        if not isinstance(data, Mapping):
            raise PolicyConfigError(f"{source}: expected a mapping of rules, got {type(data).__name__}")
        unknown = sorted(str(k) for k in data if k not in Rule._value2member_map_)
        if unknown:
            raise PolicyConfigError(f"{source}: unknown key(s) {unknown} (known: {', '.join(Rule)})")
        return cls(**{k: _READERS[Rule(k)](Rule(k), v) for k, v in data.items() if v is not None})

    @classmethod
    def from_file(cls, path: str | Path) -> Policy:
        """A policy from a YAML or JSON file."""
        import yaml  # YAML is a superset of JSON: one parser for both

        try:
            data = yaml.safe_load(Path(path).read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise PolicyConfigError(f"cannot read policy {path}: {exc}") from None
        return cls.from_mapping(data if data is not None else {}, f"policy {path}")

    @classmethod
    def of(cls, spec: Policy | str | Path | Mapping[str, Any] | None) -> Policy | None:
        """A policy as front ends take it: one built already, a file's path, or its keys as a mapping."""
        if spec is None or isinstance(spec, Policy):
            return spec
        if isinstance(spec, Mapping):
            return cls.from_mapping(spec)
        return cls.from_file(spec)

    def limits(self, engine: Limits) -> Limits:
        """The loader's bounds under this policy (only ever lower than the engine's)."""
        return engine.lowered(self.max_plan_bytes, self.max_depth)

    def refusal(self, exc: PlanTooLargeError, engine: Limits) -> PolicyRefusedError | None:
        """The loader's bound error as this policy's violation, when the bound was the policy's (lower) one."""
        mine = {Limit.MAX_PLAN_BYTES: self.max_plan_bytes, Limit.MAX_DEPTH: self.max_depth}[exc.limit]
        if mine is None or mine >= getattr(engine, str(exc.limit)):
            return None
        return PolicyRefusedError([Violation(Rule(str(exc.limit)), exc.message, exc.path)])

    def check(
        self,
        plan: Plan,
        sha256: str | None = None,
        names: TableNames | None = None,
        bindings: FileBindings | None = None,
    ) -> list[Violation]:
        """Every violation of this policy by `plan` (whose raw bytes have `sha256`), in plan order; views read
        through NamedTable are checked with their definitions, as `names` finds them; a NamedTable the run's table
        maps bind to files (`bindings`) is a read of those files."""
        found: list[Violation] = []
        if self.sha256 is not None and sha256 not in self.sha256:
            found.append(Violation(Rule.SHA256, f"plan sha256 {str(sha256)[:12]}... is not in the allow-list"))
        relations = sum(1 for msg, _ in nodes(plan) if isinstance(msg, alg.Rel))
        if self.max_relations is not None and relations > self.max_relations:
            found.append(
                Violation(Rule.MAX_RELATIONS, f"plan has {relations} relations, more than {self.max_relations}")
            )
        found.extend(_Checker(self, names or _Unqualified(), bindings).plan(plan, ""))
        return found

    def result_rows(self, asked: int | None, what: str) -> None:
        """Refuse a caller asking for more root rows back (XCom, the report, Dagster metadata) than allowed;
        `asked` None means all rows."""
        if self.max_result_rows is None or (asked is not None and asked <= self.max_result_rows):
            return
        wanted = "all rows" if asked is None else f"{asked} rows"
        raise PolicyRefusedError(
            [Violation(Rule.MAX_RESULT_ROWS, f"{what} asks for {wanted}, more than {self.max_result_rows}")]
        )

    def to_dict(self) -> dict[str, Any]:
        """The policy as a policy file holds it (sorted where sets)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = (
                sorted(value) if isinstance(value, frozenset) else list(value) if isinstance(value, tuple) else value
            )
        return out


# --- the walk ---------------------------------------------------------------------------------------------------


def normal_uri(uri: str) -> str | None:
    """A read location as the prefix check compares it: scheme lower-case, a bare path as `file:` + absolute path,
    `//` and `.` segments folded; None when it holds a `..` segment (it could climb out of any prefix)."""
    parts = urlsplit(uri)
    if len(parts.scheme) <= 1:  # a path (one letter: a Windows drive)
        path, scheme, netloc = uri, "file", ""
    else:
        path, scheme, netloc = parts.path, parts.scheme.lower(), parts.netloc
    if any(seg == ".." for seg in path.replace("\\", "/").replace(",", "/").replace("{", "/").split("/")):
        return None
    if scheme == "file":
        path = posixpath.abspath(path) if path else "/"
    elif path:
        path = posixpath.normpath(path) + ("/" if path.endswith("/") else "")
    query = f"?{parts.query}" if parts.query and scheme != "file" else ""
    return f"{scheme}://{netloc}{path}{query}"


def within(uri: str, prefix: str) -> bool:
    """Whether `uri` is `prefix` or under it (at a path boundary: `s3://b/team` does not cover `s3://b/team-x`)."""
    return uri == prefix or uri.startswith(prefix if prefix.endswith("/") else prefix + "/")


def _matches(namespace: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(namespace.lower(), p) for p in patterns)


class _Checker:
    """One pass over a plan (and the views it reads), collecting violations."""

    def __init__(self, policy: Policy, names: TableNames, bindings: FileBindings | None = None):
        self.policy = policy
        self.names = names
        self.bindings = bindings
        self.expanding: tuple[str, ...] = ()

    def plan(self, plan: Plan, prefix: str) -> Iterator[Violation]:
        for msg, path in nodes(plan):
            check = _CHECKS.get(type(msg))
            if check is not None:
                yield from check(self, msg, f"{prefix}{path}")

    def locations(self, uris: Sequence[tuple[str, str]]) -> Iterator[Violation]:
        allowed = self.policy.read_locations
        if allowed is None:
            return
        for uri, path in uris:
            yield from self.location(allowed, uri, f"read of {uri!r}", path)

    def location(self, allowed: tuple[str, ...], uri: str, what: str, path: str) -> Iterator[Violation]:
        normal = normal_uri(uri)
        if normal is None:
            yield Violation(Rule.READ_LOCATIONS, f"{what}: '..' segments are not allowed", path)
        elif not any(within(normal, p) for p in allowed):
            yield Violation(Rule.READ_LOCATIONS, f"{what} is outside the allowed locations", path)

    def bound_files(self, names: Sequence[str], path: str) -> Iterator[Violation]:
        """A NamedTable a table map binds to files: a read of those files, named with its binding."""
        allowed = self.policy.read_locations
        binding = self.bindings(names) if allowed is not None and self.bindings is not None else None
        if allowed is None or binding is None or not binding.files:
            return
        what = f"read of table {'.'.join(names)!r} (bound by the {binding.source} to {binding.uri!r})"
        yield from self.location(allowed, binding.uri, what, path)

    def namespace(self, rule: Rule, patterns: tuple[str, ...] | None, names: Sequence[str], what: str, path: str):
        if patterns is None:
            return
        name = ".".join(names)
        try:
            ns = self.names.namespace(names) if names else None
        except Exception as exc:  # a catalog that cannot say: refused, not allowed
            yield Violation(rule, f"{what} {name!r}: its namespace cannot be told ({exc})", path)
            return
        if ns is None:
            yield Violation(rule, f"{what} {name!r}: its namespace cannot be told (qualify the name)", path)
        elif not _matches(ns, patterns):
            yield Violation(rule, f"{what} {name!r} is in namespace {ns!r}, not an allowed one", path)

    def step(self, kind: StepKind | None, what: str, path: str) -> Iterator[Violation]:
        if kind is not None and kind not in self.policy.steps:
            yield Violation(Rule.STEPS, f"{kind} steps are not allowed ({what})", path)

    def extension(self, detail: Any, what: str, path: str) -> Iterator[Violation]:
        url = detail.type_url or "(no type URL)"
        if self.policy.extensions is not None and url not in self.policy.extensions:
            yield Violation(Rule.EXTENSIONS, f"{what} {url!r} is not allowed", path)

    def view(self, names: Sequence[str], path: str) -> Iterator[Violation]:
        """A NamedTable that is a view: its definition checked as if it were written here (once per view)."""
        key = ".".join(names).lower()
        if key in self.expanding:
            return  # a view reading itself: the run refuses it; checking it again would not end
        definition = self.names.view(names)
        if definition is None:
            return
        self.expanding = (*self.expanding, key)
        try:
            yield from self.plan(definition, f"{path}<view {'.'.join(names)}>.")
        finally:
            self.expanding = self.expanding[:-1]


def _read(cx: _Checker, rel: alg.ReadRel, path: str) -> Iterator[Violation]:
    kind = rel.WhichOneof("read_type")
    if kind == "named_table":
        names = list(rel.named_table.names)
        at = f"{path}.named_table"
        yield from cx.namespace(Rule.READ_NAMESPACES, cx.policy.read_namespaces, names, "read of", at)
        yield from cx.bound_files(names, at)
        yield from cx.view(names, at)
    elif kind == "local_files":
        items = rel.local_files.items
        uris = [
            (getattr(item, item.WhichOneof("path_type") or "uri_file"), f"{path}.local_files.items[{i}]")
            for i, item in enumerate(items)
        ]
        yield from cx.locations(uris)
    elif kind == "iceberg_table" and rel.iceberg_table.WhichOneof("table_type") == "direct":
        yield from cx.locations([(rel.iceberg_table.direct.metadata_uri, f"{path}.iceberg_table.direct")])
    elif kind == "extension_table":
        yield from cx.extension(rel.extension_table.detail, "extension table", f"{path}.extension_table")


@dataclass(frozen=True)
class _Change:
    """How a writing relation names its op, its target and an extension target (WriteRel and DdlRel alike)."""

    label: str
    ops: Any  # the protobuf enum wrapper of its `op`
    steps: Mapping[int, StepKind]
    named: str
    extension: str
    verb: str


_CHANGES: dict[type[Message], _Change] = {
    alg.WriteRel: _Change("WriteRel", WriteRel.WriteOp, WRITE_STEPS, "named_table", "extension_table", "write to"),
    alg.DdlRel: _Change("DdlRel", DdlRel.DdlOp, DDL_STEPS, "named_object", "extension_object", "DDL on"),
}


def _change(cx: _Checker, rel: Any, path: str) -> Iterator[Violation]:
    """A WriteRel or DdlRel: its step kind, then its target's namespace or its extension target's type URL."""
    c = _CHANGES[type(rel)]
    what = f"{c.label} {c.ops.Name(rel.op)}" if rel.op in c.ops.values() else c.label
    yield from cx.step(c.steps.get(rel.op), what, f"{path}.op")
    target = rel.WhichOneof("write_type")
    if target == c.named:
        names = list(getattr(rel, c.named).names)
        yield from cx.namespace(Rule.WRITE_NAMESPACES, cx.policy.write_namespaces, names, c.verb, path)
    elif target == c.extension:
        yield from cx.extension(getattr(rel, c.extension).detail, c.extension.replace("_", " "), f"{path}.{target}")


def _update(cx: _Checker, rel: alg.UpdateRel, path: str) -> Iterator[Violation]:
    yield from cx.step(StepKind.UPDATE, "UpdateRel", path)
    if rel.WhichOneof("update_type") == "named_table":
        names = list(rel.named_table.names)
        yield from cx.namespace(Rule.WRITE_NAMESPACES, cx.policy.write_namespaces, names, "update of", path)


def _extension_rel(cx: _Checker, rel: Any, path: str) -> Iterator[Violation]:
    yield from cx.extension(rel.detail, "extension relation", f"{path}.detail")


_CHECKS: dict[type[Message], Any] = {
    alg.ReadRel: _read,
    alg.WriteRel: _change,
    alg.DdlRel: _change,
    alg.UpdateRel: _update,
    alg.ExtensionLeafRel: _extension_rel,
    alg.ExtensionSingleRel: _extension_rel,
    alg.ExtensionMultiRel: _extension_rel,
}

__all__ = [
    "FileBinding",
    "FileBindings",
    "Policy",
    "PolicyConfigError",
    "PolicyRefusedError",
    "Rule",
    "StepKind",
    "TableNames",
    "Violation",
]
