"""compile against a real OpenAI-compatible endpoint on 127.0.0.1 whose answers to the optimizer's own
calls (MIPROv2's proposals, GEPA's reflection) stall or fail while the program's stages are answered:
each call is bounded by the policy's timeout even for a user's ``dspy.LM`` without one, the failures are
counted in the scores, and an optimizer that stops on them leaves the no-LM result (the labelled demos)
instead of an exception."""

import json
import time
from pathlib import Path

import dspy
import pytest
import test_compile
from conftest import FakeEngine
from lm_server import StubLMServer
from test_compile import LM_IRS, QUERIES

import optimize
from tracerag.commands.command_retrieval import CommandRetrieval, build_indexes
from tracerag.commands.compiling import compile_commands
from tracerag.datasets.smarthome import home_dirs
from tracerag.signatures.query_ir import QueryIR

commands_dataset = test_compile.commands_dataset  # the tiny labelled home compile's own tests use
STALL = 15.0  # seconds the endpoint holds an optimizer call: a call it answers was not cut at the policy's 0.3 s


def _program(dataset, embedder) -> CommandRetrieval:
    return CommandRetrieval(build_indexes(home_dirs(dataset), embedder), ir_source="lm")


def test_mipro_whose_proposals_stall_keeps_the_labelled_demos_within_the_policy_timeout(
        commands_dataset, embedder, lm_timeout):
    lm_timeout(0.3)
    with StubLMServer(FakeEngine(irs=LM_IRS), modes={"other": "slow"}, delay=STALL) as stub:
        user_lm = stub.user_lm()  # as users build it: no timeout (the client's default is 600 s a read)
        dspy.configure(lm=user_lm)
        scores = compile_commands(_program(commands_dataset, embedder), str(commands_dataset), "mipro", max_train=6)
    own = scores["optimizer_lm"]  # before: about 20 proposal calls, each waiting the stall out
    assert own["fell_back"] and own["calls"] == own["failed"] == 3
    assert own["first_failure"].startswith("LMTransportError: no reply within 0.3 s")
    gold = {q: QueryIR.model_validate(ir).model_dump() for q, _, ir in QUERIES if ir}
    demos = scores["program"].parse.demos
    assert scores["demos"]["parse"] == len(demos) > 0
    assert all(demo["ir"] == gold[demo["utterance"]] and not demo.get("augmented") for demo in demos)
    assert scores["dev_parse_recall@10_after"] >= scores["dev_parse_recall@10_before"]
    assert "timeout" not in user_lm.kwargs and user_lm.callbacks == []  # the user's LM is left as it was
    assert not hasattr(user_lm, "optimizer_calls") and dspy.settings.callbacks == []


@pytest.mark.parametrize(("fault", "first_failure"), [
    ("slow", "LMTransportError: no reply within 0.3 s"),
    ("garbage", "AdapterParseError: the reply did not have the expected fields"),
    ("empty", "the reply was empty or null"),
])
def test_gepa_whose_reflection_fails_stops_after_the_breakers_count_of_failures(commands_dataset, embedder,
                                                                                  lm_timeout, fault, first_failure):
    """GEPA goes on without a failed reflection (its seed stays the best program); left alone it would pay
    a timeout per iteration for its whole budget (benchmarks/bench_compile_faults.py measures both). A
    reply that does not parse, or is empty, is a failed call too."""
    lm_timeout(0.3)
    program = _program(commands_dataset, embedder)
    seed = program.parse.signature.instructions
    with StubLMServer(FakeEngine(irs=LM_IRS), modes={"other": fault}, delay=STALL) as stub:
        dspy.configure(lm=stub.user_lm())
        scores = compile_commands(program, str(commands_dataset), "gepa", max_train=6, max_metric_calls=300)
        reflections = sum(name == "other" for name, _ in stub.requests)
    own = scores["optimizer_lm"]  # before: every reflection call waited out the stall, or GEPA ran its whole budget
    assert own["stopped_early"] and not own["fell_back"]
    assert own["calls"] == own["failed"] == reflections and 5 <= reflections <= 6  # GEPA retries a failed batch once
    assert own["first_failure"].startswith(first_failure)
    assert scores["program"].parse.signature.instructions == seed


def test_mipro_whose_proposals_do_not_parse_keeps_the_labelled_demos(commands_dataset, embedder):
    with StubLMServer(FakeEngine(irs=LM_IRS), modes={"other": "garbage"}) as stub:
        dspy.configure(lm=stub.user_lm())
        scores = compile_commands(_program(commands_dataset, embedder), str(commands_dataset), "mipro", max_train=6)
        asked = sum(name == "other" for name, _ in stub.requests)
    own = scores["optimizer_lm"]
    assert own["fell_back"] and own["calls"] == own["failed"] == asked > 0
    assert own["first_failure"] == "AdapterParseError: the reply did not have the expected fields"
    assert scores["demos"]["parse"] > 0


