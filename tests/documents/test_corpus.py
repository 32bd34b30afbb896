"""Ingesting a JSONL corpus into a chunk bank: metadata, free re-ingestion, changed and broken input."""

import json
import logging
import os

import pytest

from tracerag.documents.corpus import CorpusError, ingest_documents, read_documents
from tracerag.stores.cosine_bank import CosineBank

DOCS = [
    {"pmid": "1001", "title": None, "contexts": [
        "Statins lower LDL cholesterol in adults with high cardiovascular risk.",
        "In this trial, atorvastatin reduced major coronary events over five years of follow-up.",
        "Muscle pain was the most frequent adverse effect reported by participants."],
     "meshes": ["Hydroxymethylglutaryl-CoA Reductase Inhibitors"], "year": "2004"},
    {"id": "doc-2", "title": "Sleep and memory", "text":
        "Sleep after learning consolidates declarative memory. Students who slept recalled more word pairs "
        "than students who stayed awake. The effect persisted one week later."},
    {"id": 3, "text": "Regular walking improves mood in older adults.\u2029It also improves sleep quality."},
]


class CountingEmbedder:
    """Wraps an embedder and records every text it is asked to embed."""

    def __init__(self, inner):
        self.inner, self.texts = inner, []

    id = property(lambda self: self.inner.id)
    dim = property(lambda self: self.inner.dim)

    def embed(self, texts):
        self.texts += list(texts)
        return self.inner.embed(texts)


