"""The layers hold: which part of the library may import which (pyproject.toml's import contracts,
docs/architecture.md), and no module of the library imports the command line."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_the_import_contracts_are_kept():
    # in a process of its own: import-linter changes the logging of the process it runs in
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True, no_logo=True))"
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_library_never_imports_its_command_line():
    importers = []
    for path in (ROOT / "tracerag").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            if any(name.split(".")[0] == "optimize" for name in names):
                importers.append(str(path.relative_to(ROOT)))
    assert importers == []


def test_the_layer_contracts_list_no_exception():
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    assert [c["name"] for c in contracts["contracts"] if c.get("ignore_imports")] == []
