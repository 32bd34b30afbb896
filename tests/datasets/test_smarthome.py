"""queries.jsonl read liberally: shapes that are understood are normalised and counted, a line that is not
is skipped with file:line: field, and without a report any skip is an error."""

import json

import pytest

from tracerag.datasets.smarthome import drop_unknown_targets, load_dataset, load_queries
from tracerag.retrievers.home import Home, HomeDataError
from tracerag.retrievers.read_report import DataSetShrunk, ReadReport

GOOD = {"id": "q1", "query": "打开客厅的灯",
        "expected": [{"device_id": "light-living-1", "command_id": "main-switch-on"}]}


def _read(tmp_path, *lines, prefix=b""):
    path = tmp_path / "queries.jsonl"
    text = "".join((json.dumps(x) if isinstance(x, dict) else x) + "\n" for x in lines)
    path.write_bytes(prefix + text.encode("utf-8"))
    report = ReadReport("queries")
    return path, load_queries(path, "home", report), report


@pytest.mark.parametrize("row,kind,check", [
    ({**GOOD, "id": 7}, "id as a number", lambda q: q.id == "7"),
    ({**GOOD, "expected": GOOD["expected"][0]}, "expected as one object", lambda q: len(q.expected) == 1),
    ({**GOOD, "expected": [{"device_id": 5, "command_id": "main-switch-on"}]}, "device_id as a number",
     lambda q: q.expected[0].device_id == "5"),
])
def test_loose_shapes_are_normalised_and_counted(tmp_path, row, kind, check):
    _, queries, report = _read(tmp_path, row)
    assert check(queries[0]) and report.normalised == {kind: 1} and report.kept == 1


def test_a_bom_extra_fields_and_both_command_id_forms_are_read(tmp_path):
    alternatives = {**GOOD, "id": "q2", "note": "extra", "expected": [
        {"device_id": "light-living-1", "command_id": ["main-switch-on", "main-switchLevel-setLevel"]}]}
    _, queries, report = _read(tmp_path, GOOD, alternatives, prefix=b"\xef\xbb\xbf")
    assert [q.expected[0].command_ids for q in queries] == [("main-switch-on",),
                                                           ("main-switch-on", "main-switchLevel-setLevel")]
    assert report.summary() == "read 2 queries, kept 2; normalised: BOM stripped 1"


SKIPPED = [
    ('{"id": "q2", "query": ', "not JSON", ":2: invalid JSON (Expecting value at column 23)"),
    ("null", "not an object", ":2: expected a JSON object"),
    ({**GOOD, "id": ["q2"]}, "bad id", ":2: field 'id': expected a string, got a list"),
    ({**GOOD, "id": "q2", "query": None}, "bad query", ":2: field 'query': expected the utterance as a string, "
                                                       "got nothing"),
    ({**GOOD, "id": "q2", "query": "灯\ud800"}, "bad query",
     ":2: field 'query' holds a character UTF-8 cannot store (U+D800, a lone surrogate)"),
    ({**GOOD, "id": "q2", "expected": "lamp"}, "bad expected",
     ":2: field 'expected': expected a list of {\"device_id\", \"command_id\"}, got a string"),
    ({**GOOD, "id": "q2", "expected": [{"device_id": "light-living-1", "command_id": 3}]}, "bad expected",
     ":2: field 'expected[0].command_id': expected a command id string or a non-empty list of them, got a number"),
    ({**GOOD, "id": "q2", "expected": [{"command_id": "main-switch-on"}]}, "bad expected",
     ":2: field 'expected[0].device_id': expected a device id string, got nothing"),
    ({**GOOD, "id": "q2", "quantifier": ["all"]}, "bad quantifier",
     ":2: field 'quantifier': expected a string or null, got a list"),
    ({**GOOD, "id": "q2", "ir": "打开"}, "bad ir", ":2: field 'ir': expected a QueryIR object or null, got a string"),
]


@pytest.mark.parametrize("line,reason,message", SKIPPED, ids=[r + m for _, r, m in SKIPPED])
def test_a_line_that_cannot_be_understood_is_skipped_naming_file_line_and_field(tmp_path, line, reason, message):
    path, queries, report = _read(tmp_path, GOOD, line)
    assert [q.id for q in queries] == ["q1"]
    assert report.skipped == {reason: 1} and report.problems == [f"{path}{message}"]


def test_bytes_that_are_not_utf8_are_skipped_with_their_position(tmp_path):
    path = tmp_path / "queries.jsonl"
    path.write_bytes(json.dumps(GOOD).encode() + b'\n{"id": "\xff"}\n')
    report = ReadReport("queries")
    assert len(load_queries(path, "home", report)) == 1
    assert report.problems == [f"{path}:2: not UTF-8 (byte 9)"]


def test_without_a_report_a_skipped_line_is_an_error_and_a_duplicate_id_always_is(tmp_path):
    path, _, _ = _read(tmp_path, GOOD, "null")
    with pytest.raises(DataSetShrunk, match=r"1 of 2 queries skipped \(50%\), over the 0% allowed"):
        load_queries(path, "home")
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(GOOD) + "\n", encoding="utf-8")
    with pytest.raises(HomeDataError, match=r"queries.jsonl:2: field 'id' 'q1' appears twice"):
        load_queries(path, "home", ReadReport("queries"))


def test_labels_naming_devices_the_home_lacks_are_dropped_and_counted(home_dir):
    (home_dir / "queries.jsonl").write_text(json.dumps(GOOD) + "\n" + json.dumps(
        {**GOOD, "id": "q2", "expected": [{"device_id": "gone", "command_id": "main-switch-on"}]}) + "\n",
        encoding="utf-8")
    report = ReadReport("queries")
    queries = drop_unknown_targets(load_dataset(home_dir, report=report), {"tiny": Home.load(home_dir)}, report)
    assert [q.id for q in queries[home_dir]] == ["q1"]
    assert report.skipped == {"unknown device": 1}
    assert report.problems == [f"{home_dir / 'queries.jsonl'}: id 'q2': field 'expected.device_id': 'gone' is not "
                               "a device of home 'tiny'"]


def test_a_fifo_in_place_of_queries_is_refused_without_blocking(home_dir):
    import os
    import threading

    os.mkfifo(home_dir / "queries.jsonl")
    done = []
    worker = threading.Thread(target=lambda: done.append(pytest.raises(HomeDataError, load_dataset, home_dir)))
    worker.start()
    worker.join(timeout=5)
    assert done and str(done[0].value) == f"{home_dir / 'queries.jsonl'}: is a FIFO, not a regular file"
