"""queries.jsonl read liberally: shapes that are understood are normalised and counted, a line that is not
is skipped with file:line: field, and without a report any skip is an error. A wrong label (a duplicate
id, a target no retriever can hit, an invalid gold IR) is always an error naming the line."""

import json

import pytest

from tracerag.data_files.read_report import DataSetShrunk, ReadReport
from tracerag.datasets.smarthome import load_dataset, load_queries
from tracerag.device_operations import OPERATIONS
from tracerag.home_commands.file_fields import HomeDataError
from tracerag.home_commands.home import Home

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
    path.write_text(json.dumps(GOOD) + "\n\n" + json.dumps({**GOOD, "id": "q2"}) + "\n" + json.dumps(GOOD) + "\n",
                    encoding="utf-8")
    with pytest.raises(HomeDataError) as err:
        load_queries(path, "home", ReadReport("queries"))
    assert str(err.value) == f"{path}:4: id 'q1' repeats line 1"


def _target(device_id, command_id):
    return {**GOOD, "id": "q2", "expected": [{"device_id": device_id, "command_id": command_id}]}


WRONG = [
    (_target("gone", "main-switch-on"), "field 'expected[0].device_id': 'gone' is not a device of home 'tiny'"),
    (_target("light-living-1", ["main-switch-on", "main-fly"]),
     "field 'expected[0].command_id': 'main-fly' is not a command of device 'light-living-1' (profile 'p-light')"),
    ({**GOOD, "id": "q2", "expected": []}, "field 'expected' is empty; a labelled query needs at least one "
     "{\"device_id\", \"command_id\"} (a query no target can satisfy scores nothing)"),
    ({**GOOD, "id": "q2", "ir": "打开"}, "field 'ir': expected a QueryIR object or null, got a string"),
    ({**GOOD, "id": "q2", "ir": {"type_hint": "light"}},
     "field 'ir.type_hint': expected a device category (Unknown when none), got 'light'"),
    ({**GOOD, "id": "q2", "ir": {"quantifier": "ALL"}},
     "field 'ir.quantifier': expected one of ['one', 'any', 'all', 'except'], got 'ALL'"),
    ({**GOOD, "id": "q2", "ir": {"scope_include": "客厅"}},
     "field 'ir.scope_include': expected a list of room names, got '客厅'"),
    ({**GOOD, "id": "q2", "ir": {"action": " 打开"}},
     "field 'ir.action': expected a string without outer spaces, got ' 打开'"),
    ({**GOOD, "id": "q2", "ir": {"room": "客厅"}},
     "field 'ir.room': not a QueryIR field (expected ['operation', 'action', 'type_hint', 'name_hint', "
     "'scope_include', 'scope_exclude', 'quantifier'])"),
    ({**GOOD, "id": "q2", "ir": {"operation": "brighten_a_lot"}},
     f"field 'ir.operation': expected one of {list(OPERATIONS)}, got 'brighten_a_lot'"),
]


@pytest.mark.parametrize("line,message", WRONG, ids=[m[:50] for _, m in WRONG])
def test_a_label_that_would_corrupt_a_metric_is_an_error_naming_the_line_whatever_may_be_skipped(
        home_dir, line, message):
    path = home_dir / "queries.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")
    report = ReadReport("queries")
    with pytest.raises(HomeDataError) as err:
        load_dataset(home_dir, report=report)  # the caller would allow skipping: a wrong label is not skipped
    assert str(err.value) == f"{path}:2: {message}"
    with pytest.raises(HomeDataError) as err:  # checked against the homes a program indexed, too
        load_dataset(home_dir, report=ReadReport("queries"), homes={"tiny": Home.load(home_dir)})
    assert str(err.value) == f"{path}:2: {message}"


def test_a_valid_gold_ir_is_kept_as_written_and_every_command_alternative_is_accepted(home_dir):
    ir = {"action": "打开", "type_hint": "Light", "name_hint": "", "scope_include": ["客厅"], "quantifier": "one"}
    line = {**_target("light-living-1", ["main-switch-on", "main-switchLevel-setLevel"]), "ir": ir}
    (home_dir / "queries.jsonl").write_text(json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")
    (query,) = load_dataset(home_dir)[home_dir]
    assert query.ir == ir and query.to_example().ir["scope_exclude"] == []


def test_a_fifo_in_place_of_queries_is_refused_without_blocking(home_dir):
    import os
    import threading

    os.mkfifo(home_dir / "queries.jsonl")
    done = []
    worker = threading.Thread(target=lambda: done.append(pytest.raises(HomeDataError, load_dataset, home_dir)))
    worker.start()
    worker.join(timeout=5)
    assert done and str(done[0].value) == f"{home_dir / 'queries.jsonl'}: is a FIFO, not a regular file"


def test_null_in_an_optional_field_of_a_gold_ir_means_empty_and_a_null_action_is_still_wrong(home_dir):
    ir = {"action": "打开", "type_hint": None, "name_hint": None, "scope_include": None, "scope_exclude": None,
          "quantifier": None, "operation": None}
    line = {**_target("light-living-1", "main-switch-on"), "ir": ir}
    path = home_dir / "queries.jsonl"
    path.write_text(json.dumps(line, ensure_ascii=False) + "\n", encoding="utf-8")
    (query,) = load_dataset(home_dir)[home_dir]
    assert query.to_example().ir == {"operation": None, "action": "打开", "type_hint": "Unknown", "name_hint": "",
                                     "scope_include": [], "scope_exclude": [], "quantifier": "one"}
    path.write_text(json.dumps({**line, "ir": {**ir, "action": None}}) + "\n", encoding="utf-8")
    with pytest.raises(HomeDataError, match=r":1: field 'ir.action': expected a string without outer spaces, "
                                            r"got None"):
        load_dataset(home_dir)
