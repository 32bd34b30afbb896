"""What LM faults may cost one run: a budget of seconds spent on calls that brought no reply.

Why: the breaker (``breaker.CircuitBreaker``) stops calling an endpoint after a few failed calls in a
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

**One stage failing alone** does not end the others' LM: while another stage of the same endpoint has
answered in the run, a stage's failing calls may take only ``STAGE_SHARE`` of the budget (half: 20 s + 5 %
at the defaults), each of its calls cut at that. Once its share is spent the stage is shut for the rest of
the run (its calls fall back at once, counted, after one warning line naming it) and the other stages keep
calling the LM, with the rest of the budget for their own faults; the bound above holds for all of them
together. A stage that fails before any other has answered is the endpoint failing: the whole budget
applies to it.

The budget lives in DSPy's settings context (``lm_fault_budget``), which DSPy's ParallelExecutor hands to
its worker threads, so the threads of one evaluation share one budget. ``evaluate`` and ``compile`` run in
one; ``serve`` gives each request its own, of the budget's seconds and no share (a request's failing calls
take at most 40 s at the defaults, then its remaining stages fall back). Outside such a block (a single
call in an app) there is none: the breaker alone applies.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager

import dspy

from ..errors import InvalidValue

__all__ = ["FAULT_SHARE", "MIN_CALL_SECONDS", "STAGE_SHARE", "FaultBudget", "current_budget", "lm_fault_budget"]

logger = logging.getLogger("tracerag.lm")

FAULT_SHARE = 0.1  # the share of a run's time its LM faults may take, on top of the budget's seconds
STAGE_SHARE = 0.5  # of the budget, what one stage's failures may take while the endpoint answers its others
MIN_CALL_SECONDS = 0.1  # less than this left: the budget is spent (no call is worth starting)
_SETTING = "tracerag_lm_fault_budget"  # the key in DSPy's settings context


class FaultBudget:
    """Seconds of failed LM calls one run may spend: ``seconds`` + ``share`` × the run's time so far, and
    one stage at most ``STAGE_SHARE`` of that while its endpoint answers the run's other stages.
    Thread-safe; ``clock`` is injectable for tests.

    A stage is named by its endpoint (any hashable: the guarded steps pass the LM's model and api_base)
    and its stage name; the methods that take them apply the stage's share, without them only the total."""

    def __init__(self, seconds: float, share: float = FAULT_SHARE, clock: Callable[[], float] = time.monotonic):
        if not seconds >= 0:
            raise InvalidValue(f"an LM fault budget is a number of seconds >= 0, not {seconds!r}")
        self.seconds, self.share, self._clock = float(seconds), float(share), clock
        self.started = clock()
        self.charged = 0.0  # seconds of failed calls so far
        self.failed_calls = 0
        self.spent = False  # once True, stays True for the run
        self.stage_charged: Counter = Counter()  # (endpoint, stage) -> seconds of its failed calls
        self.stage_failed: Counter = Counter()  # (endpoint, stage) -> its failed calls
        self.shut: set[tuple] = set()  # (endpoint, stage): falls back for the rest of the run (its share spent)
        self._answered: dict[Hashable, set[str]] = {}  # endpoint -> the stages it answered in this run
        self._lock = threading.Lock()

    def now(self) -> float:
        """The budget's clock (``time.monotonic``): callers time their calls with it."""
        return self._clock()

    def remaining(self, endpoint: Hashable = None, stage: str | None = None) -> float:
        """Seconds the next failing call (of ``stage`` at ``endpoint``) may still take (``inf`` for an
        unlimited budget)."""
        if math.isinf(self.seconds):
            return math.inf
        with self._lock:
            if self.spent or (endpoint, stage) in self.shut:
                return 0.0
            return min(self._left(), self._stage_left(endpoint, stage))

    def _allowed(self) -> float:
        return self.seconds + self.share * (self._clock() - self.started)

    def _left(self) -> float:
        return self._allowed() - self.charged

    def _stage_left(self, endpoint: Hashable, stage: str | None) -> float:
        """What the stage's share has left while another stage of its endpoint answered (else ``inf``)."""
        if stage is None or not self._answered.get(endpoint, set()) - {stage}:
            return math.inf
        return STAGE_SHARE * self._allowed() - self.stage_charged[(endpoint, stage)]

    def admits(self, endpoint: Hashable = None, stage: str | None = None) -> bool:
        """Whether an LM call (of ``stage`` at ``endpoint``) may start: False once the budget is spent, or
        the stage's share (or nearly: ``MIN_CALL_SECONDS``)."""
        if math.isinf(self.seconds):
            return True
        with self._lock:
            self._settle(endpoint, stage)
            return not self.spent and (endpoint, stage) not in self.shut

    def answered(self, endpoint: Hashable, stage: str) -> None:
        """Record that ``endpoint`` answered a call of ``stage`` (a reply came back, usable or not)."""
        with self._lock:
            self._answered.setdefault(endpoint, set()).add(stage)

    def charge(self, seconds: float, endpoint: Hashable = None, stage: str | None = None) -> None:
        """Count ``seconds`` of a call (of ``stage`` at ``endpoint``) that brought no reply."""
        with self._lock:
            self.charged += max(seconds, 0.0)
            self.failed_calls += 1
            if stage is not None:
                self.stage_charged[(endpoint, stage)] += max(seconds, 0.0)
                self.stage_failed[(endpoint, stage)] += 1
            if not math.isinf(self.seconds):
                self._settle(endpoint, stage)

    def _settle(self, endpoint: Hashable, stage: str | None) -> None:
        """Spend the budget, or shut the stage, when too little is left to start a call (under the lock)."""
        if not self.spent and self._left() < MIN_CALL_SECONDS:
            self._spend()
        key = (endpoint, stage)
        if not self.spent and key not in self.shut and self._stage_left(endpoint, stage) < MIN_CALL_SECONDS:
            self.shut.add(key)
            logger.warning("LM stage %s failed for %.1f s in this run (%d calls) while the LM answers its other "
                           "stages, its share of the LM fault budget (%g%%; --lm-fault-budget or "
                           "TRACERAG_LM_FAULT_BUDGET): that stage takes its no-LM path for the rest of the run, the "
                           "others keep the LM", stage, self.stage_charged[key], self.stage_failed[key],
                           STAGE_SHARE * 100)

    def _spend(self) -> None:
        self.spent = True
        logger.warning("LM calls failed for %.1f s in this run (%d calls), its LM fault budget (%g s + %g%% of "
                       "the run's time; --lm-fault-budget or TRACERAG_LM_FAULT_BUDGET): the rest of the run "
                       "takes the no-LM path", self.charged, self.failed_calls, self.seconds, self.share * 100)

    def report(self) -> dict:
        """What the run's faults cost: seconds charged, failed calls, spent, and the stages shut."""
        return {"seconds": None if math.isinf(self.seconds) else self.seconds, "share": self.share,  # None: no limit
                "charged_s": round(self.charged, 2),
                "failed_calls": self.failed_calls, "spent": self.spent,
                "stages_shut": sorted(stage for _, stage in self.shut)}

    def __deepcopy__(self, memo) -> FaultBudget:  # settings get copied; the run's budget stays one object
        return self


def current_budget() -> FaultBudget | None:
    """The fault budget of the run in progress (None outside ``lm_fault_budget``)."""
    budget = dspy.settings.get(_SETTING)
    return budget if isinstance(budget, FaultBudget) else None


@contextmanager
def lm_fault_budget(seconds: float | FaultBudget | None = None, share: float = FAULT_SHARE) -> Iterator[FaultBudget]:
    """Run the block as one run with its own fault budget (``seconds``, or a ``FaultBudget``; default: the
    policy's ``fault_budget``, ``inf`` for none; plus ``share`` of the run's time). An enclosing run's
    budget is kept: a run inside a run (an evaluation inside a compile) spends the outer one's."""
    outer = current_budget()
    if outer is not None:
        yield outer
        return
    if seconds is None:
        from .policy import policy

        seconds = policy().fault_budget
    budget = seconds if isinstance(seconds, FaultBudget) else FaultBudget(seconds, share)
    with dspy.settings.context(**{_SETTING: budget}):
        yield budget
