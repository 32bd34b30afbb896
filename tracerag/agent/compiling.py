"""Compiling SearchAgent: the optimiser run on its labelled examples, against its metric."""

from __future__ import annotations

import dspy

from ..compiling import compile_program
from .metrics import agent_feedback, agent_score


def compile_agent(program, trainset: list, devset: list, optimizer: str, max_metric_calls: int | None = None,
                  num_threads: int = 1, prompt_lm: dspy.BaseLM | None = None) -> dict:
    """The metric is agent_score: right decision, valid citations and their coverage (a third each)."""
    return compile_program(program, trainset, devset, optimizer, agent_score, agent_feedback, "agent_score",
                           max_metric_calls, num_threads, prompt_lm)
