"""compile, per program, with the fake LM on a tiny train/dev: every demo of the artifact is well-formed for
its predictor's signature (CommandRetrieval's parse gets the gold parses as labelled demos, never a
wrong-polarity parse); the optimizer preflight fails in one line, exit 2, before any LM call."""

import json
from pathlib import Path

import dspy
import pytest
from conftest import FakeEngine, PlannerEngine, ToolResult

import optimize
import tracerag
from tracerag.commands.metrics import parse_recall_at_10, recall_at_10
from tracerag.compiling import demo_problem, gepa_minimum_metric_calls, preflight
from tracerag.datasets.smarthome import load_dataset, split_of
from tracerag.signatures.query_ir import QueryIR

PLUG = "关闭冰箱插座"
QUERIES = [  # (query, expected, gold IR or None)
    (PLUG, [("plug-fridge", "main-switch-off")], {"action": "关闭", "type_hint": "SmartPlug"}),
    ("打开客厅的灯", [("light-living-1", "main-switch-on"), ("light-living-2", "main-switch-on")],
     {"action": "打开", "type_hint": "Light", "scope_include": ["客厅"]}),
    ("主卧空调调到制冷", [("ac-bed", "main-airConditionerMode-setAirConditionerMode")],
     {"action": "调到制冷模式", "type_hint": "AirConditioner", "scope_include": ["主卧"]}),
    ("打开老伙计", [("lamp-study", "main-switch-on")], None),  # no gold IR: never a labelled parse demo
]
# the fake LM parses every query right except the plug, which it switches the wrong way
LM_IRS = {q: ir for q, _, ir in QUERIES if ir} | {PLUG: {"action": "打开", "type_hint": "SmartPlug"}}


def assert_demos_well_formed(program) -> dict[str, list]:
    """Every predictor's demos: all input and output fields present (not None) with values that validate."""
    demos = {}
    for name, predictor in program.named_predictors():
        for demo in predictor.demos:
            missing = [f for f in predictor.signature.fields if demo.get(f) is None]
            assert not missing, f"{name} demo without {missing}"
            assert demo_problem(demo, predictor.signature) is None
        demos[name] = list(predictor.demos)
    return demos