@pytest.mark.parametrize("optimizer", [pytest.param("mipro", marks=pytest.mark.slow), "gepa"])  # mipro: 6 s
def test_compile_from_the_cli_with_a_good_endpoint_counts_the_optimizer_calls(commands_dataset, optimizer):
    with StubLMServer(FakeEngine(irs=LM_IRS)) as stub:
        budget = ["--max-metric-calls", "60"] if optimizer == "gepa" else []
        assert optimize.main(["compile", "commands", "--dataset", str(commands_dataset), "--lm", "openai/stub",
                              "--api-base", stub.url, "--api-key", "k", "--optimizer", optimizer, *budget,
                              "--max-train", "6", "--out", "c.json"]) == 0
        asked = sum(name == "other" for name, _ in stub.requests)
    own = json.loads(Path("c.json.meta.json").read_text(encoding="utf-8"))["scores"]["optimizer_lm"]
    assert own == {"model": "openai/stub", "calls": asked, "failed": 0, "first_failure": None, "stopped_early": False,
                   "fell_back": False}
    assert asked > 0


def test_compile_from_the_cli_against_a_proposer_that_fails_writes_the_no_lm_result(commands_dataset, capsys,
                                                                                     caplog):
    with StubLMServer(FakeEngine(irs=LM_IRS), modes={"other": "http500"}) as stub:
        assert optimize.main(["compile", "commands", "--dataset", str(commands_dataset), "--lm", "openai/stub",
                              "--api-base", stub.url, "--api-key", "k", "--lm-retries", "0", "--optimizer",
                              "mipro", "--max-train", "6", "--out", "c.json"]) == 0  # before: LMServerError
    scores = json.loads(Path("c.json.meta.json").read_text(encoding="utf-8"))["scores"]
    assert scores["optimizer_lm"]["fell_back"] and scores["demos"]["parse"] > 0
    assert '"fell_back": true' in capsys.readouterr().out
    warnings = [r.getMessage() for r in caplog.records if r.name == "tracerag.lm.optimizer_calls"]
    assert warnings == ["compile: 3 of 3 mipro LM calls failed (first: LMServerError: [openai/stub] upstream "
                        "model crashed (after 0 retries; --lm-retries or TRACERAG_LM_RETRIES)); keeping the "
                        "no-LM result (the labelled demos)"]


def test_a_prompt_lm_proposes_while_the_configured_lm_runs_the_program(commands_dataset, embedder):
    """A stronger model proposing for a smaller one: every optimizer call goes to the prompt LM's endpoint
    and is counted there, and the program's own calls stay on the configured LM."""
    with StubLMServer(FakeEngine(irs=LM_IRS)) as task, StubLMServer(FakeEngine(irs=LM_IRS)) as proposer:
        dspy.configure(lm=task.user_lm())
        scores = compile_commands(_program(commands_dataset, embedder), str(commands_dataset), "mipro", max_train=6,
                                  prompt_lm=proposer.user_lm())
        task_asked = {name for name, _ in task.requests}
        proposed = [name for name, _ in proposer.requests]
    assert task_asked == {"ParseCommand"}
    assert proposed and set(proposed) == {"other"}
    assert scores["lm"] == "openai/stub-model"  # the two stubs' LMs share a name; the requests tell them apart
    assert scores["optimizer_lm"] == {"model": "openai/stub-model", "calls": len(proposed), "failed": 0,
                                      "first_failure": None, "stopped_early": False, "fell_back": False}


def test_a_prompt_lm_that_stalls_is_bounded_and_the_labelled_demos_stay(commands_dataset, embedder, lm_timeout):
    lm_timeout(0.3)
    with StubLMServer(FakeEngine(irs=LM_IRS)) as task, \
            StubLMServer(FakeEngine(irs=LM_IRS), mode="slow", delay=STALL) as proposer:
        dspy.configure(lm=task.user_lm())
        prompt_lm = proposer.user_lm()  # no timeout, as users build it
        scores = compile_commands(_program(commands_dataset, embedder), str(commands_dataset), "gepa", max_train=6,
                                  max_metric_calls=300, prompt_lm=prompt_lm)
    own = scores["optimizer_lm"]
    assert own["stopped_early"] and own["calls"] == own["failed"] == len(proposer.requests)
    assert own["first_failure"].startswith("LMTransportError: no reply within 0.3 s")
    assert "timeout" not in prompt_lm.kwargs and not hasattr(prompt_lm, "optimizer_calls")


