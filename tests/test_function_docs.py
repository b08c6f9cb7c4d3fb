"""docs/functions.md is generated from the function tables, and every standard-extension function is accounted for:
mapped to native Spark, or listed in consumer/translation/functions/unsupported.py with the reason."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parent.parent / "tools"
sys.path.insert(0, str(TOOLS))

import functions_doc  # noqa: E402

pytestmark = [pytest.mark.unit]


def test_every_standard_function_is_mapped_or_has_a_reason():
    missing = [f"{e.extension}/{e.name} ({e.kind})" for e in functions_doc.entries() if e.status == "missing"]
    where = "consumer/translation/functions/unsupported.py"
    assert not missing, f"map these or list them in {where}:\n" + "\n".join(missing)


def test_functions_doc_is_current():
    text = functions_doc.render(functions_doc.entries())
    assert functions_doc.DOC.read_text() == text, "regenerate with: .venv/bin/python tools/functions_doc.py"
