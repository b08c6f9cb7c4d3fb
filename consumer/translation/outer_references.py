"""Moved to `consumer/loading/outer_references.py` (the loader rewrites outer `rel_reference`s); re-exported here
for imports of the old path."""

from __future__ import annotations

from ..loading.outer_references import resolve_rel_references

__all__ = ["resolve_rel_references"]
