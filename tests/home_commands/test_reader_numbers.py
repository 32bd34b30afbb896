"""Numbers no field can take: an integer longer than Python converts (4,300 digits) is an error naming
file and line, a skip counted against ``--max-skipped`` where the reader skips; NaN and ±Infinity are
refused wherever an id, label or caption is read, naming file, line and field."""

import json
import sys

import pytest
from conftest import make_trace, write_traces

from tracerag.data_files.read_report import DataSetShrunk, NumberTooLong, ReadReport, load_json
from tracerag.datasets.experience import load_experience_queries
from tracerag.datasets.smarthome import load_queries
from tracerag.documents.corpus import CorpusError, read_documents
from tracerag.home_commands.file_fields import HomeDataError
from tracerag.home_commands.home import Home
from tracerag.memory.traces import load_traces

HUGE = "9" * (sys.get_int_max_str_digits() + 1)


def test_load_json_names_the_line_of_a_long_number_and_reads_long_floats_and_strings():
    with pytest.raises(NumberTooLong, match="more than 4,300 digits") as caught:
        load_json('{\n "a": 1,\n "b": [2, ' + HUGE + "]\n}")
    assert caught.value.line == 3
    assert load_json('{"s": "' + HUGE + '", "f": 1.' + HUGE + "}")["s"] == HUGE  # a string or float is fine


def test_a_trace_with_a_long_number_is_skipped_and_counted(tmp_path):
    write_traces(tmp_path, [make_trace("plant", 1), make_trace("plant", 2)])
    path = tmp_path / "tasks" / "plant-0002" / "trace.json"
    path.write_text(path.read_text(encoding="utf-8").replace('"42"', HUGE), encoding="utf-8")
    loaded = load_traces(tmp_path)
    assert [t.task_id for t in loaded.traces] == ["plant-0001"]
    assert loaded.report.skipped == {"number too long": 1}
    assert loaded.corrupt == [f"{path}: a number with more than 4,300 digits; no field takes one (line 1)"]
    with pytest.raises(DataSetShrunk, match="--max-skipped"):
        loaded.report.check(0.0, str(tmp_path))


@pytest.mark.parametrize("field", ["caption", "question", "sub_task"])
@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_as_a_trace_text_is_refused_naming_the_field(tmp_path, field, constant):
    write_traces(tmp_path, [make_trace("plant", 1, caption="a fern")])
    path = tmp_path / "tasks" / "plant-0001" / "trace.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw[field] = "@@"
    path.write_text(json.dumps(raw).replace('"@@"', constant), encoding="utf-8")
    loaded = load_traces(tmp_path)
    assert loaded.traces == [] and loaded.corrupt == [f"{path}: {field}: expected a string, got {constant} "
                                                      "(not a value JSON has)"]


def test_nan_as_a_step_tool_is_refused(tmp_path):
    write_traces(tmp_path, [make_trace("plant", 1)])
    path = tmp_path / "tasks" / "plant-0001" / "trace.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["steps"][0]["tool"] = "@@"
    path.write_text(json.dumps(raw).replace('"@@"', "NaN"), encoding="utf-8")
    assert load_traces(tmp_path).corrupt == [f"{path}: steps[0].tool: expected a string, got NaN "
                                             "(not a value JSON has)"]


def _edit_devices(home_dir, old: str, new: str):
    path = home_dir / "devices.json"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def test_a_long_number_in_devices_json_names_file_and_line(home_dir):
    path = _edit_devices(home_dir, '"version": 1', f'"version": {HUGE}')
    line = path.read_text(encoding="utf-8")[: path.read_text(encoding="utf-8").index(HUGE)].count("\n") + 1
    with pytest.raises(HomeDataError, match=rf"^{path}:{line}: a number with more than 4,300 digits"):
        Home.load(home_dir)


def test_a_long_number_in_spec_jsonl_names_file_and_line(home_dir):
    path = home_dir / "spec.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace('"min": 0', f'"min": {HUGE}') if '"min": 0' in lines[1] else \
        lines[1][:-1] + f', "extra": {HUGE}}}'
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(HomeDataError, match=rf"^{path}:2: a number with more than 4,300 digits"):
        Home.load(home_dir)


@pytest.mark.parametrize("field,expected", [("deviceId", "a device id string"), ("label", "a string"),
                                            ("roomId", "a room id string")])
def test_nan_as_a_device_field_is_refused_naming_it(home_dir, field, expected):
    value = {"deviceId": '"light-living-1"', "label": '"客厅吸顶灯"', "roomId": '"r-living"'}[field]
    path = _edit_devices(home_dir, f'"{field}": {value}', f'"{field}": NaN')
    with pytest.raises(HomeDataError, match=rf"^{path}:\d+: items\[0\]: field '{field}': expected {expected}, "
                                            "got NaN"):
        Home.load(home_dir)


