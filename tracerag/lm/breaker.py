"""The circuit breaker: per process, stop calling an LM endpoint that keeps failing, and probe it again.

Why: an endpoint that is down would otherwise cost every example a whole timeout. After
``policy().breaker_failures`` failed calls in a row the breaker opens and every stage falls back at once; one
probe call every ``policy().probe_seconds`` finds out when the endpoint answers again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter

from .policy import policy

logger = logging.getLogger("tracerag.lm")


def lm_key(lm) -> tuple[str, str]:
    """One endpoint, however many LM objects point at it (optimizers copy LMs)."""
    kwargs = getattr(lm, "kwargs", None) or {}
    return str(getattr(lm, "model", type(lm).__name__)), str(kwargs.get("api_base") or kwargs.get("base_url") or "")


class CircuitBreaker:
    """Per process, per endpoint and per stage: closed (calls go through), open (calls are skipped), with
    one probe call let through every ``probe_seconds`` while open. Thread-safe (evaluation runs threads).

    Two keys count consecutive failures: the endpoint (every stage's calls: a total outage opens it after
    ``breaker_failures`` calls, whichever stages made them) and the (endpoint, stage) pair (a stage whose
    calls fail while the others succeed opens alone; the others' successes do not reset it). The probe
    interval runs from when the last probe ended, and one probe is in flight at a time, so a probe slower
    than the interval never turns every later call into a probe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures: Counter = Counter()  # consecutive failures per key
        self._opened: dict[tuple, float] = {}  # key -> when it opened or its last probe ended
        self._probing: set[tuple] = set()  # keys whose probe call is in flight

    def allow(self, lm, stage: str = "") -> bool:
        endpoint = lm_key(lm)
        with self._lock:
            key = endpoint if endpoint in self._opened else (endpoint, stage) if (endpoint, stage) in self._opened \
                else None
            if key is None:
                return True
            if key in self._probing or time.monotonic() - self._opened[key] < policy().probe_seconds:
                return False
            self._probing.add(key)  # this call is the probe; the others keep skipping
            return True

    def record(self, lm, ok: bool, stage: str = "") -> None:
        endpoint = lm_key(lm)
        keys = (endpoint, (endpoint, stage))
        with self._lock:
            self._probing.difference_update(keys)
            if ok:
                for key in keys:
                    self._failures.pop(key, None)
                    if self._opened.pop(key, None) is not None:
                        logger.warning("LM %s answers again%s; LM stages are back on", endpoint[0],
                                       f" for stage {stage}" if key != endpoint else "")
                return
            now = time.monotonic()
            for key in keys:
                self._failures[key] += 1
                if key in self._opened:
                    self._opened[key] = now  # a failed probe: the next one waits a whole interval
                elif self._failures[key] >= policy().breaker_failures and endpoint not in self._opened:
                    self._opened[key] = now  # (a stage opens alone only while its endpoint is not open)
                    what = "" if key == endpoint else f" at stage {stage}"
                    logger.warning("LM %s failed %d calls in a row%s; using the no-LM path and probing it again "
                                   "every %g s", endpoint[0], self._failures[key], what, policy().probe_seconds)

    def is_open(self, lm, stage: str | None = None) -> bool:
        """Whether calls to this endpoint (or, with ``stage``, that stage's calls) are being skipped."""
        endpoint = lm_key(lm)
        with self._lock:
            return endpoint in self._opened or (stage is not None and (endpoint, stage) in self._opened)

    def reset(self) -> None:
        with self._lock:
            self._failures.clear()
            self._opened.clear()
            self._probing.clear()


BREAKER = CircuitBreaker()
