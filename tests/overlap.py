"""What the tests check in place of a stopwatch: that calls overlapped, and which waits a client took.

Whether N calls ran at once is shown by a service that holds the first N requests until all N have arrived
(``Together``): calls made one at a time never fill it. How long a client waited between attempts is read
from the waits it asked for (``http_waits``, ``lm_retry_waits``), not from the clock. Neither depends on how
busy the machine is; the seconds themselves are measured in ``benchmarks/``.
"""

from __future__ import annotations

import threading
from typing import Any

HANG_S = 30.0  # a hang guard, not a speed figure: what the tests wait at most for something that must happen


class Together:
    """Holds the first ``n`` arrivals until all ``n`` have arrived, then lets them (and every later one) pass.

    Call ``arrive()`` where a request or a call starts. ``met`` says whether ``n`` were ever waiting at once.
    Arrivals that come one at a time never fill it: the first waits ``timeout`` seconds (a hang guard), then
    passes with ``met`` still False, and the test that expected them together fails on ``met``."""

    def __init__(self, n: int, timeout: float = HANG_S):
        self.n, self.timeout = n, timeout
        self.arrived = 0
        self.met = False
        self._condition = threading.Condition()

    def arrive(self) -> None:
        with self._condition:
            self.arrived += 1
            if self.arrived == self.n:
                self.met = True
                self._condition.notify_all()
            elif self.arrived < self.n:
                self._condition.wait_for(lambda: self.met, self.timeout)


def http_waits(monkeypatch) -> list[float]:
    """The waits (seconds) ``tracerag.http_json`` takes between the attempts of a call, sync and async, from now
    to the end of the test; each is still taken."""
    import asyncio
    import time

    from tracerag import http_json

    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        time.sleep(seconds)

    async def asleep(seconds: float) -> None:
        waits.append(seconds)
        await asyncio.sleep(seconds)

    class Clock:  # the module's ``time``: its clock as it is, its sleep recorded
        monotonic = staticmethod(time.monotonic)

    class Loop:  # the module's ``asyncio``: everything as it is, its sleep recorded
        def __getattr__(self, name: str) -> Any:
            return getattr(asyncio, name)

    Clock.sleep = staticmethod(sleep)
    Loop.sleep = staticmethod(asleep)
    monkeypatch.setattr(http_json, "time", Clock)
    monkeypatch.setattr(http_json, "asyncio", Loop())
    return waits


def lm_retry_waits(monkeypatch) -> list[float]:
    """The waits (seconds) DSPy takes between the attempts of an LM call, as ``make_lm``'s cap leaves them, from
    now to the end of the test; each is still taken."""
    from dspy.clients import execution

    from tracerag.lm.bounded_lm import _cap_dspy_retry_waits

    _cap_dspy_retry_waits()  # the cap in place first: what is recorded is what it leaves
    capped = execution._delay
    waits: list[float] = []

    def delay(exc, attempt):
        waits.append(capped(exc, attempt))
        return waits[-1]

    delay.tracerag_capped = True  # make_lm leaves it as it is
    monkeypatch.setattr(execution, "_delay", delay)
    return waits
