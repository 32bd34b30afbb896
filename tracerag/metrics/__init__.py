"""Metrics every program shares: citation validity and coverage (``citations``). Each program's own metrics
are its package's ``metrics`` module (``tracerag.rag.metrics``, ...); a metric an LM judges is its package's
``judge`` module (``tracerag.rag.judge``, ``tracerag.experience.judge``).
"""
