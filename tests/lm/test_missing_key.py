"""An LM that needs an API key and has none: the library names the variable to set in one line (and the
stage falls back); the CLI exits 2 with that line unless ``--allow-no-lm``, which runs the no-LM path. A
provider that takes no key (a local vLLM, Ollama) is never refused. Nothing here leaves 127.0.0.1: a
missing key is found before any request."""

import json
import os

import pytest
from conftest import FakeEngine
from lm_server import StubLMServer

import optimize
import tracerag
from tracerag.config import missing_key
from tracerag.lm.bounded_lm import make_lm
from tracerag.lm.failures import failure_line
from tracerag.rag.self_reflective_rag import SelfReflectiveRAG


@pytest.fixture
def no_keys(monkeypatch):
    for name in list(os.environ):
        if name.endswith("_API_KEY") or name.startswith("TRACERAG_"):
            monkeypatch.delenv(name)
    return monkeypatch


def test_which_variable_is_missing(no_keys):
    assert missing_key(make_lm("openai/gpt-4o-mini")) == ["TRACERAG_API_KEY", "OPENAI_API_KEY"]
    assert missing_key(make_lm("anthropic/claude-x")) == ["TRACERAG_API_KEY", "ANTHROPIC_API_KEY"]
    assert missing_key(make_lm("openai/gpt-4o-mini", api_key="k")) == []
    for model in ("hosted_vllm/qwen", "ollama_chat/qwen"):  # local servers take no key
        assert missing_key(make_lm(model, "http://127.0.0.1:9/v1")) == []
    no_keys.setenv("OPENAI_API_KEY", "from-env")
    assert missing_key(make_lm("openai/gpt-4o-mini")) == []


def test_the_stage_names_the_variable_and_the_key_from_the_environment_is_used(no_keys, retriever):
    with StubLMServer(FakeEngine()) as stub:
        tracerag.configure(lm=make_lm("openai/stub-model", stub.url, cache=False))
        pred = SelfReflectiveRAG(retriever)(question="Do statins lower cholesterol?")
        assert stub.requests == [] and pred.lm_fallbacks == ["grade"]
        assert pred.lm_errors == ["grade: LMNotConfiguredError: the LM has no API key: set TRACERAG_API_KEY or "
                                  "OPENAI_API_KEY (or --api-key)"]
        no_keys.setenv("OPENAI_API_KEY", "from-env")  # DSPy reads the provider's variable when none is given
        tracerag.configure(lm=make_lm("openai/stub-model", stub.url, cache=False))
        pred = SelfReflectiveRAG(retriever)(question="Do statins lower cholesterol?")
        assert stub.requests and pred.lm_fallbacks == []


def test_a_reply_over_the_cap_says_it_is_not_retried():
    from dspy.lm15 import CollectionLimitError

    line = failure_line(CollectionLimitError("the reply from x is larger than 8 bytes (decoded); not read further",
                                             limit="bytes", maximum=8))
    assert "not retried" in line and "after" not in line


BASE = ["evaluate", "planner", "--dataset", "planner", "--split", "test", "--lm", "openai/gpt-4o-mini"]


def test_the_cli_refuses_an_lm_without_a_key(no_keys, tmp_path, capsys):
    assert optimize.main([*BASE, "--out", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: the LM openai/gpt-4o-mini has no API key: set TRACERAG_API_KEY or OPENAI_API_KEY, or "
                   "pass --api-key (--allow-no-lm runs without the LM)"]
    assert not (tmp_path / "r.json").exists()


def test_allow_no_lm_runs_the_no_lm_path(no_keys, tmp_path, capsys):
    assert optimize.main([*BASE, "--allow-no-lm", "--out", str(tmp_path / "r.json")]) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if "API key" in line]
    assert err == ["warning: the LM openai/gpt-4o-mini has no API key: set TRACERAG_API_KEY or OPENAI_API_KEY, or "
                   "pass --api-key; running without the LM (--allow-no-lm)"]
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert all(row["lm_calls"] == 0 and row["lm_failed"] is False for row in report["per_query"])
