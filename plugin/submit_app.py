"""The application file to hand spark-submit (or the Spark provider's `SparkSubmitOperator`) to run the CLI as a
Spark application: `spark-submit [options] <SUBMIT_APPLICATION> run PLAN ... --output-dir DIR`.

The CLI then runs in the driver spark-submit started, on the session spark-submit configured (its master, name
and `--conf`s: `hooks/spark.py`); spark-submit's exit code in client mode is the CLI's (0 ok, 1-5 as the CLI's).
"""

from __future__ import annotations

import sys
from pathlib import Path

SUBMIT_APPLICATION = str(Path(__file__).resolve())


def _main() -> int:
    # Run as a file, the file's own folder comes first on sys.path: this package's modules (`dagster/`, `graph.py`,
    # `api.py`) would stand in for top-level ones of those names. The CLI is imported by its package name instead.
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    try:
        from substrait_spark.cli import main
    except ModuleNotFoundError as exc:  # spark-submit started a Python without substrait-spark (`python3` by default)
        print(
            f"substrait-spark: the driver's Python {sys.executable} cannot import {exc.name}: give spark-submit the "
            "Python substrait-spark is installed in (spark.pyspark.driver.python, or PYSPARK_DRIVER_PYTHON)",
            file=sys.stderr,
        )
        return 1  # ExitCode.EXECUTION_FAILED: the plan did not run
    return main()


if __name__ == "__main__":
    sys.exit(_main())
