import json
from dataclasses import replace

import pytest
from conftest import DEVICES, SPECS, write_home

from tracerag.datasets.smarthome import resolve_dataset
from tracerag.home_commands.file_fields import HomeDataError
from tracerag.home_commands.home import Home


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
    from tracerag.home_commands.file_fields import HomeDataError, iter_jsonl

    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "a", "query": "one\u2029two"}\n\n[1]\n', encoding="utf-8")
    rows = iter_jsonl(path)
    assert next(rows) == (f"{path}:1", {"id": "a", "query": "one\u2029two"})
    with pytest.raises(HomeDataError, match=r"q.jsonl:3: expected a JSON object"):
        next(rows)


# ---------------------------------------------------------------------------------------------
# Liberal reading: what is understood is normalised and counted; what is not is one clear line.

def _write_devices(home_dir, change):
    path = home_dir / "devices.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc = change(doc) or doc
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=2), encoding="utf-8")


def _main(doc):
    return doc["items"][0]["components"][0]


def _set_light_level(home_dir, **fields):
    """Rewrite spec.jsonl with p-light's setLevel command changed."""
    from conftest import SPECS

    specs = json.loads(json.dumps(SPECS))
    specs["p-light"][2].update(fields)
    write_home(home_dir, specs=specs)


NORMALISED_DEVICES = [
    (lambda d: _main(d).update(categories="Light"), "devices.json: category as a string"),
    (lambda d: _main(d).update(categories=["Light"]), "devices.json: category as a string"),
    (lambda d: _main(d).update(categories={"name": "Light"}), "devices.json: categories as one object"),
    (lambda d: d["items"][0].update(components=["main"]), "devices.json: component as a string id"),
    (lambda d: d["items"][0].update(components=_main(d)), "devices.json: components as one object"),
    (lambda d: _main(d).update(capabilities=["switch"]), "devices.json: capability as a string id"),
    (lambda d: d["items"][0].update(profile="p-light"), "devices.json: profile as a string id"),
    (lambda d: d["items"][0].update(label=7), "devices.json: label as a number"),
    (lambda d: d["items"][0].update(deviceId=7), "devices.json: deviceId as a number"),
    (lambda d: d["items"], "devices.json: items as a bare list"),
]


@pytest.mark.parametrize("change,kind", NORMALISED_DEVICES, ids=[k for _, k in NORMALISED_DEVICES])
def test_device_shapes_are_normalised_and_counted(home_dir, change, kind):
    _write_devices(home_dir, change)
    home = Home.load(home_dir)
    assert home.report.normalised == {kind: 1}
    assert len(home.devices) == len(DEVICES) and home.warnings == []
    first = home.devices[0]
    assert first.profile_id == "p-light" and len(first.commands) == 4
    if "categor" in kind:
        assert first.category == "Light"


def test_a_bom_and_crlf_are_read(home_dir):
    for name in ("devices.json", "rooms.json", "spec.jsonl"):
        path = home_dir / name
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n"))
    home = Home.load(home_dir)
    assert home.report.normalised == {f"{n}: BOM stripped": 1 for n in ("devices.json", "rooms.json", "spec.jsonl")}
    assert len(home.devices) == len(DEVICES) and home.device("lamp-study").room == "书房"


def test_rooms_given_loosely_are_read(home_dir):
    (home_dir / "rooms.json").write_text(json.dumps([{"roomId": "r-living", "name": 101, "extra": 1}]))
    home = Home.load(home_dir)
    assert home.rooms == ["101"] and home.device("light-living-1").room == "101"
    assert home.report.normalised == {"rooms.json: items as a bare list": 1, "rooms.json: name as a number": 1}
    (home_dir / "rooms.json").write_text("")
    assert Home.load(home_dir).report.normalised == {"rooms.json: empty file": 1}


