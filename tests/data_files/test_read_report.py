"""The shared reading guard: only regular files, a size cap, BOMs stripped, and data sets that never
shrink silently."""

import os
import threading

import pytest

from tracerag.data_files.read_report import DataSetShrunk, FileProblem, ReadReport, read_regular, text_problem


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "trace.json"
    os.mkfifo(fifo)
    done = []
    worker = threading.Thread(target=lambda: done.append(pytest.raises(FileProblem, read_regular, fifo)))
    worker.start()
    worker.join(timeout=5)
    assert done and "is a FIFO, not a regular file" in str(done[0].value)


def test_directories_missing_files_and_oversized_files_are_one_clear_line(tmp_path):
    with pytest.raises(FileProblem, match="is a directory"):
        read_regular(tmp_path)
    with pytest.raises(FileProblem, match="missing.json: file is missing"):
        read_regular(tmp_path / "missing.json")
    big = tmp_path / "big.json"
    big.write_bytes(b"x" * 101)
    with pytest.raises(FileProblem, match="over the 100-byte limit"):
        read_regular(big, max_bytes=100)


def test_a_bom_is_stripped_and_bad_bytes_are_named(tmp_path):
    (tmp_path / "a.json").write_bytes(b"\xef\xbb\xbf{}")
    assert read_regular(tmp_path / "a.json") == "{}"
    (tmp_path / "b.json").write_bytes(b'{"q": "\xff"}')
    with pytest.raises(FileProblem, match=r"b.json: not UTF-8 \(byte 8\)"):
        read_regular(tmp_path / "b.json")


def test_a_lone_surrogate_is_found_anywhere_in_a_value():
    assert text_problem({"steps": ["fine", {"thought": "\ud800"}]}).startswith("holds a character")
    assert text_problem({"question": "普通的问题", "n": 3}) is None


def test_a_report_fails_when_too_much_or_everything_was_skipped():
    report = ReadReport("traces", read=20)
    report.normalise("steps as strings")
    report.skip("t1/trace.json", "not JSON", "t1/trace.json: invalid JSON at line 1")
    assert report.summary() == "read 20 traces, kept 19; normalised: steps as strings 1; skipped: not JSON 1"
    report.check(0.05, "runs/")  # 5% skipped is allowed
    report.skip("t2/trace.json", "not JSON")
    with pytest.raises(DataSetShrunk, match=r"runs/: 2 of 20 traces skipped \(10%\), over the 5% allowed"):
        report.check(0.05, "runs/")
    empty = ReadReport("queries", read=1)
    empty.skip("q.jsonl:1", "no query")
    with pytest.raises(DataSetShrunk, match="none of the 1 queries read is usable"):
        empty.check(1.0, "q.jsonl")
