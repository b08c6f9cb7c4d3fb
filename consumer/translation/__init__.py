"""Stage 2, translation: a loaded plan's relations, expressions, types and functions into PySpark DataFrames and
Columns (`SubstraitConsumer`, one overridable method per kind)."""
