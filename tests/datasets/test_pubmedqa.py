"""The bundled PubMedQA questions and abstracts, and the loader's checks."""

import json

import pytest

from tracerag.datasets.pubmedqa import PubMedQAQuestion, load_pubmedqa_questions, pubmedqa_abstracts_path
from tracerag.datasets.smarthome import split_of
from tracerag.retrievers.corpus import CorpusError, read_documents


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
    ({"pmid": "1", "question": "Q?", "final_decision": "no"}, r":2: field 'pmid' '1' appears twice"),
])
def test_a_bad_line_names_file_line_and_field(tmp_path, row, message):
    path = tmp_path / "questions.jsonl"
    good = {"pmid": 1, "question": "Q?", "final_decision": "yes"}  # an integer pmid is accepted
    path.write_text(json.dumps(good) + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=rf"questions\.jsonl{message}"):
        load_pubmedqa_questions(path)


def test_a_directory_of_ones_own_is_accepted(tmp_path):
    (tmp_path / "questions_dev.jsonl").write_text(
        json.dumps({"pmid": "9", "question": "Q?", "final_decision": "no"}) + "\n", encoding="utf-8")
    assert load_pubmedqa_questions(tmp_path) == [PubMedQAQuestion("9", "Q?", "no", "")]
    with pytest.raises(CorpusError, match="abstracts.jsonl: file is missing"):
        pubmedqa_abstracts_path(tmp_path)
