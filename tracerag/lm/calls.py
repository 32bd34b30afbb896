"""One LM call's settings and account: which LM a predictor uses, the timeout it is given, the async path it
takes, and what its failure costs the run's fault budget.

Timeouts and retries belong to the LM client (``bounded_lm.make_lm`` passes ``--lm-timeout`` and
``--lm-retries`` to ``dspy.LM``). A user's own ``dspy.LM`` that sets no ``timeout`` would wait for a stalled
endpoint as long as its client does (DSPy's native engine: 600 s a read; LiteLLM: 6,000 s), so each call
passes it the policy's timeout (``call_config``); one that sets its own keeps it.
"""

from __future__ import annotations

import asyncio
from contextlib import nullcontext
from typing import Any

import dspy
from dspy.utils.exceptions import AdapterParseError

from .breaker import lm_key
from .call_limit import at_most
from .fault_budget import FaultBudget
from .policy import policy


def lm_of(predictor) -> Any | None:
    """The LM a predictor call will use: its own, else the configured one (None: no LM)."""
    return getattr(predictor, "lm", None) or dspy.settings.lm


def _takes_timeout(lm) -> bool:
    """A ``dspy.LM`` over a model string takes a per-call ``timeout``; a custom engine refuses client
    settings, and another ``BaseLM`` may not know the key."""
    return isinstance(lm, dspy.LM) and isinstance(getattr(lm, "_engine_spec", "auto"), str)


def call_config(lm) -> dict[str, Any]:
    """Per-call settings for ``lm`` (a Predict's ``config``): the policy's timeout for a ``dspy.LM`` over a
    model string that sets none itself; nothing for any other LM."""
    if _takes_timeout(lm) and lm.kwargs.get("timeout") is None:
        return {"timeout": policy().timeout}
    return {}


def with_config(predictor, lm, inputs: dict[str, Any], limit: float | None = None) -> dict[str, Any]:
    """``inputs`` plus ``config=call_config(lm)`` for a predictor that takes a ``config`` (a Predict, or one
    that says so with ``takes_config``), merged over one the caller gave; the timeout given (the LM's own
    included) is at most ``limit``, what the run's fault budget has left for the call."""
    extra = call_config(lm)
    if limit is not None and _takes_timeout(lm):
        own = extra.get("timeout", lm.kwargs.get("timeout"))
        extra = {**extra, "timeout": max(min(own, limit), 0.001)} if isinstance(own, int | float) else extra
    if not extra or not (isinstance(predictor, dspy.Predict) or getattr(predictor, "takes_config", False)):
        return inputs
    return {**inputs, "config": {**extra, **inputs.get("config", {})}}


def async_capable(lm) -> bool:
    """Whether ``lm`` has an async path of its own. A ``dspy.LM`` over a model string has one; one over a
    custom engine object only with an ``async_engine``; another ``BaseLM`` when it implements ``aforward``
    or ``acall``. Without one, the stage runs its sync call in a worker thread (same result, same bounds)."""
    if isinstance(lm, dspy.LM):
        return isinstance(getattr(lm, "_engine_spec", "auto"), str) or getattr(lm, "_async_engine_spec", None) \
            is not None
    cls = type(lm)
    return cls.aforward is not dspy.BaseLM.aforward or cls.acall is not dspy.BaseLM.acall


class Charged:
    """One LM call's account with the run's fault budget: the limit it got, the failure it is charged."""

    def __init__(self, budget: FaultBudget | None, lm, stage: str) -> None:
        self.budget, self.endpoint, self.stage = budget, lm_key(lm), stage
        self.limit = budget.remaining(self.endpoint, stage) if budget is not None else None
        self.started = budget.now() if budget is not None else 0.0
        # the limit holds for a bounded LM (``config.BoundedLM``: ``at_most``) and one given the timeout per call
        self.enforced = callable(getattr(lm, "worst_case", None)) or _takes_timeout(lm)

    def within(self):
        """The call cut at what the budget has left for it (no limit without a budget)."""
        return nullcontext() if self.limit is None else at_most(self.limit)

    def answered(self) -> None:
        if self.budget is not None:
            self.budget.answered(self.endpoint, self.stage)

    def failed(self, exc: BaseException) -> float | None:
        """Charge a call that brought no reply; a reply that came back but did not parse is the model's
        answer, not a fault of the endpoint (see ``fault_budget``). The seconds it took when the budget's
        limit cut it, else None."""
        if self.budget is None:
            return None
        if isinstance(exc, AdapterParseError):
            self.answered()
            return None
        seconds = self.budget.now() - self.started
        self.budget.charge(seconds, self.endpoint, self.stage)
        return seconds if self.enforced and self.limit is not None and seconds >= self.limit * 0.99 else None


async def ainvoke(predictor, lm, inputs: dict[str, Any]) -> Any:
    acall = getattr(predictor, "acall", None)
    if callable(acall) and async_capable(lm):
        return await acall(**inputs)
    return await asyncio.to_thread(predictor, **inputs)  # contextvars (dspy.context, callbacks) go along
