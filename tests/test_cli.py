"""The command line, end to end, on a small labelled home (and the bundled dataset where it matters)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import optimize
import tracerag
from tracerag.datasets.smarthome import split_of

QUERIES = [
    ("打开客厅的灯", [("light-living-1", "main-switch-on"), ("light-living-2", "main-switch-on")], "one",
     {"action": "打开", "type_hint": "Light", "scope_include": ["客厅"], "quantifier": "one"}),
    ("关掉所有的灯", [(d, "main-switch-off") for d in ("light-living-1", "light-living-2", "light-bed", "lamp-study")],
     "all", {"action": "关闭", "type_hint": "Light", "quantifier": "all"}),
    ("打开老伙计", [("lamp-study", "main-switch-on")], "one", {"action": "打开", "name_hint": "老伙计"}),
    ("主卧空调调到制冷", [("ac-bed", "main-airConditionerMode-setAirConditionerMode")], "one",
     {"action": "调到制冷模式", "type_hint": "AirConditioner", "scope_include": ["主卧"]}),
    ("把灯光调到50%", [(d, "main-switchLevel-setLevel") for d in ("light-living-1", "light-living-2", "light-bed",
                                                                 "lamp-study")], "all",
     {"action": "调到", "type_hint": "Light", "quantifier": "all"}),
    ("关闭冰箱插座", [("plug-fridge", "main-switch-off")], "one", {"action": "关闭", "type_hint": "SmartPlug"}),
]


@pytest.fixture
def dataset(home_dir, embedder, monkeypatch, tmp_path):
    # every query in every split, so the tiny set exercises train, dev and test
    rows = []
    for n, (query, expected, quantifier, ir) in enumerate(QUERIES * 6):
        rows.append({"id": f"q{n}", "query": query, "quantifier": quantifier, "ir": ir,
                     "expected": [{"device_id": d, "command_id": c} for d, c in expected]})
    assert {split_of(r["id"]) for r in rows} == {"train", "dev", "test"}
    (home_dir / "queries.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                            encoding="utf-8")
    monkeypatch.setattr(tracerag.config, "make_embedder", lambda *a, **k: embedder)
    monkeypatch.chdir(tmp_path)
    return home_dir


def test_evaluate_without_lm_writes_a_report(dataset, capsys):
    assert optimize.main(["evaluate", "commands", "--dataset", str(dataset), "--ir", "none", "--split", "all",
                          "--out", "report.json"]) == 0
    report = json.loads(Path("report.json").read_text(encoding="utf-8"))
    assert report["program"] == "CommandRetrieval" and report["n"] == len(QUERIES) * 6
    assert set(report["metrics"]) >= {"recall@10", "hit@10", "mrr", "bulk_precision"}
    assert report["metrics"]["recall@10"] >= 0.8
    assert {"home", "quantifier", "category"} <= set(report["breakdown"])
    first = report["per_query"][0]
    assert {"id", "query", "recall", "expected", "returned", "ir"} <= set(first)
    out = capsys.readouterr().out
    assert "recall@10" in out and "quantifier=all" in out


def test_a_report_that_cannot_be_written_is_one_line_and_the_old_one_stays(dataset, capsys, monkeypatch):
    Path("report.json").write_text('{"old": true}', encoding="utf-8")

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("tracerag.data_files.durable.os.fsync", full)
    assert optimize.main(["evaluate", "commands", "--dataset", str(dataset), "--ir", "none", "--split", "all",
                          "--out", "report.json"]) == 2
    err = capsys.readouterr().err
    assert "report.json: not written (disk full); the previous version is intact" in err and "Traceback" not in err
    assert json.loads(Path("report.json").read_text(encoding="utf-8")) == {"old": True}


def test_evaluate_with_gold_ir(dataset):
    assert optimize.main(["evaluate", "commands", "--dataset", str(dataset), "--ir", "gold", "--split", "all",
                          "--out", "gold.json"]) == 0
    report = json.loads(Path("gold.json").read_text(encoding="utf-8"))
    assert report["metrics"]["recall@10"] == 1.0 and report["metrics"]["bulk_precision"] == 1.0


def test_evaluate_lm_without_lm_is_a_clear_error(dataset, capsys, monkeypatch):
    monkeypatch.delenv("TRACERAG_LM", raising=False)
    assert optimize.main(["evaluate", "commands", "--dataset", str(dataset), "--ir", "lm"]) == 2
    assert "needs an LM" in capsys.readouterr().err


def test_unknown_dataset_is_a_clear_error(capsys):
    assert optimize.main(["evaluate", "commands", "--dataset", "no-such-thing"]) == 2
    assert "neither a directory nor a bundled dataset" in capsys.readouterr().err


def test_run_prints_candidates(dataset, capsys):
    assert optimize.main(["run", "commands", "--dataset", str(dataset), "--query", "打开老伙计"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["candidates"][0]["device_id"] == "lamp-study" and out["parse_source"] == "rules"


def test_tune_then_load_in_an_app(dataset, capsys):
    assert optimize.main(["tune", "commands", "--dataset", str(dataset), "--trials", "3", "--out", "t.json"]) == 0
    meta = json.loads(Path("t.json.meta.json").read_text(encoding="utf-8"))
    assert meta["program"] == "CommandRetrieval" and "w_room" in meta["index_params"]
    program = tracerag.load("t.json", home=dataset, embedder=tracerag.config.make_embedder())
    assert next(iter(program.indexes.values())).params.w_room == meta["index_params"]["w_room"]
    assert program(query="打开老伙计").candidates[0].device_id == "lamp-study"


def test_load_refuses_another_embedder(dataset):
    from tracerag.embedding.embedders import LexicalEmbedder

    assert optimize.main(["tune", "commands", "--dataset", str(dataset), "--trials", "1", "--out", "t.json"]) == 0
    with pytest.raises(ValueError, match="cannot be mixed"):
        tracerag.load("t.json", home=dataset, embedder=LexicalEmbedder())


def test_compile_with_bootstrap_and_the_fake_lm(dataset, fake_lm, monkeypatch, capsys):
    from conftest import FakeEngine

    irs = {q: ir for q, _, _, ir in QUERIES}
    monkeypatch.setattr(tracerag.config, "make_lm", lambda *a, **k: __import__("dspy").LM(
        "fake/model", engine=FakeEngine(irs=irs), cache=False, num_retries=0))
    assert optimize.main(["compile", "commands", "--dataset", str(dataset), "--lm", "fake/model",
                          "--optimizer", "bootstrap", "--out", "c.json"]) == 0
    state = json.loads(Path("c.json").read_text(encoding="utf-8"))
    demos = state["parse"]["demos"]  # four from the program's own traces, then four gold parses
    assert len(demos) == 8 and all(d.get("augmented") for d in demos[:4])
    assert all(not d.get("augmented") and set(d) == {"utterance", "rooms", "ir"} for d in demos[4:])
    assert state["arbitrate"]["demos"] == []  # no example is an arbitration demo
    program = tracerag.load("c.json", home=dataset, embedder=tracerag.config.make_embedder())
    assert program.parse.demos
    scores = json.loads(Path("c.json.meta.json").read_text(encoding="utf-8"))["scores"]
    assert scores["dev_parse_recall@10_after"] >= scores["dev_parse_recall@10_before"]
    assert scores["demos"] == {"parse": 8, "arbitrate": 0}
    assert scores["demos_from_lm"] == {"parse": 4, "arbitrate": 0}  # the four the LM wrote, marked in the file


def test_console_script_on_the_bundled_dataset(tmp_path):
    """The README's main command, in a subprocess, on the bundled data."""
    env = {**os.environ, "TRACERAG_CACHE_DIR": str(tmp_path)}
    env.pop("TRACERAG_LM", None)
    result = subprocess.run([sys.executable, "optimize.py", "evaluate", "commands", "--dataset",
                             "smarthome/home_small", "--split", "test", "--out", str(tmp_path / "r.json")],
                            cwd=Path(__file__).parents[1], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["metrics"]["recall@10"] > 0.8


def test_compile_with_gepa_and_the_fake_lm(dataset, monkeypatch):
    from conftest import FakeEngine

    engines = []

    def make_lm(*args, **kwargs):
        # a parse that gates to the wrong category keeps recall below 1: GEPA has something to reflect on
        engines.append(FakeEngine(irs={q: {**ir, "type_hint": "SmartPlug"} for q, _, _, ir in QUERIES}))
        return __import__("dspy").LM("fake/model", engine=engines[-1], cache=False, num_retries=0)

    monkeypatch.setattr(tracerag.config, "make_lm", make_lm)
    assert optimize.main(["compile", "commands", "--dataset", str(dataset), "--lm", "fake/model",
                          "--optimizer", "gepa", "--max-metric-calls", "40", "--out", "g.json"]) == 0
    assert "other" in engines[0].calls  # the reflection LM proposed an instruction
    program = tracerag.load("g.json", home=dataset, embedder=tracerag.config.make_embedder())
    assert program.parse.signature.instructions


def test_compile_with_mipro_and_the_fake_lm(dataset, monkeypatch):
    pytest.importorskip("optuna")
    from conftest import FakeEngine

    irs = {q: ir for q, _, _, ir in QUERIES}
    monkeypatch.setattr(tracerag.config, "make_lm", lambda *a, **k: __import__("dspy").LM(
        "fake/model", engine=FakeEngine(irs=irs), cache=False, num_retries=0))
    assert optimize.main(["compile", "commands", "--dataset", str(dataset), "--lm", "fake/model",
                          "--optimizer", "mipro", "--out", "m.json"]) == 0
    scores = json.loads(Path("m.json.meta.json").read_text(encoding="utf-8"))["scores"]
    assert scores["optimizer"] == "mipro"
    assert scores["dev_parse_recall@10_after"] >= scores["dev_parse_recall@10_before"]
    assert tracerag.load("m.json", home=dataset, embedder=tracerag.config.make_embedder()).parse.signature.instructions


def test_evaluate_against_a_dead_endpoint_reports_the_no_lm_metrics_and_the_fallbacks(dataset, capsys, caplog):
    """Through the CLI's own LM flags, to a real HTTP endpoint on 127.0.0.1 that answers 500."""
    from conftest import FakeEngine
    from lm_server import StubLMServer

    base = ["evaluate", "commands", "--dataset", str(dataset), "--split", "all"]
    assert optimize.main([*base, "--ir", "none", "--out", "none.json"]) == 0
    with StubLMServer(FakeEngine(), "http500") as stub:
        assert optimize.main([*base, "--lm", "openai/stub", "--api-base", stub.url, "--api-key", "k",
                              "--lm-timeout", "30", "--lm-retries", "0", "--out", "dead.json"]) == 1
    none, dead = (json.loads(Path(f"{name}.json").read_text(encoding="utf-8")) for name in ("none", "dead"))
    assert dead["lm_never_answered"] and "lm_never_answered" not in none  # written, and marked
    for key in ("recall@10", "hit@10", "mrr", "bulk_precision", "clarification_rate"):
        assert dead["metrics"][key] == none["metrics"][key], key
    n = dead["n"]
    assert dead["ir"] == "lm" and dead["metrics"]["lm_fallback_rate"] == 1.0
    assert dead["metrics"]["lm_fallbacks"] == {"parse": n} and none["metrics"]["lm_fallback_rate"] == 0.0
    assert len(stub.requests) == 5  # then the breaker skips the dead endpoint
    printed = capsys.readouterr()
    assert f"{n} of {n} fell back to the no-LM path (parse {n})" in printed.out
    assert "error: the LM (openai/stub) never answered: 5 calls failed" in printed.err
    assert "LM stage parse failed 4 more times" in printed.err  # the repeats, counted once at the end
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 2 and all("\n" not in w for w in warnings)  # the first failure, the breaker
    assert "--lm-retries" in warnings[0]


def test_evaluate_prints_what_reading_the_queries_did_and_fails_in_one_line_when_lines_were_skipped(dataset, capsys):
    path = dataset / "queries.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes() + b'{"id": "broken", "query": \n')
    args = ["evaluate", "commands", "--dataset", str(dataset), "--ir", "none", "--split", "all"]
    assert optimize.main(args) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    n = len(QUERIES) * 6 + 1
    assert f"read {n} queries, kept {n - 1}; normalised: BOM stripped 1; skipped: not JSON 1" in err
    assert len(lines) == 1 and f"1 of {n} queries skipped" in lines[0] and f"{path}:{n}: invalid JSON" in lines[0]
    assert optimize.main([*args, "--max-skipped", "5%"]) == 0
    assert "recall@10" in capsys.readouterr().out


def test_evaluate_fails_when_no_query_is_usable(dataset, capsys):
    (dataset / "queries.jsonl").write_text("", encoding="utf-8")
    assert optimize.main(["evaluate", "commands", "--dataset", str(dataset), "--ir", "none", "--split", "all",
                          "--max-skipped", "1"]) == 2
    assert "error: " in capsys.readouterr().err
    (dataset / "queries.jsonl").write_text("null\n[]\n", encoding="utf-8")
    assert optimize.main(["evaluate", "commands", "--dataset", str(dataset), "--ir", "none", "--split", "all",
                          "--max-skipped", "1"]) == 2
    assert "none of the 2 queries read is usable" in capsys.readouterr().err


def test_build_prints_the_homes_read_report(dataset, capsys):
    path = dataset / "devices.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["items"][0]["components"][0]["categories"] = "Light"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    assert optimize.main(["build", "commands", "--dataset", str(dataset)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out.splitlines()[0])["devices"] == 10
    assert "read 10 devices, kept 10; normalised: devices.json: category as a string 1" in captured.err
