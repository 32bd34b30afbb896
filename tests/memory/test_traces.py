"""Reading traces: the index text format, the correct-only filter, the variants real agent logs come in
(normalised and counted per kind), and files that cannot be understood (skipped with one line each)."""

import json
import os
import threading

import pytest
from conftest import make_trace, write_traces

from tracerag.datasets.smarthome import resolve_dataset
from tracerag.memory.traces import index_text, load_traces, query_text


def test_index_text_format():
    text = index_text("What is this?", "identify a plant", ["image_search", "wikipedia"], "A fern in a pot")
    assert text == ("Image description: A fern in a pot\nWhat is this?\nTask: identify a plant\n"
                    "Tools (in order): image_search, wikipedia")
    assert index_text("What is this?", "identify a plant", ["ocr"], None) == \
        "What is this?\nTask: identify a plant\nTools (in order): ocr"
    assert query_text("Q?", caption="C", sub_task="S") == "Image description: C\nQ?\nTask: S"
    assert query_text("Q?") == "Q?"


def test_only_correct_traces_are_returned(traces_dir):
    loaded = load_traces(traces_dir)
    assert len(loaded.traces) == 12 and loaded.incorrect == 1 and loaded.corrupt == []
    assert all(t.is_correct for t in loaded.traces)
    assert loaded.report.summary() == "read 13 traces, kept 13"  # an incorrect trace is kept, not skipped
    assert load_traces(traces_dir / "tasks").seen == 13  # the tasks directory itself is accepted too


def test_bundled_traces():
    loaded = load_traces(resolve_dataset("experience"))
    assert (len(loaded.traces), loaded.incorrect, loaded.corrupt) == (400, 39, [])
    assert not loaded.report.normalised


def _one(tmp_path, trace: dict | None = None, *, text: str | None = None, raw: bytes | None = None):
    """Write one trace (as a dict, a text, or bytes) and load the directory."""
    path = tmp_path / "tasks" / "t1" / "trace.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    if raw is not None:
        path.write_bytes(raw)
    else:
        path.write_text(text if text is not None else json.dumps(trace), encoding="utf-8")
    return load_traces(tmp_path), path


def _base(**changes) -> dict:
    trace = make_trace("plant", 1)
    trace.update(changes)
    return {k: v for k, v in trace.items() if v is not ...}


NORMALISED = [  # (what the file says, the Trace attribute, its value after normalisation, the counted kind)
    (_base(steps=["look at the leaf", "search the web"]), "steps",
     ({"thought": "look at the leaf", "tool": "", "tool_input": "", "observation": ""},
      {"thought": "search the web", "tool": "", "tool_input": "", "observation": ""}), "steps as strings"),
    (_base(steps="one long thought"), "steps",
     ({"thought": "one long thought", "tool": "", "tool_input": "", "observation": ""},), "steps as one string"),
    (_base(steps=[{"thought": "look"}, {}]), "steps",
     ({"thought": "look", "tool": "", "tool_input": "", "observation": ""},
      {"thought": "", "tool": "", "tool_input": "", "observation": ""}), "step fields defaulted"),
    (_base(steps=[{"thought": "t", "tool": {"name": "ocr"}, "tool_input": {"q": 1}, "observation": ""}]), "steps",
     ({"thought": "t", "tool": "ocr", "tool_input": {"q": 1}, "observation": ""},), "steps' tool as a dict"),
    (_base(tools=[{"name": "image_search"}, {"type": "function", "function": {"name": "wikipedia"}}]), "tools",
     ("image_search", "wikipedia"), "tools as dicts"),
    (_base(tools="ocr"), "tools", ("ocr",), "tools as one string"),
    (_base(images="leaf.jpg"), "images", ("leaf.jpg",), "images as one string"),
    (_base(reasoning=["Search by image.", "Check toxicity."]), "reasoning", "Search by image.\nCheck toxicity.",
     "reasoning as a list"),
    (_base(caption=42), "caption", "42", "caption as a number"),
    (_base(task_id=7), "task_id", "7", "task_id as a number"),
    (_base(final_answer={"total": 42}), "final_answer", '{"total": 42}', "final_answer as JSON"),
    (_base(is_correct=1), "is_correct", True, "is_correct as 1/0"),
    (_base(is_correct="TRUE"), "is_correct", True, "is_correct as text"),
    (_base(is_correct="Yes"), "is_correct", True, "is_correct as text"),
]


@pytest.mark.parametrize("trace,attribute,value,kind", NORMALISED,
                         ids=[n[3] + f"-{i}" for i, n in enumerate(NORMALISED)])
def test_variants_are_normalised_and_counted_once(tmp_path, trace, attribute, value, kind):
    loaded, _ = _one(tmp_path, trace)
    assert loaded.corrupt == [] and len(loaded.traces) == 1
    assert getattr(loaded.traces[0], attribute) == value
    assert dict(loaded.report.normalised) == {kind: 1}


