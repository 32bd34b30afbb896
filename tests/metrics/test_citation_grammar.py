"""The citation-id grammar: any citable document id written as a citation reads back as itself, the
same way for the writer (``render_citation``), the parser (``extract_cited_ids``) and the metrics."""

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracerag.metrics.citations import (
    CHUNK_ID_PATTERN,
    citation_coverage,
    citation_validity,
    extract_cited_ids,
    is_citable,
    keep_citations,
    render_citation,
    split_sentences,
)

# Unicode letters and digits, _ - . : / and parentheses; spaces inside (never at either end)
_ID_CHARS = st.characters(categories=("L", "N"), include_characters="_-.:/()", exclude_characters="#")
doc_ids = st.builds(lambda words: " ".join(words),
                    st.lists(st.text(_ID_CHARS, min_size=1, max_size=12), min_size=1, max_size=4))
chunk_ids = st.builds(lambda doc, n: f"{doc}#{n}", doc_ids, st.integers(0, 10_000))


@settings(max_examples=80, deadline=None)
@given(st.lists(chunk_ids, min_size=1, max_size=5, unique=True))
def test_any_grammatical_id_list_round_trips_through_render_and_parse(ids):
    assert all(is_citable(i) for i in ids)
    assert extract_cited_ids(render_citation(ids), CHUNK_ID_PATTERN) == ids
    assert extract_cited_ids(f"A claim {render_citation(ids)}. Next.", CHUNK_ID_PATTERN) == ids
    assert extract_cited_ids("".join(render_citation([i]) for i in ids), CHUNK_ID_PATTERN) == ids


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=20), st.integers(0, 99))
def test_any_unicode_id_either_round_trips_or_is_not_citable(doc, n):
    chunk_id = f"{doc}#{n}"
    parsed = extract_cited_ids(render_citation([chunk_id]), CHUNK_ID_PATTERN)
    assert (parsed == [chunk_id]) == is_citable(chunk_id)
    # an uncitable id never reads back as some other id, unless it holds a separator or an outer blank
    if not is_citable(chunk_id) and not any(c in doc for c in "[](),;#") and doc == doc.strip():
        assert parsed == []


@pytest.mark.parametrize("chunk_id", ["指南1#0", "my doc#0", "_notes#3", "Ünïcode-file.v2#1", "report (final).pdf#12",
                                      "docs/guide.md#0", "pubmed:123#4", "ガイド 第2版#0", "12345678#0"])
def test_ordinary_document_ids_are_citable(chunk_id):
    assert is_citable(chunk_id)
    assert extract_cited_ids(f"It holds {render_citation([chunk_id])}.") == [chunk_id]  # the default pattern too
    assert citation_coverage(split_sentences(f"It holds [{chunk_id}]."), [chunk_id], CHUNK_ID_PATTERN) == 1.0


def test_a_space_is_part_of_the_id_not_a_break_before_it():
    assert extract_cited_ids("[my doc#0]", CHUNK_ID_PATTERN) == ["my doc#0"]
    assert extract_cited_ids("[a#0 b#1; c d#2]", CHUNK_ID_PATTERN) == ["a#0", "b#1", "c d#2"]
    assert extract_cited_ids("(my doc#0)", CHUNK_ID_PATTERN) == ["my doc#0"]


@pytest.mark.parametrize("chunk_id", ["C# notes#0", "a,b#0", "a;b#0", "x[1]#0", " lead#0", "trail #0", "two\nlines#0",
                                      "tab\there#0", "no-number#", "#0"])
def test_ids_outside_the_grammar_are_not_citable(chunk_id):
    assert not is_citable(chunk_id)


def test_prose_in_brackets_is_not_a_citation():
    for text in ["(see step 3)", "[issue #5]", "(covid-19)", "[1]", "[note]", "the C# language"]:
        assert extract_cited_ids(text, CHUNK_ID_PATTERN) == [], text


def test_invalid_items_are_dropped_from_a_citation_and_returned():
    assert keep_citations("A [real#0, FORGED4]. B [fake#3].", ["real#0"]) == ("A [real#0]. B.", ["FORGED4", "fake#3"])
    assert keep_citations("A [real#0]. Not a citation [1].", ["real#0"]) == ("A [real#0]. Not a citation [1].", [])
    text, dropped = keep_citations("指南 [指南1#0; 指南9#0]", {"指南1#0"})
    assert text == "指南 [指南1#0]" and dropped == ["指南9#0"]


def test_a_forged_id_never_scores_as_valid():
    text = "A [real#0, FORGED4]."
    _, dropped = keep_citations(text, ["real#0"])
    assert citation_validity([*extract_cited_ids(text, CHUNK_ID_PATTERN), *dropped], ["real#0"]) == 0.5


def test_ascii_letters_alone_still_round_trip():
    ids = [f"{c}#0" for c in string.ascii_letters + string.digits]
    assert extract_cited_ids(render_citation(ids), CHUNK_ID_PATTERN) == ids
