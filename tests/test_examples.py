"""examples/: every script runs, offline and without an API key, and says what a user copies it for.

The fast tests call each script's ``main`` in this process (the session's embedder, a temporary working
directory); the slow ones run each script as a user does, ``python examples/<script>.py`` in a fresh
process, and the compile example against an OpenAI-compatible endpoint on 127.0.0.1.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FakeEngine
from lm_server import StubLMServer

import tracerag

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
LM_VARIABLES = ("TRACERAG_LM", "TRACERAG_API_BASE", "TRACERAG_API_KEY")


def example(name: str):
    """The example script as a module (its ``main`` not yet run)."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def offline(embedder, monkeypatch, tmp_path):
    """No LM in the environment, the session's embedder, a scratch working directory."""
    for name in LM_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(tracerag.config, "make_embedder", lambda *a, **k: embedder)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_every_script_in_examples_is_tested():
    tested = {"commands_on_a_home", "rag_over_your_files", "experience_memory", "serve_and_call",
              "compile_with_your_lm"}
    assert {path.stem for path in EXAMPLES.glob("*.py")} == tested


@pytest.mark.slow
def test_commands_example_ranks_plans_and_shows_a_dry_run(offline, capsys):
    assert example("commands_on_a_home").main([]) == 0
    out = capsys.readouterr().out
    assert "主卧空调 (主卧)  main-thermostatCoolingSetpoint-setCoolingSetpoint" in out
    assert '"command": "setCoolingSetpoint", "arguments": [26]' in out        # the exact call, not sent
    assert "dry run (smartthings): would send 4 call(s) for 4 device(s)" in out   # all lights but the bedroom's
    # a clear ask finds the lock, and the dry run holds the sensitive call for a confirmation
    unlock = out.split("unlock the front door\n")[-1].splitlines()
    assert unlock[0].endswith("入户门锁 (客厅)  main-lock-unlock") and "1 need confirmation" in unlock[1]


def test_commands_example_takes_your_home_and_your_words(offline, home_dir, capsys):
    assert example("commands_on_a_home").main([str(home_dir), "打开老伙计", "关掉所有的灯", "unlock the door"]) == 0
    out = capsys.readouterr().out
    assert "客厅老伙计 (书房)  main-switch-on" in out.splitlines()[2]
    assert "dry run (smartthings): would send 4 call(s) for 4 device(s)" in out      # every light, nothing sent
    assert 'POST /v1/devices/lamp-study/commands {"commands": [{"component": "main", "capability": "switch", ' \
           '"command": "off", "arguments": []}]}' in out
    assert out.rstrip().endswith("unlock the door\n  hint: no_match")  # asked, but nothing here unlocks


def test_rag_example_answers_from_the_folder_with_citations(offline, capsys):
    module = example("rag_over_your_files")
    assert module.main([], out_dir="out") == 0
    out = capsys.readouterr().out
    assert out.startswith("3 files from ")
    answers = [line for line in out.splitlines() if line.startswith("   cited: ")]
    assert answers[0].startswith("   cited: backups.md#0") and answers[1].startswith("   cited: oncall.txt#0")
    assert "taken every six hours, at 00:00, 06:00, 12:00 and 18:00 UTC [backups.md#0]" in out
    docs = [json.loads(line) for line in Path("out/documents.jsonl").read_text(encoding="utf-8").splitlines()]
    assert docs[0]["title"] == "Backups" and "#" not in docs[0]["text"]