def test_infinity_as_a_value_list_value_is_refused(home_dir):
    path = home_dir / "spec.jsonl"
    row = {"profileId": "p-x", "capabilities": [{"id": "main-mode-set", "description": "mode",
                                                "value_list": ["@@"]}]}
    path.write_text(path.read_text(encoding="utf-8") + json.dumps(row).replace('"@@"', "Infinity") + "\n",
                    encoding="utf-8")
    with pytest.raises(HomeDataError, match=r"spec.jsonl:\d+: capabilities\[0\] \(main-mode-set\): "
                                            r"value_list\[0\]: .* got Infinity"):
        Home.load(home_dir)


def _queries(tmp_path, *lines: str):
    path = tmp_path / "queries.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


GOOD_QUERY = json.dumps({"id": "q1", "query": "打开客厅吸顶灯",
                         "expected": [{"device_id": "light-living-1", "command_id": "main-switch-on"}]},
                        ensure_ascii=False)


def test_a_long_number_in_a_smart_home_query_is_a_counted_skip(tmp_path):
    path = _queries(tmp_path, GOOD_QUERY, '{"id": "q2", "query": "x", "n": ' + HUGE + "}")
    report = ReadReport("queries")
    assert [q.id for q in load_queries(path, "tiny", report)] == ["q1"]
    assert report.skipped == {"number too long": 1}
    assert report.problems == [f"{path}:2: a number with more than 4,300 digits; no field takes one"]
    with pytest.raises(DataSetShrunk, match="--max-skipped"):
        report.check(0.0, str(path))
    with pytest.raises(DataSetShrunk, match=f"{path}:2: a number with more than 4,300 digits"):
        load_queries(path, "tiny")  # without a report, any skip is an error


def test_nan_as_a_query_id_or_device_id_is_named(tmp_path):
    row = json.loads(GOOD_QUERY)
    row["expected"][0]["device_id"] = "@@"
    path = _queries(tmp_path, json.dumps(row).replace('"@@"', "NaN"), GOOD_QUERY.replace('"q1"', "Infinity"))
    report = ReadReport("queries")
    assert load_queries(path, "tiny", report) == []
    assert report.problems == [f"{path}:1: field 'expected[0].device_id': expected a device id string, got NaN",
                               f"{path}:2: field 'id': expected a string, got Infinity"]


def test_experience_queries_refuse_long_numbers_and_nan(tmp_path):
    good = {"id": "q1", "question": "Is this plant toxic to cats?", "relevant_task_ids": []}
    path = _queries(tmp_path, json.dumps(good), '{"id": "q2", "question": ' + HUGE + "}",
                    json.dumps({**good, "id": "q3", "caption": "@@"}).replace('"@@"', "NaN"))
    report = ReadReport("queries")
    assert [q.id for q in load_experience_queries(tmp_path, max_skipped=1.0, report=report)] == ["q1"]
    assert report.problems == [f"{path}:2: a number with more than 4,300 digits; no field takes one",
                               f"{path}:3: caption: expected a string, got NaN"]


def test_documents_refuse_long_numbers_and_a_nan_title(tmp_path):
    path = _queries(tmp_path, '{"id": "d1", "text": "Statins.", "year": ' + HUGE + "}")
    with pytest.raises(CorpusError, match=rf"^{path}:1: a number with more than 4,300 digits"):
        read_documents(path)
    path.write_text('{"id": "d1", "text": "Statins.", "title": NaN}\n', encoding="utf-8")
    with pytest.raises(CorpusError, match=rf"^{path}:1: field 'title' must be a string or null, got NaN"):
        read_documents(path)


def test_a_pulled_homes_source_file_names_a_long_number_and_bad_json(tmp_path):
    from tracerag.smarthome.home_files import SOURCE_FILE, read_source

    (tmp_path / SOURCE_FILE).write_text('{\n "api": "smartthings",\n "location": ' + HUGE + "\n}", encoding="utf-8")
    with pytest.raises(HomeDataError, match=rf"^{tmp_path / SOURCE_FILE}:3: a number with more than 4,300 digits"):
        read_source(tmp_path)
    (tmp_path / SOURCE_FILE).write_text('{"api": }', encoding="utf-8")
    with pytest.raises(HomeDataError, match=rf"^{tmp_path / SOURCE_FILE}:1: invalid JSON"):
        read_source(tmp_path)
    (tmp_path / SOURCE_FILE).write_text('{"api": "smartthings"}', encoding="utf-8")
    assert read_source(tmp_path) == {"api": "smartthings"}
