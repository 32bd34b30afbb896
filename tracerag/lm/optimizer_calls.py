"""The optimizer's own LM calls during compile: bounded, counted, and stopped when they keep failing.

MIPROv2's data summary and instruction proposals and GEPA's reflection call the LM directly, not
through a program's guarded stages, so they get none of the stages' bounds. Compile gives them the
same ones: a ``dspy.LM`` that sets no ``timeout`` runs the compile as a copy with the policy's timeout
(``--lm-timeout``; so does a separate prompt LM), the optimizer proposes and reflects with a copy of its
LM whose calls are counted (failures included, reported as ``optimizer_lm`` in the scores), and GEPA,
which goes on without a failed reflection, stops once as many calls failed in a row as open the LM
breaker. Copies of an LM ``make_lm`` built (the configured one, ``--prompt-lm``) keep its bounded
transport (``bounded_lm.BoundedLM``), so each of those calls also ends at its deadline and byte cap.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import dspy
from dspy.utils.callback import BaseCallback

from .calls import call_config
from .failures import failure_line
from .fault_budget import current_budget
from .policy import policy

__all__ = ["OptimizerCalls", "bounded_lm"]

logger = logging.getLogger(__name__)


def bounded_lm(lm):
    """``lm``, or a copy of it with the policy's timeout when it sets none (``call_config``)."""
    extra = call_config(lm)
    return lm.copy(**extra) if extra else lm


class OptimizerCalls(BaseCallback):
    """Counts the optimizer's own LM calls and those that failed: the call raised (transport, timeout), or
    its reply was empty or did not parse; a call counts as answered once its reply parses.

    ``lm`` is a copy of the prompt LM (the configured one unless compile got another) that only the
    optimizer proposes or reflects with; it and the copies the optimizer makes of it carry
    ``optimizer_calls`` (this object), which tells their calls and parses apart from the program's stage
    calls (counted by the guarded stages instead). Compile runs with this object among DSPy's callbacks.

    Called as a GEPA stopper, it ends the search once as many calls failed in a row as open the LM
    breaker: GEPA goes on without a failed reflection, so an endpoint that stalls would otherwise cost a
    timeout per iteration for the whole budget."""

    def __init__(self, prompt_lm) -> None:
        self._lock = threading.Lock()
        self._open: set[str] = set()  # ids of our LM calls under way
        self.calls = self.failed = self.in_a_row = 0
        self.first_failure: str | None = None
        self.fallback = self.stopped = False
        self.lm = prompt_lm.copy() if prompt_lm is not None else None
        if self.lm is not None:
            self.lm.optimizer_calls = self  # copied along by the LM's copy()

    def _ours(self, lm) -> bool:
        return getattr(lm, "optimizer_calls", None) is self

    def on_lm_start(self, call_id, instance, inputs) -> None:
        if self._ours(instance):
            with self._lock:
                self._open.add(call_id)

    def on_lm_end(self, call_id, outputs, exception=None) -> None:
        with self._lock:
            if call_id not in self._open:
                return
            self._open.discard(call_id)
            self.calls += 1
        if exception is not None:
            self._failed(failure_line(exception, self.lm))
        elif not any(_text(output) for output in outputs or ()):
            self._failed("the reply was empty or null")

    def on_adapter_parse_end(self, call_id, outputs, exception=None) -> None:
        """A reply of ours parsed (the call is answered) or did not (it failed)."""
        if not self._ours(dspy.settings.lm):
            return
        if exception is not None:
            self._failed(failure_line(exception, self.lm))
        else:
            with self._lock:
                self.in_a_row = 0

    def _failed(self, line: str) -> None:
        with self._lock:
            self.failed += 1
            self.in_a_row += 1
            self.first_failure = self.first_failure or line

    def __call__(self, gepa_state=None) -> bool:
        budget = current_budget()  # spent: the program's stages run without the LM, nothing left to learn
        self.stopped = self.stopped or self.in_a_row >= policy().breaker_failures or bool(budget and budget.spent)
        return self.stopped

    def fell_back(self, exc: BaseException) -> None:
        """The optimizer stopped on ``exc``: the program keeps the no-LM result."""
        self.fallback = True
        self.first_failure = self.first_failure or failure_line(exc, self.lm)

    def warn(self, optimizer: str) -> None:
        if not (self.failed or self.fallback):
            return
        if self.fallback:
            outcome = "keeping the no-LM result (the labelled demos)"
        elif self.stopped:
            outcome = f"{optimizer} stopped after {self.in_a_row} in a row with its best program so far"
        else:
            outcome = f"{optimizer} went on without them"
        logger.warning("compile: %d of %d %s LM calls failed (first: %s); %s", self.failed, self.calls, optimizer,
                       self.first_failure, outcome)

    def report(self) -> dict[str, Any]:
        return {"model": getattr(self.lm, "model", None), "calls": self.calls, "failed": self.failed,
                "first_failure": self.first_failure,
                "stopped_early": self.stopped, "fell_back": self.fallback}


def _text(output) -> str | None:
    """The text of one LM output (a string, or a dict with ``text`` when it carries logprobs or tools)."""
    return output.get("text") if isinstance(output, dict) else output
