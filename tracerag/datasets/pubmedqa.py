"""PubMedQA evaluation data: yes/no/maybe research questions, each asked about one PubMed abstract.

Bundled (``tracerag/datasets/data/pubmedqa/``, MIT, from the PubMedQA authors): ``abstracts.jsonl``, the
corpus (``{"pmid", "title", "contexts": [...], "labels", "meshes", "year"}`` a line, ready for
:func:`tracerag.documents.corpus.ingest_documents`), and ``questions_dev.jsonl``, 500 labelled questions
(``{"pmid", "question", "final_decision", "long_answer"}``). A question's own abstract is its gold
evidence, so retrieval recall is whether its pmid is among the retrieved chunks' ``doc_id``. Splits are
the same stable hash as for the other datasets, of the pmid.

Questions are read liberally (a BOM, CRLF, a pmid given as a number, a decision in any case such as
``"Yes"``, a ``long_answer`` given as a list of strings or null) and each normalisation is counted in a
:class:`ReadReport`. With a report, a question that cannot be used (a field missing, a lone surrogate)
is skipped with its ``file:line: field: what was expected``, and the caller decides with
``report.check`` how much may be skipped; without one, the first such line is an error.

A label that would corrupt a metric is an error naming the line, whatever the report allows: a pmid
given twice (both lines named) and, when the corpus is known, a pmid that is not one of its
documents (gold evidence no retriever can ever return).
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass
from pathlib import Path

import dspy

from ..data_files.read_report import DEFAULT_MAX_BYTES, ReadReport, text_problem
from ..documents.corpus import CorpusError, ItemSink, iter_data_lines
from ..errors import InvalidValue
from .smarthome import SPLITS, resolve_dataset, split_of

__all__ = ["DECISIONS", "PubMedQAQuestion", "load_pubmedqa_questions", "pubmedqa_abstracts_path",
           "pubmedqa_questions_path"]

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
    if path.exists() and not path.is_dir():  # a file, or a FIFO/device the reader refuses with a clear line
        return path
    target = resolve_dataset(path_or_name) / filename
    if not target.is_file():
        raise CorpusError(f"{target}: file is missing")
    return target


def pubmedqa_abstracts_path(path_or_name: str | Path = "pubmedqa") -> Path:
    """The abstracts JSONL of a PubMedQA directory (default: the bundled one)."""
    return _dataset_file(path_or_name, ABSTRACTS_FILE)


def pubmedqa_questions_path(path_or_name: str | Path = "pubmedqa") -> Path:
    """The questions JSONL a path or bundled name stands for (the file itself, or ``questions_dev.jsonl``)."""
    return _dataset_file(path_or_name, QUESTIONS_FILE)


def load_pubmedqa_questions(path_or_name: str | Path = "pubmedqa", split: str | None = None,
                            report: ReadReport | None = None, *,
                            pmids: Container[str] | None = None) -> list[PubMedQAQuestion]:
    """Parse a questions JSONL (a file, a directory holding ``questions_dev.jsonl``, or a bundled name).

    ``split`` keeps the questions whose pmid hashes into it ("train", "dev", "test"). With ``report``, a
    question that cannot be used is skipped and counted there (check it with ``report.check``);
    without one, it is a CorpusError naming file, line and field. A file that cannot be read at all (a
    FIFO, a directory, over the size cap) is always an error, and so is a repeated pmid or, with
    ``pmids`` (the corpus's document ids), a pmid that is not among them.
    """
    if split is not None and split not in SPLITS:
        raise InvalidValue(f"unknown split {split!r}; choose from {list(SPLITS)}")
    path = pubmedqa_questions_path(path_or_name)
    sink = ItemSink(CorpusError, report, strict=report is None)
    questions, seen = [], {}
    lines = 0
    for where, row in iter_data_lines(path, sink, DEFAULT_MAX_BYTES):
        lines += 1
        question = _question(row, where, sink, seen)
        if question is not None and pmids is not None and question.pmid not in pmids:
            raise CorpusError(f"{where}: field 'pmid' {question.pmid!r} is not a document of the corpus")
        if question is not None and (split is None or question.split == split):
            questions.append(question)
    if not lines and not (report is not None and report.read):
        raise CorpusError(f"{path}: no questions (the file holds no JSON lines)")
    return questions


def _question(row: dict, where: str, sink: ItemSink, seen: dict[str, str]) -> PubMedQAQuestion | None:
    """One line's question, or None when it was skipped (counted in the sink's report)."""
    pmid = row.get("pmid")
    if isinstance(pmid, int) and not isinstance(pmid, bool):
        pmid = str(pmid)
        sink.normalise("pmid as a number")
    if not isinstance(pmid, str) or not pmid.strip():
        return sink.bad(where, "no pmid", "field 'pmid' is missing or not a string")
    if pmid in seen:
        raise CorpusError(f"{where}: pmid {pmid!r} repeats {seen[pmid]}")
    text = row.get("question")
    if not isinstance(text, str) or not text.strip():
        return sink.bad(where, "no question", "field 'question' is missing or not a string")
    decision = row.get("final_decision")
    if isinstance(decision, str) and decision not in DECISIONS and decision.strip().lower() in DECISIONS:
        decision = decision.strip().lower()
        sink.normalise("final_decision in another case")
    if decision not in DECISIONS:
        return sink.bad(where, "bad final_decision",
                        f"field 'final_decision' must be one of {list(DECISIONS)}, got {decision!r}")
    long_answer = row.get("long_answer") or ""
    if isinstance(long_answer, list) and all(isinstance(v, str) for v in long_answer):
        long_answer = " ".join(long_answer)
        sink.normalise("long_answer as a list of strings")
    if not isinstance(long_answer, str):
        return sink.bad(where, "bad long_answer", "field 'long_answer' must be a string")
    for name, value in (("pmid", pmid), ("question", text), ("long_answer", long_answer)):
        problem = text_problem(value)
        if problem is not None:
            return sink.unstorable(where, "text that cannot be stored", f"field {name!r} {problem}; question skipped")
    place = where.rsplit(":", 1)[1].strip()
    seen[pmid] = f"line {place}" if place.isdigit() else place
    return PubMedQAQuestion(pmid, text, decision, long_answer)


def corpus_pmids(bank) -> set[str]:
    """The document ids of a chunk bank (chunk ids are ``<doc_id>#<n>``, see ``ingest_documents``)."""
    return {chunk_id.rsplit("#", 1)[0] for chunk_id in bank.ids}
