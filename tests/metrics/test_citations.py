"""Citation metrics on hand-made answers: extraction forms, validity, coverage, sentence splitting, speed."""

import time

import pytest

from tracerag.metrics.citations import (
    CHUNK_ID_PATTERN,
    citation_coverage,
    citation_validity,
    extract_cited_ids,
    partition_ids,
    split_sentences,
)


def test_extracts_every_citation_form_in_order_without_repeats():
    text = ("Thaw on ice [mat-00001] and mix (proc-00002). Follow [tpl-0a1b2c3d; template-001] as before "
            "[mat-00001]. Stored chunks [12345678#0, 12345678#3] agree. A multi-part slug [data-check-00007].")
    assert extract_cited_ids(text) == ["mat-00001", "proc-00002", "tpl-0a1b2c3d", "template-001", "12345678#0",
                                       "12345678#3", "data-check-00007"]


def test_extraction_ignores_prose_and_near_misses():
    text = ("See mat-00001 in prose, [mat-0001] with four digits, [mat-000012] with six, [xmat-00001x], "
            "(covid-19), [MAT-00001] and (see step 3).")
    assert extract_cited_ids(text) == []
    assert extract_cited_ids("As tpl-0a1b2c3d says, and mat-00001.", bracketed=False) == ["tpl-0a1b2c3d",
                                                                                         "mat-00001"]
    assert extract_cited_ids("") == []


def test_a_custom_pattern_restricts_what_counts():
    text = "Dose matters [12345678#0] and [mat-00001]."
    assert extract_cited_ids(text, CHUNK_ID_PATTERN) == ["12345678#0"]
    assert extract_cited_ids("[doc-7]", r"doc-\d+") == ["doc-7"]


def test_validity_is_the_share_of_distinct_cited_ids_provided():
    provided = ["a#0", "a#1", "b#0"]
    assert citation_validity(["a#0", "a#1"], provided) == 1.0
    assert citation_validity(["a#0", "x#9"], provided) == 0.5
    assert citation_validity(["x#9", "x#9", "a#0"], provided) == 0.5  # a repeated invalid id counts once
    assert citation_validity([], provided) == 1.0  # nothing cited, nothing invalid (coverage penalises this)
    assert citation_validity(["a#0"], []) == 0.0
    assert partition_ids(["x#9", "a#0", "x#9", "b#0"], provided) == (["a#0", "b#0"], ["x#9"])


def test_coverage_counts_units_with_a_valid_citation():
    provided = {"mat-00001", "tpl-0a1b2c3d"}
    sentences = ["Thaw on ice [mat-00001].", "Invented [mat-09999].", "No citation at all.",
                 "Follow the template [tpl-0a1b2c3d, mat-09999]."]
    assert citation_coverage(sentences, provided) == 0.5
    assert citation_coverage([["mat-00001"], [], ["mat-09999"], ["tpl-0a1b2c3d"]], provided) == 0.5
    assert citation_coverage(["Thaw on ice [mat-00001]."], ["mat-00001"]) == 1.0  # any iterable of ids
    assert citation_coverage([], provided) == 0.0  # an empty answer supports nothing


@pytest.mark.parametrize("answer,sentences", [
    ("A holds [x#0]. B holds too [y#1].", ["A holds [x#0].", "B holds too [y#1]."]),
    ("A holds. [x#0] B holds.", ["A holds. [x#0]", "B holds."]),  # a citation after the stop stays with it
    ("Mix 2.5 mL, e.g. from the stock. Then wait!", ["Mix 2.5 mL, e.g. from the stock.", "Then wait!"]),
    ("Steps:\n1. Mix [mat-00001].\n2. Heat.", ["Steps:", "1. Mix [mat-00001].", "2. Heat."]),
    ("1. Mix the buffer. 2. Heat it.", ["1. Mix the buffer.", "2. Heat it."]),
    ("A line\n[x#0]\nB line", ["A line [x#0]", "B line"]),
    ("细胞生长良好。[x#0]温度为37度！", ["细胞生长良好。[x#0]", "温度为37度！"]),
    ("He said \"stop.\" Then left.", ["He said \"stop.\"", "Then left."]),
    ("", []),
    ("  \n ", []),
])
def test_split_sentences(answer, sentences):
    assert split_sentences(answer) == sentences


@pytest.mark.slow  # a wall-clock figure: benchmarks/bench_citation_metrics.py measures it
def test_a_thousand_answers_take_well_under_a_second():
    answer = " ".join(f"Claim number {i} holds for the cohort [1234567{i}#0, mat-0000{i}]." for i in range(1, 7))
    provided = {f"1234567{i}#0" for i in range(1, 4)}
    start = time.perf_counter()
    for _ in range(1000):
        citation_coverage(split_sentences(answer), provided)
        citation_validity(extract_cited_ids(answer), provided)
    assert time.perf_counter() - start < 1.0
