"""Compiling TraceablePlanner: the optimiser run on its labelled examples, against its metric."""

from __future__ import annotations

import dspy

from ..compiling import compile_program
from .metrics import planner_feedback, planner_score


def compile_planner(program, trainset: list, devset: list, optimizer: str, max_metric_calls: int | None = None,
                    num_threads: int = 1, prompt_lm: dspy.BaseLM | None = None) -> dict:
    """The metric is planner_score: used-id F1 against the gold ids, plus citation coverage and validity."""
    return compile_program(program, trainset, devset, optimizer, planner_score, planner_feedback, "planner_score",
                           max_metric_calls, num_threads, prompt_lm)
