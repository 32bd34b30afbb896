"""--num-threads: evaluations on several threads give the rows a sequential run gives, in the same order,
with the caller's DSPy settings (LM, adapter, context) in every thread."""

import json

import dspy
import pytest
from conftest import FakeEngine

import optimize
import tracerag
from tracerag.commands.command_retrieval import CommandRetrieval, build_indexes
from tracerag.commands.evaluation import evaluate_commands
from tracerag.datasets.smarthome import LabelledQuery, Target
from tracerag.evaluation import run_examples

TIMINGS = ("ms",)
IRS = {"打开客厅的灯": {"action": "打开", "type_hint": "Light", "scope_include": ["客厅"]},
       "关掉所有的灯": {"action": "关闭", "type_hint": "Light", "quantifier": "all"},
       "关闭冰箱插座": {"action": "关闭", "type_hint": "SmartPlug"},
       "主卧空调调到制冷": {"action": "调到制冷模式", "type_hint": "AirConditioner", "scope_include": ["主卧"]}}
EXPECTED = {"打开客厅的灯": [("light-living-1", "main-switch-on"), ("light-living-2", "main-switch-on")],
            "关掉所有的灯": [(d, "main-switch-off") for d in ("light-living-1", "light-living-2", "light-bed",
                                                              "lamp-study")],
            "关闭冰箱插座": [("plug-fridge", "main-switch-off")],
            "主卧空调调到制冷": [("ac-bed", "main-airConditionerMode-setAirConditionerMode")]}


def _rows(report: dict) -> list[dict]:
    return [{k: v for k, v in row.items() if k not in TIMINGS} for row in report["per_query"]]


def test_commands_rows_on_four_threads_equal_the_sequential_rows(home_dir, embedder):
    queries = [LabelledQuery(f"q{n}", home_dir.name, q, tuple(Target(d, (c,)) for d, c in EXPECTED[q]),
                             ir=IRS[q]) for n, q in enumerate(list(IRS) * 5)]
    program = CommandRetrieval(build_indexes([home_dir], embedder), ir_source="lm")
    lm = dspy.LM("fake/model", engine=FakeEngine(irs=IRS), cache=False, num_retries=0)
    # the LM is set for this block only (a thread-local override): every worker thread must see it
    with dspy.context(lm=lm, adapter=dspy.ChatAdapter(use_json_adapter_fallback=False)):
        one = evaluate_commands(program, {home_dir: queries}, dataset="tiny", progress=False)
        four = evaluate_commands(program, {home_dir: queries}, dataset="tiny", progress=False, num_threads=4)
    assert [r["id"] for r in four["per_query"]] == [q.id for q in queries]
    assert {r["parse_source"] for r in four["per_query"]} == {"lm"}
    assert _rows(four) == _rows(one)
    drop = ("latency_ms_p50", "latency_ms_p95")
    assert {k: v for k, v in four["metrics"].items() if k not in drop} == \
        {k: v for k, v in one["metrics"].items() if k not in drop}
    assert four["metrics"]["recall@10"] == 1.0


def test_rag_evaluation_through_the_cli_on_four_threads(tmp_path, embedder, cli_lm, monkeypatch):
    monkeypatch.setattr(tracerag.config, "make_embedder", lambda *a, **k: embedder)
    monkeypatch.setenv("TRACERAG_CACHE_DIR", str(tmp_path / "cache"))
    cli_lm(FakeEngine)
    docs = {"11": "Statins lower LDL cholesterol in adults with diabetes. Cardiovascular events fell.",
            "22": "Aspirin before colonoscopy does not raise bleeding risk. Bleeding rates were similar.",
            "33": "Telephone counselling increased mammography screening among women.",
            "44": "Vitamin D supplements did not prevent fractures in older adults."}
    questions = [("11", "Do statins lower cholesterol in diabetes?", "yes"),
                 ("22", "Does aspirin raise bleeding risk at colonoscopy?", "no"),
                 ("33", "Does telephone counselling increase mammography screening?", "yes"),
                 ("44", "Do vitamin D supplements prevent fractures?", "no")]
    questions += [(f"{p}b", f"{q[:-1]} in practice?", d) for p, q, d in questions]
    docs |= {f"{k}b": f"In practice: {v}" for k, v in docs.items()}  # every question's pmid is in the corpus
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in docs.items()))
    (tmp_path / "q.jsonl").write_text("".join(json.dumps({"pmid": p, "question": q, "final_decision": d,
                                                          "long_answer": ""}) + "\n" for p, q, d in questions))
    bank = str(tmp_path / "bank")
    assert optimize.main(["ingest", "--docs", str(tmp_path / "docs.jsonl"), "--bank", bank]) == 0
    reports = {}
    for n in (1, 4):
        out = tmp_path / f"r{n}.json"
        assert optimize.main(["evaluate", "rag", "--dataset", str(tmp_path / "q.jsonl"), "--bank", bank, "--split",
                              "all", "--lm", "fake/x", "--k", "4", "--num-threads", str(n), "--out", str(out)]) == 0
        reports[n] = json.loads(out.read_text(encoding="utf-8"))
    assert [r["id"] for r in reports[4]["per_query"]] == [p for p, _, _ in questions]
    assert all(r["lm_calls_observed"] > 0 for r in reports[4]["per_query"])  # each thread counted its own calls
    assert _rows(reports[4]) == _rows(reports[1])


def test_the_first_failure_in_order_is_raised():
    def score(item):
        if item in (2, 5):
            raise KeyError(f"item {item}")
        return {"item": item}

    assert run_examples(score, [0, 1, 3], num_threads=3, desc="t", unit="x",
                        progress=False) == [{"item": 0}, {"item": 1}, {"item": 3}]
    with pytest.raises(KeyError, match="item 2"):
        run_examples(score, list(range(6)), num_threads=1, desc="t", unit="x", progress=False)
    with pytest.raises(KeyError, match="item 2"):
        run_examples(score, list(range(6)), num_threads=3, desc="t", unit="x", progress=False)


def test_num_threads_must_be_positive(capsys):
    with pytest.raises(SystemExit):
        optimize.main(["evaluate", "commands", "--dataset", "smarthome", "--num-threads", "0"])
    assert "must be at least 1" in capsys.readouterr().err
