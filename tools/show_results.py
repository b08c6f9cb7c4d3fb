"""Print what `substrait-spark run --output-dir DIR` left behind: summary.json, then the head of each result.

A result `<stem>.csv` may be a single file or a Spark-style folder of part files; both are shown.

    python tools/show_results.py .data/demo [--rows 10] [STEM ...]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

MAX_SUMMARY_LINES = 200


def result_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith((".", "_")))
    return []


def head(path: Path, rows: int) -> list[str]:
    """The first line of the first file (the header, if any) and `rows` more lines across the files."""
    lines: list[str] = []
    for i, f in enumerate(result_files(path)):
        with f.open(encoding="utf-8", errors="replace") as fh:
            for j, raw in enumerate(fh):
                line = raw.rstrip("\r\n")
                if i > 0 and j == 0 and lines and line == lines[0]:
                    continue  # each part file repeats the header
                lines.append(line)
                if len(lines) > rows:
                    return lines
    return lines


def show_summary(out_dir: Path) -> None:
    summary = out_dir / "summary.json"
    print(f"==> {summary}")
    if not summary.is_file():
        print("    (missing)")
        return
    try:
        text = json.dumps(json.loads(summary.read_text()), indent=2, default=str)
    except ValueError as exc:
        print(f"    (not valid JSON: {exc})")
        return
    lines = text.splitlines()
    print("\n".join(lines[:MAX_SUMMARY_LINES]))
    if len(lines) > MAX_SUMMARY_LINES:
        print(f"    ... {len(lines) - MAX_SUMMARY_LINES} more lines in {summary}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output_dir", type=Path)
    parser.add_argument("stems", nargs="*", help="plan file stems to show (default: every result)")
    parser.add_argument("--rows", type=int, default=10)
    parser.add_argument("--format", default="csv")
    args = parser.parse_args(argv)

    show_summary(args.output_dir)
    if args.stems:
        paths = [args.output_dir / f"{s}.{args.format}" for s in args.stems]
    else:
        paths = sorted(args.output_dir.glob(f"*.{args.format}"))
    for path in paths:
        print(f"\n==> {path}")
        lines = head(path, args.rows)
        if not result_files(path):
            print("    (no result)")
        elif not lines:
            print("    (empty)")
        else:
            print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
