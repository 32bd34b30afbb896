"""The bundled homes' hand-written query sets: held-out queries (heldout.jsonl), never used to tune the
retriever, and negated commands (negated.jsonl).

They load with the same reader and checks as queries.jsonl (every target a device and command of its
home); the held-out queries cover both languages and every bundled home."""

from tracerag.commands.command_retrieval import CommandRetrieval, build_indexes
from tracerag.datasets.smarthome import HELDOUT_FILE, NEGATED_FILE, load_dataset


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


def test_no_negated_command_is_answered_with_what_it_negates(embedder):
    # "别开厨房的灯", "don't leave the office light on": every light of the room off, and no "on" near the top
    data = {path: qs for path, qs in load_dataset("smarthome", queries_file=NEGATED_FILE).items() if qs}
    assert {path.name for path in data} == {"home_en", "home_large"} and sum(map(len, data.values())) >= 12
    program = CommandRetrieval(build_indexes(list(data), embedder), ir_source="none")
    for path, queries in data.items():
        for q in queries:
            pred = program(query=q.query, home=path.name)
            assert "main-switch-on" not in {c.command_id for c in pred.candidates[:3]}, q.query
            found = {(c.device_id, c.command_id) for c in pred.candidates}
            assert all(any((t.device_id, c) in found for c in t.command_ids) for t in q.expected), q.query
