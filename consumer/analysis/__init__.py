"""Stage 2', analysis without Spark: validate (the features a plan uses and which are unsupported), lineage and
explain — visitors of the same walk as the translator (`consumer/plan_visitor.py`)."""
