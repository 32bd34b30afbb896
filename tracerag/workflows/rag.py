"""SelfReflectiveRAG's workflows: its labelled questions, evaluation, one question, and compile."""

from __future__ import annotations

import json
from collections.abc import Callable

from .reading import print_reading
from .results import Compiled, Outcome


def examples(dataset: str, split: str = "test", *, max_skipped: float = 0.0, pmids=None) -> list:
    """The questions of ``split`` as dspy Examples; ``pmids``: keep only those whose abstracts the corpus
    holds. Prints what reading them did and fails when more than ``max_skipped`` was skipped."""
    from ..data_files.read_report import ReadReport
    from ..datasets.pubmedqa import load_pubmedqa_questions, pubmedqa_questions_path

    read = ReadReport("questions")
    questions = load_pubmedqa_questions(dataset, None if split == "all" else split, report=read, pmids=pmids)
    print_reading(pubmedqa_questions_path(dataset), read, max_skipped)
    return [q.to_example() for q in questions]


def evaluate(build: Callable, *, dataset: str, split: str = "test", k: int | None = None, alce: bool = False,
             max_skipped: float = 0.0, num_threads: int = 1, ranked_depth: int | None = None) -> Outcome:
    """Score the program retrieving ``k`` passages (default 10) on the split's questions that its corpus can
    answer; ``alce`` adds the LM-judged citation recall and precision; ``ranked_depth``: each row also carries
    its ranked documents (to ``k``) for the HTML report's recall curve."""
    from ..datasets.pubmedqa import corpus_pmids
    from ..evaluation import evaluate_rag

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
    from ..compiling import compile_rag

    program = build()
    trainset = examples(dataset, "train")
    scores = compile_rag(program, trainset[:max_train] if max_train else trainset, examples(dataset, "dev"),
                         optimizer, **options)
    return Compiled(scores.pop("program"), scores, program.retriever.describe().uri)
