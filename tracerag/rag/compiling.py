"""Compiling SelfReflectiveRAG: the optimiser run on its labelled examples, against its metric."""

from __future__ import annotations

import dspy

from ..compiling import compile_program
from .metrics import rag_feedback, rag_score


def compile_rag(program, trainset: list, devset: list, optimizer: str, max_metric_calls: int | None = None,
                num_threads: int = 1, prompt_lm: dspy.BaseLM | None = None) -> dict:
    """The metric is rag_score: right decision, valid citations, verified grounded (a third each)."""
    return compile_program(program, trainset, devset, optimizer, rag_score, rag_feedback, "rag_score",
                           max_metric_calls, num_threads, prompt_lm)
