"""Sentence-aligned chunking: stable ids, size and overlap bounds, whitespace independence."""

import hashlib
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracerag.documents.chunking import chunk_text, split_sentences, text_hash

ABSTRACT = (
    "Programmed cell death (PCD) is the regulated death of cells within an organism. The lace plant "
    "produces perforations in its leaves through PCD. The leaves consist of a latticework of veins "
    "enclosing areoles. PCD occurs in the cells at the center of these areoles, e.g. in the window stage, "
    "and progresses outwards. The role of mitochondria during PCD has been recognized in animals; however, "
    "it has been less studied in plants. Window stage leaves were stained with MitoTracker Red CMXRos. "
    "Mitochondrial dynamics were delineated into four categories (M1-M4). A TUNEL assay showed fragmented "
    "nDNA in a gradient over these stages. Chloroplasts were also examined using live cell imaging. "
    "CsA treatment resulted in leaves with fewer perforations than controls."
)


def test_ids_hashes_and_texts_are_stable_across_runs():
    first = chunk_text("21645374", ABSTRACT, size=200, overlap=60)
    again = chunk_text("21645374", ABSTRACT, size=200, overlap=60)
    assert first == again
    assert [c.id for c in first] == [f"21645374#{n}" for n in range(len(first))]
    assert all(c.doc_id == "21645374" and c.hash == text_hash(c.text) for c in first)
    assert first[0].text == ("Programmed cell death (PCD) is the regulated death of cells within an organism. "
                             "The lace plant produces perforations in its leaves through PCD.")
    assert first[0].hash == hashlib.sha256(first[0].text.encode()).hexdigest()[:16]  # no per-process salt
    assert len(first) > 3


def test_chunks_respect_size_and_cover_every_sentence_in_order():
    chunks = chunk_text("d", ABSTRACT, size=200, overlap=60)
    assert all(len(c.text) <= 200 for c in chunks)
    sentences = split_sentences(ABSTRACT)
    covered = [s for c in chunks for s in split_sentences(c.text)]
    assert list(dict.fromkeys(covered)) == sentences  # every sentence, in order, none cut


def test_consecutive_chunks_share_about_overlap_characters_of_whole_sentences():
    chunks = chunk_text("d", ABSTRACT, size=200, overlap=60)
    for before, after in zip(chunks, chunks[1:], strict=False):
        shared = [s for s in split_sentences(after.text) if s in split_sentences(before.text)]
        if shared:
            assert before.text.endswith(" ".join(shared)) and after.text.startswith(" ".join(shared))
            assert len(" ".join(shared)) < 2 * 60  # rounded to the nearer whole sentence, never far over
    assert any(split_sentences(a.text)[0] in b.text for b, a in zip(chunks, chunks[1:], strict=False))
    no_overlap = chunk_text("d", ABSTRACT, size=200, overlap=0)
    assert sum(len(c.text) for c in no_overlap) < sum(len(c.text) for c in chunks)


def test_abbreviations_do_not_end_a_sentence_and_cjk_terminators_do():
    assert split_sentences("It grows, e.g. in water. Then it stops.") == ["It grows, e.g. in water.", "Then it stops."]
    assert split_sentences("打开客厅的灯。然后关掉空调！好吗") == ["打开客厅的灯。", "然后关掉空调！", "好吗"]
    assert split_sentences("A title\n\nBody text here.") == ["A title", "Body text here."]


def test_a_sentence_longer_than_size_is_split_on_whitespace():
    long_sentence = " ".join(f"word{i}" for i in range(100)) + "."
    chunks = chunk_text("d", long_sentence, size=50, overlap=10)
    assert all(len(c.text) <= 50 for c in chunks)
    assert " ".join(c.text for c in chunks).split() == long_sentence.split()  # split between words only
    assert chunk_text("d", "x" * 120, size=50, overlap=0)[-1].text == "x" * 20  # one huge word is cut


def test_line_wrapping_does_not_change_chunks():
    wrapped = ABSTRACT.replace(". ", ".\n   ").replace(" the ", "  the\t")
    assert chunk_text("d", wrapped, size=200, overlap=60) == chunk_text("d", ABSTRACT, size=200, overlap=60)


def test_empty_text_and_bad_parameters():
    assert chunk_text("d", "  \n\n ") == []
    with pytest.raises(ValueError, match="overlap"):
        chunk_text("d", ABSTRACT, size=100, overlap=100)
    with pytest.raises(ValueError, match="size"):
        chunk_text("d", ABSTRACT, size=0)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab .!?。\n"), max_size=400), st.integers(5, 80), st.integers(0, 40))
def test_any_text_chunks_within_size_and_loses_no_word(text, size, overlap):
    overlap = min(overlap, size - 1)
    chunks = chunk_text("d", text, size=size, overlap=overlap)
    assert all(0 < len(c.text) <= size for c in chunks)
    kept = Counter("".join("".join(c.text.split()) for c in chunks))
    assert Counter("".join(text.split())) <= kept  # overlap repeats characters, nothing is dropped
