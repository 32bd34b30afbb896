"""Reading traces: the index text format, the correct-only filter, and broken files skipped and counted."""

import json

from conftest import make_trace, write_traces

from tracerag.datasets.smarthome import resolve_dataset
from tracerag.retrievers.traces import index_text, load_traces, query_text


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
    assert load_traces(traces_dir / "tasks").seen == 13  # the tasks directory itself is accepted too


def test_bundled_traces():
    loaded = load_traces(resolve_dataset("experience"))
    assert (len(loaded.traces), loaded.incorrect, loaded.corrupt) == (400, 39, [])


def test_broken_files_are_skipped_counted_and_named(traces_dir, caplog):
    tasks = traces_dir / "tasks"
    (tasks / "bad-json").mkdir()
    (tasks / "bad-json" / "trace.json").write_text("{not json", encoding="utf-8")
    no_question = make_trace("plant", 7)
    del no_question["question"]
    wrong_type = make_trace("plant", 8)
    wrong_type["is_correct"] = "yes"
    bad_tools = make_trace("plant", 9)
    bad_tools["tools"] = ["ocr", 3]
    write_traces(traces_dir, [no_question, wrong_type, bad_tools])
    duplicate = tasks / "zz-copy" / "trace.json"
    duplicate.parent.mkdir()
    duplicate.write_text(json.dumps(make_trace("receipt", 1)), encoding="utf-8")

    loaded = load_traces(traces_dir)
    assert len(loaded.traces) == 12 and len(loaded.corrupt) == 5
    problems = "\n".join(loaded.corrupt)
    assert "bad-json/trace.json: invalid JSON" in problems
    assert "plant-0007/trace.json: field 'question' is missing" in problems
    assert "plant-0008/trace.json: field 'is_correct' must be a bool" in problems
    assert "plant-0009/trace.json: field 'tools'[1] must be a str" in problems
    assert "zz-copy/trace.json: field 'task_id' 'receipt-0001' already used" in problems
    assert caplog.text.count("skipping") == 5