def test_compile_from_the_cli_sends_the_optimizer_calls_to_the_prompt_lm(commands_dataset):
    with StubLMServer(FakeEngine(irs=LM_IRS)) as task, StubLMServer(FakeEngine(irs=LM_IRS)) as proposer:
        assert optimize.main(["compile", "commands", "--dataset", str(commands_dataset), "--lm", "openai/small",
                              "--api-base", task.url, "--api-key", "k", "--optimizer", "gepa",
                              "--max-metric-calls", "60", "--prompt-lm", "openai/large", "--prompt-api-base",
                              proposer.url, "--prompt-api-key", "k2", "--max-train", "6", "--out", "c.json"]) == 0
        task_asked = {name for name, _ in task.requests}
        proposed = [name for name, _ in proposer.requests]
    scores = json.loads(Path("c.json.meta.json").read_text(encoding="utf-8"))["scores"]
    assert task_asked == {"ParseCommand"} and proposed and set(proposed) == {"other"}
    assert (scores["lm"], scores["optimizer_lm"]["model"]) == ("openai/small", "openai/large")
    assert scores["optimizer_lm"]["calls"] == len(proposed) and scores["optimizer_lm"]["failed"] == 0


def test_compile_from_the_cli_refuses_a_prompt_lm_that_bootstrap_would_ignore(commands_dataset, capsys):
    assert optimize.main(["compile", "commands", "--dataset", str(commands_dataset), "--lm", "openai/small",
                          "--prompt-lm", "openai/large", "--out", "c.json"]) == 2
    assert capsys.readouterr().err == ("error: --prompt-lm (prompt_lm) is for mipro and gepa; bootstrap proposes no "
                                       "instructions\n")
    assert not Path("c.json").exists()


@pytest.mark.parametrize(("flags", "endpoint", "key"), [
    ([], "http://127.0.0.1:9/v1", "k"),  # a bigger model on the --lm endpoint
    (["--prompt-api-base", "https://api.example.com/v1"], "https://api.example.com/v1", None),  # provider's env key
    (["--prompt-api-base", "https://api.example.com/v1", "--prompt-api-key", "k2"], "https://api.example.com/v1", "k2"),
])
def test_the_prompt_lm_uses_the_lm_endpoint_unless_it_names_its_own(flags, endpoint, key, lm_timeout):
    """(``lm_timeout`` puts the policy back after ``--lm-timeout`` set it.)"""
    args = optimize.build_parser().parse_args(
        ["compile", "commands", "--dataset", "smarthome", "--lm", "openai/small", "--api-base", "http://127.0.0.1:9/v1",
         "--api-key", "k", "--lm-timeout", "7", "--optimizer", "gepa", "--prompt-lm", "openai/large", *flags,
         "--out", "c.json"])
    optimize._configure(args)
    prompt_lm = optimize._optimizer_options(args)["prompt_lm"]
    assert (prompt_lm.model, prompt_lm.kwargs.get("api_base"), prompt_lm.kwargs.get("api_key")) == (
        "openai/large", endpoint, key)
    assert prompt_lm.kwargs["timeout"] == 7  # bounded like --lm


@pytest.fixture
def fault_budget():
    """Set the process-wide LM fault budget for one test; the policy as it was afterwards."""
    from tracerag.lm.policy import policy, set_policy

    before = policy()
    yield lambda seconds: set_policy(fault_budget=seconds)
    set_policy(**before.__dict__)


@pytest.mark.slow  # 1-3 s: the compile itself
@pytest.mark.parametrize("optimizer", ["bootstrap", "gepa"])
def test_a_compile_whose_program_stage_stalls_spends_one_fault_budget(commands_dataset, embedder, lm_timeout,
                                                                      fault_budget, optimizer):
    """The program's parse calls stall (5 s a try): the compile is one run with one fault budget, so the
    first call is cut when its 0.5 s are gone and every later stage call takes the no-LM path at once;
    GEPA stops once it is spent. Before: each parse call of bootstrapping and scoring waited its timeout."""
    lm_timeout(5.0)
    fault_budget(0.5)
    with StubLMServer(FakeEngine(irs=LM_IRS), modes={"ParseCommand": "slow"}, delay=STALL) as stub:
        dspy.configure(lm=stub.lm(timeout=5.0))  # as the CLI builds it (a user's dspy.LM keeps its own timeout)
        started = time.perf_counter()
        scores = compile_commands(_program(commands_dataset, embedder), str(commands_dataset), optimizer, max_train=6,
                                  max_metric_calls=300 if optimizer == "gepa" else None)
        took = time.perf_counter() - started
        parses = sum(name == "ParseCommand" for name, _ in stub.requests)
    spent = scores["lm_fault_budget"]
    assert spent["spent"] and spent["failed_calls"] == 1 == parses and 0.4 < spent["charged_s"] < 2
    assert took < 5.0  # one cut call, the rest without the LM
    if optimizer == "gepa":
        assert scores["optimizer_lm"]["stopped_early"]
    else:
        assert scores["demos"]["parse"] > 0  # the labelled demos, as with no LM
