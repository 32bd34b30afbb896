"""Bad trace files: ``tasks/<task_id>/trace.json`` as agent runs really write them.

Each variant writes 24 good traces plus the variant's file(s) and builds a bank the way
``tracerag build-bank`` does (``build_experience_bank``, default ``max_skipped`` 5%). An accepted
variant must land in the bank with the expected normalisation counted; a skipped one must leave the
other 24 in the bank and name its file; a rejected one (too much unreadable, nothing usable) is the
build's one-line ``DataSetShrunk``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from conftest import FAMILIES, make_trace, write_traces

from .harness import Variant

FORMAT = "traces"

GOOD = [make_trace(f, n) for f in FAMILIES for n in range(1, 9)]  # 24: one bad file among them is 4%


def _build(tmp_path: Path):
    import tracerag.config
    from tracerag.memory.experience_bank import build_experience_bank

    embedder = tracerag.config.make_embedder(tracerag.config.Settings.resolve().embedder)
    return build_experience_bank(tmp_path / "traces", tmp_path / "bank", embedder)


def _target(tmp_path: Path, name: str = "variant") -> Path:
    write_traces(tmp_path / "traces", GOOD)
    path = tmp_path / "traces" / "tasks" / name / "trace.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _variant_trace(**changes) -> dict:
    trace = make_trace("plant", 99)
    trace.update(changes)
    return {k: v for k, v in trace.items() if v is not ...}


def _finish(tmp_path: Path, path: Path, kind: str | None) -> str | None:
    """Build, then check the variant's fate: in the bank with ``kind`` counted (accepted), or left out
    with one line naming its file (skipped). Anything else raises, which the campaign calls a traceback."""
    report = _build(tmp_path)
    if report.corrupt_skipped:
        assert report.added == len(GOOD) and len(report.corrupt_skipped) == 1, report.corrupt_skipped
        line = report.corrupt_skipped[0]
        assert line.startswith(f"{path}: ") and "\n" not in line, line
        return "skipped"
    assert report.added == len(GOOD) + 1, report
    assert kind is None or kind in report.read["normalised"], report.read
    return None


def trace(kind: str | None = None, **changes) -> Callable[[Path], str | None]:
    """A variant whose trace.json is a good trace with ``changes`` (``...`` deletes a field)."""
    def run(tmp_path: Path) -> str | None:
        path = _target(tmp_path)
        path.write_text(json.dumps(_variant_trace(**changes)), encoding="utf-8")
        return _finish(tmp_path, path, kind)
    return run


def raw(content: bytes, kind: str | None = None) -> Callable[[Path], str | None]:
    def run(tmp_path: Path) -> str | None:
        path = _target(tmp_path)
        path.write_bytes(content)
        return _finish(tmp_path, path, kind)
    return run


def special(make: Callable[[Path], None]) -> Callable[[Path], str | None]:
    """A variant whose trace.json is not a regular file (``make(path)`` creates it)."""
    def run(tmp_path: Path) -> str | None:
        path = _target(tmp_path)
        make(path)
        return _finish(tmp_path, path, None)
    return run


def _huge(path: Path) -> None:
    with path.open("wb") as f:  # sparse: over the 16 MB cap without writing 16 MB
        f.truncate(16 * 1024 * 1024 + 1)


def _too_many_broken(tmp_path: Path) -> None:
    write_traces(tmp_path / "traces", GOOD)
    for n in range(2):  # 2 of 26 is 8%, over the 5% build-bank allows
        path = tmp_path / "traces" / "tasks" / f"broken{n}" / "trace.json"
        path.parent.mkdir()
        path.write_text("{", encoding="utf-8")
    _build(tmp_path)


def _nothing_usable(tmp_path: Path) -> None:
    for n in range(3):
        path = tmp_path / "traces" / "tasks" / f"t{n}" / "trace.json"
        path.parent.mkdir(parents=True)
        path.write_text("null", encoding="utf-8")
    _build(tmp_path)


_GOOD_JSON = json.dumps(_variant_trace())
_BOM = b"\xef\xbb\xbf"
_LATIN1 = json.dumps(_variant_trace(question="Is the café plant toxic?"), ensure_ascii=False).encode("latin-1")

VARIANTS = [
    # accepted after normalisation (each kind counted in the read report)
    Variant("steps as plain strings", "accepted", trace("steps as strings", steps=["read the label", "search"])),
    Variant("steps as one string", "accepted", trace("steps as one string", steps="looked it up")),
    Variant("step dicts with missing fields", "accepted", trace("step fields defaulted", steps=[{"tool": "ocr"}, {}])),
    Variant("tools as {name} dicts", "accepted", trace("tools as dicts", tools=[{"name": "image_search"}])),
    Variant("tools in the OpenAI shape", "accepted",
            trace("tools as dicts", tools=[{"type": "function", "function": {"name": "wikipedia"}}])),
    Variant("tools as one string", "accepted", trace("tools as one string", tools="image_search")),
    Variant("images as one path", "accepted", trace("images as one string", images="leaf.jpg")),
    Variant("reasoning as a list of lines", "accepted", trace("reasoning as a list", reasoning=["a.", "b."])),
    Variant("caption as a number", "accepted", trace("caption as a number", caption=1234)),
    Variant("task_id as a number", "accepted", trace("task_id as a number", task_id=990099)),
    Variant("is_correct as 1", "accepted", trace("is_correct as 1/0", is_correct=1)),
    Variant("is_correct as \"TRUE\"", "accepted", trace("is_correct as text", is_correct="TRUE")),
    Variant("is_correct as \"yes\"", "accepted", trace("is_correct as text", is_correct="yes")),
    Variant("final_answer as an object", "accepted", trace("final_answer as JSON", final_answer={"total": 42})),
    Variant("extra fields", "accepted", trace(None, model="gpt-x", usage={"tokens": 12}, family=None)),
    Variant("UTF-8 BOM", "accepted", raw(_BOM + _GOOD_JSON.encode(), "BOM stripped")),
    Variant("CRLF line ends, indented", "accepted",
            raw(json.dumps(_variant_trace(), indent=2).replace("\n", "\r\n").encode())),
    # skipped with one line naming the file; the other traces build
    Variant("empty file", "skipped", raw(b"")),
    Variant("null", "skipped", raw(b"null")),
    Variant("a JSON list", "skipped", raw(b"[" + _GOOD_JSON.encode() + b"]")),
    Variant("truncated JSON", "skipped", raw(_GOOD_JSON[: len(_GOOD_JSON) // 2].encode())),
    Variant("binary garbage", "skipped", raw(bytes(range(256)) * 4)),
    Variant("Latin-1, not UTF-8", "skipped", raw(_LATIN1)),
    Variant("over the 16 MB cap", "skipped", special(_huge)),
    Variant("no question", "skipped", trace(question=...)),
    Variant("no task_id", "skipped", trace(task_id=...)),
    Variant("no is_correct", "skipped", trace(is_correct=...)),
    Variant("task_id a list", "skipped", trace(task_id=["a"])),
    Variant("question an object", "skipped", trace(question={"text": "q"})),
    Variant("sub_task a list", "skipped", trace(sub_task=["x"])),
    Variant("tools a number", "skipped", trace(tools=3)),
    Variant("tools holding a number", "skipped", trace(tools=["ocr", 3])),
    Variant("images a number", "skipped", trace(images=5)),
    Variant("caption true", "skipped", trace(caption=True)),
    Variant("steps a number", "skipped", trace(steps=7)),
    Variant("a step a number", "skipped", trace(steps=[{"thought": "x"}, 8])),
    Variant("reasoning an object", "skipped", trace(reasoning={"a": 1})),
    Variant("is_correct \"maybe\"", "skipped", trace(is_correct="maybe")),
    Variant("lone surrogate in the question", "skipped", trace(question="Is this \ud800 toxic?")),
    Variant("duplicate task_id", "skipped", trace(task_id="plant-0001")),
    Variant("FIFO", "skipped", special(lambda p: os.mkfifo(p))),
    Variant("directory named trace.json", "skipped", special(lambda p: p.mkdir())),
    Variant("symlink to a directory", "skipped", special(lambda p: p.symlink_to(p.parent.parent))),
    Variant("dangling symlink", "skipped", special(lambda p: p.symlink_to(p.parent / "gone.json"))),
    # rejected: the build stops with one line
    Variant("more than 5% unreadable", "rejected", _too_many_broken),
    Variant("nothing usable", "rejected", _nothing_usable),
]
