"""Functions of the standard extensions that have no native Spark translation, with the reason.

Keyed like the function tables (`name`, or `<extension stem>/<name>`). docs/functions.md is generated from
the tables and this one; a plan that calls one of these gets UnsupportedFeatureError naming the reason.
"""

from __future__ import annotations

UNSUPPORTED: dict[str, str] = {
    "title": "the spec leaves open which words count (articles at the start, after punctuation) and whether the"
    " rest of a word is lowercased; initcap/capitalize are mapped",
    "strptime_time": "Spark has no time-of-day type to hold the result",
    "round_calendar": "rounding to calendar units from the last origin unit (weeks of several numbering schemes)"
    " has no native Spark equivalent; round_temporal with fixed-length units is mapped",
    "quantile": "Spark's percentile takes numeric values only and skips NULLs, where the spec's any1 distribution"
    " returns NULL when any value is NULL; not mapped yet",
}
