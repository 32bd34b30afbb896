"""What an LM failure says to the user: one line, chosen by the failure's type, naming the setting that changes
it; and one warning per kind of failure, repeats counted.

The type says what happened: DSPy 3.4 translates its engines' errors into typed ones (``LMTimeoutError``,
``LMTransportError``, ``LMCollectionLimitError``, ``LMNotConfiguredError``, ...); the bounded transport
raises the engine's own (``dspy.lm15``) before translation, and a client outside DSPy's engines raises
Python's or httpx's. DSPy files a read that timed out under ``LMTransportError``; the wire's own timeout it
was raised from (``__cause__``) says it was a timeout. No message text is matched to decide what a failure is.
"""

from __future__ import annotations

import builtins
import logging
import re
import threading
from collections import Counter

from dspy import lm15
from dspy._vendor.lm15 import transports as lm15_wire
from dspy.utils import exceptions as dspy_errors

from .breaker import BREAKER
from .policy import policy

logger = logging.getLogger("tracerag.lm")

_TIMED_OUT = (builtins.TimeoutError, dspy_errors.LMTimeoutError, lm15.TimeoutError, lm15_wire.ReadTimeout,
              lm15_wire.ConnectTimeout)
_UNPARSED = (dspy_errors.AdapterParseError,)
_OVER_CAP = (dspy_errors.LMCollectionLimitError, lm15.CollectionLimitError)  # the reply cap: never retried
_NO_KEY = (dspy_errors.LMNotConfiguredError, dspy_errors.LMAuthError, lm15.NotConfiguredError, lm15.AuthError)
_UNREACHED = (dspy_errors.LMTransportError, dspy_errors.LMServerError, dspy_errors.LMRateLimitError,
              lm15.TransportError, lm15.ServerError, lm15.RateLimitError, ConnectionError)
_KEY_VARIABLE = re.compile(r"\b[A-Z][A-Z0-9_]*_API_KEY\b")  # a provider's key variable, named in an error

_repeats: Counter = Counter()  # (stage, failure kind) -> failures not logged (a first one was)
_repeats_lock = threading.Lock()


def failure_line(exc: BaseException, lm=None, *, cut_at: float | None = None) -> str:
    """One line a user can act on: the exception type and first line, and the setting that changes it
    (with the LM's own timeout and retries when it has them). ``cut_at``: the call was cut after that many
    seconds because the run's LM fault budget had no more for it (not the LM's own timeout)."""
    name = type(exc).__name__
    if cut_at is not None:
        return (f"{name}: cut after {cut_at:.1f} s, all the run's LM fault budget had left for it "
                "(--lm-fault-budget or TRACERAG_LM_FAULT_BUDGET)")
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    timeout = (getattr(lm, "kwargs", None) or {}).get("timeout", getattr(lm, "call_timeout", None))
    timeout = timeout if isinstance(timeout, int | float) else policy().timeout
    retries = getattr(lm, "num_retries", policy().retries)
    if _caused_by(exc, _TIMED_OUT + _httpx_errors("TimeoutException")):
        return f"{name}: no reply within {timeout:g} s (raise it with --lm-timeout or TRACERAG_LM_TIMEOUT)"
    if isinstance(exc, _UNPARSED):
        return f"{name}: the reply did not have the expected fields"
    if isinstance(exc, _OVER_CAP):
        return f"{name}: {text[:200]} (not retried: the same endpoint would send it again)"
    if isinstance(exc, _NO_KEY):
        names = list(dict.fromkeys(["TRACERAG_API_KEY", *_KEY_VARIABLE.findall(text)]))  # config.ENV_API_KEY
        return f"{name}: the LM has no API key: set {' or '.join(names)} (or --api-key)"
    if isinstance(exc, _UNREACHED + _httpx_errors("TransportError")):
        return f"{name}: {text[:200]} (after {retries} retries; --lm-retries or TRACERAG_LM_RETRIES)"
    return f"{name}: {text[:200]}"


def _httpx_errors(name: str) -> tuple[type, ...]:
    """httpx's error class ``name`` when httpx is loaded (a client outside DSPy's engines raised it); () when it
    is not: nothing can have raised one, and a run without an LM call never imports it."""
    import sys

    httpx = sys.modules.get("httpx")
    return (getattr(httpx, name),) if httpx is not None else ()


def _caused_by(exc: BaseException, kinds: tuple[type, ...]) -> bool:
    """Whether ``exc``, or an exception it was raised from or while handling, is one of ``kinds``."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kinds):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def warn_once(stage: str, predictor, what: str, fallback: str) -> None:
    """Log the first failure of a kind at a stage; count the repeats (``warning_summary``)."""
    key = (stage, what.split(":")[0])
    with _repeats_lock:
        first = key not in _repeats
        _repeats[key] += 0 if first else 1
    if first:
        name = getattr(getattr(predictor, "signature", None), "__name__", type(predictor).__name__)
        logger.warning("LM stage %s (%s) failed: %s; %s. Repeats are counted, not logged.", stage, name, what,
                       fallback)


def warning_summary() -> list[str]:
    """One line per kind of failure that repeated: how many more times it happened."""
    with _repeats_lock:
        return [f"LM stage {stage} failed {n} more times ({kind})" for (stage, kind), n in sorted(_repeats.items())
                if n]


def reset_lm_guard() -> None:
    """Forget breaker state and warning counts (tests; a long-lived app switching endpoints)."""
    BREAKER.reset()
    with _repeats_lock:
        _repeats.clear()
