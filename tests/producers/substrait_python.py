"""Plans written by the ``substrait`` Python package (``substrait_cases.py``), in the package's own environment.

substrait 0.37.1 pins substrait-protobuf 0.106.0 exactly, and the project pins 0.108.0: the two cannot share one
environment, so the package is installed on its own (tools/pinned_envs.py, the pin is its line there) and the cases
run there as a script. The plans are read here as bytes, as a user's plans would be.
"""

from __future__ import annotations

from pathlib import Path

import pinned_envs  # tools/, on the path through conftest

from . import substrait_cases
from .cache import Generated, cached_plans

PRODUCER = "substrait-python"
CASES_SOURCE = Path(substrait_cases.__file__)


def version() -> str:
    return pinned_envs.version(PRODUCER, "substrait")


def plans() -> dict[str, Generated]:
    """Every case's plan, from the cache or built now; a change to substrait_cases.py rebuilds them all."""
    source = CASES_SOURCE.read_text()
    sources = {case.name: source for case in substrait_cases.CASES}

    def generate(out: Path, names: list[str]) -> None:
        pinned_envs.run_python(PRODUCER, [str(CASES_SOURCE), str(out), *names])

    return cached_plans(PRODUCER, version(), sources, generate)