@pytest.mark.parametrize("fields,kind,check", [
    ({"type": ["integer", "null"]}, "type as a list", lambda c: c.type == "integer"),
    ({"value_list": ["low", 3]}, "value_list item as a plain value",
     lambda c: [(v.value, v.description) for v in c.value_list] == [("low", "low"), ("3", "3")]),
    ({"value_list": {"value": "low", "description": "低"}}, "value_list as one object",
     lambda c: c.value_list[0].description == "低"),
    ({"value_range": {"min": "0", "max": " 100.5 ", "unit": "%"}}, "value_range number as a string",
     lambda c: c.value_range == (("max", 100.5), ("min", 0), ("unit", "%"))),
    ({"value_range": [0, 100]}, "value_range as [min, max]", lambda c: c.value_range == (("max", 100), ("min", 0))),
])
def test_spec_shapes_are_normalised_and_counted(home_dir, fields, kind, check):
    _set_light_level(home_dir, **fields)
    home = Home.load(home_dir)
    command = home.device("light-bed").command("main-switchLevel-setLevel")
    assert check(command)
    assert set(home.report.normalised) == {f"spec.jsonl: {kind}"}


LONG = "客厅" + "灯" * 1_000_000


def test_long_free_text_is_cut_at_load(home_dir):
    from tracerag.home_commands.device_files import LABEL_MAX
    from tracerag.home_commands.spec_file import DESCRIPTION_MAX

    _write_devices(home_dir, lambda d: d["items"][0].update(label=LONG))
    (home_dir / "rooms.json").write_text(json.dumps({"items": [{"roomId": "r-living", "name": LONG}]}))
    home = Home.load(home_dir)
    assert len(home.devices[0].label) == LABEL_MAX and home.rooms == [LONG[:LABEL_MAX]]
    assert home.report.normalised == {"devices.json: label over 200 characters cut": 1,
                                      "rooms.json: name over 200 characters cut": 1}
    assert DESCRIPTION_MAX == 500


def test_a_long_description_is_cut_at_load(home_dir):
    _set_light_level(home_dir, description=LONG)
    home = Home.load(home_dir)
    assert len(home.device("light-bed").command("main-switchLevel-setLevel").description) == 500
    assert home.report.normalised == {"spec.jsonl: description over 500 characters cut": 1}


def test_a_home_with_a_1_mb_label_loads_it_cut_indexes_and_answers(tmp_path, embedder):
    """The label is cut when the home is read, so indexing and answering cost what a normal label costs (the
    name index's own bound on an uncut label: test_command_index)."""
    from tracerag.commands.command_retrieval import CommandRetrieval
    from tracerag.home_commands.device_files import LABEL_MAX
    from tracerag.home_commands.home_index import CommandIndex

    devices = [("light-living-1", "".join(chr(0x4E00 + i % 20000) for i in range(1_000_000)), "r-living",
                "Light", "p-light"), *DEVICES[1:]]
    home = Home.load(write_home(tmp_path / "big", devices=devices))
    assert len(home.device("light-living-1").label) == LABEL_MAX
    assert home.report.normalised == {f"devices.json: label over {LABEL_MAX} characters cut": 1}
    pred = CommandRetrieval(CommandIndex(home, embedder))(query="打开客厅的灯")
    assert pred.candidates


