"""``--no-cache``: an evaluation scores its endpoint's replies, never one DSPy cached from another endpoint.

DSPy keys its response cache by model string and prompt, not by endpoint: two servers that serve the
same model name share entries. Here a good endpoint answers first; a dead one with the same model string
then "answers" every query from the cache, unless the command says ``--no-cache``.
"""

from __future__ import annotations

import json
from pathlib import Path

import dspy
import pytest
from conftest import FakeEngine
from lm_server import StubLMServer

import optimize
import tracerag

QUERIES = [("打开客厅的灯", [("light-living-1", "main-switch-on"), ("light-living-2", "main-switch-on")]),
           ("关掉冰箱插座", [("plug-fridge", "main-switch-off")])]


@pytest.fixture
def dataset(home_dir, embedder, monkeypatch, tmp_path):
    rows = [{"id": f"q{n}", "query": q, "expected": [{"device_id": d, "command_id": c} for d, c in expected]}
            for n, (q, expected) in enumerate(QUERIES)]
    (home_dir / "queries.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                            encoding="utf-8")
    monkeypatch.setattr(tracerag.config, "make_embedder", lambda *a, **k: embedder)
    monkeypatch.chdir(tmp_path)
    return home_dir


@pytest.fixture
def response_cache():
    """DSPy's in-memory response cache on for one test (the suite runs with it off)."""
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=True)
    yield
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)


def evaluate(dataset, url: str, out: str, *extra: str) -> dict:
    assert optimize.main(["evaluate", "commands", "--dataset", str(dataset), "--split", "all", "--lm", "openai/stub",
                          "--api-base", url, "--api-key", "k", "--lm-timeout", "2", "--lm-retries", "0",
                          "--allow-no-lm", "--out", out, *extra]) == 0
    return json.loads(Path(out).read_text(encoding="utf-8"))


def test_no_cache_scores_the_endpoints_own_replies(dataset, response_cache):
    with StubLMServer(FakeEngine()) as good:
        assert evaluate(dataset, good.url, "good.json")["metrics"]["lm_fallback_rate"] == 0.0
    with StubLMServer(FakeEngine(), "http500") as dead:
        cached = evaluate(dataset, dead.url, "cached.json")
        assert cached["metrics"]["lm_fallback_rate"] == 0.0 and dead.requests == []  # what --no-cache prevents
        fresh = evaluate(dataset, dead.url, "fresh.json", "--no-cache")
    assert fresh["metrics"]["lm_fallback_rate"] == 1.0 and len(dead.requests) == len(QUERIES)
