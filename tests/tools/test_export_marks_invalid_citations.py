"""The JSONL export (fine-tuning data) marks every cited id no tool returned, next to ``ids_cited``."""

import json

from tracerag.tools.trajectory import ToolCallRecord, Trajectory, write_jsonl


def _trajectory(cited: list[str]) -> Trajectory:
    call = ToolCallRecord(tool="pubmed_search", query="statins", result=[{"id": "111", "text": "a"}])
    return Trajectory(question="q", tool_calls=[call], final_answer="x", total_tool_calls=1, ids_cited=cited)


def test_an_invented_id_is_marked_invalid_in_the_jsonl_line(tmp_path):
    write_jsonl([("q1", _trajectory(["111", "FORGED4"])), ("q2", _trajectory(["111"]))], tmp_path / "runs.jsonl")
    lines = [json.loads(x) for x in (tmp_path / "runs.jsonl").read_text(encoding="utf-8").splitlines()]
    assert lines[0]["ids_cited"] == ["111", "FORGED4"] and lines[0]["invalid_citations"] == ["FORGED4"]
    assert lines[1]["invalid_citations"] == []


def test_a_marked_line_reads_back_as_the_same_trajectory(tmp_path):
    t = _trajectory(["111", "FORGED4"])
    write_jsonl([("q1", t)], tmp_path / "runs.jsonl")
    line = json.loads((tmp_path / "runs.jsonl").read_text(encoding="utf-8"))
    line.pop("id")
    again = Trajectory.model_validate(line)
    assert again == t and again.invalid_citations == ["FORGED4"] and not again.succeeded
