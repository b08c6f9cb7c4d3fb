"""Generate docs/functions.md from the function tables: every function of the standard extension YAMLs, mapped to
native Spark or listed as unsupported with its reason.

.venv/bin/python tools/functions_doc.py          (writes docs/functions.md)
.venv/bin/python tools/functions_doc.py --check  (exit 1 if the committed file differs or a function is unaccounted)
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import yaml
from docgen import check_requested, write_or_check

REPO_ROOT = Path(__file__).resolve().parent.parent
DOC = REPO_ROOT / "docs" / "functions.md"

# The standard extensions issue 7 covers, plus the decimal rounding and unsigned-integer files shipped beside them.
STANDARD = (
    "functions_arithmetic", "functions_arithmetic_decimal", "functions_boolean", "functions_comparison",
    "functions_datetime", "functions_string", "functions_rounding", "functions_rounding_decimal",
    "functions_logarithmic", "functions_set", "functions_list", "functions_aggregate_generic",
    "functions_aggregate_approx", "functions_aggregate_decimal_output", "unsigned_integers",
)  # fmt: skip
KINDS = {"scalar_functions": "scalar", "aggregate_functions": "aggregate", "window_functions": "window"}


@dataclass(frozen=True)
class Entry:
    extension: str
    name: str
    kind: str
    signatures: int
    status: str  # "native" or "unsupported" or "missing"
    note: str


def extensions_dir() -> Path:
    import substrait_extensions

    return Path(next(iter(substrait_extensions.__path__))) / "extensions"


def tables() -> dict[str, dict]:
    """The consumer's tables by function kind; a window function may also be any aggregate."""
    from substrait_spark.consumer.translation.consumer import SubstraitConsumer

    window = getattr(SubstraitConsumer, "window_functions", {})
    return {
        "scalar": SubstraitConsumer.scalar_functions,
        "aggregate": SubstraitConsumer.aggregate_functions,
        "window": {**SubstraitConsumer.aggregate_functions, **window},
    }


def entries() -> list[Entry]:
    from substrait_spark.consumer.translation.functions import UNSUPPORTED

    by_kind = tables()
    out: list[Entry] = []
    for stem in STANDARD:
        doc = yaml.safe_load((extensions_dir() / f"{stem}.yaml").read_text())
        for section, kind in KINDS.items():
            for fn in doc.get(section) or []:
                name = fn["name"].lower()
                keys = (f"{stem}/{name}", name)
                table = by_kind[kind]
                handler = next((table[k] for k in keys if k in table), None)
                reason = next((UNSUPPORTED[k] for k in keys if k in UNSUPPORTED), None)
                if handler is not None:
                    status, note = "native", _first_line(getattr(handler, "__doc__", None))
                elif reason is not None:
                    status, note = "unsupported", reason
                else:
                    status = "missing"
                    note = "not mapped and not listed in consumer/translation/functions/unsupported.py"
                out.append(Entry(stem, fn["name"], kind, len(fn.get("impls") or []), status, note))
    return out


def _first_line(doc: str | None) -> str:
    return doc.strip().splitlines()[0] if doc and doc.strip() else ""


def render(items: list[Entry]) -> str:
    native = sum(e.status == "native" for e in items)
    unsupported = [e for e in items if e.status == "unsupported"]
    lines = [
        "# Functions",
        "",
        f"Every function of the standard extension YAMLs (`substrait-extensions=={version('substrait-extensions')}`) "
        "and how the consumer runs it. Generated from the function tables "
        "(`consumer/translation/functions/`: the scalar, "
        "aggregate and window tables, and `UNSUPPORTED` with its reasons) by `.venv/bin/python tools/functions_doc.py`;"
        " `tests/test_function_docs.py` checks this file is current and that no function is unaccounted for.",
        "",
        "*native* means the function translates to Spark's own Catalyst expressions (no Python UDFs). How well each "
        "overload and option holds against the spec's test cases is in [conformance.md](conformance.md).",
        "",
        f"**{native} of {len(items)} functions map to native Spark; {len(unsupported)} are unsupported, each with "
        "its reason.**",
        "",
        "Not covered: `functions_geometry.yaml` (Spark 3.5 has no geometry type).",
        "",
    ]
    for stem in STANDARD:
        group = [e for e in items if e.extension == stem]
        ok = sum(e.status == "native" for e in group)
        lines += [f"## {stem}", "", f"{ok} of {len(group)} native.", ""]
        lines += ["| function | kind | overloads | status | note |", "|---|---|---:|---|---|"]
        for e in sorted(group, key=lambda e: (e.kind, e.name)):
            note = e.note.replace("|", "\\|")
            lines.append(f"| `{e.name}` | {e.kind} | {e.signatures} | {e.status} | {note} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    check = check_requested(__doc__.splitlines()[0], argv)
    items = entries()
    missing = [f"{e.extension}/{e.name} ({e.kind})" for e in items if e.status == "missing"]
    what = "functions neither mapped nor in consumer/translation/functions/unsupported.py"
    return write_or_check(DOC, render(items), missing, what, ".venv/bin/python tools/functions_doc.py", check)


if __name__ == "__main__":
    sys.exit(main())