@pytest.fixture
def commands_dataset(home_dir, embedder, monkeypatch, tmp_path):
    """The tiny home with labelled queries; in each split the queries come in QUERIES' order (the plug first)."""
    rows, seen = [], {"train": 0, "dev": 0, "test": 0}
    for n in range(48):
        split = split_of(f"q{n}")
        query, expected, ir = QUERIES[seen[split] % len(QUERIES)]
        seen[split] += 1
        targets = [{"device_id": d, "command_id": c} for d, c in expected]
        rows.append({"id": f"q{n}", "query": query, "expected": targets, **({"ir": ir} if ir else {})})
    (home_dir / "queries.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                            encoding="utf-8")
    monkeypatch.setattr(tracerag.config, "make_embedder", lambda *a, **k: embedder)
    monkeypatch.chdir(tmp_path)
    return home_dir


def test_commands_compile_teaches_the_parse_with_gold_demos(commands_dataset, cli_lm, capsys):
    cli_lm(FakeEngine, irs=LM_IRS)
    assert optimize.main(["compile", "commands", "--dataset", str(commands_dataset), "--lm", "fake/model",
                          "--max-train", "10", "--out", "c.json"]) == 0
    out = capsys.readouterr().out
    scores = json.loads(Path("c.json.meta.json").read_text(encoding="utf-8"))["scores"]
    assert '"demos": {\n  "parse": ' in out and scores["demos"] == {"parse": 8, "arbitrate": 0}

    program = tracerag.load("c.json", home=commands_dataset, embedder=tracerag.config.make_embedder())
    demos = assert_demos_well_formed(program)
    assert demos["arbitrate"] == []  # no example is an arbitration demo: none reached the adapter
    gold = {q: QueryIR.model_validate(ir).model_dump() for q, _, ir in QUERIES if ir}
    rooms = program.index_for(None).home.rooms
    traced = [d for d in demos["parse"] if d.get("augmented")]
    labelled = [d for d in demos["parse"] if not d.get("augmented")]
    assert len(traced) == 4 and len(labelled) == 4
    for demo in labelled:  # gold parses, as ParseCommand sees them
        assert set(demo.keys()) == {"utterance", "rooms", "ir"} and demo["rooms"] == rooms
        assert demo["ir"] == gold[demo["utterance"]]
    # the LM's wrong-polarity parse of the plug was tried first and never kept
    assert all(d["utterance"] != PLUG or d["ir"]["action"] == "关闭" for d in demos["parse"])


def test_the_parse_metric_rejects_the_trace_recall_alone_keeps(commands_dataset, fake_lm, embedder):
    from tracerag.commands.command_retrieval import CommandRetrieval, build_indexes
    from tracerag.commands.compiling import command_examples

    fake_lm(irs=LM_IRS)
    program = CommandRetrieval(build_indexes([commands_dataset], embedder))
    example = next(ex for ex in command_examples(program, commands_dataset, "train") if ex.query == PLUG)
    pred = program(**example.inputs())
    # the program overrules the reading ("关闭" is said), but the metric judges the LM's own parse
    assert pred.lm_parse.action == "打开" and pred.lm_overruled == ["polarity"] and pred.ir.action != "打开"
    assert recall_at_10(example, pred, trace=[]) is True
    assert parse_recall_at_10(example, pred, trace=[]) is False and parse_recall_at_10(example, pred) == 0.0


# -- the other programs: their examples are no predictor's demo, so only traced demos ------------------


def _assert_only_traced(program):
    demos = assert_demos_well_formed(program)
    assert any(demos.values()) and all(d.get("augmented") for ds in demos.values() for d in ds)


def test_experience_compile_keeps_only_well_formed_traced_demos(traces_dir, embedder, cli_lm, monkeypatch, tmp_path):
    monkeypatch.setattr(tracerag.config, "make_embedder", lambda *a, **k: embedder)
    rows = [{"id": f"t{n}", "question": q, "family": fam, "relevant_task_ids": [f"{fam}-{i:04d}" for i in range(1, 5)]}
            for n, (fam, q) in enumerate([("receipt", "What was the total on my lunch receipt with tax?"),
                                          ("timezone", "If it is 8am in Denver, what time is it in Seoul?"),
                                          ("plant", "Can my dog eat the leaves of this plant?")] * 5)]
    (traces_dir / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    cli_lm(FakeEngine, sufficiency=[True])
    out = tmp_path / "exp.json"
    assert optimize.main(["compile", "experience", "--dataset", str(traces_dir), "--lm", "fake/x", "--max-train", "3",
                          "--out", str(out)]) == 0
    _assert_only_traced(tracerag.load(out))


def test_rag_compile_keeps_only_well_formed_traced_demos(embedder, cli_lm, monkeypatch, tmp_path):
    monkeypatch.setattr(tracerag.config, "make_embedder", lambda *a, **k: embedder)
    monkeypatch.setenv("TRACERAG_CACHE_DIR", str(tmp_path / "cache"))
    docs = {"11": "Statins lower LDL cholesterol in adults with diabetes. Cardiovascular events fell.",
            "22": "Aspirin before colonoscopy does not raise bleeding risk. Bleeding rates were similar."}
    questions = [(f"{p}{n}", q, d) for n in range(4) for p, q, d in
                 [("11", "Do statins lower cholesterol in diabetes?", "yes"),
                  ("22", "Does aspirin raise bleeding risk at colonoscopy?", "no")]]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in docs.items()))
    (tmp_path / "q.jsonl").write_text("".join(json.dumps({"pmid": p, "question": q, "final_decision": d,
                                                          "long_answer": ""}) + "\n" for p, q, d in questions))
    bank = str(tmp_path / "bank")
    assert optimize.main(["ingest", "--docs", str(tmp_path / "docs.jsonl"), "--bank", bank]) == 0
    cli_lm(FakeEngine)
    out = tmp_path / "rag.json"
    assert optimize.main(["compile", "rag", "--dataset", str(tmp_path / "q.jsonl"), "--bank", bank, "--lm", "fake/x",
                          "--max-train", "2", "--out", str(out)]) == 0
    _assert_only_traced(tracerag.load(out, store=bank))


def test_planner_compile_keeps_only_the_demos_its_signature_can_use(cli_lm, tmp_path):
    """The planner's examples are no demo and its fake plans never pass the bootstrap bar, so start GEPA from
    an artifact holding one good demo and two bad ones: only the good one survives the compile."""
    from tracerag.datasets.planner import load_planner_cases
    from tracerag.planner.traceable_planner import TraceablePlanner

    good = {"requirements": "Amplify a fragment.", "bullets": "[b-1] helpful=1 harmful=0 :: keep the mix cold",
            "templates": "", "plan": {"objective": "Amplify it.", "steps": [{"text": "Thaw [b-1].", "cites": ["b-1"]}]},
            "bullets_used": ["b-1"], "templates_used": []}
    program = TraceablePlanner()
    program.generate.demos = [dspy.Example(**good),
                              dspy.Example(**{**good, "plan": {"objective": "no steps", "steps": []}}),  # invalid Plan
                              dspy.Example(requirements="Amplify a fragment.", bullets="")]  # no outputs
    tracerag.save(program, tmp_path / "start.json", dataset="planner", metric="planner_score")
    cli_lm(PlannerEngine, invent=False)
    out = tmp_path / "planner.json"
    budget = gepa_minimum_metric_calls(len(load_planner_cases("planner", "dev")))
    assert optimize.main(["compile", "planner", "--dataset", "planner", "--lm", "fake/x", "--program-file",
                          str(tmp_path / "start.json"), "--optimizer", "gepa", "--max-metric-calls", str(budget),
                          "--max-train", "3", "--out", str(out)]) == 0
    demos = assert_demos_well_formed(tracerag.load(out))
    assert [d["requirements"] for d in demos["generate"]] == [good["requirements"]]


