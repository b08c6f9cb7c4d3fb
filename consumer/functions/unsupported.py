"""Functions of the standard extensions that have no native Spark translation, with the reason.

Keyed like the function tables (`name`, or `<extension stem>/<name>`). docs/functions.md is generated from
the tables and this one; a plan that calls one of these gets UnsupportedFeatureError naming the reason.
"""

from __future__ import annotations

UNSUPPORTED: dict[str, str] = {}
