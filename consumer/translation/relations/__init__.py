"""Relation translators, one module per family."""