@pytest.mark.parametrize("value,correct", [(0, False), ("false", False), ("No", False), ("yes", True), (1.0, True)])
def test_is_correct_spellings(tmp_path, value, correct):
    loaded, _ = _one(tmp_path, _base(is_correct=value))
    assert (len(loaded.traces), loaded.incorrect) == ((1, 0) if correct else (0, 1))
    assert loaded.corrupt == []


def test_a_bom_crlf_and_extra_fields_are_accepted(tmp_path):
    trace = _base(agent="gpt-x", tokens=1234, extra={"nested": [1, 2]})
    text = json.dumps(trace, indent=1).replace("\n", "\r\n")
    loaded, _ = _one(tmp_path, raw=b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert len(loaded.traces) == 1 and loaded.traces[0].task_id == "plant-0001"
    assert dict(loaded.report.normalised) == {"BOM stripped": 1}


def test_every_kind_is_counted_once_per_trace(tmp_path):
    traces = [_base(task_id=f"v{n}", steps=["a", "b"], tools=[{"name": "ocr"}, {"name": "wiki"}], is_correct="true")
              for n in range(3)]
    write_traces(tmp_path, traces)
    loaded = load_traces(tmp_path)
    assert loaded.report.summary() == ("read 3 traces, kept 3; normalised: is_correct as text 3, "
                                       "steps as strings 3, tools as dicts 3")


SKIPPED = [  # (file content, the skip reason counted, the line after "<path>: ")
    (_base(question=...), "missing field", "question: expected a non-empty string, the field is missing"),
    (_base(question="  "), "missing field", "question: expected a non-empty string, got an empty one"),
    (_base(task_id=...), "missing field", "task_id: expected a non-empty string, the field is missing"),
    (_base(is_correct=...), "missing field", "is_correct: expected true or false, the field is missing"),
    (_base(is_correct="maybe"), "wrong type",
     "is_correct: expected true or false (or 1/0, \"true\"/\"false\", \"yes\"/\"no\"), got 'maybe'"),
    (_base(is_correct=2), "wrong type",
     "is_correct: expected true or false (or 1/0, \"true\"/\"false\", \"yes\"/\"no\"), got 2"),
    (_base(question=["a", "b"]), "wrong type", 'question: expected a string, got ["a", "b"]'),
    (_base(task_id=True), "wrong type", "task_id: expected a string, got true"),
    (_base(tools=["ocr", 3]), "wrong type",
     'tools[1]: expected a tool name (a string, {"name": …} or {"function": {"name": …}}), got 3'),
    (_base(tools={"ocr": True}), "wrong type",
     'tools: expected a list of a tool name (a string, {"name": …} or {"function": {"name": …}}), got {"ocr": true}'),
    (_base(images=[{"url": "x"}]), "wrong type", 'images[0]: expected an image path (a string), got {"url": "x"}'),
    (_base(steps=[3]), "wrong type",
     'steps[0]: expected a step ({"thought", "tool", "tool_input", "observation"}) or a string, got 3'),
    (_base(steps={"thought": "x"}), "wrong type", 'steps: expected a list of steps, got {"thought": "x"}'),
    (_base(steps=[{"thought": ["x"]}]), "wrong type", 'steps[0].thought: expected a string, got ["x"]'),
    (_base(reasoning={"a": 1}), "wrong type", 'reasoning: expected a string (or a list of strings), got {"a": 1}'),
    (_base(reasoning=["ok", 5]), "wrong type", "reasoning[1]: expected a string, got 5"),
    (_base(caption=True), "wrong type", "caption: expected a string, got true"),
    (_base(question="Is \ud800 toxic?"), "lone surrogate",
     "question: holds a character UTF-8 cannot store (U+D800, a lone surrogate)"),
    (_base(steps=[{"thought": "x", "observation": "\udfff"}]), "lone surrogate",
     "steps: holds a character UTF-8 cannot store (U+DFFF, a lone surrogate)"),
    ("", "not JSON", "expected a JSON object (one trace), the file is empty"),
    ("null", "not a JSON object", "expected a JSON object (one trace), got null"),
    ("[{}]", "not a JSON object", "expected a JSON object (one trace), got a list"),
    ('{"task_id": "t1", "question": "Q', "not JSON",
     "invalid JSON (Unterminated string starting at at line 1 column 31)"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\xff", "not UTF-8", "not UTF-8 (byte 1)"),
]


@pytest.mark.parametrize("content,reason,line", SKIPPED, ids=[f"{s[1]}-{i}" for i, s in enumerate(SKIPPED)])
def test_what_cannot_be_understood_is_skipped_with_one_line(tmp_path, content, reason, line):
    kind = {bytes: "raw", str: "text", dict: "trace"}[type(content)]
    loaded, path = _one(tmp_path, **{kind: content})
    assert loaded.traces == [] and loaded.incorrect == 0
    assert dict(loaded.report.skipped) == {reason: 1}
    assert loaded.corrupt == [f"{path}: {line}"]


def test_a_fifo_named_trace_json_is_skipped_without_hanging(traces_dir):
    fifo = traces_dir / "tasks" / "pipe" / "trace.json"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    done = []
    worker = threading.Thread(target=lambda: done.append(load_traces(traces_dir)), daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert done, "load_traces blocked on a FIFO"
    assert len(done[0].traces) == 12 and dict(done[0].report.skipped) == {"not a regular file": 1}
    assert done[0].corrupt == [f"{fifo}: is a FIFO, not a regular file"]


def test_a_directory_or_a_symlink_to_one_named_trace_json_is_skipped(traces_dir):
    (traces_dir / "tasks" / "dir" / "trace.json").mkdir(parents=True)
    (traces_dir / "tasks" / "link").mkdir()
    (traces_dir / "tasks" / "link" / "trace.json").symlink_to(traces_dir / "tasks")
    (traces_dir / "tasks" / "dangling").mkdir()
    (traces_dir / "tasks" / "dangling" / "trace.json").symlink_to(traces_dir / "nowhere.json")
    loaded = load_traces(traces_dir)
    assert len(loaded.traces) == 12
    assert dict(loaded.report.skipped) == {"not a regular file": 2, "file is missing": 1}
    assert f"{traces_dir}/tasks/dir/trace.json: is a directory, not a regular file" in loaded.corrupt
    assert f"{traces_dir}/tasks/dangling/trace.json: file is missing" in loaded.corrupt


def test_a_file_over_the_cap_is_skipped_with_the_limit_named(traces_dir):
    big = traces_dir / "tasks" / "big" / "trace.json"
    big.parent.mkdir()
    with big.open("wb") as f:  # sparse: the size is checked before anything is read
        f.truncate(17 * 1024 * 1024)
    loaded = load_traces(traces_dir)
    assert len(loaded.traces) == 12 and dict(loaded.report.skipped) == {"too large": 1}
    assert loaded.corrupt == [f"{big}: 17,825,792 bytes is over the 16,777,216-byte limit for one file "
                              "(a trace.json is capped at that size)"]
    assert len(load_traces(traces_dir, max_bytes=32 * 1024 * 1024).corrupt) == 1  # now too large only as JSON


def test_broken_files_are_skipped_counted_and_named(traces_dir):
    tasks = traces_dir / "tasks"
    (tasks / "bad-json").mkdir()
    (tasks / "bad-json" / "trace.json").write_text("{not json", encoding="utf-8")
    no_question = make_trace("plant", 7)
    del no_question["question"]
    bad_tools = make_trace("plant", 9)
    bad_tools["tools"] = ["ocr", 3]
    write_traces(traces_dir, [no_question, bad_tools])
    duplicate = tasks / "zz-copy" / "trace.json"
    duplicate.parent.mkdir()
    duplicate.write_text(json.dumps(make_trace("receipt", 1)), encoding="utf-8")

    loaded = load_traces(traces_dir)
    assert len(loaded.traces) == 12 and len(loaded.corrupt) == 4
    assert dict(loaded.report.skipped) == {"duplicate task_id": 1, "missing field": 1, "not JSON": 1,
                                           "wrong type": 1}
    problems = "\n".join(loaded.corrupt)
    assert "bad-json/trace.json: invalid JSON (Expecting property name enclosed in double quotes" in problems
    assert "plant-0007/trace.json: question: expected a non-empty string, the field is missing" in problems
    assert "plant-0009/trace.json: tools[1]: expected a tool name" in problems
    assert "zz-copy/trace.json: task_id: expected a new id, 'receipt-0001' is already used by another trace" \
        in problems
    assert loaded.report.summary() == ("read 17 traces, kept 13; skipped: duplicate task_id 1, missing field 1, "
                                       "not JSON 1, wrong type 1")


def test_image_paths_stay_inside_the_trace_folder(tmp_path):
    from tracerag.memory.traces import parse_trace

    folder = tmp_path / "tasks" / "t1"
    folder.mkdir(parents=True)
    (folder / "in.jpg").write_bytes(b"x")
    (folder / "link.jpg").symlink_to("/etc/hostname")
    raw = {"task_id": "t1", "question": "q?", "is_correct": True,
           "images": ["in.jpg", "/etc/passwd", "../../secret.jpg", "link.jpg"]}
    trace, kinds = parse_trace(raw, folder / "trace.json")
    assert trace.images == ("in.jpg", "link.jpg")
    assert "image path outside the trace's folder dropped" in kinds
    assert trace.image_paths() == [(folder / "in.jpg").resolve()]  # the link leads out: left out
