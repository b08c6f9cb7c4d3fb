"""Airflow operators (thin: arguments, templating, hooks, the consumer, XCom)."""
