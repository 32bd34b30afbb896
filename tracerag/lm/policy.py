"""The LM call policy of the process: how long one call may take, how often it is retried, when the breaker
opens and what faults one run may spend.

It lives below the programs and the settings so both read it: ``tracerag.configure(timeout=, retries=,
fault_budget=)`` sets it, the guarded LM steps, the breaker and the run's fault budget apply it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LMPolicy", "policy", "set_policy"]


@dataclass(frozen=True)
class LMPolicy:
    """How long one LM call may take and how often it is retried (applied by the LM client), and when
    the breaker opens."""

    timeout: float = 30.0  # seconds without a reply before a call fails
    retries: int = 2  # retries of a transient failure (5xx, connection, timeout)
    breaker_failures: int = 5  # consecutive failed calls that open the breaker
    probe_seconds: float = 30.0  # while open, one probe call this often
    fault_budget: float = 40.0  # seconds of failed calls one run may spend (+ FAULT_SHARE of its time)


_policy = [LMPolicy()]


def policy() -> LMPolicy:
    return _policy[0]


def set_policy(**changes) -> LMPolicy:
    """Change the process-wide policy (``tracerag.configure(timeout=, retries=)`` calls this)."""
    _policy[0] = LMPolicy(**{**_policy[0].__dict__, **{k: v for k, v in changes.items() if v is not None}})
    return _policy[0]
