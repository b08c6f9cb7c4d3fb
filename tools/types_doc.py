"""Generate docs/types.md from the mapping tables in consumer/types.py: every Substrait type kind, the Spark type
it maps to (or why it is rejected), the user-defined types, and the Spark -> Substrait direction.

.venv/bin/python tools/types_doc.py          (writes docs/types.md)
.venv/bin/python tools/types_doc.py --check  (exit 1 if the committed file differs or a type kind is unaccounted)
"""

from __future__ import annotations

import sys
from importlib.metadata import version
from pathlib import Path

from docgen import check_requested, write_or_check
from pyspark.sql import types as T
from substrait import type_pb2 as tp

REPO_ROOT = Path(__file__).resolve().parent.parent
DOC = REPO_ROOT / "docs" / "types.md"

N = tp.Type.NULLABILITY_NULLABLE


def _t(kind: str, **fields: object) -> tp.Type:
    t = tp.Type()
    body = getattr(t, kind)
    body.SetInParent()
    for k, v in fields.items():
        setattr(body, k, v)
    return t


def _nested() -> dict[str, tuple[str, tp.Type]]:
    """One example of each type kind that takes parameters or inner types, in the spec's notation."""
    struct = _t("struct")
    struct.struct.types.extend([_t("i32", nullability=N), _t("string", nullability=N)])
    list_ = _t("list")
    list_.list.type.CopyFrom(_t("i64", nullability=N))
    map_ = _t("map")
    map_.map.key.CopyFrom(_t("string"))
    map_.map.value.CopyFrom(_t("fp64", nullability=N))
    return {
        "decimal": ("decimal<38,2>", _t("decimal", precision=38, scale=2)),
        "precision_timestamp": ("precision_timestamp<6>", _t("precision_timestamp", precision=6)),
        "precision_timestamp_tz": ("precision_timestamp_tz<6>", _t("precision_timestamp_tz", precision=6)),
        "interval_day": ("interval_day<6>", _t("interval_day", precision=6)),
        "struct": ("struct<i32, string>", struct),
        "list": ("list<i64>", list_),
        "map": ("map<string, fp64>", map_),
    }


# Spark types whose Substrait type the reverse mapping gives (`types.substrait_type`), in display order.
SPARK_EXAMPLES: tuple[T.DataType, ...] = (
    T.BooleanType(), T.ByteType(), T.ShortType(), T.IntegerType(), T.LongType(), T.FloatType(), T.DoubleType(),
    T.DecimalType(10, 2), T.StringType(), T.VarcharType(10), T.CharType(3), T.BinaryType(), T.DateType(),
    T.TimestampNTZType(), T.TimestampType(), T.YearMonthIntervalType(), T.DayTimeIntervalType(),
    T.ArrayType(T.IntegerType()), T.MapType(T.StringType(), T.LongType()),
    T.StructType([T.StructField("a", T.IntegerType()), T.StructField("b", T.StringType())]), T.NullType(),
)  # fmt: skip


def type_kinds() -> list[str]:
    """Every kind of Substrait type the installed protobuf knows."""
    return [f.name for f in tp.Type.DESCRIPTOR.oneofs_by_name["kind"].fields]


def unaccounted() -> list[str]:
    from substrait_spark.consumer import types as ty

    known = set(ty._SIMPLE) | set(ty._BUILT) | set(ty.REJECTED)
    return [k for k in type_kinds() if k not in known]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render() -> str:
    from substrait_spark.consumer import types as ty
    from substrait_spark.consumer.errors import SubstraitSparkError
    from substrait_spark.consumer.type_text import type_str

    nested = _nested()
    lines = [
        "# Types",
        "",
        f"How every Substrait type (`substrait-protobuf=={version('substrait-protobuf')}`) maps to a Spark SQL type "
        "and back. Generated from the mapping tables in `consumer/types.py` (`_SIMPLE`, `_BUILT`, `REJECTED`, "
        "`NOTES`, `USER_DEFINED`, `substrait_type`) by `.venv/bin/python tools/types_doc.py`; "
        "`tests/test_types.py` checks this file is current and that every type kind is accounted for.",
        "",
        "Literals of each type become Spark literals of the mapped type (`consumer/translation/literals.py`). "
        "A rejected type "
        "anywhere in a plan (a column, a cast, a literal, a function's output) fails translation with "
        "`UnsupportedFeatureError` naming the type and its plan path.",
        "",
        "## Substrait -> Spark",
        "",
        "| Substrait type | Spark type | note |",
        "|---|---|---|",
    ]
    for kind in type_kinds():
        if kind in ty._SIMPLE:
            spark = ty._SIMPLE[kind].simpleString()
            lines.append(f"| `{kind}` | `{spark}` | {_cell(ty.NOTES.get(kind, ''))} |")
        elif kind in nested:
            notation, sample = nested[kind]
            spark = ty.spark_type(sample).simpleString()
            lines.append(f"| `{notation}` | `{spark}` | {_cell(ty.NOTES.get(kind, ''))} |")
        elif kind in ty._BUILT:
            lines.append(f"| `{kind}` | see note | {_cell(ty.NOTES.get(kind, ''))} |")
    lines += ["", "## Rejected", "", "| Substrait type | reason |", "|---|---|"]
    lines += [f"| `{kind}` | {_cell(reason)} |" for kind, reason in ty.REJECTED.items()]
    lines += [
        "",
        "## User-defined types",
        "",
        "A user-defined type maps when the plan declares it from one of these extensions (`<extension>/<name>`); "
        "any other user-defined type is rejected. Unsigned integers are held in the smallest signed Spark type that "
        "holds every value; their literals (the `value: string` structure, or a protobuf wrapper) are range-checked, "
        "a cast to them yields NULL (or the cast's error) outside the range, and the functions of "
        "`unsigned_integers.yaml` keep results in range by their `overflow` option "
        "(`consumer/translation/functions/unsigned.py`).",
        "",
        "| user-defined type | Spark type | note |",
        "|---|---|---|",
    ]
    lines += [f"| `{k}` | `{u.spark.simpleString()}` | {_cell(u.note)} |" for k, u in ty.USER_DEFINED.items()]
    lines += [
        "",
        "## Spark -> Substrait",
        "",
        "`types.substrait_type` (and `types.named_struct` for a whole schema) gives the Substrait type of a Spark "
        "type, e.g. to describe a table Spark holds.",
        "",
        "| Spark type | Substrait type |",
        "|---|---|",
    ]
    for dt in SPARK_EXAMPLES:
        try:
            sub = f"`{type_str(ty.substrait_type(dt))}`"
        except SubstraitSparkError as exc:
            sub = f"rejected: {exc.message}"
        lines.append(f"| `{dt.simpleString()}` | {_cell(sub)} |")
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    check = check_requested(__doc__.splitlines()[0], argv)
    what = "type kinds not mapped or rejected in consumer/types.py"
    return write_or_check(DOC, render(), unaccounted(), what, ".venv/bin/python tools/types_doc.py", check)


if __name__ == "__main__":
    sys.exit(main())
