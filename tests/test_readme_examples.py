"""README.md's Python examples, and those of the reference pages moved out of it (docs/reference/), run as
pasted.

Every ```python block of these files is either run here (in a temporary directory holding what the text
says the reader has: ``my_home/`` is a copy of a bundled home) or listed in ``NEEDS`` with what it needs
that a test may not have (an LM key, a server, an artifact built earlier). A new block fails
``test_every_python_block_is_run_or_says_what_it_needs`` until it is one or the other. Blocks of one
walk-through run in one namespace, in their order, as a reader pastes them into one interpreter.

The runs load the default embedder and build indexes: they take seconds, so they are marked slow; the
fast tests beside them check each fixed example's own behaviour in the default run.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# The README's first screen, then the reference its longer sections became.
DOCUMENTS = [README, *sorted((ROOT / "docs" / "reference").glob("*.md"))]

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
    'tracerag.configure(lm="openai/gpt-4o-mini")  # the planner needs an LM': "an LM key",
    'tracerag.configure(lm="openai/gpt-4o-mini")  # the agent needs an LM': "an LM key",
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
    "README: CommandRetrieval": ['tracerag.configure()                         # no LM: the deterministic parse'],
    "README: ExperienceRetrieval": ['program = tracerag.build("experience")'],
    "README: SelfReflectiveRAG": ['program = tracerag.build("rag", k=5)'],
}

# What each README first example must have shown, beyond running.
SHOWN = {
    "README: CommandRetrieval": lambda ns: ns["pred"].bulk is not None and ns["pred"].bulk.targets,
    "README: ExperienceRetrieval": lambda ns: ns["pred"].experience and ns["pred"].used_task_ids,
    "README: SelfReflectiveRAG": lambda ns: ns["pred"].answer and ns["pred"].cited_ids,
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


def all_blocks() -> list[tuple[str, str]]:
    """("file:line", code) for every python block of the README and the reference pages."""
    return [(f"{doc.relative_to(ROOT)}:{line}", code) for doc in DOCUMENTS
            for line, code in python_blocks(doc.read_text(encoding="utf-8"))]


def _block(name: str) -> tuple[str, str]:
    found = [(where, code) for where, code in all_blocks() if _named(code, name)]
    assert len(found) == 1, f"{len(found)} python blocks start with {name!r}"
    return found[0]


def test_every_python_block_is_run_or_says_what_it_needs():
    known = list(NEEDS) + [name for names in RUNS.values() for name in names]
    for where, code in all_blocks():
        matches = [name for name in known if _named(code, name)]
        assert len(matches) == 1, (f"{where}: python block starting {first_code_line(code)!r} is "
                                   f"{'named by ' + repr(matches) if matches else 'neither run nor in NEEDS'}")


def test_the_readme_is_one_screen_with_an_example_per_program():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    for program in ("CommandRetrieval", "ExperienceRetrieval", "SelfReflectiveRAG", "TraceablePlanner",
                    "SearchAgent"):
        assert f"**{program}**" in text
    assert 'pip install -e . && tracerag evaluate commands --dataset smarthome --split test' in text
    assert 'pip install -e ".[dev]" && python -m pytest' in text


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
        where, code = _block(name)
        exec(compile(code, where, "exec"), namespace)  # noqa: S102 - the documents' own code
    if "report" in namespace:  # the dry run: calls shown, nothing sent
        report = namespace["report"]
        assert report.dry_run and report.calls and not report.sent
        assert "dry run (smartthings)" in capsys.readouterr().out
    if "preds" in namespace:
        assert len(namespace["preds"]) == len(namespace["questions"])
        assert all(p.retrieved_ids for p in namespace["preds"])
    if "recorder" in namespace:
        assert any(span["name"] == "corpus.search" for span in namespace["recorder"].spans.values())
    if walk in SHOWN:
        assert SHOWN[walk](namespace)