REJECTED = [
    ("devices.json", lambda d: d["items"][0].update(label=["x"], name=None),
     "devices.json:3: items[0]: field 'label': expected a string, got a list"),
    ("devices.json", lambda d: d["items"][0].update(deviceId={"id": 1}),
     "devices.json:3: items[0]: field 'deviceId': expected a device id string, got an object"),
    ("devices.json", lambda d: d["items"][0].update(profile=[1]),
     "devices.json:3: items[0]: field 'profile': expected {\"id\": <profileId>}, got a list"),
    ("devices.json", lambda d: d["items"][0].update(profile=None),
     "devices.json:3: items[0]: field 'profile' is missing; expected {\"id\": <profileId>}"),
    ("devices.json", lambda d: d["items"][0].update(components=3),
     "devices.json:3: items[0]: field 'components': expected a list of {\"id\", \"categories\", …}, got a number"),
    ("devices.json", lambda d: d["items"][0].update(components=[3]),
     "devices.json:3: items[0]: components[0]: expected an object {\"id\", \"categories\", …}, got a number"),
    ("devices.json", lambda d: _main(d).update(categories=7),
     "devices.json:3: items[0]: components[main]: field 'categories': expected a list of {\"name\"}, got a number"),
    ("devices.json", lambda d: _main(d).update(categories=[["Light"]]),
     "devices.json:3: items[0]: components[main]: categories[0]: expected {\"name\": …} or a category name, "
     "got a list"),
    ("devices.json", lambda d: _main(d).update(capabilities=[True]),
     "devices.json:3: items[0]: components[main]: capabilities[0]: expected {\"id\": …} or a capability id, "
     "got a boolean"),
    ("devices.json", lambda d: d["items"][0].update(label="灯\ud800"),
     "devices.json:3: items[0]: field 'label' holds a character UTF-8 cannot store (U+D800, a lone surrogate)"),
    ("devices.json", lambda d: {"items": {"a": 1}},
     "devices.json:1: field 'items' is missing or not a list; expected {\"items\": [...]}"),
    ("devices.json", lambda d: 3, "devices.json:1: expected an object {\"items\": [...]}, got a number"),
]


@pytest.mark.parametrize("name,change,message", REJECTED, ids=[m.split(": ", 1)[1] for _, _, m in REJECTED])
def test_what_cannot_be_understood_is_one_clear_line(home_dir, name, change, message):
    path = home_dir / name
    doc = json.loads(path.read_text(encoding="utf-8"))
    changed = change(doc)
    path.write_text(json.dumps(doc if changed is None else changed, indent=2), encoding="utf-8")
    with pytest.raises(HomeDataError) as err:
        Home.load(home_dir)
    assert str(err.value) == f"{path}:{message.split(':', 1)[1]}"


SPEC_REJECTED = [
    ({"type": {"name": "integer"}}, "field 'type': expected a type name string or null, got an object"),
    ({"value_list": 3}, "field 'value_list': expected a list of {\"value\", \"description\"}, got a number"),
    ({"value_list": [["low"]]}, "value_list[0]: expected {\"value\", \"description\"} with a 'value', got a list"),
    ({"value_list": [{"description": "低"}]},
     "value_list[0]: expected {\"value\", \"description\"} with a 'value', got an object without one"),
    ({"value_range": {"min": 0, "max": {"value": 100}}}, "field 'value_range.max': expected a number, got an object"),
    ({"value_range": {"min": 0, "max": 100, "unit": ["%"]}},
     "field 'value_range.unit': expected a number or a string, got a list"),
    ({"value_range": {"min": "low"}}, "field 'value_range.min': expected a number, got a string"),
    ({"value_range": "0-100"},
     "field 'value_range': expected an object {\"min\", \"max\", \"unit\"} or null, got a string"),
    ({"description": ["x"]}, "field 'description': expected a string, got a list"),
]


@pytest.mark.parametrize("fields,message", SPEC_REJECTED, ids=[m for _, m in SPEC_REJECTED])
def test_spec_that_cannot_be_understood_is_one_clear_line(home_dir, fields, message):
    _set_light_level(home_dir, **fields)
    with pytest.raises(HomeDataError) as err:
        Home.load(home_dir)
    assert str(err.value) == f"{home_dir / 'spec.jsonl'}:1: capabilities[2] (main-switchLevel-setLevel): {message}"


def test_spec_capabilities_that_are_not_a_list_name_the_line(home_dir):
    path = home_dir / "spec.jsonl"
    path.write_text(path.read_text(encoding="utf-8") + '{"profileId": "p-x", "capabilities": "main-switch-on"}\n',
                    encoding="utf-8")
    with pytest.raises(HomeDataError) as err:
        Home.load(home_dir)
    assert str(err.value) == (f"{path}:6: field 'capabilities': expected a list of commands "
                              "({\"id\", \"description\", …}), got a string")


