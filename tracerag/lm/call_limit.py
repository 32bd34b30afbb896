"""How long the LM calls made in a block may last in all (``at_most``), as a run's fault budget sets it, and what
a bounded LM reads of it (``call_limit``).

Kept apart from :mod:`.transport` (the bounded HTTP transports, which read it) so a program stage that sets the
limit imports no HTTP client: a run without an LM call never needs one.
"""

from __future__ import annotations

import contextvars
from contextlib import contextmanager

__all__ = ["at_most", "call_limit"]

# seconds the caller allows the next LM calls at most (a run's fault budget left), whatever their own bound
_at_most: contextvars.ContextVar[float | None] = contextvars.ContextVar("tracerag_lm_at_most", default=None)


@contextmanager
def at_most(seconds: float | None):
    """LM calls made inside this block last at most ``seconds`` in all (None: no limit beyond their own).
    A bounded LM (``bounded_lm.BoundedLM``) shortens its whole-call deadline to it; the caller sets it from what
    a run's fault budget has left (``lm.fault_budget``)."""
    token = _at_most.set(seconds)
    try:
        yield
    finally:
        _at_most.reset(token)


def call_limit() -> float | None:
    """The limit ``at_most`` set for the calls made here (None: none)."""
    return _at_most.get()