def _pdf_with_text(text: str) -> bytes:
    """A one-page PDF whose page shows ``text`` (Helvetica), with a correct cross-reference table."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> >>",
               b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_rag_example_reads_pdf_files_or_says_it_skipped_them(tmp_path, monkeypatch, capsys):
    """A folder of your own files holds PDFs too: their text through pypdf, or one line saying they were skipped."""
    import builtins

    module = example("rag_over_your_files")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "runbook.pdf").write_bytes(_pdf_with_text("Restores take about forty minutes."))
    (tmp_path / "notes" / "a.md").write_text("# A\nAlpha.\n", encoding="utf-8")
    assert module.folder_to_jsonl(tmp_path / "notes", tmp_path / "docs.jsonl") == 2
    docs = {d["id"]: d for d in map(json.loads, (tmp_path / "docs.jsonl").read_text(encoding="utf-8").splitlines())}
    assert "Restores take about forty minutes." in docs["runbook.pdf"]["text"]
    assert docs["runbook.pdf"]["title"] == "runbook"

    real_import = builtins.__import__
    monkeypatch.setattr(builtins, "__import__", lambda name, *a, **k: (_ for _ in ()).throw(ImportError(name))
                        if name == "pypdf" else real_import(name, *a, **k))
    assert module.folder_to_jsonl(tmp_path / "notes", tmp_path / "docs.jsonl") == 1
    assert capsys.readouterr().out == "skipped 1 .pdf file(s): pip install pypdf to read them\n"


def test_experience_example_banks_the_solved_runs_and_draws_on_the_similar_one(offline, capsys):
    assert example("experience_memory").main([], out_dir="out") == 0
    out = capsys.readouterr().out
    assert "2 runs indexed, 1 incorrect left out" in out
    assert "drawn from: receipt-total-1\n" in out
    assert "## Experience from Similar Tasks" in out and "ocr -> calculator" in out


def test_compile_example_without_an_lm_says_it_skipped(offline, capsys):
    assert example("compile_with_your_lm").main() == 0
    assert capsys.readouterr().out.startswith("skipped: set TRACERAG_LM")
    assert not Path("out").exists()


@pytest.mark.slow
def test_compile_example_against_an_openai_compatible_endpoint(offline, monkeypatch, capsys):
    """A perfect parser behind HTTP: the endpoint answers each utterance with its gold parse."""
    from tracerag.datasets.smarthome import load_dataset

    gold = {q.query: q.ir for qs in load_dataset("smarthome/home_small", None).values() for q in qs if q.ir}
    with StubLMServer(FakeEngine(irs=gold)) as stub:
        monkeypatch.setenv("TRACERAG_LM", "openai/stub-model")
        monkeypatch.setenv("TRACERAG_API_BASE", stub.url)
        monkeypatch.setenv("TRACERAG_API_KEY", "test-key")
        assert example("compile_with_your_lm").main() == 0
        parses = sum(name == "ParseCommand" for name, _ in stub.requests)
    out = capsys.readouterr().out
    scores = json.loads(out[out.index("{\n"): out.rindex("}") + 1])
    assert parses > 0 and scores["demos"]["parse"] > 0
    meta = json.loads(Path("out/commands-compiled.json.meta.json").read_text(encoding="utf-8"))
    assert meta["metric"] == "parse_recall@10" and meta["dataset"] == "smarthome/home_small"
    assert "loaded back: 主卧空调 main-thermostatCoolingSetpoint-setCoolingSetpoint" in out


@pytest.mark.slow
@pytest.mark.parametrize("script, lines", [
    ("commands_on_a_home", ["  |   needs_confirmation"]),
    ("rag_over_your_files", ["   cited: backups.md#0"]),
    ("experience_memory", ["drawn from: receipt-total-1"]),
    ("compile_with_your_lm", ["skipped: set TRACERAG_LM"]),
    ("serve_and_call", ['{"hint": null, "best": ["主卧空调", "main-thermostatCoolingSetpoint-setCoolingSetpoint"]}',
                        '{"used_task_ids": ["receipt-']),
])
def test_every_example_runs_as_a_script(script, lines, tmp_path):
    env = {key: value for key, value in os.environ.items() if key not in LM_VARIABLES}
    env.update(TRACERAG_CACHE_DIR=str(tmp_path / "cache"), PYTHONIOENCODING="utf-8",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    run = subprocess.run([sys.executable, str(EXAMPLES / f"{script}.py")], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    for line in lines:
        assert any(out_line.startswith(line) for out_line in run.stdout.splitlines()), run.stdout[-2000:]


@pytest.mark.parametrize("script, says", [
    ("commands_on_a_home", "error: dataset '/no/such/home' is neither a directory nor a bundled dataset"),
    ("rag_over_your_files", "error: /no/such/home: no such folder"),
])
def test_an_example_given_a_wrong_path_says_so_in_one_line(script, says, tmp_path):
    run = subprocess.run([sys.executable, str(EXAMPLES / f"{script}.py"), "/no/such/home"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "TRACERAG_CACHE_DIR": str(tmp_path / "cache")})
    assert run.returncode == 1 and run.stderr.startswith(says) and len(run.stderr.strip().splitlines()) == 1, \
        run.stderr[-2000:]
