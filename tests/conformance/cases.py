"""Parse the Substrait function test files (`testcases/**/*.test` of the `substrait-extensions` package).

The format (scalar, aggregate and window tests)::

    ### SUBSTRAIT_SCALAR_TEST: v1.0
    ### SUBSTRAIT_INCLUDE: extension:io.substrait:functions_arithmetic
    # group: description
    add(120::i8, 10::i8) [overflow:ERROR] = <!ERROR>
    sum((0, -1, 2, 20)::i8) = 21::i64?                                    (aggregate, inline column)
    ((1.0), (2.0)) variance(SAMPLE::enum, col0::fp32) = 2.5::fp32?        (aggregate over an inline table)
    DEFINE f1(i32) = ((1998), (1999))                                     (a named table for the next case)

A case keeps its arguments as text pairs (value text, type text); `values.py` turns them into literals.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ERROR = "<!ERROR>"
UNDEFINED = "<!UNDEFINED>"


def testcases_dir() -> Path:
    import substrait_extensions

    return Path(next(iter(substrait_extensions.__path__))) / "testcases"


@dataclass
class Case:
    file: str  # e.g. "arithmetic/add.test"
    line: int
    kind: str  # scalar | aggregate | window
    urn: str
    group: str
    text: str
    function: str = ""
    args: list[tuple[str, str]] = field(default_factory=list)  # (value text, type text)
    options: dict[str, str] = field(default_factory=dict)
    expected: tuple[str, str] | str = ""  # (value, type) or ERROR / UNDEFINED
    table: list[tuple[str, list[str]]] | None = None  # aggregate/window input: columns (type, values)
    deps: list[str] = field(default_factory=list)  # SUBSTRAIT_DEPENDENCY URNs (functions inside lambdas)
    parse_error: str | None = None

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}"


def _unquoted(text: str, start: int = 0) -> Iterator[int]:
    """Positions in `text` from `start` outside single-quoted strings (`''` and a backslash escape inside one)."""
    quote, i = False, start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" or (ch == "'" and text[i + 1 : i + 2] == "'"):
                i += 1
            elif ch == "'":
                quote = False
        elif ch == "'":
            quote = True
        else:
            yield i
        i += 1


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split at `sep` outside quotes and (), [], <> nesting."""
    out, depth, begin = [], 0, 0
    for i in _unquoted(text):
        ch = text[i]
        if ch in "([<":
            depth += 1
        elif ch in ")]>" and not (ch == ">" and i > 0 and text[i - 1] == "-"):
            depth -= 1
        elif ch == sep and depth == 0:
            out.append(text[begin:i].strip())
            begin = i + 1
    tail = text[begin:].strip()
    if tail or out:
        out.append(tail)
    return out


def matching_paren(text: str, start: int) -> int:
    """Index of the ')' closing the '(' at `start` (quotes respected)."""
    depth = 0
    for i in _unquoted(text, start):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError("unbalanced parentheses")


def split_typed(text: str) -> tuple[str, str]:
    """`value::type` -> (value, type); the last `::` outside quotes."""
    pos = skip = -1
    for i in _unquoted(text):
        if i > skip and text.startswith("::", i):
            pos, skip = i, i + 1
    if pos < 0:
        return text.strip(), ""
    return text[:pos].strip(), text[pos + 2 :].strip()


_OPTS = re.compile(r"\s*\[([^\]]*)\]\s*$")
_TABLE_ROWS = re.compile(r"^\((.*)\)$", re.S)


def parse_rows(text: str, ncols: int) -> list[list[str]]:
    """`((1, 2), (3, 4))` -> rows of value texts."""
    text = text.strip()
    m = _TABLE_ROWS.match(text)
    if not m:
        raise ValueError(f"not a table: {text}")
    inner = m.group(1).strip()
    if not inner:
        return []
    rows = []
    for r in split_top(inner):
        r = r.strip()
        if not (r.startswith("(") and r.endswith(")")):
            raise ValueError(f"not a row: {r}")
        rows.append(split_top(r[1:-1]))
    return rows