class _Tools:
    """One abstract for every search, in process."""

    def schemas(self):
        return {"pubmed_search": {"limit": int, "offset": int}}

    def call(self, call):
        return ToolResult(call.name, [{"id": "111", "title": "Aspirin and stroke", "text": "Aspirin lowered risk."}])


def test_agent_compile_keeps_only_well_formed_traced_demos(agent_lm, tmp_path):
    from tracerag.agent.compiling import compile_agent
    from tracerag.agent.search_agent import SearchAgent
    from tracerag.datasets.pubmedqa import load_pubmedqa_questions

    agent_lm()
    train, dev = ([q.to_example() for q in load_pubmedqa_questions("pubmedqa", split)[:n]]
                  for split, n in (("train", 3), ("dev", 2)))
    scores = compile_agent(SearchAgent(_Tools()), train, dev, "bootstrap")
    assert scores["demos"] == {"policy": len(scores["program"].policy.demos)} and scores["demos"]["policy"] > 0
    tracerag.save(scores.pop("program"), tmp_path / "agent.json", dataset="pubmedqa", metric="agent_score",
                  scores=scores)
    _assert_only_traced(tracerag.load(tmp_path / "agent.json", tools=_Tools()))


# -- preflight -------------------------------------------------------------------------------------


def _one_error_line(capsys) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


def test_mipro_without_optuna_fails_in_one_line_before_any_lm_call(commands_dataset, cli_lm, monkeypatch, capsys):
    monkeypatch.setitem(__import__("sys").modules, "optuna", None)  # as if optuna were not installed
    engines = cli_lm(FakeEngine, irs=LM_IRS)
    assert optimize.main(["compile", "commands", "--dataset", str(commands_dataset), "--lm", "fake/model",
                          "--optimizer", "mipro", "--out", "m.json"]) == 2
    assert 'pip install "tracerag[mipro]"' in _one_error_line(capsys)
    assert not any(e.calls for e in engines) and not Path("m.json").exists()


def test_a_gepa_budget_below_one_iteration_fails_in_one_line_before_any_lm_call(commands_dataset, cli_lm, capsys):
    engines = cli_lm(FakeEngine, irs=LM_IRS)
    dev = sum(len(qs) for qs in load_dataset(commands_dataset, "dev").values())
    need = gepa_minimum_metric_calls(dev)
    assert need == 2 * dev + 2 * 3
    assert optimize.main(["compile", "commands", "--dataset", str(commands_dataset), "--lm", "fake/model",
                          "--optimizer", "gepa", "--max-metric-calls", str(need - 1), "--out", "g.json"]) == 2
    assert f"use at least {need}" in _one_error_line(capsys)
    assert not any(e.calls for e in engines) and not Path("g.json").exists()


def test_preflight_lets_a_runnable_optimizer_through():
    preflight("bootstrap")
    preflight("gepa", list(range(10)), gepa_minimum_metric_calls(10))
    preflight("gepa", list(range(10)), None)  # GEPA's own light preset
    with pytest.raises(ValueError, match="unknown optimizer"):
        preflight("sgd")


def test_a_compile_whose_lm_never_answered_fails_and_writes_nothing(commands_dataset, cli_lm, capsys):
    """A dead endpoint used to give a zero exit and an artifact whose demos all came from the no-LM parser."""
    cli_lm(FakeEngine, mode="error")
    base = ["compile", "commands", "--dataset", str(commands_dataset), "--lm", "fake/model", "--max-train", "10"]
    assert optimize.main([*base, "--out", "c.json"]) == 1
    err = capsys.readouterr().err
    assert "error: the LM (fake/model) never answered:" in err and "nothing written to c.json" in err
    assert not Path("c.json").exists() and not Path("c.json.meta.json").exists()
    assert optimize.main([*base, "--allow-no-lm", "--out", "c.json"]) == 0  # accepted when asked for
    assert json.loads(Path("c.json.meta.json").read_text(encoding="utf-8"))["scores"]["lm_answered_calls"] == 0


def test_a_compile_records_how_many_lm_calls_answered(commands_dataset, cli_lm):
    cli_lm(FakeEngine, irs=LM_IRS)
    assert optimize.main(["compile", "commands", "--dataset", str(commands_dataset), "--lm", "fake/model",
                          "--max-train", "10", "--out", "c.json"]) == 0
    assert json.loads(Path("c.json.meta.json").read_text(encoding="utf-8"))["scores"]["lm_answered_calls"] > 0
