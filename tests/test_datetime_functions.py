"""Date and time functions of functions_datetime.yaml with hand-built plans.

What a user relies on: extract components and the indexing option mean what the extension says; functions on
instants that name a time zone give the same answer whatever the Spark session's time zone is; strftime and
strptime understand C format codes; date + interval_day is a timestamp unless the plan declares a date.
"""

from __future__ import annotations

import datetime as dt

import pytest
from plan_builder import (
    PlanBuilder,
    boolean,
    date,
    i64,
    interval_day,
    lit,
    precision_timestamp,
    precision_timestamp_tz,
    project,
    run,
    string,
    virtual,
)

pytestmark = [pytest.mark.spark]

DATETIME_URN = "extension:io.substrait:functions_datetime"
TS = dt.datetime(2016, 1, 1, 13, 30, 15, 220000)  # a Friday; ISO week 53 of 2015
INSTANT = dt.datetime(2016, 12, 31, 20, 0, 0, tzinfo=dt.UTC)  # 2017-01-01 05:00 in Tokyo


def values(spark, b: PlanBuilder, *exprs):
    """One row of the expressions, every function declared by functions_datetime."""
    rel = project(virtual(["dummy"], [i64()], [(0,)]), *exprs, emit=list(range(1, len(exprs) + 1)))
    plan = b.plan(rel, [f"c{i}" for i in range(len(exprs))])
    for u in plan.extension_urns:
        u.urn = DATETIME_URN
    return tuple(run(plan, spark).collect()[0])


@pytest.fixture
def los_angeles_session(spark):
    """A session time zone far from UTC and Tokyo: results must not depend on it."""
    old = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    yield spark
    spark.conf.set("spark.sql.session.timeZone", old)


def test_extract_components_and_indexing(spark):
    b = PlanBuilder()
    ts = lit(TS, precision_timestamp())
    got = values(
        spark,
        b,
        *[
            b.call("extract", comp, ts, out=i64())
            for comp in ("YEAR", "ISO_YEAR", "MILLISECOND", "MICROSECOND", "SUBSECOND", "UNIX_TIME")
        ],
        b.call("extract", "ISO_WEEK", "ONE", ts, out=i64()),
        b.call("extract", "MONTH", "ZERO", ts, out=i64()),
        b.call("extract", "MONDAY_DAY_OF_WEEK", "ONE", ts, out=i64()),
        b.call("extract", "SUNDAY_DAY_OF_WEEK", "ZERO", ts, out=i64()),
    )
    unix = int((TS - dt.datetime(1970, 1, 1)).total_seconds())
    assert got == (2016, 2015, 15220, 15220000, 220000, unix, 53, 0, 5, 5)


def test_instant_functions_with_a_zone_ignore_the_session_zone(los_angeles_session):
    spark = los_angeles_session
    b = PlanBuilder()
    tokyo = lit("Asia/Tokyo", string())
    instant = lit(INSTANT, precision_timestamp_tz())
    wall = lit(dt.datetime(2017, 1, 1, 5, 0, 0), precision_timestamp())
    got = values(
        spark,
        b,
        b.call("extract", "HOUR", instant, tokyo, out=i64()),
        b.call("extract", "YEAR", instant, tokyo, out=i64()),
        b.call("local_timestamp", instant, tokyo, out=precision_timestamp()),
        b.call("assume_timezone", wall, tokyo, out=precision_timestamp_tz()),
        b.call("strftime", instant, lit("%Y-%m-%d %H:%M %a", string()), tokyo, out=string()),
        b.call("extract_boolean", "IS_LEAP_YEAR", instant, tokyo, out=boolean()),
    )
    assert got[:3] == (5, 2017, dt.datetime(2017, 1, 1, 5, 0, 0))
    assert got[3].astimezone(dt.UTC) == INSTANT  # Python gets the instant in the session zone
    assert got[4:] == ("2017-01-01 05:00 Sun", False)


def test_strftime_and_strptime(spark):
    b = PlanBuilder()
    ts = lit(TS, precision_timestamp())
    got = values(
        spark,
        b,
        b.call("strftime", ts, lit("%F %T.%f %p %j %b %%", string()), out=string()),
        b.call("strftime", lit(dt.date(2020, 2, 9), date()), lit("%d/%m/%y %A", string()), out=string()),
        b.call("strptime_date", lit("09/02/2020", string()), lit("%d/%m/%Y", string()), out=date()),
        b.call(
            "strptime_timestamp",
            lit("2017-01-01 05:00:00", string()),
            lit("%Y-%m-%d %H:%M:%S", string()),
            lit("Asia/Tokyo", string()),
            lit(6, i64()),
            out=precision_timestamp_tz(),
        ),
    )
    assert got[0] == "2016-01-01 13:30:15.220000 PM 001 Jan %"
    assert got[1] == "09/02/20 Sunday"
    assert got[2] == dt.date(2020, 2, 9)
    assert got[3].astimezone(dt.UTC) == INSTANT


def test_date_plus_interval_day_is_a_timestamp_unless_declared_a_date(spark):
    b = PlanBuilder()
    d = lit(dt.date(2020, 12, 31), date())
    five_days = lit(dt.timedelta(days=5), interval_day())
    got = values(
        spark,
        b,
        b.call("add", d, five_days, out=precision_timestamp()),
        b.call("subtract", d, five_days, out=precision_timestamp()),
        b.call("add", d, five_days, out=date()),
        b.call("add", d, lit(dt.timedelta(hours=5), interval_day()), out=precision_timestamp()),
    )
    assert got == (
        dt.datetime(2021, 1, 5),
        dt.datetime(2020, 12, 26),
        dt.date(2021, 1, 5),
        dt.datetime(2020, 12, 31, 5),
    )


