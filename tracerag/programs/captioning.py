"""Caption trace images with a vision LM while building the experience bank.

A caption puts what an image shows into the index text, so a photo of a receipt is found by tasks
about receipts. Captioning is optional: without an LM it is skipped, and a trace whose images cannot
be read or whose LM call fails is indexed without a caption (a one-line warning, never a failed build).
The calls share the per-process circuit breaker of the programs' LM stages: once the LM has failed
several calls in a row, the remaining traces are indexed without a caption instead of each waiting
for its own timeout.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

import dspy

from ..lm.breaker import BREAKER
from ..lm.calls import call_config
from ..lm.failures import failure_line
from ..memory.experience_bank import Captioner
from ..memory.traces import Trace
from ..signatures.captioning import CaptionImages

__all__ = ["make_captioner"]

logger = logging.getLogger(__name__)


def make_captioner(concurrency: int = 8) -> Captioner | None:
    """A captioner over the configured LM, running ``concurrency`` calls at a time; None without an LM."""
    lm = dspy.settings.lm
    if lm is None:
        return None
    predict = dspy.Predict(CaptionImages)
    adapter = dspy.settings.adapter

    def caption_one(trace: Trace) -> tuple[str, str | None, str]:
        """(task_id, caption or None, outcome: captioned, empty, unreadable, failed or skipped)."""
        try:
            images = [dspy.Image.from_path(str(p)) for p in trace.image_paths()]
        except Exception as exc:
            logger.warning("%s: cannot read its images (%s); indexing it without a caption", trace.task_id, exc)
            return trace.task_id, None, "unreadable"
        if not BREAKER.allow(lm, "caption"):
            return trace.task_id, None, "skipped"
        try:
            with dspy.context(lm=lm, adapter=adapter):  # worker threads do not inherit the caller's context
                caption = predict(question=trace.question, images=images, config=call_config(lm)).caption
        except Exception as exc:
            BREAKER.record(lm, ok=False, stage="caption")
            logger.warning("%s: captioning failed (%s); indexing it without a caption", trace.task_id,
                           failure_line(exc))
            return trace.task_id, None, "failed"
        BREAKER.record(lm, ok=True, stage="caption")
        caption = (caption or "").strip() if isinstance(caption, str) else ""
        return trace.task_id, caption or None, "captioned" if caption else "empty"

    def caption(traces: list[Trace]) -> dict[str, str]:
        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            results = list(pool.map(caption_one, traces))
        made = {task_id: text for task_id, text, _ in results if text}
        skipped = sum(outcome == "skipped" for *_, outcome in results)
        logger.info("captioned %d of %d traces with images", len(made), len(traces))
        if skipped:
            logger.warning("%d traces indexed without a caption: the LM failed repeatedly and was skipped", skipped)
        return made

    return caption
