"""The bundled PubMedQA questions and abstracts, and the loader's checks."""

import json

import pytest

from tracerag.datasets.pubmedqa import PubMedQAQuestion, load_pubmedqa_questions, pubmedqa_abstracts_path
from tracerag.datasets.smarthome import split_of
from tracerag.documents.corpus import CorpusError, read_documents


def test_bundled_questions_load_with_hash_splits():
    questions = load_pubmedqa_questions()
    assert len(questions) == 500 and len({q.pmid for q in questions}) == 500
    assert {q.final_decision for q in questions} == {"yes", "no", "maybe"}
    by_split = {s: load_pubmedqa_questions("pubmedqa", split=s) for s in ("train", "dev", "test")}
    assert sum(len(v) for v in by_split.values()) == 500
    assert all(split_of(q.pmid) == "test" for q in by_split["test"]) and len(by_split["test"]) > 150
    with pytest.raises(ValueError, match="unknown split"):
        load_pubmedqa_questions(split="validation")


def test_every_question_has_its_abstract_in_the_bundled_corpus():
    docs = read_documents(pubmedqa_abstracts_path())
    assert len(docs) == 1000 and all(d.text for d in docs)
    assert {q.pmid for q in load_pubmedqa_questions()} <= {d.id for d in docs}
    assert (pubmedqa_abstracts_path().parent / "LICENSE").read_text().startswith("MIT License")


def test_to_example_has_the_question_as_its_only_input():
    example = PubMedQAQuestion("123", "Does X help?", "maybe", "Unclear.").to_example()
    assert set(example.inputs().keys()) == {"question"}
    assert example.gold_doc_ids == ["123"] and example.final_decision == "maybe"


@pytest.mark.parametrize(("row", "message"), [
    ({"question": "Q?", "final_decision": "yes"}, r":2: field 'pmid' is missing"),
    ({"pmid": "2", "final_decision": "yes"}, r":2: field 'question' is missing"),
    ({"pmid": "2", "question": "Q?", "final_decision": "probably"}, r":2: field 'final_decision' must be one of"),
    ({"pmid": "2", "question": "Q?", "final_decision": "no", "long_answer": 5}, r":2: field 'long_answer'"),
    ({"pmid": "1", "question": "Q?", "final_decision": "no"}, r":2: pmid '1' repeats line 1"),
])
def test_a_bad_line_names_file_line_and_field(tmp_path, row, message):
    path = tmp_path / "questions.jsonl"
    good = {"pmid": 1, "question": "Q?", "final_decision": "yes"}  # an integer pmid is accepted
    path.write_text(json.dumps(good) + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=rf"questions\.jsonl{message}"):
        load_pubmedqa_questions(path)


def test_a_repeated_pmid_or_one_the_corpus_lacks_is_an_error_even_with_a_report(tmp_path):
    from tracerag.data_files.read_report import ReadReport

    path = tmp_path / "questions.jsonl"
    rows = [{"pmid": "1", "question": "Q1?", "final_decision": "yes"}, {"pmid": "2", "question": "Q2?",
                                                                       "final_decision": "no"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in [*rows, rows[0]]), encoding="utf-8")
    with pytest.raises(CorpusError) as err:
        load_pubmedqa_questions(path, report=ReadReport("questions"))
    assert str(err.value) == f"{path}:3: pmid '1' repeats line 1"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert len(load_pubmedqa_questions(path, report=ReadReport("questions"), pmids={"1", "2"})) == 2
    with pytest.raises(CorpusError) as err:
        load_pubmedqa_questions(path, report=ReadReport("questions"), pmids={"1", "3"})
    assert str(err.value) == f"{path}:2: field 'pmid' '2' is not a document of the corpus"


def test_the_corpus_pmids_are_the_document_ids_of_a_chunk_bank():
    from types import SimpleNamespace

    from tracerag.datasets.pubmedqa import corpus_pmids

    assert corpus_pmids(SimpleNamespace(ids=["1#0", "1#1", "a#b#0"])) == {"1", "a#b"}


def test_a_directory_of_ones_own_is_accepted(tmp_path):
    (tmp_path / "questions_dev.jsonl").write_text(
        json.dumps({"pmid": "9", "question": "Q?", "final_decision": "no"}) + "\n", encoding="utf-8")
    assert load_pubmedqa_questions(tmp_path) == [PubMedQAQuestion("9", "Q?", "no", "")]
    with pytest.raises(CorpusError, match="abstracts.jsonl: file is missing"):
        pubmedqa_abstracts_path(tmp_path)


def test_with_a_report_common_variants_are_normalised_and_bad_lines_skipped(tmp_path):
    from tracerag.data_files.read_report import DataSetShrunk, ReadReport

    path = tmp_path / "questions.jsonl"
    rows = [{"pmid": 1, "question": "Q1?", "final_decision": "Yes", "long_answer": ["It", "does."]},
            {"pmid": "2", "question": "Q2?", "final_decision": "no", "long_answer": None, "labels": ["x"]},
            {"pmid": "3", "final_decision": "no"}]
    text = "".join(json.dumps(r) + "\r\n" for r in rows)
    text += '{"pmid": "4", "question": "\\ud800", "final_decision": "no"}\n'
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    report = ReadReport("questions")
    found = load_pubmedqa_questions(path, report=report)
    assert found == [PubMedQAQuestion("1", "Q1?", "yes", "It does."), PubMedQAQuestion("2", "Q2?", "no", "")]
    assert report.summary() == ("read 4 questions, kept 2; normalised: BOM stripped 1, CRLF line ends 3, "
                                "final_decision in another case 1, long_answer as a list of strings 1, "
                                "pmid as a number 1; skipped: no question 1, text that cannot be stored 1")
    assert report.problems[0] == f"{path}:3: field 'question' is missing or not a string"
    with pytest.raises(DataSetShrunk, match=r"2 of 4 questions skipped \(50%\), over the 0% allowed"):
        report.check(0.0, str(path))
    report.check(0.5, str(path))
    with pytest.raises(CorpusError, match=r"questions.jsonl:3: field 'question'"):  # no report: strict
        load_pubmedqa_questions(path)


def test_files_that_are_not_data_are_one_clear_line(tmp_path):
    import os

    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="empty.jsonl: no questions"):
        load_pubmedqa_questions(tmp_path / "empty.jsonl")
    os.mkfifo(tmp_path / "fifo.jsonl")
    with pytest.raises(CorpusError, match="fifo.jsonl: is a FIFO, not a regular file"):
        load_pubmedqa_questions(tmp_path / "fifo.jsonl")
