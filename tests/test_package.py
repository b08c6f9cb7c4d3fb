"""The package face: cheap to import, the engine free of orchestrator imports, the public names resolvable."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.unit]

ROOT = Path(__file__).resolve().parents[1]


def test_import_is_cheap():
    """Importing the package starts no JVM and loads neither pyspark, protobuf nor any orchestrator."""
    code = (
        "import sys, substrait_spark, substrait_spark.consumer, substrait_spark.hooks, substrait_spark.operators;"
        "print(sorted(m for m in ('pyspark', 'py4j', 'google.protobuf', 'substrait.plan_pb2', 'airflow',"
        " 'dagster', 'boto3') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/", check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_public_names_resolve():
    import substrait_spark

    for name in substrait_spark.__all__:
        assert getattr(substrait_spark, name) is not None, name


def test_engine_imports_no_orchestrator_and_no_jvm_access():
    """consumer/ must run in a bare Spark driver and through Spark Connect (DESIGN: layering rules)."""
    banned_imports = ("import airflow", "from airflow", "import dagster", "from dagster", "import boto3")
    banned_calls = ("sparkContext", "._jvm", ".rdd", "udf(", "pandas_udf")
    offenders = []
    for path in sorted((ROOT / "consumer").rglob("*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if any(code.lstrip().startswith(b) for b in banned_imports) or any(b in code for b in banned_calls):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_setup_cfg_lists_every_subpackage():
    """A wheel (not the editable install the tests use) holds only the packages setup.cfg lists."""
    import configparser

    root = Path(__file__).resolve().parent.parent
    cfg = configparser.ConfigParser()
    cfg.read(root / "setup.cfg")
    listed = set(cfg["options"]["packages"].split())
    dirs = {"substrait_spark": "plugin", "substrait_spark.consumer": "consumer", "substrait_spark.hooks": "hooks"}
    dirs["substrait_spark.operators"] = "operators"
    found = set()
    for package, folder in dirs.items():
        for init in (root / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(root / folder)
            found.add(".".join([package, *rel.parts]) if rel.parts else package)
    assert found == listed


def test_submit_application_is_a_file_that_runs_the_cli(tmp_path):
    """`SUBMIT_APPLICATION`, what spark-submit is given, runs as a file (as spark-submit runs it: its folder first
    on sys.path) and is the CLI: its commands, output and exit codes."""
    from substrait_spark import SUBMIT_APPLICATION

    app = Path(SUBMIT_APPLICATION)
    assert app.is_file() and app.suffix == ".py"  # spark-submit takes a .py file for a Python application
    plan = ROOT / "dags_examples" / "plans" / "daily_pricing_summary.json"
    ok = subprocess.run([sys.executable, str(app), "validate", str(plan)], capture_output=True, text=True, cwd=tmp_path)
    assert (ok.returncode, ok.stdout.splitlines()[0]) == (0, f"{plan}: supported"), ok.stderr
    missing = subprocess.run([sys.executable, str(app), "run", "no-such.json"], capture_output=True, text=True)
    assert missing.returncode == 2 and "plan not found" in missing.stderr


def test_submit_application_in_a_python_without_the_package_says_which_python(tmp_path):
    """spark-submit starts `python3` unless told otherwise: one line naming the Python and the setting, exit 1."""
    from substrait_spark import SUBMIT_APPLICATION

    bare = subprocess.run(
        [sys.executable, "-S", SUBMIT_APPLICATION, "validate", "x.json"], capture_output=True, text=True
    )
    assert bare.returncode == 1 and "Traceback" not in bare.stderr, bare.stderr
    assert f"the driver's Python {sys.executable} cannot import substrait_spark" in bare.stderr
    assert "spark.pyspark.driver.python" in bare.stderr
