"""Connections to the outside world: plan stores, catalogs, Spark sessions."""
