"""Through the command line: a trace with an integer longer than Python converts is one skipped item,
counted against --max-skipped, never a run that ends with Python's own message."""

import sys

import pytest

import optimize
import tracerag

HUGE = "9" * (sys.get_int_max_str_digits() + 1)


@pytest.fixture(autouse=True)
def session_embedder(embedder, monkeypatch):
    monkeypatch.setattr(tracerag.config, "make_embedder", lambda *a, **k: embedder)


def test_build_bank_counts_a_trace_with_a_long_number_as_skipped(traces_dir, tmp_path, capsys):
    path = traces_dir / "tasks" / "plant-0001" / "trace.json"
    path.write_text(path.read_text(encoding="utf-8").replace('"42"', HUGE), encoding="utf-8")
    bank = str(tmp_path / "bank")
    assert optimize.main(["build-bank", "--traces", str(traces_dir), "--bank", bank]) == 2
    err = capsys.readouterr().err
    assert "Exceeds the limit" not in err and "Traceback" not in err
    assert f"{path}: a number with more than 4,300 digits; no field takes one (line 1)" in err
    assert "1 of 13 traces skipped" in err and "--max-skipped" in err  # allowed with --max-skipped 10%
