"""The programs tracerag offers, one entry each: what every front end (the command line, the HTTP
service, the MCP tools) and an app read to build, evaluate and compile them.

Adding a program is one package (its module, builder, workflows, artifact description and ``spec.ENTRY``) and
one line here. Apps build one with ``tracerag.build("rag")`` or ``tracerag.build("commands",
homes="path/to/home")``, and save and load compiled ones with ``tracerag.save`` / ``tracerag.load``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .agent.spec import ENTRY as AGENT
from .commands.spec import ENTRY as COMMANDS
from .errors import InvalidType, InvalidValue
from .experience.spec import ENTRY as EXPERIENCE
from .planner.spec import ENTRY as PLANNER
from .program_entry import ProgramEntry
from .rag.spec import ENTRY as RAG

__all__ = ["PROGRAMS", "ProgramEntry", "build", "entry", "load", "save"]


PROGRAMS: dict[str, ProgramEntry] = {e.name: e for e in (COMMANDS, EXPERIENCE, RAG, PLANNER, AGENT)}


def entry(name: str) -> ProgramEntry:
    """The entry of ``name``; an unknown name is a ValueError listing the known ones."""
    try:
        return PROGRAMS[name]
    except KeyError:
        raise InvalidValue(f"unknown program {name!r}; choose from {', '.join(PROGRAMS)}") from None


def build(name: str, **options: Any):
    """The program ``name`` built with ``options`` (``artifact=`` for a compiled one; the rest as its package's
    builder documents, e.g. :func:`tracerag.rag.building.build_rag`): ``tracerag.build("rag")`` is the RAG
    program on its bundled defaults."""
    return entry(name).build(**options)


def _entry_of_class(name: str) -> ProgramEntry | None:
    """The entry of the program class ``name`` that can be saved and loaded (None: no such entry)."""
    return next((e for e in PROGRAMS.values() if e.program_class == name and e.describe is not None), None)


def save(program, path: str | Path, *, dataset: str | None = None, metric: str | None = None,
         scores: dict | None = None, extra: dict | None = None) -> Path:
    """Write a compiled program as an artifact (``artifacts``: the program file and its sidecar, durably);
    returns the sidecar's path. What beyond the prompts rebuilds it is its package's ``describe``."""
    from .artifacts import save_artifact

    found = next(filter(None, (_entry_of_class(cls.__name__) for cls in type(program).__mro__)), None)
    if found is None:
        raise InvalidType(f"cannot save {type(program).__name__}: no artifact format for it")
    return save_artifact(program, path, found.describe(program, Path(path).parent), dataset=dataset, metric=metric,
                         scores=scores, extra=extra)


def load(path: str | Path, home: str | Path | None = None, embedder=None, *, store=None, tools=None):
    """Rebuild a compiled program for an app.

    CommandRetrieval: ``home`` is the app's home directory (defaults to the dataset it was compiled on).
    ExperienceRetrieval, SelfReflectiveRAG, TraceablePlanner with a template store: ``store`` is the app's
    store (a URI, e.g. ``milvus://host:19530?collection=traces`` or a bank directory, or an open
    VectorStore); it defaults to the store the artifact records.
    SearchAgent: ``tools`` is the app's Toolbox (default: the bundled local MCP server, started on first use).
    The embedder must be the one the artifact was built with.
    """
    from .artifacts import meta_path, read_artifact, rebuilt

    meta, state = read_artifact(path)
    found = _entry_of_class(meta["program"])
    if found is None:
        known = [e.program_class for e in PROGRAMS.values()]
        raise InvalidValue(f"{meta_path(path)}: unknown program {meta['program']!r}; expected one of {known}")
    return rebuilt(path, meta, state, found.rebuild, embedder=embedder, home=home, store=store, tools=tools)
