"""The signature of captioning an image (a trace's, a task's): what the experience bank indexes and what the
experience program reads a task's images as."""

from __future__ import annotations

import dspy


class CaptionImages(dspy.Signature):
    """Describe what the images of a task show, in one or two factual sentences: the kind of image
    (chart, receipt, photo of a plant, ...) and the text, numbers or objects the task hinges on."""

    question: str = dspy.InputField(desc="the task the images belong to")
    images: list[dspy.Image] = dspy.InputField()
    caption: str = dspy.OutputField()
