"""Compile a program's prompts with a DSPy optimizer (BootstrapFewShot, MIPROv2 or GEPA).

Train on the train split, score on dev before and after, and return the compiled program with its
scores. Each program brings its metric (a strict bool while bootstrapping) and a feedback variant
for GEPA that says in words what went wrong.
"""

from __future__ import annotations

from collections.abc import Callable

import dspy

from .datasets.smarthome import load_dataset
from .metrics.agent import agent_feedback, agent_score
from .metrics.commands import recall_at_10, recall_feedback
from .metrics.experience import experience_feedback, experience_score
from .metrics.planner import planner_feedback, planner_score
from .metrics.rag import rag_feedback, rag_score


def _score(program, examples, metric) -> float:
    evaluator = dspy.Evaluate(devset=examples, metric=metric, num_threads=1, display_progress=False)
    return round(evaluator(program).score / 100, 4)


def compile_program(program, trainset: list, devset: list, optimizer: str, metric: Callable,
                    feedback: Callable, metric_name: str, max_metric_calls: int | None = None) -> dict:
    """``max_metric_calls`` bounds GEPA's budget (default: its "light" preset, often 1,000+ rollouts)."""
    before = _score(program, devset, metric)
    if optimizer == "bootstrap":
        opt = dspy.BootstrapFewShot(metric=metric, max_bootstrapped_demos=4, max_labeled_demos=4)
        compiled = opt.compile(program, trainset=trainset)
    elif optimizer == "mipro":
        opt = dspy.MIPROv2(metric=metric, auto="light", num_threads=1)
        compiled = opt.compile(program, trainset=trainset, valset=devset)
    elif optimizer == "gepa":
        budget = {"max_metric_calls": max_metric_calls} if max_metric_calls else {"auto": "light"}
        opt = dspy.GEPA(metric=feedback, reflection_lm=dspy.settings.lm, num_threads=1, **budget)
        compiled = opt.compile(program, trainset=trainset, valset=devset)
    else:
        raise ValueError(f"unknown optimizer {optimizer!r}")
    return {"program": compiled, "optimizer": optimizer, f"dev_{metric_name}_before": before,
            f"dev_{metric_name}_after": _score(compiled, devset, metric), "train_examples": len(trainset)}


def compile_commands(program, dataset, optimizer: str, *, max_train: int = 0,
                     max_metric_calls: int | None = None) -> dict:
    def examples(split: str) -> list[dspy.Example]:
        return [q.to_example() for qs in load_dataset(dataset, split).values() for q in qs]

    trainset = examples("train")
    return compile_program(program, trainset[:max_train] if max_train else trainset, examples("dev"), optimizer,
                           recall_at_10, recall_feedback, "recall@10", max_metric_calls)


def compile_experience(program, trainset: list, devset: list, optimizer: str,
                       max_metric_calls: int | None = None) -> dict:
    """The metric is experience_score: recall@5 of the retrieval plus precision of the traces drawn on."""
    return compile_program(program, trainset, devset, optimizer, experience_score, experience_feedback,
                           "experience_score", max_metric_calls)


def compile_rag(program, trainset: list, devset: list, optimizer: str, max_metric_calls: int | None = None) -> dict:
    """The metric is rag_score: right decision, valid citations, verified grounded (a third each)."""
    return compile_program(program, trainset, devset, optimizer, rag_score, rag_feedback, "rag_score",
                           max_metric_calls)


def compile_planner(program, trainset: list, devset: list, optimizer: str, max_metric_calls: int | None = None) -> dict:
    """The metric is planner_score: used-id F1 against the gold ids, plus citation coverage and validity."""
    return compile_program(program, trainset, devset, optimizer, planner_score, planner_feedback, "planner_score",
                           max_metric_calls)


def compile_agent(program, trainset: list, devset: list, optimizer: str, max_metric_calls: int | None = None) -> dict:
    """The metric is agent_score: right decision, valid citations and their coverage (a third each)."""
    return compile_program(program, trainset, devset, optimizer, agent_score, agent_feedback, "agent_score",
                           max_metric_calls)
