"""The HTML report: a static page that escapes every string it did not write, loads nothing, and puts the
rows that missed first."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import pytest

import optimize
import tracerag
from tracerag.report_html import misses_first, recall_curve, render_html_report

HOSTILE = '<script>alert("x")</script><img src=https://example.org/p.png onerror=alert(1)>'


def _report(rows: list[dict]) -> dict:
    return {"program": "commands", "dataset": "my<home>", "k": 10, "n": len(rows), "split": "test",
            "metrics": {"recall@10": 0.5, "mrr": 0.4, "n": len(rows), "lm_fallbacks": {"parse": 1}},
            "breakdown": {"home": {"a&b": {"recall@10": 0.25, "mrr": 0.2, "n": 2}}},
            "per_query": rows}


def test_every_user_string_is_escaped_and_the_page_loads_nothing():
    page = render_html_report(_report([{"id": "q1", "query": HOSTILE, "recall": 0.0, "hint": "<b>",
                                        "expected": [{"device_id": "</pre><script>"}]}]))
    assert "<script" not in page and "<img" not in page and "<b>" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "my&lt;home&gt;" in page and "a&amp;b" in page
    assert "&lt;/pre&gt;&lt;script&gt;" in page                       # the row's other fields, under details
    assert "default-src 'none'" in page                               # a Content-Security-Policy: no fetch at all
    tags = _tags(page)
    assert {name for name, _ in tags} <= {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "table",
                                          "tr", "th", "td", "span", "details", "summary", "pre"}
    assert not [attrs for _, attrs in tags if {"src", "href"} & set(attrs)]


def _tags(page: str) -> list[tuple[str, dict]]:
    """Every element the browser would build, with its attributes."""
    found = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, dict(attrs)))

    Tags().feed(page)
    return found


def test_misses_come_first_worst_first_then_the_datasets_order():
    rows = [{"id": "a", "recall": 1.0}, {"id": "b", "recall": 0.5}, {"id": "c", "recall": 1.0},
            {"id": "d", "recall": 0.0}, {"id": "e", "recall": None}]
    ordered, misses, headline = misses_first(rows)
    assert [row["id"] for row in ordered] == ["d", "b", "a", "c", "e"]
    assert (misses, headline) == (2, "recall")
    page = render_html_report(_report(rows))
    assert page.index(">d<") < page.index(">b<") < page.index(">a<") < page.index(">c<")
    assert "2 of 5 rows missed (recall below 1)" in page


def test_a_run_without_a_miss_says_so():
    page = render_html_report(_report([{"id": "a", "recall": 1.0}, {"id": "b", "recall": 1.0}]))
    assert "No row of 2 missed (recall is 1 for each)." in page


@pytest.mark.parametrize("score", ["score", "gold_found"])
def test_planner_and_agent_rows_are_ordered_by_their_own_score(score):
    ordered, misses, headline = misses_first([{"id": "a", score: 1.0}, {"id": "b", score: 0.0}])
    assert [row["id"] for row in ordered] == ["b", "a"] and (misses, headline) == (1, score)


def test_the_recall_curve_reads_rankings_and_leaves_bulk_plans_out():
    rows = [{"bulk": False, "expected": [{"device_id": "d1", "command_id": ["on", "toggle"]}],
             "returned": [["d2", "on"], ["d1", "toggle"], ["d1", "on"]]},
            {"bulk": False, "expected": [{"device_id": "d1", "command_id": "on"},
                                         {"device_id": "d3", "command_id": "on"}],
             "returned": [["d1", "on"], ["d2", "on"]]},
            {"bulk": True, "expected": [{"device_id": "d9", "command_id": "off"}], "returned": [["d8", "off"]]}]
    assert recall_curve(rows) == [0.25, 0.75, 0.75]          # recall@1..3; a bulk plan is a set, not a ranking
    assert recall_curve([{"id": "q", "recall": 1.0}]) is None
    page = render_html_report(_report(rows))
    assert "Recall at each cut-off" in page and "@2 0.750" in page


def test_the_curve_goes_as_deep_as_a_rows_ranking_and_labels_every_fifth_cut_off():
    expected = [{"device_id": "d50", "command_id": "on"}]
    row = {"bulk": False, "expected": expected, "returned": [[f"d{n}", "on"] for n in range(1, 11)],
           "ranking": [[f"d{n}", "on"] for n in range(1, 51)]}          # the target ranked 50th
    curve = recall_curve([row])
    assert len(curve) == 50 and curve[48] == 0.0 and curve[49] == 1.0
    page = render_html_report(_report([row]))
    assert "j = 1..50" in page and "@45 0.000, @50 1.000" in page and "@3 0.000," not in page


def test_a_file_that_is_not_a_report_is_one_clear_error():
    with pytest.raises(ValueError, match="report: field 'per_query' is missing"):
        render_html_report({"program": "commands", "metrics": {}})


@pytest.fixture
def dataset(home_dir, embedder, monkeypatch, tmp_path):
    lamp_on = [{"device_id": "lamp-study", "command_id": "main-switch-on"}]
    rows = [{"id": "q-hit", "query": "打开老伙计", "expected": lamp_on},
            {"id": "q-miss", "query": "<i>关闭</i> 主卧空调", "expected": lamp_on}]
    (home_dir / "queries.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                            encoding="utf-8")
    monkeypatch.setattr(tracerag.config, "make_embedder", lambda *a, **k: embedder)
    monkeypatch.chdir(tmp_path)
    return home_dir


def test_evaluate_html_writes_the_page_and_the_json_beside_it(dataset, tmp_path, capsys):
    page_path = tmp_path / "out" / "report.html"
    assert optimize.main(["evaluate", "commands", "--dataset", str(dataset), "--split", "all",
                          "--html", str(page_path)]) == 0
    out = capsys.readouterr().out
    assert f"HTML report written to {page_path}" in out
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    page = page_path.read_text(encoding="utf-8")
    assert "&lt;i&gt;关闭&lt;/i&gt; 主卧空调" in page and "<i>" not in page
    assert page.index(">q-miss<") < page.index(">q-hit<")                 # the miss is the first row
    assert f"{report['metrics']['recall@10']:.4g}" in page
    curve = recall_curve(report["per_query"])                       # both queries are single-target ones
    assert curve[9] == pytest.approx(sum(row["recall"] for row in report["per_query"]) / 2)
    for row in report["per_query"]:  # ranked past k=10, up to 50 deep, as far as commands do what is asked
        assert row["ranking"][:len(row["returned"])] == row["returned"] and len(row["ranking"]) >= len(row["returned"])


def test_the_deeper_ranking_changes_no_metric_and_no_other_field(dataset, tmp_path):
    assert optimize.main(["evaluate", "commands", "--dataset", str(dataset), "--split", "all",
                          "--out", str(tmp_path / "plain.json")]) == 0
    assert optimize.main(["evaluate", "commands", "--dataset", str(dataset), "--split", "all",
                          "--html", str(tmp_path / "deep.html")]) == 0
    plain, deep = (json.loads((tmp_path / name).read_text(encoding="utf-8")) for name in ("plain.json", "deep.json"))

    def timeless(metrics: dict) -> dict:
        return {key: value for key, value in metrics.items() if not key.startswith("latency")}

    assert timeless(plain["metrics"]) == timeless(deep["metrics"]) and plain["breakdown"] == deep["breakdown"]
    for before, after in zip(plain["per_query"], deep["per_query"], strict=True):
        assert {**before, "ms": 0} == {**{key: v for key, v in after.items() if key != "ranking"}, "ms": 0}


def test_evaluate_html_refuses_to_overwrite_its_own_json(dataset, capsys):
    assert optimize.main(["evaluate", "commands", "--dataset", str(dataset), "--html", "r.json"]) == 2
    assert "would overwrite the JSON report" in capsys.readouterr().err


def test_rag_rows_draw_the_curve_from_their_gold_documents():
    rows = [{"id": "p1", "recall": 1.0, "relevant": ["d1"], "ranking": ["d3", "d1", "d1"]},
            {"id": "p2", "recall": 0.0, "relevant": ["d9"], "ranking": ["d3", "d4", "d5"]}]
    assert recall_curve(rows) == [0.0, 0.5, 0.5]
    assert "Gold documents among the first round" in render_html_report(_report(rows))


def test_rag_evaluation_adds_the_ranking_for_the_curve_and_changes_nothing_else(retriever):
    import dspy

    from tracerag.rag.evaluation import evaluate_rag
    from tracerag.rag.self_reflective_rag import RAGConfig, SelfReflectiveRAG

    program = SelfReflectiveRAG(retriever, RAGConfig(k=4))
    examples = [dspy.Example(pmid="p0", question="Do statins lower cholesterol in diabetes patients?",
                             final_decision="yes", gold_doc_ids=["100"]).with_inputs("question")]
    plain = evaluate_rag(program, examples, dataset="t", k=4, progress=False)
    curved = evaluate_rag(program, examples, dataset="t", k=4, progress=False, ranked_depth=50)
    row = curved["per_query"][0]
    assert row["relevant"] == ["100"] and len(row["ranking"]) == len(row["retrieved"]) == 4
    assert recall_curve(curved["per_query"])[-1] == row["recall"]           # the curve ends at the metric
    assert {**plain["per_query"][0], "ms": 0} == {
        **{key: value for key, value in row.items() if key not in ("ranking", "relevant")}, "ms": 0}


def test_experience_rows_draw_the_curve_from_their_own_recall_at_each_cut_off():
    rows = [{"id": "e1", "recall": 0.5, "recall_at": [1.0, 0.5, 0.5]}, {"id": "e2", "recall": 1.0, "recall_at": [1.0]}]
    assert recall_curve(rows) == [1.0, 0.75, 0.75]                  # a shorter row stays at its last value
    assert "Relevant solved tasks" in render_html_report(_report(rows))


def test_experience_evaluation_adds_recall_at_each_cut_off_and_changes_nothing_else(traces_dir, embedder, tmp_path):
    import dspy

    from tracerag import CosineBank, ExperienceRetrieval, build_experience_bank
    from tracerag.experience.evaluation import evaluate_experience

    build_experience_bank(traces_dir, tmp_path / "experience_bank", embedder)
    program = ExperienceRetrieval(CosineBank.load(tmp_path / "experience_bank", embedder))
    examples = [dspy.Example(id="e0", question="Sum my receipt with tax.", images=[], caption=None, sub_task=None,
                             family=None, relevant_task_ids=["receipt-0001", "receipt-0002"]
                             ).with_inputs("question", "images", "caption", "sub_task")]
    plain = evaluate_experience(program, examples, dataset="t", progress=False)
    curved = evaluate_experience(program, examples, dataset="t", progress=False, ranked_depth=50)
    row = curved["per_query"][0]
    assert len(row["recall_at"]) == 5 and row["recall_at"][-1] == row["recall"]   # to k, ending at the metric
    assert {**plain["per_query"][0], "ms": 0} == {
        **{key: value for key, value in row.items() if key != "recall_at"}, "ms": 0}
