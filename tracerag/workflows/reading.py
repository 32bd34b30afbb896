"""What reading a data file did, told on stderr as it happens (before a long evaluation starts), and the
labelled questions two programs share (PubMedQA's)."""

from __future__ import annotations

import sys


def print_reading(source, read, max_skipped: float | None = None) -> None:
    """The counts of ``read`` (a ReadReport), then each skipped item's line, on stderr; with ``max_skipped``,
    fail in one line (DataSetShrunk) when more than that share was skipped or nothing is usable."""
    print(f"{source}: {read.summary()}", file=sys.stderr)
    for problem in read.problems:
        print(f"  skipped: {problem}", file=sys.stderr)
    if max_skipped is not None:
        read.check(max_skipped, str(source))


def pubmedqa_examples(dataset: str, split: str = "test", *, max_skipped: float = 0.0, pmids=None) -> list:
    """PubMedQA's questions of ``split`` as dspy Examples (the RAG program's and the search agent's); ``pmids``:
    keep only those whose abstracts the corpus holds. Prints what reading them did and fails when more than
    ``max_skipped`` was skipped."""
    from ..data_files.read_report import ReadReport
    from ..datasets.pubmedqa import load_pubmedqa_questions, pubmedqa_questions_path

    read = ReadReport("questions")
    questions = load_pubmedqa_questions(dataset, None if split == "all" else split, report=read, pmids=pmids)
    print_reading(pubmedqa_questions_path(dataset), read, max_skipped)
    return [q.to_example() for q in questions]