def parse_call(case: Case, call: str) -> str:
    """Fill function/args from `name(args...)`; returns the text after the closing parenthesis."""
    m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(", call)
    if not m:
        raise ValueError("no function call")
    case.function = m.group(1)
    close = matching_paren(call, m.end() - 1)
    inner = call[m.end() : close]
    case.args = [split_typed(a) for a in split_top(inner)] if inner.strip() else []
    return call[close + 1 :]


def _parse_result(case: Case, rest: str) -> None:
    rest = rest.strip()
    if not rest.startswith("="):
        # options may come before '='
        m = re.match(r"\[([^\]]*)\]\s*=", rest)
        if not m:
            raise ValueError("no '=' after the call")
        for opt in split_top(m.group(1)):
            k, _, v = opt.partition(":")
            case.options[k.strip()] = v.strip()
        rest = rest[m.end() - 1 :]
    exp = rest[1:].strip()
    case.expected = exp if exp in (ERROR, UNDEFINED) else split_typed(exp)


def parse_file(path: Path, root: Path) -> list[Case]:
    rel = path.relative_to(root).as_posix()
    kind, urn, group = "scalar", "", ""
    deps: list[str] = []
    defines: dict[str, tuple[list[str], str]] = {}
    cases: list[Case] = []
    for lineno, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("###"):
            body = line.lstrip("#").strip()
            if body.startswith("SUBSTRAIT_AGGREGATE_TEST"):
                kind = "aggregate"
            elif body.startswith("SUBSTRAIT_WINDOW_TEST"):
                kind = "window"
            elif body.startswith("SUBSTRAIT_INCLUDE"):
                urn = body.partition(":")[2].strip().strip("'\"")
            elif body.startswith("SUBSTRAIT_DEPENDENCY"):
                deps.append(body.partition(":")[2].strip().strip("'\""))
            continue
        if line.startswith("#"):
            group = line.lstrip("#").strip().partition(":")[0].strip()
            continue
        if line.startswith("DEFINE"):
            m = re.match(r"DEFINE\s+(\w+)\s*\(([^)]*)\)\s*=\s*(.*)$", line)
            if m:
                defines[m.group(1)] = ([t.strip() for t in split_top(m.group(2))], m.group(3))
            continue
        case = Case(rel, lineno, kind, urn, group, line, deps=list(deps))
        try:
            if kind == "scalar":
                _parse_result(case, parse_call(case, line))
            elif kind == "aggregate":
                _parse_aggregate(case, line, defines)
            else:
                _parse_window(case, line, defines)
        except Exception as e:
            case.parse_error = f"parse: {e}"
        cases.append(case)
    return cases


def _parse_aggregate(case: Case, line: str, defines: dict[str, tuple[list[str], str]]) -> None:
    text = line
    table: list[tuple[str, list[str]]] | None = None
    if text.startswith("(("):
        close = matching_paren(text, 0)
        rows_text, text = text[: close + 1], text[close + 1 :]
        rows = parse_rows(rows_text, 0)
        ncols = len(rows[0]) if rows else 0
        table = [("", [r[i] for r in rows]) for i in range(ncols)]
    rest = parse_call(case, text)
    _parse_result(case, rest)
    cols: list[tuple[str, list[str]]] = []
    args: list[tuple[str, str]] = []
    for value, type_ in case.args:
        if value.startswith("(") and value.endswith(")"):  # an inline column
            vals = split_top(value[1:-1])
            cols.append((type_, vals))
            args.append((f"col{len(cols) - 1}", type_))
        elif re.fullmatch(r"(\w+\.)?col\d+", value):
            t, _, c = value.rpartition(".")
            idx = int(c[3:])
            if t and t in defines:
                types, rows_text = defines[t]
                rows = parse_rows(rows_text, len(types))
                table = [(types[i], [r[i] for r in rows]) for i in range(len(types))]
            if table is None:
                raise ValueError(f"{value} without a table")
            while len(table) <= idx:  # an empty table `(())` names no columns
                table.append(("", []))
            ty, vals = table[idx]
            table[idx] = (ty or type_, vals)
            args.append((value.rpartition(".")[2], type_))
        else:
            args.append((value, type_))
    if cols and table is None:
        table = cols
    case.args = args
    case.table = table


def _parse_window(case: Case, line: str, defines: dict[str, tuple[list[str], str]]) -> None:
    """`lag(col0, 2::i32) OVER f1 = (Null, 1998)::i32?`: the function over the named table (no partitions, in
    the table's order); the expected value is one value per row."""
    m = re.match(r"(.*\))\s+OVER\s+(\w+)(.*)$", line)
    if not m:
        raise ValueError("no OVER <table>")
    call, table_name, rest = m.groups()
    if parse_call(case, call).strip():
        raise ValueError("text between the call and OVER")
    if table_name not in defines:
        raise ValueError(f"OVER {table_name}: no such DEFINE")
    types, rows_text = defines[table_name]
    rows = parse_rows(rows_text, len(types))
    case.table = [(t, [r[i] for r in rows]) for i, t in enumerate(types)]
    args = []
    for value, type_ in case.args:
        col = re.fullmatch(r"col(\d+)", value)
        if col and not type_:
            if int(col.group(1)) >= len(types):
                raise ValueError(f"{value}: the table has {len(types)} columns")
            type_ = types[int(col.group(1))]
        args.append((value, type_))
    case.args = args
    _parse_result(case, rest)


def load_cases(root: Path | None = None) -> list[Case]:
    root = root or testcases_dir()
    out: list[Case] = []
    for path in sorted(root.rglob("*.test")):
        out.extend(parse_file(path, root))
    return out
