"""The engine's stage order (issue 29): no module-level import points to a later stage, no import circle spans
stages (tools/stage_order.py, which `make lint` runs)."""

from __future__ import annotations

from pathlib import Path

import pytest
import stage_order  # tools/ is on sys.path (conftest.py)

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent


def write(project: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return project


PACKAGES = {
    "consumer/__init__.py": "",
    "consumer/loading/__init__.py": "",
    "consumer/translation/__init__.py": "",
    "consumer/running/__init__.py": "",
}


def test_engine_imports_follow_the_stage_order() -> None:
    report = stage_order.check(ROOT)
    assert report.ok, "\n".join(report.lines())


def test_upward_imports_and_circles_across_stages_are_found(tmp_path: Path) -> None:
    project = write(
        tmp_path,
        {
            **PACKAGES,
            "consumer/errors.py": "from .loading.reader import read\n",
            "consumer/loading/reader.py": (
                "from typing import TYPE_CHECKING\n"
                "from ..errors import Error\n"
                "if TYPE_CHECKING:\n"
                "    from ..running.run import Run\n"
                "def read():\n"
                "    from ..translation.scope import Scope\n"
            ),
            "consumer/translation/scope.py": "from ..running import run\n",
            "consumer/translation/view.py": (
                "from substrait_spark.consumer.running.run import Run\nfrom . import scope\n"
            ),
            "consumer/running/run.py": "from ..translation.scope import Scope\n",
        },
    )
    report = stage_order.check(project)
    assert [(i.path, i.line, i.target) for i in report.upward] == [
        ("consumer/errors.py", 1, "consumer.loading.reader"),
        ("consumer/translation/scope.py", 1, "consumer.running.run"),
        ("consumer/translation/view.py", 1, "consumer.running.run"),
    ]
    assert report.circles == [
        ["consumer.errors", "consumer.loading.reader"],
        ["consumer.running.run", "consumer.translation.scope"],
    ]
    assert not report.ok
    assert stage_order.main([str(project)]) == 1