def test_unknown_format_code_is_rejected(spark):
    from substrait_spark.consumer.errors import UnsupportedFeatureError

    b = PlanBuilder()
    with pytest.raises(UnsupportedFeatureError, match="strftime conversion %Q"):
        values(spark, b, b.call("strftime", lit(TS, precision_timestamp()), lit("%Q", string()), out=string()))


def test_round_temporal_fixed_units(spark):
    b = PlanBuilder()
    ts = lit(dt.datetime(2016, 1, 1, 13, 30, 15), precision_timestamp())
    origin = lit(dt.datetime(2016, 1, 1, 0, 0, 0), precision_timestamp())
    two = lit(2, i64())
    got = values(
        spark,
        b,
        *[
            b.call("round_temporal", ts, mode, "HOUR", two, origin, out=precision_timestamp())
            for mode in ("FLOOR", "CEIL", "ROUND_TIE_DOWN", "ROUND_TIE_UP")
        ],
        b.call("round_temporal", lit(dt.date(2016, 1, 9), date()), "FLOOR", "WEEK", lit(1, i64()),
               lit(dt.date(2016, 1, 4), date()), out=date()),
    )  # fmt: skip
    assert got == (
        dt.datetime(2016, 1, 1, 12),
        dt.datetime(2016, 1, 1, 14),
        dt.datetime(2016, 1, 1, 14),
        dt.datetime(2016, 1, 1, 14),
        dt.date(2016, 1, 4),
    )


def _ns_literal(kind: str, value: dt.datetime):
    """A timestamp literal at precision 9, as DataFusion writes every timestamp literal."""
    from substrait import algebra_pb2 as alg

    aware = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    nanos = (aware - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(microseconds=1) * 1000
    out = alg.Expression()
    getattr(out.literal, kind).CopyFrom(alg.Expression.Literal.PrecisionTimestamp(precision=9, value=nanos))
    return out


def test_date_trunc_units_ignore_the_session_zone(los_angeles_session):
    """DataFusion's `date_trunc('month', ts)` (the everyday "per month" query): each unit Spark has, on a
    wall-clock time in Los Angeles' DST gap (2016-03-13 02:30 does not exist there: Spark's own date_trunc,
    which truncates in the session zone, gives 03:00), on a date, and on an instant (its UTC wall clock)."""
    b = PlanBuilder()
    gap = lit(dt.datetime(2016, 3, 13, 2, 30, 15, 123456), precision_timestamp())
    units = ("year", "quarter", "month", "week", "day", "hour", "minute", "second", "millisecond", "microsecond")
    ts9 = precision_timestamp(9)
    got = values(
        los_angeles_session,
        b,
        *[b.call("date_trunc", lit(u, string()), gap, out=ts9) for u in units],
        b.call("date_trunc", lit("MONTH", string()), lit(dt.date(2016, 3, 13), date()), out=date()),
        b.call("date_trunc", lit("month", string()), _ns_literal("precision_timestamp", TS), out=ts9),
        b.call(
            "date_trunc", lit("day", string()), lit(INSTANT, precision_timestamp_tz()), out=precision_timestamp_tz()
        ),
    )
    assert got[: len(units)] == (
        dt.datetime(2016, 1, 1),
        dt.datetime(2016, 1, 1),
        dt.datetime(2016, 3, 1),
        dt.datetime(2016, 3, 7),  # a Monday
        dt.datetime(2016, 3, 13),
        dt.datetime(2016, 3, 13, 2),
        dt.datetime(2016, 3, 13, 2, 30),
        dt.datetime(2016, 3, 13, 2, 30, 15),
        dt.datetime(2016, 3, 13, 2, 30, 15, 123000),
        dt.datetime(2016, 3, 13, 2, 30, 15, 123456),
    )
    assert got[len(units) :][:2] == (dt.date(2016, 3, 1), dt.datetime(2016, 1, 1))
    instant = got[-1]  # collected in the session zone: compare as an instant
    assert instant.astimezone(dt.UTC) == dt.datetime(2016, 12, 31, tzinfo=dt.UTC)


def test_date_trunc_unit_spark_lacks_is_refused_by_name(spark):
    from substrait_spark.consumer.analysis.analyze import validate_plan
    from substrait_spark.consumer.errors import UnsupportedFeatureError

    b = PlanBuilder()
    with pytest.raises(UnsupportedFeatureError, match="date_trunc: unit 'decade'") as refused:
        values(spark, b, b.call("date_trunc", lit("decade", string()), lit(TS, precision_timestamp()), out=date()))
    assert refused.value.exit_code == 3
    rel = project(virtual(["d"], [i64()], [(0,)]), b.call("date_trunc", lit("decade", string()),
                  lit(TS, precision_timestamp()), out=precision_timestamp()), emit=[1])  # fmt: skip
    findings = validate_plan(b.plan(rel, ["c"]))  # validate refuses it too, before Spark
    assert len(findings) == 1 and findings[0].feature.startswith("date_trunc: unit 'decade' (supported: year")


def test_nanosecond_literals_are_read_exactly_or_refused(spark):
    """precision_timestamp(9) literals (DataFusion's): whole microseconds read exactly; a digit below a
    microsecond is refused, never rounded."""
    from substrait_spark.consumer.errors import UnsupportedFeatureError

    b = PlanBuilder()
    got = values(spark, b, _ns_literal("precision_timestamp", TS), _ns_literal("precision_timestamp_tz", INSTANT))
    assert got[0] == TS and got[1].astimezone(dt.UTC) == INSTANT
    odd = _ns_literal("precision_timestamp", TS)
    odd.literal.precision_timestamp.value += 1
    with pytest.raises(UnsupportedFeatureError, match="digits below a microsecond"):
        values(spark, PlanBuilder(), odd)
