"""Producers in the test set-up: plans generated at a pinned producer version, never committed.

Each producer module turns its sources (SQL texts, builder code) into plans with the producer itself, into a cache
under ``.data/producers/<producer>-<version>/`` (``cache.py``) that is regenerated for a source whose text or the
producer's version changed. Pins: ``datafusion`` in setup.cfg's ``test`` extra; producers that cannot share the
venv (the ``substrait`` package pins substrait-protobuf 0.106, the project 0.108; DuckDB's substrait extension loads
only into DuckDB 1.1.3) in tools/pinned_envs.py, each installed on its own. Upgrading a producer is that one line.
"""
