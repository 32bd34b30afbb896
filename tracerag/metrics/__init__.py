"""Metrics every program shares: citation validity and coverage (``citations``). Each program's own metrics
are its package's ``metrics`` module (``tracerag.rag.metrics``, ...); metrics an LM judges are in
``tracerag.judges``.
"""
