"""Compile CommandRetrieval's prompts with a DSPy optimizer (BootstrapFewShot, MIPROv2 or GEPA).

Train on the train split, score on dev, and return the compiled program with its scores. The
metric is recall@10 (a strict bool while bootstrapping); GEPA gets the feedback variant, which
names the missed and wrongly included devices.
"""

from __future__ import annotations

import dspy

from .datasets.smarthome import load_dataset
from .metrics.commands import recall_at_10, recall_feedback


def _examples(dataset, split: str, limit: int = 0) -> list[dspy.Example]:
    examples = [q.to_example() for qs in load_dataset(dataset, split).values() for q in qs]
    return examples[:limit] if limit else examples


def _score(program, examples) -> float:
    evaluator = dspy.Evaluate(devset=examples, metric=recall_at_10, num_threads=1, display_progress=False)
    return round(evaluator(program).score / 100, 4)


def compile_commands(program, dataset, optimizer: str, *, max_train: int = 0) -> dict:
    trainset = _examples(dataset, "train", max_train)
    devset = _examples(dataset, "dev")
    before = _score(program, devset)
    if optimizer == "bootstrap":
        opt = dspy.BootstrapFewShot(metric=recall_at_10, max_bootstrapped_demos=4, max_labeled_demos=4)
        compiled = opt.compile(program, trainset=trainset)
    elif optimizer == "mipro":
        opt = dspy.MIPROv2(metric=recall_at_10, auto="light", num_threads=1)
        compiled = opt.compile(program, trainset=trainset, valset=devset)
    elif optimizer == "gepa":
        opt = dspy.GEPA(metric=recall_feedback, auto="light", reflection_lm=dspy.settings.lm, num_threads=1)
        compiled = opt.compile(program, trainset=trainset, valset=devset)
    else:
        raise ValueError(f"unknown optimizer {optimizer!r}")
    return {"program": compiled, "optimizer": optimizer, "dev_recall@10_before": before,
            "dev_recall@10_after": _score(compiled, devset), "train_examples": len(trainset)}
