"""An artifact's metadata sidecar that cannot be used is one clear line naming the sidecar."""

import json

import pytest

import tracerag
from tracerag.artifacts import FORMAT_VERSION, meta_path, read_meta
from tracerag.registry import load


def _sidecar(tmp_path, content) -> tuple:
    path = tmp_path / "program.json"
    path.write_text("{}", encoding="utf-8")
    sidecar = meta_path(path)
    sidecar.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    return path, sidecar


GOOD = {"format_version": FORMAT_VERSION, "program": "TraceablePlanner", "config": {}}


@pytest.mark.parametrize("content,message", [
    ({"format_version": FORMAT_VERSION, "config": {}},
     "field 'program' is missing; was {path} written by tracerag.save?"),
    ({"format_version": FORMAT_VERSION, "program": "TraceablePlanner"},
     "field 'config' is missing; was {path} written by tracerag.save?"),
    ({**GOOD, "program": "CommandRetrieval"},
     "field 'index_params' is missing; was {path} written by tracerag.save?"),
    ({**GOOD, "program": 3}, "field 'program': expected a string, got int"),
    ({**GOOD, "config": [1]}, "field 'config': expected an object, got list"),
    ({**GOOD, "program": "Nope"}, "unknown program 'Nope'; expected one of ['CommandRetrieval', "
                                  "'ExperienceRetrieval', 'SelfReflectiveRAG', 'TraceablePlanner', 'SearchAgent']"),
    ({"program": "TraceablePlanner", "config": {}}, f"format_version None is not {FORMAT_VERSION}"),
    ([1, 2], "expected a JSON object, got list"),
    (b'{"program": ', "invalid JSON (Expecting value at line 1 column 13)"),
    (b'{"program": "\xff"}', "not UTF-8 (byte 14)"),
])
def test_an_unusable_sidecar_is_one_line_naming_it(tmp_path, content, message):
    path, sidecar = _sidecar(tmp_path, content)
    program_field = "index_params" in message or "unknown program" in message  # the program's package checks it
    for read in (load,) if program_field else (read_meta, load):
        with pytest.raises(ValueError) as err:
            read(path)
        assert str(err.value) == f"{sidecar}: {message.format(path=path)}"


def test_a_complete_sidecar_is_read(tmp_path):
    path, _ = _sidecar(tmp_path, GOOD)
    assert read_meta(path) == GOOD


def test_no_artifact_at_all_is_one_line_saying_so(tmp_path):
    with pytest.raises(FileNotFoundError) as err:
        load(tmp_path / "nowhere.json")
    assert str(err.value) == (f"{tmp_path / 'nowhere.json'}: no such artifact (neither the file nor its "
                              "nowhere.json.meta.json sidecar is there)")
    assert isinstance(err.value, tracerag.TraceragError)