def write_docs(path, docs, extra_lines=()):
    lines = [json.dumps(d, ensure_ascii=False) for d in docs] + list(extra_lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_ingest_stores_chunks_with_their_document_metadata(tmp_path, embedder):
    docs = write_docs(tmp_path / "docs.jsonl", DOCS)
    report = ingest_documents(docs, tmp_path / "bank", embedder, size=120, overlap=30)
    bank = CosineBank.load(tmp_path / "bank", embedder)
    assert (report.documents, report.added, report.unchanged, report.changed_skipped) == (3, report.chunks, 0, [])
    assert report.bank_size == len(bank) == report.chunks > 3
    first = bank.metadata(bank.row_of("1001#0"))
    assert first["doc_id"] == "1001" and first["chunk"] == 0 and "title" not in first  # null title left out
    assert first["text"].startswith("Statins lower LDL cholesterol") and len(first["hash"]) == 16
    assert first["year"] == "2004" and first["meshes"] == ["Hydroxymethylglutaryl-CoA Reductase Inhibitors"]
    assert "contexts" not in first  # the text fields are not copied into every chunk
    joined = [bank.metadata(bank.row_of(i))["text"] for i in bank.ids if i.startswith("1001#")]
    assert any("participants." in t for t in joined) and "risk. In this trial" in " ".join(joined)
    assert bank.metadata(bank.row_of("doc-2#0"))["title"] == "Sleep and memory"
    assert "3#0" in bank  # an integer id becomes a string; U+2029 inside a string did not split the line
    hits = bank.search_texts(["Does sleeping help you remember what you learned?"], k=1)[0]
    assert hits[0].metadata["doc_id"] == "doc-2"


def test_reingesting_an_unchanged_corpus_embeds_nothing(tmp_path, embedder):
    docs = write_docs(tmp_path / "docs.jsonl", DOCS)
    first = ingest_documents(docs, tmp_path / "bank", embedder, size=120, overlap=30)
    counting = CountingEmbedder(embedder)
    again = ingest_documents(docs, tmp_path / "bank", counting, size=120, overlap=30)
    assert counting.texts == []
    assert (again.added, again.unchanged, again.bank_size) == (0, first.chunks, first.chunks)

    new_doc = {"id": "doc-4", "text": "Coffee intake was not associated with arrhythmia in this cohort."}
    write_docs(docs, [*DOCS, new_doc])
    grown = ingest_documents(docs, tmp_path / "bank", counting, size=120, overlap=30)
    assert counting.texts == [new_doc["text"]]  # only the new document's chunk is embedded
    assert (grown.added, grown.unchanged, grown.bank_size) == (1, first.chunks, first.chunks + 1)


def test_a_changed_document_is_reported_and_skipped(tmp_path, embedder, caplog):
    docs = write_docs(tmp_path / "docs.jsonl", DOCS)
    ingest_documents(docs, tmp_path / "bank", embedder, size=120, overlap=30)
    edited = [dict(DOCS[0]), *DOCS[1:]]
    edited[0]["contexts"] = ["Statins lower LDL cholesterol in children, too.", *DOCS[0]["contexts"][1:]]
    write_docs(docs, edited)
    counting = CountingEmbedder(embedder)
    with caplog.at_level(logging.WARNING, logger="tracerag.documents.corpus"):
        report = ingest_documents(docs, tmp_path / "bank", counting, size=120, overlap=30)
    assert report.changed_skipped == ["1001"] and report.added == 0 and counting.texts == []
    assert "1001" in caplog.text and "rebuild" in caplog.text
    bank = CosineBank.load(tmp_path / "bank")
    assert bank.metadata(bank.row_of("1001#0"))["text"].startswith("Statins lower LDL cholesterol in adults")
    # a different chunk size changes every chunk: all documents are reported, none duplicated
    resized = ingest_documents(docs, tmp_path / "bank", counting, size=60, overlap=10)
    assert sorted(resized.changed_skipped) == ["1001", "3", "doc-2"] and resized.added == 0


@pytest.mark.parametrize(("line", "message"), [
    ('{"id": "x", "text": "ok"', r":4: invalid JSON"),
    ('{"text": "no id here"}', r":4: field 'id' \(or 'pmid'\) is missing"),
    ('{"id": "x"}', r":4: field 'text' or 'contexts' is missing"),
    ('{"id": "x", "contexts": ["fine", 7]}', r":4: field 'contexts'\[1\] must be a string"),
    ('{"id": "x", "text": "ok", "title": ["a"]}', r":4: field 'title' must be a string or null"),
    ('{"id": "doc-2", "text": "again"}', r":4: field 'id' 'doc-2' appears twice \(first at .*:2\)"),
    ('{"id": "x", "text": "ok", "hash": "mine"}', r":4: field 'hash' is reserved"),
    ('["not", "an", "object"]', r":4: expected a JSON object"),
])
def test_a_bad_line_names_file_line_and_field_and_leaves_the_bank_intact(tmp_path, embedder, line, message):
    docs = write_docs(tmp_path / "docs.jsonl", DOCS)
    ingest_documents(docs, tmp_path / "bank", embedder)
    before = (tmp_path / "bank" / "manifest.json").read_text()
    write_docs(docs, DOCS, [line])
    with pytest.raises(CorpusError, match=rf"docs\.jsonl{message}"):
        ingest_documents(docs, tmp_path / "bank", embedder)
    assert (tmp_path / "bank" / "manifest.json").read_text() == before
    assert len(CosineBank.load(tmp_path / "bank", embedder)) == 3


def test_nothing_to_ingest_is_an_error(tmp_path, embedder):
    with pytest.raises(CorpusError, match="file is missing"):
        ingest_documents(tmp_path / "absent.jsonl", tmp_path / "bank", embedder)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="no documents"):
        ingest_documents(empty, tmp_path / "bank", embedder)
    assert not (tmp_path / "bank").exists()


def test_a_document_without_text_is_skipped_and_named(tmp_path, embedder):
    docs = write_docs(tmp_path / "docs.jsonl", [*DOCS, {"id": "blank", "contexts": []}])
    report = ingest_documents(docs, tmp_path / "bank", embedder)
    assert report.empty_skipped == ["blank"] and report.documents == 4 and report.added == 3


