import json

import pytest
from conftest import DEVICES, SPECS, write_home

from tracerag.retrievers.home import Home, HomeDataError


def test_loads_devices_rooms_and_main_commands(home_dir):
    home = Home.load(home_dir)
    assert len(home.devices) == len(DEVICES)
    lamp = home.device("lamp-study")
    assert (lamp.label, lamp.room, lamp.category) == ("客厅老伙计", "书房", "Light")
    assert [c.id for c in lamp.commands][:2] == ["main-switch-on", "main-switch-off"]
    assert home.warnings == []


def test_category_outside_the_allowed_list_is_kept(home_dir):
    aroma = Home.load(home_dir).device("aroma-bed")
    assert aroma.category == "Aroma" and aroma.commands


def test_device_without_spec_line_is_a_counted_warning_not_a_drop(tmp_path):
    specs = {k: v for k, v in SPECS.items() if k != "p-aroma"}
    home = Home.load(write_home(tmp_path / "h", specs=specs))
    assert len(home.devices) == len(DEVICES)
    assert len(home.warnings) == 1
    assert "devices.json" in home.warnings[0] and "profile.id 'p-aroma'" in home.warnings[0]


def test_malformed_spec_line_names_file_and_line(home_dir):
    path = home_dir / "spec.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines.insert(2, '{"profileId": "broken", "capabilities": [')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(HomeDataError, match=r"spec\.jsonl:3: invalid JSON"):
        Home.load(home_dir)


def test_missing_field_in_spec_names_line_and_field(home_dir):
    path = home_dir / "spec.jsonl"
    path.write_text(path.read_text(encoding="utf-8") + json.dumps({"profileId": "p-x", "capabilities": [
        {"id": "main-switch-on"}]}) + "\n", encoding="utf-8")
    with pytest.raises(HomeDataError, match=r"spec\.jsonl:6: capabilities\[0\].*'description' is missing"):
        Home.load(home_dir)


def test_missing_device_field_names_line_and_field(home_dir):
    path = home_dir / "devices.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    del doc["items"][3]["deviceId"]
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    text = path.read_text(encoding="utf-8")
    line = text[:text.index('"主卧台灯"')].count("\n")  # the item starts a line or two above its label
    with pytest.raises(HomeDataError) as err:
        Home.load(home_dir)
    message = str(err.value)
    assert "devices.json:" in message and "items[3]" in message and "'deviceId' is missing" in message
    reported = int(message.split("devices.json:")[1].split(":")[0])
    assert line - 3 <= reported <= line + 1


def test_broken_devices_json_reports_line(home_dir):
    path = home_dir / "devices.json"
    text = path.read_text(encoding="utf-8").replace('"label": "主卧台灯",', '"label": "主卧台灯"', 1)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(HomeDataError, match=r"devices\.json:\d+: invalid JSON"):
        Home.load(home_dir)


def test_not_a_home_directory(tmp_path):
    with pytest.raises(HomeDataError, match="devices.json is missing"):
        Home.load(tmp_path)


def test_jsonl_lines_end_at_newline_only(tmp_path):
    """U+2029 inside a JSON string is legal; str.splitlines would cut the line there."""
    from tracerag.retrievers.home import HomeDataError, iter_jsonl

    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "a", "query": "one\u2029two"}\n\n[1]\n', encoding="utf-8")
    rows = iter_jsonl(path)
    assert next(rows) == (f"{path}:1", {"id": "a", "query": "one\u2029two"})
    with pytest.raises(HomeDataError, match=r"q.jsonl:3: expected a JSON object"):
        next(rows)
