"""PubMedQA evaluation data: yes/no/maybe research questions, each asked about one PubMed abstract.

Bundled (``tracerag/datasets/data/pubmedqa/``, MIT, from the PubMedQA authors): ``abstracts.jsonl``, the
corpus (``{"pmid", "title", "contexts": [...], "labels", "meshes", "year"}`` a line, ready for
:func:`tracerag.retrievers.corpus.ingest_documents`), and ``questions_dev.jsonl``, 500 labelled questions
(``{"pmid", "question", "final_decision", "long_answer"}``). A question's own abstract is its gold
evidence, so retrieval recall is whether its pmid is among the retrieved chunks' ``doc_id``. Splits are
the same stable hash as for the other datasets, of the pmid.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import dspy

from ..retrievers.corpus import CorpusError
from ..retrievers.jsonl import iter_json_lines
from .smarthome import SPLITS, resolve_dataset, split_of

__all__ = ["DECISIONS", "PubMedQAQuestion", "load_pubmedqa_questions", "pubmedqa_abstracts_path"]

QUESTIONS_FILE = "questions_dev.jsonl"
ABSTRACTS_FILE = "abstracts.jsonl"
DECISIONS = ("yes", "no", "maybe")


@dataclass(frozen=True)
class PubMedQAQuestion:
    pmid: str
    question: str
    final_decision: str  # "yes", "no" or "maybe"
    long_answer: str = ""  # the abstract's conclusion, the reference answer

    @property
    def split(self) -> str:
        return split_of(self.pmid)

    def to_example(self) -> dspy.Example:
        """An Example whose only input is ``question``; ``gold_doc_ids`` is what retrieval should find."""
        return dspy.Example(pmid=self.pmid, question=self.question, final_decision=self.final_decision,
                            long_answer=self.long_answer, gold_doc_ids=[self.pmid]).with_inputs("question")


def _dataset_file(path_or_name: str | Path, filename: str) -> Path:
    """A file path as given, or ``filename`` inside a directory / bundled dataset name."""
    path = Path(path_or_name)
    if path.is_file():
        return path
    target = resolve_dataset(path_or_name) / filename
    if not target.is_file():
        raise CorpusError(f"{target}: file is missing")
    return target


def pubmedqa_abstracts_path(path_or_name: str | Path = "pubmedqa") -> Path:
    """The abstracts JSONL of a PubMedQA directory (default: the bundled one)."""
    return _dataset_file(path_or_name, ABSTRACTS_FILE)


def load_pubmedqa_questions(path_or_name: str | Path = "pubmedqa", split: str | None = None) -> list[PubMedQAQuestion]:
    """Parse a questions JSONL (a file, a directory holding ``questions_dev.jsonl``, or a bundled name).

    A broken line is an error naming file, line and field. ``split`` keeps the questions whose pmid
    hashes into it ("train", "dev", "test").
    """
    if split is not None and split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose from {list(SPLITS)}")
    path = _dataset_file(path_or_name, QUESTIONS_FILE)
    questions, seen = [], set()
    for where, row in iter_json_lines(path, CorpusError):
        pmid = row.get("pmid")
        if isinstance(pmid, int) and not isinstance(pmid, bool):
            pmid = str(pmid)
        if not isinstance(pmid, str) or not pmid:
            raise CorpusError(f"{where}: field 'pmid' is missing or not a string")
        if pmid in seen:
            raise CorpusError(f"{where}: field 'pmid' {pmid!r} appears twice")
        seen.add(pmid)
        if not isinstance(row.get("question"), str) or not row["question"].strip():
            raise CorpusError(f"{where}: field 'question' is missing or not a string")
        decision = row.get("final_decision")
        if decision not in DECISIONS:
            raise CorpusError(f"{where}: field 'final_decision' must be one of {list(DECISIONS)}, got {decision!r}")
        long_answer = row.get("long_answer") or ""
        if not isinstance(long_answer, str):
            raise CorpusError(f"{where}: field 'long_answer' must be a string")
        question = PubMedQAQuestion(pmid, row["question"], decision, long_answer)
        if split is None or question.split == split:
            questions.append(question)
    return questions