def test_common_variants_are_normalised_and_counted(tmp_path, embedder):
    docs = tmp_path / "docs.jsonl"
    rows = [{"id": 1, "text": ["Walking improves mood.", "It also helps sleep."]},
            {"pmid": "2", "contexts": "One abstract given as a single string.", "title": 1999},
            {"id": "3", "text": "Extra fields are kept.", "source": {"db": "pubmed"}}]
    docs.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(r) + "\r\n" for r in rows).encode())
    report = ingest_documents(docs, tmp_path / "bank", embedder)
    assert report.documents == 3 and report.reading.kept == 3 and not report.reading.skipped
    assert dict(report.reading.normalised) == {"BOM stripped": 1, "CRLF line ends": 3, "id as a number": 1,
                                               "text as a list of strings": 1, "contexts as one string": 1,
                                               "title as a number": 1}
    bank = CosineBank.load(tmp_path / "bank")
    assert bank.metadata(bank.row_of("1#0"))["text"] == "Walking improves mood. It also helps sleep."
    assert bank.metadata(bank.row_of("2#0"))["title"] == "1999"
    assert report.to_dict()["read"]["normalised"]["id as a number"] == 1


def test_an_unstorable_document_is_skipped_not_the_whole_ingest(tmp_path, embedder):
    docs = write_docs(tmp_path / "docs.jsonl", DOCS, ['{"id": "bad", "text": "lone \\ud800 surrogate"}'])
    with open(docs, "ab") as f:
        f.write(b'{"id": "latin1", "text": "caf\xe9"}\n')
    report = ingest_documents(docs, tmp_path / "bank", embedder)
    assert report.documents == 3 and report.reading.read == 5
    assert dict(report.reading.skipped) == {"text that cannot be stored": 1, "not UTF-8": 1}
    assert report.reading.problems[0] == (f"{docs}:4: field 'text' holds a character UTF-8 cannot store "
                                          f"(U+D800, a lone surrogate); document skipped")
    assert report.reading.problems[1] == f"{docs}:5: not UTF-8 (byte 30)"
    again = ingest_documents(docs, tmp_path / "bank", embedder)  # re-ingesting stays free
    assert again.added == 0 and again.unchanged == report.chunks
    only_bad = write_docs(tmp_path / "bad.jsonl", [], ['{"id": "bad", "text": "\\udc80"}'])
    with pytest.raises(ValueError, match=r"bad.jsonl: none of the 1 documents read is usable: .*bad.jsonl:1"):
        ingest_documents(only_bad, tmp_path / "bank2", embedder)
    assert not (tmp_path / "bank2").exists()


def test_only_regular_files_are_read(tmp_path, embedder):
    fifo = tmp_path / "docs.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(CorpusError, match="docs.jsonl: is a FIFO, not a regular file"):  # and never blocks
        ingest_documents(fifo, tmp_path / "bank", embedder)
    with pytest.raises(CorpusError, match="is a directory"):
        ingest_documents(tmp_path, tmp_path / "bank", embedder)
    big = write_docs(tmp_path / "big.jsonl", DOCS)
    with pytest.raises(CorpusError, match=r"big.jsonl: \d+ bytes is over the 100-byte limit"):
        read_documents(big, max_bytes=100)


def test_a_first_ingest_raced_by_another_appends_what_the_other_did_not_store(tmp_path, embedder, monkeypatch):
    """Two first ingests into a missing bank (two servers starting at once): the second to write finds the
    bank created by the first and appends what it lacks, instead of failing with "a bank already exists"."""
    docs = write_docs(tmp_path / "docs.jsonl", DOCS)
    first_half = write_docs(tmp_path / "half.jsonl", DOCS[:1])
    bank_dir = tmp_path / "bank"
    real_create = CosineBank.create.__func__

    def raced(cls, directory, *args, **kwargs):
        monkeypatch.setattr(CosineBank, "create", classmethod(real_create))
        ingest_documents(first_half, bank_dir, embedder)          # the other process gets there first
        return real_create(cls, directory, *args, **kwargs)

    monkeypatch.setattr(CosineBank, "create", classmethod(raced))
    report = ingest_documents(docs, bank_dir, embedder)
    bank = CosineBank.load(bank_dir, embedder)
    assert report.bank_size == len(bank) == len(set(bank.ids))
    assert {bank.metadata(row)["doc_id"] for row in range(len(bank))} == {"1001", "doc-2", "3"}
    assert report.unchanged > 0 and report.added > 0
