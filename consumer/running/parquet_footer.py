"""A local parquet table's schema read from its footer, as Spark's own inference would give it, without a job.

Without a schema, `spark.read.parquet(path)` infers one with a Spark job (one task reading a footer): 0.1-1 s per
table on a busy machine, paid by every one-off `substrait-spark run`. The footer says the same thing; read here
with pyarrow (a dependency through pyiceberg) and handed to `spark.read.schema(...)`, which runs no job.

Only what maps one way whatever the session's settings is read here: flat columns of the primitive types below,
in files Spark would list (a file, or a folder of data files with no partition folders or summary files), every
file with the same schema. Anything else (nested or repeated columns, timestamps, INT96, unsigned or unannotated
binary columns, field ids Spark may read by) returns None and Spark infers, as before.

`footer_columns` gives the check before Spark (`validate`, `running/table_check.py`) every top-level column, each with
the Spark types a read may give it: also the setting-dependent ones (a timestamp without time zone), and none for
what only Spark types.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from pyspark.sql import types as T

MAX_FILES = 64  # a folder with more data files is left to Spark (each footer read is a file open)

# (physical type, logical type) -> Spark type, as Spark 3.5/4's ParquetToSparkSchemaConverter maps them with no
# setting involved. Decimals and integer widths are handled in `_spark_type`.
_PLAIN: dict[tuple[str, str], T.DataType] = {
    ("BOOLEAN", "None"): T.BooleanType(),
    ("INT32", "None"): T.IntegerType(),
    ("INT32", "Date"): T.DateType(),
    ("INT64", "None"): T.LongType(),
    ("FLOAT", "None"): T.FloatType(),
    ("DOUBLE", "None"): T.DoubleType(),
    ("BYTE_ARRAY", "String"): T.StringType(),
}
_SIGNED_INTS: dict[tuple[str, int], T.DataType] = {
    ("INT32", 8): T.ByteType(),
    ("INT32", 16): T.ShortType(),
    ("INT32", 32): T.IntegerType(),
    ("INT64", 64): T.LongType(),
}
# The largest decimal precision each physical type may hold (Spark refuses a file that declares more).
_DECIMAL_PRECISION = {"INT32": 9, "INT64": 18, "FIXED_LEN_BYTE_ARRAY": 38, "BYTE_ARRAY": 38}


def local_path(uri: str) -> Path | None:
    """The local path of `uri` (a path or `file:` URI without glob characters), else None."""
    parsed = urlparse(uri)
    if parsed.scheme not in ("", "file") or any(ch in uri for ch in "*?[{"):
        return None
    return Path(parsed.path if parsed.scheme else uri)


def local_files(uri: str) -> list[Path] | None:
    """The data files Spark would read for a local `uri` (a path or `file:` URI), or None when Spark lists
    something this module does not imitate (another file system, partition folders, summary files, globs)."""
    path = local_path(uri)
    if path is None:
        return None
    if path.is_file():
        return [path]
    if not path.is_dir():
        return None
    files = []
    for p in sorted(path.iterdir()):
        if p.name.startswith((".", "_")):
            if p.name in ("_metadata", "_common_metadata"):
                return None
            continue  # hidden and marker files (_SUCCESS, .crc): Spark skips them too
        if not p.is_file():
            return None  # partition folders: Spark infers partition columns
        files.append(p)
    return files if 0 < len(files) <= MAX_FILES else None


def footer_schema(uri: str) -> T.StructType | None:
    """The schema Spark would infer for the parquet table at `uri`, read from the footers; None when in doubt."""
    files = local_files(uri)
    if files is None:
        return None
    try:
        import pyarrow.parquet as pq

        schemas = [_schema(pq.ParquetFile(f).schema) for f in files]
    except Exception:  # not parquet, unreadable: Spark reports it in its own words
        return None
    first = schemas[0]
    return first if first is not None and all(s == first for s in schemas[1:]) else None


def _schema(parquet_schema) -> T.StructType | None:
    arrow = parquet_schema.to_arrow_schema()
    if len(arrow) != len(parquet_schema) or len({n.lower() for n in arrow.names}) != len(arrow):
        return None  # nested columns (more leaves than fields) or names Spark would reject as ambiguous
    fields = []
    for i in range(len(parquet_schema)):
        column = parquet_schema.column(i)
        if column.max_repetition_level != 0 or column.path != arrow.names[i]:
            return None
        t = _spark_type(column.physical_type, json.loads(column.logical_type.to_json()))
        if t is None:
            return None
        fields.append(T.StructField(column.path, t, True))  # Spark reads files' columns as nullable
    return T.StructType(fields)


def _spark_type(physical: str, logical: dict) -> T.DataType | None:
    kind = logical.get("Type", "None")
    if kind == "Decimal" and 0 < logical["precision"] <= _DECIMAL_PRECISION.get(physical, 0):
        return T.DecimalType(logical["precision"], logical["scale"])
    if kind == "Int":
        return _SIGNED_INTS.get((physical, logical["bitWidth"])) if logical["isSigned"] else None
    return _PLAIN.get((physical, kind))


@dataclass(frozen=True)
class FooterColumn:
    """A top-level column of a parquet table and the Spark types a read may give it: one, or several where
    Spark's settings decide (a timestamp not adjusted to UTC: TIMESTAMP_NTZ, or TIMESTAMP when
    `spark.sql.parquet.inferTimestampNTZ.enabled` is off), or none worked out here (nested, INT96, nanoseconds)."""

    name: str
    types: tuple[T.DataType, ...]
    note: str = ""  # why there is not exactly one type


# Why a column's Spark type is not one type worked out here.
NTZ_NOTE = (
    "a timestamp without time zone: TIMESTAMP_NTZ, or TIMESTAMP if spark.sql.parquet.inferTimestampNTZ.enabled is off"
)
UNKNOWN_NOTE = "nested, INT96, nanosecond or unannotated: Spark types it when it reads"


def footer_columns(uri: str) -> list[FooterColumn] | None:
    """The columns of the local parquet table at `uri` (`validate`'s table check, no Spark); None when Spark lists
    files this module does not imitate, the files differ in schema or are not parquet."""
    files = local_files(uri)
    if files is None:
        return None
    try:
        import pyarrow.parquet as pq

        tables = [_columns(pq.ParquetFile(f).schema) for f in files]
    except Exception:  # not parquet, unreadable: Spark reports it in its own words when it runs
        return None
    first = tables[0]
    return first if all(t == first for t in tables[1:]) else None


def _columns(parquet_schema) -> list[FooterColumn]:
    flat = {}
    for i in range(len(parquet_schema)):
        column = parquet_schema.column(i)
        if column.max_repetition_level == 0:
            flat[column.path] = (column.physical_type, json.loads(column.logical_type.to_json()))
    out = []
    for name in parquet_schema.to_arrow_schema().names:
        types = _candidates(*flat[name]) if name in flat else ()
        out.append(FooterColumn(name, types, "" if len(types) == 1 else NTZ_NOTE if types else UNKNOWN_NOTE))
    return out


def _candidates(physical: str, logical: dict) -> tuple[T.DataType, ...]:
    t = _spark_type(physical, logical)
    if t is not None:
        return (t,)
    if physical == "INT64" and logical.get("Type") == "Timestamp" and logical.get("timeUnit") != "nanoseconds":
        return (T.TimestampType(),) if logical.get("isAdjustedToUTC") else (T.TimestampNTZType(), T.TimestampType())
    return ()
