"""SelfReflectiveRAG's workflows: its labelled questions, evaluation, one question, and compile."""

from __future__ import annotations

import json
from collections.abc import Callable

from ..workflows.reading import pubmedqa_examples
from ..workflows.results import Compiled, Outcome


def examples(dataset: str, split: str = "test", *, max_skipped: float = 0.0, pmids=None) -> list:
    """The questions of ``split`` as dspy Examples (``reading.pubmedqa_examples``)."""
    return pubmedqa_examples(dataset, split, max_skipped=max_skipped, pmids=pmids)


def evaluate(build: Callable, *, dataset: str, split: str = "test", k: int | None = None, alce: bool = False,
             max_skipped: float = 0.0, num_threads: int = 1, ranked_depth: int | None = None) -> Outcome:
    """Score the program retrieving ``k`` passages (default 10) on the split's questions that its corpus can
    answer; ``alce`` adds the LM-judged citation recall and precision; ``ranked_depth``: each row also carries
    its ranked documents (to ``k``) for the HTML report's recall curve."""
    from ..datasets.pubmedqa import corpus_pmids
    from .evaluation import evaluate_rag

    k = k or 10
    program = build(k=k)
    labelled = examples(dataset, split, max_skipped=max_skipped, pmids=corpus_pmids(program.retriever))
    return Outcome(evaluate_rag(program, labelled, dataset=str(dataset), k=k, alce=alce, num_threads=num_threads,
                                ranked_depth=ranked_depth))


def run(build: Callable, *, query: str) -> Outcome:
    """The cited answer to one question, with what was graded, kept and cited, as JSON."""
    pred = build()(question=query)
    keys = ("answer", "verdict", "grounded", "hint", "lm_fallbacks", "cited_ids", "invalid_cited_ids", "kept_ids",
            "retrieved_ids", "unsupported_claims", "rounds", "lm_calls")
    return Outcome(json.dumps({key: pred[key] for key in keys}, ensure_ascii=False, indent=1))


def compile(build: Callable, *, dataset: str, optimizer: str, max_train: int = 0, options: dict) -> Compiled:
    """Optimise the grading, answering and checking prompts on the train split, scored on dev."""
    from .compiling import compile_rag

    program = build()
    trainset = examples(dataset, "train")
    scores = compile_rag(program, trainset[:max_train] if max_train else trainset, examples(dataset, "dev"),
                         optimizer, **options)
    return Compiled(scores.pop("program"), scores, program.retriever.describe().uri)
