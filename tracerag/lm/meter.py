"""Measure what a stretch of a program cost: LM calls, the models called, token usage and wall time.

Why not count predictor calls: one predictor call can make several LM calls (DSPy's ChatAdapter retries
with the JSON adapter when a reply does not parse), and a failed call still costs a request. The meter
counts calls with a DSPy callback (``on_lm_start``, fired for every request, failed or not) and sums
token usage with ``dspy.track_usage()`` (the engine's reported usage; nothing for cache hits). Both are
scoped to the ``with`` block through ``dspy.settings.context``, so concurrent evaluation threads do not
mix their counts, and an outer ``track_usage`` still receives the usage.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import dspy
from dspy.utils.callback import BaseCallback

__all__ = ["LMAnswers", "LMMeter", "USAGE_KEYS"]

USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


class LMMeter(BaseCallback):
    """``with meter.measure(): ...``; then ``calls``, ``models``, ``usage`` and ``seconds``. Reusable: counts add up."""

    def __init__(self) -> None:
        self.calls = 0
        self.models: list[str] = []  # distinct, in order of first call
        self.usage: dict[str, int] = {}
        self.seconds = 0.0

    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        self.calls += 1
        model = getattr(instance, "model", None)
        if isinstance(model, str) and model not in self.models:
            self.models.append(model)

    @contextmanager
    def measure(self) -> Iterator[LMMeter]:
        start = time.perf_counter()
        with dspy.settings.context(callbacks=[*(dspy.settings.callbacks or []), self]), \
                dspy.track_usage() as tracker:
            try:
                yield self
            finally:  # a failing block still cost its calls and time
                self.seconds += time.perf_counter() - start
                self._add_usage(tracker.get_total_tokens())

    def _add_usage(self, per_model: dict[str, dict[str, Any]]) -> None:
        for usage in per_model.values():
            for key in USAGE_KEYS:
                value = usage.get(key)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    self.usage[key] = self.usage.get(key, 0) + int(value)

    @property
    def model(self) -> str | None:
        """The model called (several joined by ", "); without any call, the configured LM's model."""
        if self.models:
            return ", ".join(self.models)
        lm = dspy.settings.lm
        return getattr(lm, "model", None) if lm is not None else None


class LMAnswers(BaseCallback):
    """Whether the LM answered at all during a run: ``with LMAnswers().watch() as answers: ...``; then ``calls``
    (LM requests started) and ``answered`` (those that came back, usable or not). A run with calls and no
    answer never reached its LM: every result came from the no-LM path, and a front end says so instead of
    reporting success. Counts across the run's threads (DSPy's parallel executor carries the callback along)."""

    def __init__(self) -> None:
        self.calls = 0
        self.answered = 0
        self.models: list[str] = []
        self._lock = threading.Lock()

    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        model = getattr(instance, "model", None)
        with self._lock:
            self.calls += 1
            if isinstance(model, str) and model not in self.models:
                self.models.append(model)

    def on_lm_end(self, call_id: str, outputs: Any, exception: Exception | None = None) -> None:
        if exception is None:
            with self._lock:
                self.answered += 1

    @property
    def never_answered(self) -> bool:
        return self.calls > 0 and self.answered == 0

    def line(self) -> str:
        """One line saying the LM never answered, and what to do."""
        return (f"the LM ({', '.join(self.models) or 'configured'}) never answered: {self.calls} calls failed, so "
                "every result came from the no-LM path (check --lm, --api-base and the endpoint; --allow-no-lm "
                "accepts such a run)")

    @contextmanager
    def watch(self) -> Iterator[LMAnswers]:
        with dspy.settings.context(callbacks=[*(dspy.settings.callbacks or []), self]):
            yield self
