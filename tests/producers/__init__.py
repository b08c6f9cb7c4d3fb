"""Producers in the test set-up: plans generated at a pinned producer version, never committed.

Each producer module turns its sources (SQL texts, builder code) into plans with the producer itself, into a cache
under ``.data/producers/<producer>-<version>/`` (``cache.py``) that is regenerated for a source whose text or the
producer's version changed. Pins: ``datafusion`` in setup.cfg's ``test`` extra; the ``substrait`` package in
``substrait-python.txt`` (it pins substrait-protobuf 0.106, the project 0.108, so it gets its own environment).
Upgrading a producer is that one line.
"""
