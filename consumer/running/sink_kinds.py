"""The kinds of result sink and their output formats, as enums.

No pyspark here: the CLI builds its `--output-format` choices from `FILE_FORMATS` without importing Spark. Both are
`StrEnum`s, so they compare equal to (and serialise as) the strings they replaced.
"""

from __future__ import annotations

from enum import StrEnum


class SinkKind(StrEnum):
    """Where a root's rows go (`sinks.Sink`)."""

    DISCARD = "discard"  # run, count, keep nothing
    PREVIEW = "preview"  # the first rows
    FILE = "file"  # one local file (the CLI's --output-dir)
    FOLDER = "folder"  # a Spark folder write at a path or URI
    TABLE = "table"  # a table in Spark's catalog


class OutputFormat(StrEnum):
    """The format of a file or folder sink."""

    CSV = "csv"
    PARQUET = "parquet"
    JSONL = "jsonl"  # one JSON object a line (Spark's `json` source)
    JSON = "json"
    ORC = "orc"


# One file: what `--output-format` offers. A folder: what Spark's writers take (`jsonl` is Spark's `json`).
FILE_FORMATS = (OutputFormat.CSV, OutputFormat.PARQUET, OutputFormat.JSONL)
FOLDER_FORMATS = (OutputFormat.PARQUET, OutputFormat.ORC, OutputFormat.CSV, OutputFormat.JSON, OutputFormat.JSONL)
