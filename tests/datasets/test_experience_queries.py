"""Reading an experience dataset's queries.jsonl: liberal about shapes, one line per unreadable query,
and never a silent shrink."""

import json
import os
import threading

import pytest

from tracerag.data_files.read_report import DataSetShrunk, FileProblem, ReadReport
from tracerag.datasets.experience import load_experience_queries
from tracerag.datasets.smarthome import resolve_dataset

GOOD = {"id": "q1", "question": "Is this plant toxic to cats?", "relevant_task_ids": ["plant-0001"]}


def _write(tmp_path, *rows, raw: bytes | None = None):
    path = tmp_path / "queries.jsonl"
    path.write_bytes(raw if raw is not None else "".join(
        (r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows).encode("utf-8"))
    return path


def test_bundled_queries_read_without_normalising():
    report = ReadReport("queries")
    queries = load_experience_queries("experience", report=report)
    assert len(queries) == report.read == report.kept == 180 and not report.normalised


def test_variants_are_normalised_and_counted(tmp_path):
    rows = [{**GOOD, "id": "q1", "images": "leaf.jpg", "source": "forum"},
            {**GOOD, "id": 2, "relevant_task_ids": "plant-0002", "caption": 7},
            {**GOOD, "id": "q3", "relevant_task_ids": [101], "family": None}]
    text = "\r\n".join(json.dumps(r) for r in rows) + "\r\n"
    _write(tmp_path, raw=b"\xef\xbb\xbf" + text.encode("utf-8"))
    report = ReadReport("queries")
    q1, q2, q3 = load_experience_queries(tmp_path, report=report)
    assert q1.images == ("leaf.jpg",) and q2.id == "2" and q2.relevant_task_ids == ("plant-0002",)
    assert q2.caption == "7" and q3.relevant_task_ids == ("101",) and q3.family is None
    assert report.summary() == ("read 3 queries, kept 3; normalised: BOM stripped 1, caption as a number 1, "
                                "id as a number 1, images as one string 1, relevant_task_ids as numbers 1, "
                                "relevant_task_ids as one string 1")


BAD = [
    ("{not json", "not JSON", "invalid JSON (Expecting property name enclosed in double quotes at column 2)"),
    ("[1, 2]", "not a JSON object", "expected a JSON object (one query), got [1, 2]"),
    ({"id": "q9", "relevant_task_ids": []}, "missing field",
     "question: expected a non-empty string, the field is missing"),
    ({**GOOD, "relevant_task_ids": None}, "missing field",
     "relevant_task_ids: expected a list of strings, the field is missing"),
    ({**GOOD, "images": {"a": 1}}, "wrong type", 'images: expected a list of strings, got {"a": 1}'),
    ({**GOOD, "relevant_task_ids": ["a", None]}, "wrong type", "relevant_task_ids[1]: expected a string, got null"),
    ({**GOOD, "sub_task": ["x"]}, "wrong type", 'sub_task: expected a string, got ["x"]'),
    ({**GOOD, "question": "\ud800?"}, "lone surrogate",
     "question: holds a character UTF-8 cannot store (U+D800, a lone surrogate)"),
]


@pytest.mark.parametrize("row,reason,line", BAD, ids=[b[1] + f"-{i}" for i, b in enumerate(BAD)])
def test_an_unreadable_line_fails_by_default_and_is_skipped_when_allowed(tmp_path, row, reason, line):
    path = _write(tmp_path, GOOD, {**GOOD, "id": "q2"}, row)
    with pytest.raises(DataSetShrunk) as failed:
        load_experience_queries(tmp_path)
    assert str(failed.value) == (f"{path}: 1 of 3 queries skipped (33%), over the 0% allowed (--max-skipped): "
                                 f"{path}:3: {line}")
    report = ReadReport("queries")
    assert [q.id for q in load_experience_queries(tmp_path, max_skipped=0.5, report=report)] == ["q1", "q2"]
    assert dict(report.skipped) == {reason: 1} and report.problems == [f"{path}:3: {line}"]


def test_a_repeated_id_is_an_error_naming_both_lines_whatever_may_be_skipped(tmp_path):
    from tracerag.datasets.experience import ExperienceDataError

    path = _write(tmp_path, GOOD, {**GOOD, "id": "q2"}, "", {**GOOD, "question": "again?"})
    with pytest.raises(ExperienceDataError) as err:
        load_experience_queries(tmp_path, max_skipped=1.0)
    assert str(err.value) == f"{path}:4: id 'q1' repeats line 1"


def test_a_relevant_task_the_traces_lack_is_an_error_naming_the_line(tmp_path):
    from tracerag.datasets.experience import ExperienceDataError

    path = _write(tmp_path, GOOD, {**GOOD, "id": "q2", "relevant_task_ids": ["plant-0001", "plant-0099"]})
    assert len(load_experience_queries(tmp_path)) == 2  # without the traces nothing to check against
    with pytest.raises(ExperienceDataError) as err:
        load_experience_queries(tmp_path, max_skipped=1.0, task_ids={"plant-0001", "plant-0002"})
    assert str(err.value) == f"{path}:2: field 'relevant_task_ids[1]': 'plant-0099' is not a task of the traces"
    assert (err.value.path, err.value.line, err.value.field) == (str(path), 2, "relevant_task_ids[1]")


def test_bundled_queries_name_only_tasks_of_the_bundled_traces():
    from tracerag.memory.traces import load_traces

    task_ids = {t.task_id for t in load_traces(resolve_dataset("experience")).traces}
    assert len(load_experience_queries("experience", task_ids=task_ids)) == 180


def test_nothing_usable_always_fails(tmp_path):
    _write(tmp_path, "null", "{}")
    with pytest.raises(DataSetShrunk, match="none of the 2 queries read is usable"):
        load_experience_queries(tmp_path, max_skipped=1.0)


def test_a_fifo_or_a_directory_is_refused_without_hanging(tmp_path):
    os.mkfifo(tmp_path / "queries.jsonl")
    done = []
    worker = threading.Thread(target=lambda: done.append(pytest.raises(FileProblem, load_experience_queries,
                                                                       tmp_path)), daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert done and str(done[0].value) == f"{tmp_path}/queries.jsonl: is a FIFO, not a regular file"
    os.unlink(tmp_path / "queries.jsonl")
    (tmp_path / "queries.jsonl").mkdir()
    with pytest.raises(FileProblem, match="is a directory"):
        load_experience_queries(tmp_path)
    (tmp_path / "queries.jsonl").rmdir()
    with pytest.raises(ValueError, match="queries.jsonl: file is missing"):
        load_experience_queries(tmp_path)


def test_image_paths_stay_inside_the_dataset(tmp_path):
    from tracerag.data_files.read_report import ReadReport
    from tracerag.datasets.experience import load_experience_queries

    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "ok.jpg").write_bytes(b"x")
    (tmp_path / "images" / "out.jpg").symlink_to("/etc/hostname")
    row = {"id": "q1", "question": "What is this?", "relevant_task_ids": ["t1"],
           "images": ["images/ok.jpg", "/etc/passwd", "../secret.jpg", "images/out.jpg"]}
    (tmp_path / "queries.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    report = ReadReport("queries")
    [query] = load_experience_queries(tmp_path, report=report)
    assert query.images == ("images/ok.jpg", "images/out.jpg")
    assert report.normalised["image path outside the dataset dropped"] == 1
    assert query.to_example(tmp_path).images == [str(tmp_path / "images" / "ok.jpg")]  # the link leads out
