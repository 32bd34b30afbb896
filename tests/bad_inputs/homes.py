"""Bad smart-home files: devices.json, rooms.json, spec.jsonl and queries.jsonl as users' real data arrives.

A home variant is loaded (``Home.load``), indexed (``CommandIndex``) and asked two queries through
``CommandRetrieval`` (one of them a bulk command, which groups devices by argument shape), so a crash
that would only show at query time counts. A queries variant is read the way ``evaluate commands``
reads it (``load_dataset`` with a report; a label naming a device or command the home lacks is an error)
and every kept query is scored through ``evaluate_commands``; it returns "skipped" when the reader
skipped a line.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from pathlib import Path

from conftest import DEVICES, SPECS, device_json, write_home

from tracerag.data_files.read_report import text_problem

from .harness import Variant

FORMAT = "homes"

QUERIES = ("打开客厅的灯", "把所有灯的亮度调到50%")


def _embedder():
    import tracerag.config

    return tracerag.config.make_embedder(tracerag.config.Settings.resolve().embedder)


def _load_and_ask(home_dir: Path) -> None:
    from tracerag.commands.command_retrieval import CommandRetrieval
    from tracerag.home_commands.home import Home
    from tracerag.home_commands.home_index import CommandIndex

    program = CommandRetrieval(CommandIndex(Home.load(home_dir), _embedder()))
    for query in QUERIES:
        program(query=query)


# ----- writing a home with one thing changed ----------------------------------------------------

def _devices_doc() -> dict:
    return {"items": [device_json(*d) for d in DEVICES]}


def _home(tmp_path: Path) -> Path:
    return write_home(tmp_path / "home")


def devices(change: Callable[[dict], object]) -> Callable[[Path], None]:
    """A variant whose devices.json is the tiny home's document after ``change(doc)`` (its return value
    replaces the document when not None)."""
    def run(tmp_path: Path) -> None:
        home = _home(tmp_path)
        doc = _devices_doc()
        doc = change(doc) or doc
        text = json.dumps(doc, ensure_ascii=False, indent=2)
        if text_problem(text):  # a lone surrogate: written as the \udXXX escape a JSON file can hold
            text = json.dumps(doc, indent=2)
        (home / "devices.json").write_text(text, encoding="utf-8")
        _load_and_ask(home)
    return run


def raw(name: str, data: bytes | Callable[[bytes], bytes]) -> Callable[[Path], None]:
    """A variant whose file ``name`` holds ``data`` (or ``data(original bytes)``)."""
    def run(tmp_path: Path) -> None:
        home = _home(tmp_path)
        path = home / name
        path.write_bytes(data(path.read_bytes()) if callable(data) else data)
        _load_and_ask(home)
    return run


def special(name: str, kind: str) -> Callable[[Path], None]:
    """A variant whose file ``name`` is a FIFO or a directory."""
    def run(tmp_path: Path) -> None:
        home = _home(tmp_path)
        path = home / name
        path.unlink(missing_ok=True)
        os.mkfifo(path) if kind == "fifo" else path.mkdir()
        if name == "queries.jsonl":
            _evaluate(home)
        else:
            _load_and_ask(home)
    return run


def first_device(**fields) -> Callable[[dict], None]:
    def change(doc: dict) -> None:
        doc["items"][0].update(fields)
    return change


def main_component(**fields) -> Callable[[dict], None]:
    def change(doc: dict) -> None:
        doc["items"][0]["components"][0].update(fields)
    return change


def rooms(items) -> Callable[[Path], None]:
    def run(tmp_path: Path) -> None:
        home = _home(tmp_path)
        (home / "rooms.json").write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
        _load_and_ask(home)
    return run


def room_items(**first) -> dict:
    items = [{"roomId": "r-living", "name": "客厅"}, {"roomId": "r-bed", "name": "主卧"},
             {"roomId": "r-study", "name": "书房"}, {"roomId": "r-kitchen", "name": "厨房"}]
    items[0].update(first)
    return {"items": items}


def spec(**fields) -> Callable[[Path], None]:
    """A variant whose p-light brightness command (main-switchLevel-setLevel) has ``fields`` changed."""
    def run(tmp_path: Path) -> None:
        specs = copy.deepcopy(SPECS)
        specs["p-light"][2].update(fields)
        _load_and_ask(write_home(tmp_path / "home", specs=specs))
    return run


def spec_lines(change: Callable[[str], str]) -> Callable[[Path], None]:
    def run(tmp_path: Path) -> None:
        home = _home(tmp_path)
        path = home / "spec.jsonl"
        path.write_text(change(path.read_text(encoding="utf-8")), encoding="utf-8")
        _load_and_ask(home)
    return run


# ----- queries.jsonl ----------------------------------------------------------------------------

GOOD = {"id": "q1", "query": "打开客厅的灯", "quantifier": "one",
        "expected": [{"device_id": "light-living-1", "command_id": "main-switch-on"}]}


def _evaluate(home: Path) -> str | None:
    from tracerag.commands.command_retrieval import CommandRetrieval, build_indexes
    from tracerag.commands.evaluation import evaluate_commands
    from tracerag.data_files.read_report import ReadReport
    from tracerag.datasets.smarthome import load_dataset

    report = ReadReport("queries")
    queries = load_dataset(home, report=report)
    program = CommandRetrieval(build_indexes([home], _embedder()))
    evaluate_commands(program, queries, dataset=str(home), progress=False)
    return "skipped" if report.skipped else None


def queries(*lines: str | dict, prefix: bytes = b"", newline: str = "\n") -> Callable[[Path], str | None]:
    """A variant whose queries.jsonl holds a good line, then ``lines`` (dicts are dumped as JSON)."""
    def run(tmp_path: Path) -> str | None:
        home = _home(tmp_path)
        text = "".join((json.dumps(x, ensure_ascii=False) if isinstance(x, dict) else x) + newline
                       for x in (GOOD, *lines))
        (home / "queries.jsonl").write_bytes(prefix + text.encode("utf-8", "surrogatepass"))
        return _evaluate(home)
    return run


def query_bytes(data: bytes) -> Callable[[Path], str | None]:
    def run(tmp_path: Path) -> str | None:
        home = _home(tmp_path)
        (home / "queries.jsonl").write_bytes(json.dumps(GOOD).encode() + b"\n" + data)
        return _evaluate(home)
    return run


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


MB = 1_000_000
VARIANTS = [
    # devices.json: shapes that are understood (normalised and counted)
    Variant("devices: categories as a string", "accepted", devices(main_component(categories="Light"))),
    Variant("devices: categories as plain names", "accepted", devices(main_component(categories=["Light"]))),
    Variant("devices: categories as one object", "accepted", devices(main_component(categories={"name": "Light"}))),
    Variant("devices: components as strings", "accepted", devices(first_device(components=["main", "extra"]))),
    Variant("devices: components as one object", "accepted",
            devices(lambda d: d["items"][0].update(components=d["items"][0]["components"][0]))),
    Variant("devices: capabilities as string ids", "accepted",
            devices(main_component(capabilities=["switch", "switchLevel"]))),
    Variant("devices: profile as a string id", "accepted", devices(first_device(profile="p-light"))),
    Variant("devices: deviceId as a number", "accepted", devices(first_device(deviceId=1234))),
    Variant("devices: label as a number", "accepted", devices(first_device(label=42))),
    Variant("devices: label of 1 MB", "accepted", devices(first_device(label="灯" * MB))),
    Variant("devices: extra fields", "accepted", devices(first_device(viper={"x": [1, {"y": None}]}, allowed=[]))),
    Variant("devices: a bare list of items", "accepted", devices(lambda d: d["items"])),
    Variant("devices: BOM", "accepted", raw("devices.json", lambda b: b"\xef\xbb\xbf" + b)),
    Variant("devices: CRLF line ends", "accepted", raw("devices.json", lambda b: b.replace(b"\n", b"\r\n"))),
    # devices.json: what cannot be understood (one clear line)
    Variant("devices: empty file", "rejected", raw("devices.json", b"")),
    Variant("devices: null", "rejected", raw("devices.json", b"null")),
    Variant("devices: truncated JSON", "rejected", raw("devices.json", lambda b: b[: len(b) // 2])),
    Variant("devices: binary garbage", "rejected", raw("devices.json", bytes(range(256)) * 4)),
    Variant("devices: nested 100k deep", "rejected", raw("devices.json", _nested(100_000))),
    Variant("devices: items as an object", "rejected", devices(lambda d: {"items": {"a": 1}})),
    Variant("devices: item as a string", "rejected", devices(lambda d: d["items"].append("lamp"))),
    Variant("devices: deviceId as a list", "rejected", devices(first_device(deviceId=["a"]))),
    Variant("devices: label as a list", "rejected", devices(first_device(label=["lamp"], name=None))),
    Variant("devices: label with a lone surrogate", "rejected", devices(first_device(label="灯\ud800"))),
    Variant("devices: profile as a list", "rejected", devices(first_device(profile=["p-light"]))),
    Variant("devices: components as a number", "rejected", devices(first_device(components=3))),
    Variant("devices: no main component", "rejected", devices(first_device(components=["extra"]))),
    Variant("devices: categories as a number", "rejected", devices(main_component(categories=7))),
    Variant("devices: category as a list", "rejected", devices(main_component(categories=[["Light"]]))),
    Variant("devices: capability as a number", "rejected", devices(main_component(capabilities=[5]))),
    Variant("devices: duplicate deviceId", "rejected",
            devices(lambda d: d["items"].append(copy.deepcopy(d["items"][0])))),
    Variant("devices: FIFO", "rejected", special("devices.json", "fifo")),
    Variant("devices: directory", "rejected", special("devices.json", "dir")),
    # rooms.json
    Variant("rooms: name as a number", "accepted", rooms(room_items(name=101))),
    Variant("rooms: roomId as a number", "accepted", rooms(room_items(roomId=7))),
    Variant("rooms: a bare list of items", "accepted", rooms(room_items()["items"])),
    Variant("rooms: name of 1 MB", "accepted", rooms(room_items(name="客厅" * (MB // 2)))),
    Variant("rooms: duplicate roomId", "rejected",
            rooms({"items": room_items()["items"] + [{"roomId": "r-living", "name": "起居室"}]})),
    Variant("rooms: empty file (no rooms)", "accepted", raw("rooms.json", b"")),
    Variant("rooms: BOM and CRLF", "accepted",
            raw("rooms.json", lambda b: b"\xef\xbb\xbf" + b.replace(b", ", b",\r\n"))),
    Variant("rooms: null", "rejected", raw("rooms.json", b"null")),
    Variant("rooms: name as an object", "rejected", rooms(room_items(name={"zh": "客厅"}))),
    Variant("rooms: name missing", "rejected", rooms({"items": [{"roomId": "r-living"}]})),
    Variant("rooms: not UTF-8", "rejected", raw("rooms.json", lambda b: b.replace("客厅".encode(), b"\xff\xfe"))),
    Variant("rooms: FIFO", "rejected", special("rooms.json", "fifo")),
    # spec.jsonl
    Variant("spec: type as a list", "accepted", spec(type=["integer", "null"])),
    Variant("spec: value_list items as plain strings", "accepted", spec(type="string", value_list=["low", "high"])),
    Variant("spec: value_range numbers as strings", "accepted", spec(value_range={"min": "0", "max": "100.0"})),
    Variant("spec: value_range as [min, max]", "accepted", spec(value_range=[0, 100])),
    Variant("spec: description of 1 MB", "accepted", spec(description="亮度" * (MB // 2))),
    Variant("spec: extra fields", "accepted", spec(schema={"type": "object"}, deprecated=False)),
    Variant("spec: BOM and CRLF", "accepted", spec_lines(lambda t: "\ufeff" + t.replace("\n", "\r\n"))),
    Variant("spec: duplicate profileId", "rejected", spec_lines(lambda t: t + t.splitlines()[0] + "\n")),
    Variant("spec: duplicate command id in a profile", "rejected", spec_lines(lambda t: t + json.dumps(
        {"profileId": "p-x", "capabilities": [{"id": "main-switch-on", "description": "开"}] * 2}) + "\n")),
    Variant("spec: empty file (devices without commands)", "accepted", raw("spec.jsonl", b"")),
    Variant("spec: type as an object", "rejected", spec(type={"name": "integer"})),
    Variant("spec: value_list as a number", "rejected", spec(value_list=3)),
    Variant("spec: value_list item as a list", "rejected", spec(value_list=[["low"]])),
    Variant("spec: nested value_range", "rejected", spec(value_range={"min": 0, "max": {"value": 100}})),
    Variant("spec: value_range bound not a number", "rejected", spec(value_range={"min": "low", "max": 100})),
    Variant("spec: value_range as a string", "rejected", spec(value_range="0-100")),
    Variant("spec: description missing", "rejected", spec(description=None)),
    Variant("spec: capabilities as a string", "rejected", spec_lines(
        lambda t: t + json.dumps({"profileId": "p-x", "capabilities": "main-switch-on"}) + "\n")),
    Variant("spec: a JSON list line", "rejected", spec_lines(lambda t: t + "[1, 2]\n")),
    Variant("spec: truncated line", "rejected", spec_lines(lambda t: t[:-40] + "\n")),
    Variant("spec: binary garbage", "rejected", raw("spec.jsonl", bytes(range(256)) * 4)),
    Variant("spec: FIFO", "rejected", special("spec.jsonl", "fifo")),
    Variant("spec: directory", "rejected", special("spec.jsonl", "dir")),
    # queries.jsonl
    Variant("queries: BOM, CRLF and extra fields", "accepted",
            queries({**GOOD, "id": "q2", "note": "x", "ir": None}, prefix=b"\xef\xbb\xbf", newline="\r\n")),
    Variant("queries: command_id as a list", "accepted", queries(
        {**GOOD, "id": "q2", "expected": [{"device_id": "light-living-1",
                                          "command_id": ["main-switch-on", "main-switchLevel-setLevel"]}]})),
    Variant("queries: expected as one object and id as a number", "accepted",
            queries({**GOOD, "id": 2, "expected": GOOD["expected"][0]})),
    Variant("queries: empty file", "accepted", raw("queries.jsonl", b"")),
    Variant("queries: invalid JSON line", "skipped", queries('{"id": "q2", "query": ')),
    Variant("queries: null line", "skipped", queries("null")),
    Variant("queries: binary garbage line", "skipped", query_bytes(bytes(range(128, 256)) + b"\n")),
    Variant("queries: query missing", "skipped", queries({**GOOD, "id": "q2", "query": None})),
    Variant("queries: query with a lone surrogate", "skipped", queries({**GOOD, "id": "q2", "query": "灯\ud800"})),
    Variant("queries: expected as a string", "skipped", queries({**GOOD, "id": "q2", "expected": "lamp"})),
    Variant("queries: command_id as a number", "skipped",
            queries({**GOOD, "id": "q2", "expected": [{"device_id": "light-living-1", "command_id": 3}]})),
    Variant("queries: quantifier as a list", "skipped", queries({**GOOD, "id": "q2", "quantifier": ["all"]})),
    Variant("queries: ir as a string", "rejected", queries({**GOOD, "id": "q2", "ir": "打开"})),
    Variant("queries: ir a QueryIR would have to normalise", "rejected",
            queries({**GOOD, "id": "q2", "ir": {"type_hint": "light", "quantifier": "ALL"}})),
    Variant("queries: device not in the home", "rejected",
            queries({**GOOD, "id": "q2", "expected": [{"device_id": "no-such", "command_id": "main-switch-on"}]})),
    Variant("queries: command not of the device", "rejected",
            queries({**GOOD, "id": "q2", "expected": [{"device_id": "light-living-1", "command_id": "main-fly"}]})),
    Variant("queries: expected empty", "rejected", queries({**GOOD, "id": "q2", "expected": []})),
    Variant("queries: duplicate id", "rejected", queries(GOOD)),
    Variant("queries: FIFO", "rejected", special("queries.jsonl", "fifo")),
    Variant("queries: directory", "rejected", special("queries.jsonl", "dir")),
]
