"""Run a loaded plan: translate each root, send its rows to a sink, and record a RunReport."""

from __future__ import annotations

import datetime as dt
import shutil
import tempfile
import time
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from .consumer import SubstraitConsumer
from .errors import ExecutionError, SubstraitSparkError
from .loader import LoadedPlan
from .report import RootOutput, RunReport
from .resolver import TableResolver

OUTPUT_FORMATS = ("csv", "parquet", "jsonl")


def write_single_file(df: DataFrame, target: Path, fmt: str) -> None:
    """Write one file (not a Spark folder), keeping the DataFrame's order: one partition, then move it."""
    if fmt not in OUTPUT_FORMATS:
        raise ValueError(f"output format {fmt!r} (expected one of {', '.join(OUTPUT_FORMATS)})")
    tmp = Path(tempfile.mkdtemp(prefix=".substrait-", dir=target.parent))
    try:
        writer = df.coalesce(1).write.mode("overwrite")
        out = tmp / "out"
        if fmt == "csv":
            writer.option("header", "true").csv(str(out))
        elif fmt == "parquet":
            writer.parquet(str(out))
        else:
            writer.json(str(out))
        parts = sorted(p for p in out.iterdir() if p.name.startswith("part-"))
        if len(parts) != 1:
            raise ExecutionError(f"expected one output file, Spark wrote {len(parts)}")
        parts[0].replace(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _spark_error(exc: Exception) -> ExecutionError:
    text = str(exc).strip().splitlines()
    first = next((line for line in text if line.strip()), type(exc).__name__)
    return ExecutionError(f"Spark failed: {first[:500]}")


def run_loaded(
    loaded: LoadedPlan,
    spark: SparkSession,
    resolver: TableResolver,
    *,
    output: Path | None = None,
    output_format: str = "csv",
    preview_rows: int = 0,
    consumer_class: type[SubstraitConsumer] = SubstraitConsumer,
) -> RunReport:
    """Execute every root of the plan. Errors are recorded in the report and re-raised typed."""
    report = RunReport(
        plan_uri=loaded.uri,
        plan_sha256=loaded.sha256,
        producer=loaded.producer,
        spec_version=loaded.spec_version,
        started_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        notes=list(loaded.notes),
    )
    report.spark_application_id = spark.conf.get("spark.app.id", None)
    start = time.perf_counter()
    consumer = consumer_class(spark, loaded.plan, resolver)
    report.notes.extend(consumer.quirks.notes())
    try:
        roots = [i for i, r in enumerate(loaded.plan.relations) if r.WhichOneof("rel_type") == "root"]
        for n in range(len(roots)):
            t0 = time.perf_counter()
            df = consumer.root(n)
            report.translate_ms = round((report.translate_ms or 0) + (time.perf_counter() - t0) * 1000, 2)
            out = RootOutput(index=n, columns=list(df.columns))
            try:
                if output is not None:
                    target = output if len(roots) == 1 else output.with_name(f"{output.stem}.{n}{output.suffix}")
                    write_single_file(df, target, output_format)
                    out.location, out.format = str(target), output_format
                    out.rows = (
                        spark.read.format("json" if output_format == "jsonl" else output_format)
                        .option("header", "true")
                        .load(str(target))
                        .count()
                    )
                else:
                    rows = df.collect()
                    out.rows = len(rows)
                    if preview_rows:
                        out.preview = [[_plain(v) for v in r] for r in rows[:preview_rows]]
            except SubstraitSparkError:
                raise
            except Exception as exc:
                raise _spark_error(exc) from exc
            report.outputs.append(out)
        report.tables_read = consumer.tables_read
        report.status = "success"
        return report
    except SubstraitSparkError as exc:
        report.status = "failed"
        report.error = {
            "kind": exc.kind,
            "message": exc.message,
            "path": exc.path,
            "exit_code": exc.exit_code,
        }
        exc.report = report  # type: ignore[attr-defined]
        raise
    finally:
        report.duration_s = round(time.perf_counter() - start, 3)
        consumer.close()


def _plain(v):
    """JSON-friendly cell values for previews."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)
