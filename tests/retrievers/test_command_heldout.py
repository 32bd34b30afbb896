"""The bundled homes' held-out queries (heldout.jsonl): hand-written, never used to tune the retriever.

They load with the same reader and checks as queries.jsonl (every target a device and command of its
home), and cover both languages and every bundled home."""

from tracerag.datasets.smarthome import HELDOUT_FILE, load_dataset


def test_heldout_queries_load_and_cover_every_home_and_both_languages():
    data = load_dataset("smarthome", queries_file=HELDOUT_FILE)
    assert {path.name for path in data} == {"home_en", "home_small", "home_medium", "home_large"}
    assert all(data.values())
    queries = [q for qs in data.values() for q in qs]
    assert len(queries) >= 60
    assert any(q.query.isascii() for q in queries) and any(not q.query.isascii() for q in queries)
    assert len({q.id for q in queries}) == len(queries)


def test_heldout_ids_are_not_bundled_query_ids():
    bundled = {q.id for qs in load_dataset("smarthome").values() for q in qs}
    heldout = {q.id for qs in load_dataset("smarthome", queries_file=HELDOUT_FILE).values() for q in qs}
    assert not bundled & heldout