@pytest.mark.parametrize("content,message", [
    (b"", ":1: file is empty; expected {\"items\": [...]}"),
    (b"null", ":1: expected an object {\"items\": [...]}, got null"),
    (b"[" * 100_000 + b"]" * 100_000, ":1: invalid JSON (nested too deeply)"),
    (b'{"items": [\xff]}', ": not UTF-8 (byte 12)"),
])
def test_broken_devices_files_are_one_clear_line(home_dir, content, message):
    (home_dir / "devices.json").write_bytes(content)
    with pytest.raises(HomeDataError) as err:
        Home.load(home_dir)
    assert str(err.value) == f"{home_dir / 'devices.json'}{message}"


@pytest.mark.parametrize("name", ["devices.json", "rooms.json", "spec.jsonl"])
def test_a_fifo_or_directory_is_refused_without_blocking(home_dir, name):
    import os
    import threading

    path = home_dir / name
    path.unlink()
    os.mkfifo(path)
    done = []
    worker = threading.Thread(target=lambda: done.append(pytest.raises(HomeDataError, Home.load, home_dir)))
    worker.start()
    worker.join(timeout=5)
    assert done and str(done[0].value) == f"{path}: is a FIFO, not a regular file"
    path.unlink()
    path.mkdir()
    with pytest.raises(HomeDataError, match=f"{name}: is a directory"):
        Home.load(home_dir)


def test_an_oversized_file_is_one_clear_line(home_dir, monkeypatch):
    import tracerag.home_commands.file_fields as file_fields

    monkeypatch.setattr(file_fields, "MAX_FILE_BYTES", 100)
    with pytest.raises(HomeDataError, match=r"spec\.jsonl: [\d,]+ bytes is over the 100-byte limit for one file"):
        Home.load(home_dir)


def _one_item_a_line(path, items):
    """A JSON document whose n-th item (0-based) starts on line n + 2."""
    path.write_text('{"items": [\n' + ",\n".join(json.dumps(x, ensure_ascii=False) for x in items) + "\n]}",
                    encoding="utf-8")


def test_a_repeated_profile_id_is_an_error_naming_both_lines(home_dir):
    spec = home_dir / "spec.jsonl"
    lines = spec.read_text(encoding="utf-8").splitlines()
    first = next(n for n, line in enumerate(lines, start=1) if '"p-plug"' in line)
    spec.write_text("\n".join(lines) + "\n" + json.dumps(
        {"profileId": "p-plug", "capabilities": [{"id": "main-switch-on", "description": "通电"}]}) + "\n",
        encoding="utf-8")
    with pytest.raises(HomeDataError) as err:  # the later line used to replace the earlier one silently
        Home.load(home_dir)
    assert str(err.value) == f"{spec}:{len(lines) + 1}: profileId 'p-plug' repeats line {first}"


def test_a_repeated_command_id_within_a_profile_is_an_error_naming_both(home_dir):
    specs = json.loads(json.dumps(SPECS))
    specs["p-light"].append(dict(specs["p-light"][0], description="again"))
    write_home(home_dir, specs=specs)
    line = list(specs).index("p-light") + 1
    with pytest.raises(HomeDataError) as err:
        Home.load(home_dir)
    assert str(err.value) == (f"{home_dir / 'spec.jsonl'}:{line}: capabilities[{len(specs['p-light']) - 1}]: "
                              "command id 'main-switch-on' repeats capabilities[0] of profile 'p-light'")


