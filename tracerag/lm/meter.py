"""Measure what a stretch of a program cost: LM calls, the models called, token usage and wall time.

Why not count predictor calls: one predictor call can make several LM calls (DSPy's ChatAdapter retries
with the JSON adapter when a reply does not parse), and a failed call still costs a request. The meter
counts calls with a DSPy callback (``on_lm_start``, fired for every request, failed or not) and sums
token usage with ``dspy.track_usage()`` (the engine's reported usage; nothing for cache hits). Both are
scoped to the ``with`` block through ``dspy.settings.context``, so concurrent evaluation threads do not
mix their counts, and an outer ``track_usage`` still receives the usage.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import dspy
from dspy.utils.callback import BaseCallback

__all__ = ["LMMeter", "USAGE_KEYS"]

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
