"""Compiling CommandRetrieval: its labelled queries as ParseCommand demos, and the optimiser run on them."""

from __future__ import annotations

import dspy

from ..compiling import compile_program
from ..datasets.smarthome import load_dataset
from .metrics import parse_recall_at_10, parse_recall_feedback


def command_examples(program, dataset, split: str) -> list[dspy.Example]:
    """The split's labelled queries as Examples that are also ParseCommand demos (their home's rooms)."""
    return [q.to_example(rooms=program.index_for(q.home).home.rooms)
            for qs in load_dataset(dataset, split).values() for q in qs]


def compile_commands(program, dataset, optimizer: str, *, max_train: int = 0,
                     max_metric_calls: int | None = None, num_threads: int = 1,
                     prompt_lm: dspy.BaseLM | None = None) -> dict:
    """The metric is parse_recall_at_10: recall@10, with the parse checked against the gold IR."""
    trainset = command_examples(program, dataset, "train")
    return compile_program(program, trainset[:max_train] if max_train else trainset,
                           command_examples(program, dataset, "dev"), optimizer, parse_recall_at_10,
                           parse_recall_feedback, "parse_recall@10", max_metric_calls, num_threads,
                           prompt_lm)
