"""Bad inputs for the RAG corpus: documents JSONL for ``ingest`` and PubMedQA-style questions JSONL.

Each variant calls what the CLI calls: ``ingest_documents`` (with the configured embedder) and
``load_pubmedqa_questions`` with a report, checked as ``evaluate`` checks it when any share may be
skipped (nothing usable left still fails)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import tracerag.config
from tracerag.data_files.read_report import ReadReport
from tracerag.datasets.pubmedqa import load_pubmedqa_questions
from tracerag.documents.corpus import ingest_documents
from tracerag.stores.cosine_bank import CosineBank

from .harness import Variant

FORMAT = "corpus"

DOCS = [{"id": "d1", "title": "Sleep and memory", "text": "Sleep after learning consolidates declarative memory."},
        {"pmid": "d2", "contexts": ["Statins lower LDL cholesterol.", "Muscle pain was the main adverse effect."]}]
QUESTIONS = [{"pmid": "1", "question": "Does sleep help memory?", "final_decision": "yes"},
             {"pmid": "2", "question": "Do statins cause muscle pain?", "final_decision": "maybe"}]


def _lines(rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")


def _write(path: Path, content: bytes | str | None) -> Path:
    if content == "fifo":
        os.mkfifo(path)
    elif content == "dir":
        path.mkdir()
    else:
        path.write_bytes(content)
    return path


def ingest(content, *, expect_docs: int | None = None, expect_text: str | None = None):
    def run(tmp: Path):
        docs = _write(tmp / "docs.jsonl", content)
        report = ingest_documents(docs, tmp / "bank", tracerag.config.make_embedder("local"))
        if expect_docs is not None:
            assert report.documents == expect_docs, report.to_dict()
        if expect_text is not None:
            bank = CosineBank.load(tmp / "bank")
            assert any(expect_text in bank.metadata(r)["text"] for r in range(len(bank))), expect_text
        return "skipped" if report.reading.skipped else None
    return run


def questions(content, *, expect: int | None = None, decision: str | None = None):
    def run(tmp: Path):
        path = _write(tmp / "questions.jsonl", content)
        report = ReadReport("questions")
        found = load_pubmedqa_questions(path, report=report)
        report.check(1.0, str(path))  # as evaluate --max-skipped 1: only nothing usable fails
        if expect is not None:
            assert len(found) == expect, report.summary()
        if decision is not None:
            assert found[0].final_decision == decision and found[0].pmid == "1"
        return "skipped" if report.skipped else None
    return run


_SURROGATE = b'{"id": "bad", "text": "broken \\ud800 text"}\n'

VARIANTS = [
    Variant("docs: the documented shape", "accepted", ingest(_lines(DOCS), expect_docs=2)),
    Variant("docs: UTF-8 BOM", "accepted", ingest(b"\xef\xbb\xbf" + _lines(DOCS), expect_docs=2)),
    Variant("docs: CRLF line ends", "accepted", ingest(_lines(DOCS).replace(b"\n", b"\r\n"), expect_docs=2)),
    Variant("docs: ids as numbers", "accepted", ingest(_lines([{"id": 7, "text": "Walking improves mood."},
                                                               {"pmid": 8, "text": "Tea has caffeine."}]),
                                                       expect_docs=2)),
    Variant("docs: contexts as one string", "accepted",
            ingest(_lines([{"id": "c", "contexts": "One abstract as a single string."}]),
                   expect_text="single string")),
    Variant("docs: text as a list of strings", "accepted",
            ingest(_lines([{"id": "t", "text": ["First part.", "Second part."]}]), expect_text="First part. Second")),
    Variant("docs: extra fields", "accepted",
            ingest(_lines([{**DOCS[0], "year": 2004, "meshes": ["Sleep"], "source": {"db": "x"}}]), expect_docs=1)),
    Variant("docs: a JSON array instead of JSON Lines", "accepted",
            ingest(json.dumps(DOCS, indent=2).encode(), expect_docs=2)),
    Variant("docs: a lone surrogate in one document", "skipped", ingest(_lines(DOCS) + _SURROGATE, expect_docs=2)),
    Variant("docs: bytes that are not UTF-8 in one line", "skipped",
            ingest(_lines(DOCS) + b'{"id": "x", "text": "caf\xe9"}\n', expect_docs=2)),
    Variant("docs: every document unstorable", "rejected", ingest(_SURROGATE)),
    Variant("docs: empty file", "rejected", ingest(b"")),
    Variant("docs: null", "rejected", ingest(b"null\n")),
    Variant("docs: truncated JSON", "rejected", ingest(_lines(DOCS) + b'{"id": "x", "text": "cut he')),
    Variant("docs: binary garbage", "rejected", ingest(bytes(range(256)) * 8)),
    Variant("docs: text of a wrong type", "rejected", ingest(_lines([{"id": "x", "text": {"body": "a"}}]))),
    Variant("docs: id of a wrong type", "rejected", ingest(_lines([{"id": ["x"], "text": "a"}]))),
    Variant("docs: a FIFO", "rejected", ingest("fifo")),
    Variant("docs: a directory", "rejected", ingest("dir")),
    Variant("questions: the documented shape", "accepted", questions(_lines(QUESTIONS), expect=2)),
    Variant("questions: BOM, CRLF, pmid as a number, 'Yes'", "accepted",
            questions(b"\xef\xbb\xbf" + _lines([{**QUESTIONS[0], "pmid": 1, "final_decision": "Yes"},
                                                 QUESTIONS[1]]).replace(b"\n", b"\r\n"), expect=2, decision="yes")),
    Variant("questions: long_answer as a list, extra fields", "accepted",
            questions(_lines([{**QUESTIONS[0], "long_answer": ["It does.", "Mostly."], "labels": ["A"]}]), expect=1)),
    Variant("questions: a lone surrogate in one question", "skipped",
            questions(_lines(QUESTIONS) + b'{"pmid": "3", "question": "\\udc80?", "final_decision": "no"}\n',
                      expect=2)),
    Variant("questions: one line without a question", "skipped",
            questions(_lines(QUESTIONS) + b'{"pmid": "3", "final_decision": "no"}\n', expect=2)),
    Variant("questions: one truncated line", "skipped", questions(_lines(QUESTIONS) + b'{"pmid": "3", "quest',
                                                                  expect=2)),
    Variant("questions: nothing usable", "rejected", questions(b'{"pmid": "3"}\nnull\n')),
    Variant("questions: empty file", "rejected", questions(b"\n")),
    Variant("questions: binary garbage", "rejected", questions(bytes(range(256)) * 8)),
    Variant("questions: a FIFO", "rejected", questions("fifo")),
]
