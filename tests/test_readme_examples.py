"""README.md's Python examples, run as pasted.

Every ```python block of the README is either run here (in a temporary directory holding what the text
says the reader has: ``my_home/`` is a copy of a bundled home) or listed in ``NEEDS`` with what it needs
that a test may not have (an LM key, a server, an artifact built earlier). A new block fails
``test_every_python_block_is_run_or_says_what_it_needs`` until it is one or the other. Blocks of one
walk-through run in one namespace, in README order, as a reader pastes them into one interpreter.

The runs load the default embedder and build indexes: they take seconds, so they are marked slow; the
fast tests beside them check each fixed example's own behaviour in the default run.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"

# The first code line of each block that is not run, and what it needs. A block is named by its first
# line that is not an import, a blank or a comment (the line a reader recognises it by).
NEEDS = {
    'tracerag.configure(lm="openai/gpt-4o-mini")            # the same embedder as at compile time':
        "an LM key and a compiled artifact (out/commands-compiled.json)",
    'planner = tracerag.build("planner")': "Milvus Lite writes ./chunks.db and ingests the whole corpus",
    'tracerag.configure(lm="openai/gpt-4o-mini")            # or no LM: raw-task search, extractive experience':
        "an LM key, a built bank/ and receipt.jpg",
    'tracerag.configure(lm="openai/gpt-4o-mini")\ntracerag.ingest_documents':
        "an LM key and the reader's docs.jsonl",
    'report = program.execute(pred, SmartThingsTarget(), dry_run=False':
        "a SmartThings token and the real API",
    'tracerag.configure(lm="openai/gpt-4o-mini")\nplanner = TraceablePlanner()': "an LM key",
    'tracerag.configure(lm="openai/gpt-4o-mini")\nwith Toolbox.open()': "an LM key",
    'embedder = tracerag.get_embedder()\nstore = open_store("milvus://': "a Milvus server at db.internal",
}

# Walk-throughs run here: the blocks (by first code line) run one after another in one namespace.
RUNS = {
    "CommandRetrieval, then a dry run of what it decided": [
        'tracerag.configure()                                   # no LM: deterministic parse; default embedder',
        'pred = program(query="把客厅所有的灯调到50%")',
    ],
    "async calls, then the retrieval spans of a call": [
        'program = tracerag.build("rag")',
        "class Retrievals(BaseCallback):",
    ],
}


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(line number of the opening fence, code) for each ```python block."""
    blocks, lines, start = [], text.splitlines(), None
    for number, line in enumerate(lines, 1):
        if start is None and line.strip() == "```python":
            start, code = number, []
        elif start is not None and line.strip() == "```":
            blocks.append((start, "\n".join(code) + "\n"))
            start = None
        elif start is not None:
            code.append(line)
    return blocks


def first_code_line(code: str) -> str:
    """The block's first line that is not an import, a blank or a comment."""
    return next(line for line in code.splitlines()
                if line.strip() and not re.match(r"\s*(#|import |from \S+ import )", line))


def _named(code: str, name: str) -> bool:
    body = "\n".join(line for line in code.splitlines()
                     if line.strip() and not re.match(r"\s*(#|import |from \S+ import )", line))
    return body.startswith(name)


def _block(name: str) -> tuple[int, str]:
    found = [(line, code) for line, code in python_blocks(README.read_text(encoding="utf-8")) if _named(code, name)]
    assert len(found) == 1, f"README.md: {len(found)} python blocks start with {name!r}"
    return found[0]


def test_every_python_block_is_run_or_says_what_it_needs():
    known = list(NEEDS) + [name for names in RUNS.values() for name in names]
    for line, code in python_blocks(README.read_text(encoding="utf-8")):
        matches = [name for name in known if _named(code, name)]
        assert len(matches) == 1, (f"README.md:{line}: python block starting {first_code_line(code)!r} is "
                                   f"{'named by ' + repr(matches) if matches else 'neither run nor in NEEDS'}")


@pytest.mark.slow
@pytest.mark.parametrize("walk", sorted(RUNS))
def test_readme_walk_through_runs_as_pasted(walk, tmp_path, monkeypatch, capsys):
    import tracerag.config
    from tracerag.datasets.smarthome import resolve_dataset

    shutil.copytree(resolve_dataset("smarthome/home_small"), tmp_path / "my_home")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACERAG_CACHE_DIR", str(tmp_path / "cache"))  # the reader's cache, not this machine's
    monkeypatch.setattr(tracerag.config, "_state", dict(tracerag.config._state))  # configure() undone afterwards
    namespace: dict = {"__name__": "__readme__"}
    for name in RUNS[walk]:
        line, code = _block(name)
        exec(compile(code, f"README.md:{line}", "exec"), namespace)  # noqa: S102 - the README's own code
    if "report" in namespace:  # the dry run: calls shown, nothing sent
        report = namespace["report"]
        assert report.dry_run and report.calls and not report.sent
        assert "dry run (smartthings)" in capsys.readouterr().out
    if "preds" in namespace:
        assert len(namespace["preds"]) == len(namespace["questions"])
        assert all(p.retrieved_ids for p in namespace["preds"])
    if "recorder" in namespace:
        assert any(span["name"] == "corpus.search" for span in namespace["recorder"].spans.values())
