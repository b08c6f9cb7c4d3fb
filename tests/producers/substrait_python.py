"""Plans written by the ``substrait`` Python package (``substrait_cases.py``), in the package's own environment.

substrait 0.37.1 pins substrait-protobuf 0.106.0 exactly, and the project pins 0.108.0: the two cannot share one
environment, so the package gets a virtualenv of its own under ``.data/producers/venvs/`` made from
``substrait-python.txt`` (the pin, one line), and the cases run there as a script. The plans are read here
as bytes, as a user's plans would be.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from . import substrait_cases
from .cache import CACHE_ROOT, Generated, cached_plans, digest

PRODUCER = "substrait-python"
REQUIREMENTS = Path(__file__).with_name("substrait-python.txt")
CASES_SOURCE = Path(substrait_cases.__file__)


def requirement() -> str:
    (line,) = [ln.strip() for ln in REQUIREMENTS.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    return line


def version() -> str:
    m = re.fullmatch(r"substrait(?:\[[\w,]+\])?==([\w.]+)", requirement())
    if not m:
        raise ValueError(f"{REQUIREMENTS}: expected one pinned line substrait[...]==X, got {requirement()!r}")
    return m.group(1)


def environment() -> Path:
    """The producer's interpreter; the virtualenv is made (pip from the registry) when the pin changed."""
    venv = CACHE_ROOT / "venvs" / f"{PRODUCER}-{digest(requirement())[:12]}"
    python = venv / "bin" / "python"
    stamp = venv / ".installed"
    if stamp.is_file() and python.exists():
        return python
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, capture_output=True)
    pip = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", requirement()],
        capture_output=True,
        text=True,
        check=False,
    )
    if pip.returncode != 0:
        raise RuntimeError(f"installing {requirement()} failed:\n{pip.stderr.strip()[-2000:]}")
    stamp.write_text(requirement())
    return python


def plans() -> dict[str, Generated]:
    """Every case's plan, from the cache or built now; a change to substrait_cases.py rebuilds them all."""
    source = CASES_SOURCE.read_text()
    sources = {case.name: source for case in substrait_cases.CASES}

    def generate(out: Path, names: list[str]) -> None:
        proc = subprocess.run(
            [str(environment()), str(CASES_SOURCE), str(out), *names], capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            raise RuntimeError(f"{PRODUCER} {version()} failed:\n{proc.stderr.strip()[-2000:]}")

    return cached_plans(PRODUCER, version(), sources, generate)
