"""Compiling ExperienceRetrieval: the optimiser run on its labelled examples, against its metric."""

from __future__ import annotations

import dspy

from ..compiling import compile_program
from .metrics import experience_feedback, experience_score


def compile_experience(program, trainset: list, devset: list, optimizer: str, max_metric_calls: int | None = None,
                       num_threads: int = 1, prompt_lm: dspy.BaseLM | None = None) -> dict:
    """The metric is experience_score: recall@5 of the retrieval plus precision of the traces drawn on."""
    return compile_program(program, trainset, devset, optimizer, experience_score, experience_feedback,
                           "experience_score", max_metric_calls, num_threads, prompt_lm)
