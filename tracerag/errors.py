"""One root for the errors tracerag raises on purpose: ``except tracerag.TraceragError`` catches what the library
means to tell its caller (data it cannot read, a store it cannot use, a service that failed), never a bug.

Each error keeps the built-in base it had (``ValueError`` for bad input, ``RuntimeError`` or ``OSError`` for
what failed, ``ImportError`` for a missing extra), so code that caught those still does.
"""


class TraceragError(Exception):
    """The root of tracerag's own errors."""
