"""What LM faults may cost one run: a budget of seconds spent on calls that brought no reply.

Why: the breaker (``guarded_step.CircuitBreaker``) stops calling an endpoint after a few failed calls in a
row, but it cannot bound what faults cost a run. A stalled endpoint costs a whole call (every attempt at
its timeout) per failure before the breaker opens, five of them at the defaults; an endpoint that fails
at one stage, or on some inputs, or after an agent's first tool call, interleaves failures with successes
that keep the breaker closed, so every example pays a timeout. Over a dataset that is hours.

So an evaluation run carries a ``FaultBudget``: the seconds its LM calls may spend failing, ``seconds`` plus
``share`` of the run's time so far (40 s + 10 % at the defaults: a long run may ride out an outage in
proportion, a short one loses at most about a minute). What is charged is the wall time of each call that
brought no reply (a timeout, a connection or HTTP error, a reply cut at the byte cap), retries and their
waits included; a reply that came back but did not parse or check is not charged (that is the model's
quality, not the endpoint's availability, and costs no more than a good reply). Each call made while the
budget holds is cut at what is left of it (``remaining``), so a stalled call ends when the budget does.
Once it is spent, the rest of the run takes the no-LM path: every stage falls back at once, counted, after
one warning line. A run whose other work takes N s thus spends at most (seconds + share × N) / (1 − share)
on failing calls: 44 s + 11 % of N at the defaults (with several threads, each call in flight when the
budget runs out may still run to what was left when it started).

The budget lives in DSPy's settings context (``lm_fault_budget``), which DSPy's ParallelExecutor hands to
its worker threads, so the threads of one evaluation share one budget. Outside such a block (a server, a
single call) there is none: the breaker alone applies.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import dspy

__all__ = ["FAULT_SHARE", "MIN_CALL_SECONDS", "FaultBudget", "current_budget", "lm_fault_budget"]

logger = logging.getLogger("tracerag.lm")

FAULT_SHARE = 0.1  # the share of a run's time its LM faults may take, on top of the budget's seconds
MIN_CALL_SECONDS = 0.1  # less than this left: the budget is spent (no call is worth starting)
_SETTING = "tracerag_lm_fault_budget"  # the key in DSPy's settings context


class FaultBudget:
    """Seconds of failed LM calls one run may spend: ``seconds`` + ``share`` × the run's time so far.
    Thread-safe; ``clock`` is injectable for tests."""

    def __init__(self, seconds: float, share: float = FAULT_SHARE, clock: Callable[[], float] = time.monotonic):
        if not seconds >= 0:
            raise ValueError(f"an LM fault budget is a number of seconds >= 0, not {seconds!r}")
        self.seconds, self.share, self._clock = float(seconds), float(share), clock
        self.started = clock()
        self.charged = 0.0  # seconds of failed calls so far
        self.failed_calls = 0
        self.spent = False  # once True, stays True for the run
        self._lock = threading.Lock()

    def now(self) -> float:
        """The budget's clock (``time.monotonic``): callers time their calls with it."""
        return self._clock()

    def remaining(self) -> float:
        """Seconds the next failing call may still take (``inf`` for an unlimited budget)."""
        if math.isinf(self.seconds):
            return math.inf
        with self._lock:
            return 0.0 if self.spent else self._left()

    def _left(self) -> float:
        return self.seconds + self.share * (self._clock() - self.started) - self.charged

    def admits(self) -> bool:
        """Whether an LM call may start: False once the budget is spent (or nearly: ``MIN_CALL_SECONDS``)."""
        if math.isinf(self.seconds):
            return True
        with self._lock:
            if not self.spent and self._left() < MIN_CALL_SECONDS:
                self._spend()
            return not self.spent

    def charge(self, seconds: float) -> None:
        """Count ``seconds`` of a call that brought no reply."""
        with self._lock:
            self.charged += max(seconds, 0.0)
            self.failed_calls += 1
            if not self.spent and not math.isinf(self.seconds) and self._left() < MIN_CALL_SECONDS:
                self._spend()

    def _spend(self) -> None:
        self.spent = True
        logger.warning("LM calls failed for %.1f s in this run (%d calls), its LM fault budget (%g s + %g%% of "
                       "the run's time; --lm-fault-budget or TRACERAG_LM_FAULT_BUDGET): the rest of the run "
                       "takes the no-LM path", self.charged, self.failed_calls, self.seconds, self.share * 100)

    def __deepcopy__(self, memo) -> FaultBudget:  # settings get copied; the run's budget stays one object
        return self


def current_budget() -> FaultBudget | None:
    """The fault budget of the run in progress (None outside ``lm_fault_budget``)."""
    budget = dspy.settings.get(_SETTING)
    return budget if isinstance(budget, FaultBudget) else None


@contextmanager
def lm_fault_budget(seconds: float | FaultBudget | None = None) -> Iterator[FaultBudget]:
    """Run the block as one run with its own fault budget (``seconds``, or a ``FaultBudget``; default: the
    policy's ``fault_budget``, ``inf`` for none). An enclosing run's budget is kept: a run inside a run
    (an evaluation inside a compile) spends the outer one's."""
    outer = current_budget()
    if outer is not None:
        yield outer
        return
    if seconds is None:
        from ..lm_policy import policy

        seconds = policy().fault_budget
    budget = seconds if isinstance(seconds, FaultBudget) else FaultBudget(seconds)
    with dspy.settings.context(**{_SETTING: budget}):
        yield budget
