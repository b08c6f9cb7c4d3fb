"""The one write-or-check step of the generated docs (functions.md, types.md): `--check` compares and lists what is
unaccounted for; without it the file is written."""

from __future__ import annotations

import argparse
from pathlib import Path


def check_requested(description: str, argv: list[str] | None) -> bool:
    args = argparse.ArgumentParser(description=description)
    args.add_argument("--check", action="store_true", help="compare with the committed file; write nothing")
    return args.parse_args(argv).check


def write_or_check(doc: Path, text: str, unaccounted: list[str], what: str, command: str, check: bool) -> int:
    """Exit status: 1 when checking finds the file stale or something unaccounted for."""
    if check:
        stale = not doc.exists() or doc.read_text() != text
        if stale:
            print(f"{doc} is out of date: run {command}")
        if unaccounted:
            print(f"{what}:\n  " + "\n  ".join(unaccounted))
        return 1 if stale or unaccounted else 0
    doc.write_text(text)
    print(f"wrote {doc}; {what}: {', '.join(unaccounted) or 'none'}")
    return 0
