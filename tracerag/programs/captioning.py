"""Caption trace images with a vision LM while building the experience bank.

A caption puts what an image shows into the index text, so a photo of a receipt is found by tasks
about receipts. Captioning is optional: without an LM it is skipped, and a trace whose images cannot
be read or whose LM call fails is indexed without a caption (a warning, never a failed build).
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

import dspy

from ..retrievers.experience_bank import Captioner
from ..retrievers.traces import Trace
from ..signatures.experience import CaptionImages

__all__ = ["make_captioner"]

logger = logging.getLogger(__name__)


def make_captioner(concurrency: int = 8) -> Captioner | None:
    """A captioner over the configured LM, running ``concurrency`` calls at a time; None without an LM."""
    lm = dspy.settings.lm
    if lm is None:
        return None
    predict = dspy.Predict(CaptionImages)
    adapter = dspy.settings.adapter

    def caption_one(trace: Trace) -> tuple[str, str | None]:
        try:
            images = [dspy.Image.from_path(str(p)) for p in trace.image_paths()]
        except Exception as exc:
            logger.warning("%s: cannot read its images (%s); indexing it without a caption", trace.task_id, exc)
            return trace.task_id, None
        try:
            with dspy.context(lm=lm, adapter=adapter):  # worker threads do not inherit the caller's context
                caption = predict(question=trace.question, images=images).caption
            return trace.task_id, (caption or "").strip() or None
        except Exception as exc:
            logger.warning("%s: captioning failed (%s: %s); indexing it without a caption",
                           trace.task_id, type(exc).__name__, exc)
            return trace.task_id, None

    def caption(traces: list[Trace]) -> dict[str, str]:
        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            results = list(pool.map(caption_one, traces))
        made = {task_id: text for task_id, text in results if text}
        logger.info("captioned %d of %d traces with images", len(made), len(traces))
        return made

    return caption