def test_a_repeated_room_id_is_an_error_naming_both_lines(home_dir):
    path = home_dir / "rooms.json"
    items = json.loads(path.read_text(encoding="utf-8"))["items"]
    study = next(i for i, item in enumerate(items) if item["roomId"] == "r-study")
    _one_item_a_line(path, [*items, {"roomId": "r-study", "name": "工作室"}])
    with pytest.raises(HomeDataError) as err:  # the later name used to rename the room silently
        Home.load(home_dir)
    assert str(err.value) == (f"{path}:{len(items) + 2}: items[{len(items)}]: roomId 'r-study' repeats line "
                              f"{study + 2} (items[{study}])")


def test_a_repeated_device_id_is_an_error_naming_both_places(home_dir):
    path = home_dir / "devices.json"
    items = json.loads(path.read_text(encoding="utf-8"))["items"]
    _one_item_a_line(path, [*items, dict(items[1], label="另一个")])
    with pytest.raises(HomeDataError) as err:
        Home.load(home_dir)
    assert str(err.value) == (f"{path}:{len(items) + 2}: items[{len(items)}]: deviceId {items[1]['deviceId']!r} "
                              "repeats line 3 (items[1])")


def test_smartthings_category_aliases_read_as_the_projects_names_and_unknown_ones_are_kept(home_dir):
    def change(doc):
        _main(doc).update(categories=[{"name": "SmartLock"}])
        doc["items"][1]["components"][0].update(categories=[{"name": "Shade"}])
        doc["items"][2]["components"][0].update(categories=[{"name": "Elevator"}])
        doc["items"][3]["components"][0].update(categories=[{"name": "BluRayPlayer"}])

    _write_devices(home_dir, change)
    home = Home.load(home_dir)
    assert [d.category for d in home.devices[:4]] == ["Lock", "Blind", "Elevator", "BluRayPlayer"]
    assert home.report.normalised == {"devices.json: category alias read as the project's name": 2}


def test_a_spec_type_that_is_no_argument_type_reads_as_not_stated_and_the_command_still_executes(home_dir,
                                                                                                 embedder):
    from conftest import SPECS

    from tracerag.commands.command_retrieval import CommandRetrieval
    from tracerag.home_commands.home_index import CommandIndex
    from tracerag.smarthome.execute import SmartThingsTarget, execute

    specs = json.loads(json.dumps(SPECS))
    for command in specs["p-light"]:
        command["type"] = "command"  # what some exports write for every command
    write_home(home_dir, specs=specs)
    home = Home.load(home_dir)
    level = home.device("light-bed").command("main-switchLevel-setLevel")
    assert level.type is None and home.device("light-bed").command("main-switch-on").type is None
    # one per command of p-light
    assert home.report.normalised == {"spec.jsonl: type that is no argument type read as not stated": 4}
    program = CommandRetrieval(CommandIndex(home, embedder), ir_source="none")
    for query, command, arguments in (("把主卧台灯调到50%", "setLevel", [50]), ("打开主卧台灯", "on", [])):
        report = execute(program(query=query), SmartThingsTarget("token", "http://127.0.0.1:9", home_dir=home_dir),
                         query=query)
        assert [c.body["commands"][0]["command"] for c in report.calls] == [command]
        assert report.calls[0].body["commands"][0]["arguments"] == arguments


def test_a_homes_temperature_scale_is_the_one_its_ranges_state(home_dir):
    """The scale a temperature command without a unit is read in: the one every stated temperature range uses."""
    assert Home.load(resolve_dataset("smarthome/home_en"), log_warnings=False).temperature_scale == "fahrenheit"
    assert Home.load(resolve_dataset("smarthome/home_medium"), log_warnings=False).temperature_scale == "celsius"
    home = Home.load(home_dir, log_warnings=False)
    device = home.devices[0]
    spec = device.commands[0]
    fahrenheit = replace(spec, value_range=(("max", 86), ("min", 60), ("unit", "F")))
    celsius = replace(spec, value_range=(("max", 30), ("min", 16), ("unit", "C")))
    devices = [replace(device, commands=(fahrenheit, celsius)), *home.devices[1:]]
    assert Home(home.name, devices, home.rooms).temperature_scale is None  # both stated: none assumed
