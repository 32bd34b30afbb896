"""The HTML report: a static page that escapes every string it did not write, loads nothing, and puts the
rows that missed first."""

from __future__ import annotations

import json
import re
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
                                          "tr", "th", "td", "span", "details", "summary", "pre", "div", "code",
                                          "strong", "ul", "li", "br"}
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


def _block(page: str, row_id: str) -> str:
    """The readable block under the row ``row_id`` (the row after it in the rows table)."""
    start = page.index('<tr class="more">', page.index(f">{row_id}<"))
    return page[start:page.index("</details></td></tr>", start)]


def test_a_miss_shows_the_utterance_its_parse_and_expected_beside_returned_by_label_and_room(dataset, tmp_path):
    assert optimize.main(["evaluate", "commands", "--dataset", str(dataset), "--split", "all",
                          "--html", str(tmp_path / "report.html")]) == 0
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["devices"]["tiny"]["lamp-study"] == {"label": "客厅老伙计", "room": "书房"}
    miss = next(row for row in report["per_query"] if row["id"] == "q-miss")
    top = report["devices"]["tiny"][miss["returned"][0][0]]                       # what came back first
    block = _block((tmp_path / "report.html").read_text(encoding="utf-8"), "q-miss")
    assert block.startswith('<tr class="more"><td colspan=') and "<details open>" in block
    assert "utterance</strong>" in block and "&lt;i&gt;关闭&lt;/i&gt; 主卧空调" in block
    assert "parse (QueryIR)" in block and "<th>operation</th>" in block and "<th>scope_include</th>" in block
    expected, returned = block.split("returned (top 10)")
    assert 'title="lamp-study">客厅老伙计</td><td class="name">书房</td>' in expected    # label and room, not the id
    assert f'>{top["label"]}</td><td class="name">{top["room"]}</td>' in returned
    assert "main-switch-on" in expected and "<code>main-switch" in returned
    assert "why</p>" in block and "客厅老伙计 (书房) with the expected command" in block
    hit = _block((tmp_path / "report.html").read_text(encoding="utf-8"), "q-hit")
    assert "<details>" in hit and "<details open>" not in hit                  # a hit's block opens with a click


def test_other_programs_misses_show_the_question_expected_and_returned():
    rag = {"id": "p1", "question": "Do statins work?", "gold": "yes", "verdict": "no", "recall": 0.0,
           "relevant": ["d1"], "ranking": ["d3", "d4"], "cited": ["d3#0"], "answer": "No [d3#0].", "hint": "no_lm"}
    plan = {"id": "c1", "requirements": "Set up a PCR.", "score": 0.5, "gold": ["mat-1", "step-2"],
            "used": ["mat-1", "step-9"]}
    page = render_html_report({**_report([rag, plan]), "lm": None})
    block = _block(page, "p1")
    assert "question</strong>" in block and "Do statins work?" in block
    expected, returned = block.split(">returned<")
    assert "decision" in expected and ">yes<" in expected and "<code" in expected and ">d1<" in expected
    assert "#1</span> <code>d3</code>" in returned and ">No [d3#0].<" in returned
    assert "0 of the 1 gold ids among the 2 ranked" in block and "decided no, the gold decision is yes" in block
    assert "hint no_lm: no LM is configured" in block
    block = _block(page, "c1")
    assert "requirements</strong>" in block and "Set up a PCR." in block
    assert '<code class="ok">mat-1</code>' in block.split(">returned<")[1] and ">step-9<" in block


def test_the_recall_axis_starts_near_the_lowest_value_and_both_axes_are_labelled():
    from tracerag.report_html import curve_axis

    assert curve_axis([0.923, 0.96, 0.983])[:2] == (0.9, 1.0)
    assert curve_axis([0.95, 1.0])[0] == 0.9                   # a point on a round value sits above the axis
    assert curve_axis([0.0, 0.5])[0] == 0.0
    expected = [{"device_id": "d1", "command_id": "on"}]
    rows = [{"bulk": False, "expected": expected, "returned": [["d1", "on"]]} for _ in range(9)]
    rows.append({"bulk": False, "expected": expected, "returned": [["d2", "on"], ["d1", "on"]]})
    page = render_html_report(_report(rows))                   # recall@1 = 0.9, recall@2 = 1
    low = float(re.search(r'data-y-min="([\d.]+)"', page).group(1))
    assert 0 < low < 0.9 and "The recall axis starts at 0.85, not 0." in page
    assert ">k (cut-off)</text>" in page and ">recall@k</text>" in page


def test_a_report_without_an_lm_leaves_out_the_lm_rows(dataset, tmp_path):
    assert optimize.main(["evaluate", "commands", "--dataset", str(dataset), "--split", "all",
                          "--html", str(tmp_path / "report.html")]) == 0
    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["lm"] is None
    page = (tmp_path / "report.html").read_text(encoding="utf-8").replace(str(dataset), "the home")
    assert "no LM" in page and "This run had no LM" in page
    assert "lm_" not in page                        # no fault budget, LM calls or fallbacks: not in a row, nor a field


def test_a_report_with_an_lm_shows_the_lm_rows(dataset, tmp_path):
    from conftest import FakeEngine
    from lm_server import StubLMServer

    with StubLMServer(FakeEngine(), "good") as stub:
        assert optimize.main(["evaluate", "commands", "--dataset", str(dataset), "--split", "all",
                              "--lm", "openai/stub", "--api-base", stub.url, "--api-key", "k", "--lm-retries", "0",
                              "--html", str(tmp_path / "report.html")]) == 0
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "LM openai/stub" in page and "This run had no LM" not in page
    for row in ("lm_calls_per_query", "lm_fallback_rate", "lm_fault_budget", "failed_calls"):
        assert f">{row}" in page, row
    assert "<th>lm_fallbacks</th>" in page                               # the rows' own column too
    assert "LM figures" not in page
