"""What a Spark failure becomes: one typed error, in one place, for a root's query and a step's write alike."""

from __future__ import annotations

from ..errors import ExecutionError, RequiredColumnNullError, first_line
from ..translation.nullability import REQUIRED_NULL_MESSAGE


def spark_error(exc: Exception) -> ExecutionError:
    """The typed error of a failure Spark raised: a NULL reaching a column written as REQUIRED
    (`nullability.required`) names the column; any other failure is its first line (py4j's text cut to one)."""
    text = first_line(exc, 500)
    null = REQUIRED_NULL_MESSAGE.search(text) or REQUIRED_NULL_MESSAGE.search(str(exc))
    if null is not None:
        return RequiredColumnNullError(null[0])
    return ExecutionError(f"Spark failed: {text}")
