"""The programs tracerag offers, one entry each: what every front end (the command line, the HTTP
service, the MCP tools) and an app read to build, evaluate and compile them.

Adding a program is one :class:`ProgramEntry` here plus its module, its builder (:mod:`tracerag.building`)
and its workflows (:mod:`tracerag.workflows`: examples, evaluate, run, compile). Apps build one with
``tracerag.build("rag")`` or ``tracerag.build("commands", homes="path/to/home")``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import building
from .workflows import agent, commands, experience, planner, rag

__all__ = ["PROGRAMS", "ProgramEntry", "build", "entry"]


@dataclass(frozen=True)
class ProgramEntry:
    name: str  # what the command line, the service's --program and tracerag.build call it
    program_class: str  # the dspy.Module it builds
    summary: str  # one line: what it answers (the MCP tool's description, /v1/programs)
    build: Callable[..., Any]  # keyword options only (see tracerag.building)
    dataset: str  # the bundled dataset its evaluation and compile read by default
    metric: str  # what its compile optimises (recorded in the artifact)
    report_columns: tuple[str, ...]  # the metrics its evaluation report shows beside recall
    # the workflows (tracerag.workflows): keyword options named after the command line's flags
    examples: Callable[..., list]  # (dataset, split) -> its labelled dspy Examples
    evaluate: Callable[..., Any]  # (build, dataset=, split=, ...) -> Outcome holding the report
    compile: Callable[..., Any]  # (build, dataset=, optimizer=, options=, ...) -> Compiled
    run: Callable[..., Any] | None = None  # (build, query=, ...) -> Outcome holding printable text; None: no run


PROGRAMS: dict[str, ProgramEntry] = {e.name: e for e in (
    ProgramEntry("commands", "CommandRetrieval",
                 "Find the smart-home (device, command) candidates an utterance asks for, or the bulk plan for "
                 "all/except; hint says when to ask the user instead.",
                 building.build_commands, "smarthome", "parse_recall@10", ("bulk_precision", "clarification_rate"),
                 commands.examples, commands.evaluate, commands.compile, commands.run),
    ProgramEntry("experience", "ExperienceRetrieval",
                 "Distil short experience for a new agent task from similar solved tasks, with the task ids it "
                 "came from.",
                 building.build_experience, "experience", "experience_score", ("used_precision", "usefulness"),
                 experience.examples, experience.evaluate, experience.compile, experience.run),
    ProgramEntry("rag", "SelfReflectiveRAG",
                 "Answer a question from graded passages, citing [chunk-id]s, with a groundedness check.",
                 building.build_rag, "pubmedqa", "rag_score",
                 ("accuracy", "grounded_rate", "citation_validity", "citation_coverage", "citation_recall",
                  "citation_precision"),
                 rag.examples, rag.evaluate, rag.compile, rag.run),
    ProgramEntry("planner", "TraceablePlanner",
                 "Write a structured plan from requirements, playbook bullets and templates, recording which ids "
                 "it used.",
                 building.build_planner, "planner", "planner_score",
                 ("used_recall", "used_precision", "used_f1", "citation_validity", "citation_coverage",
                  "hallucinated_per_plan", "score"),
                 planner.examples, planner.evaluate, planner.compile),
    ProgramEntry("agent", "SearchAgent",
                 "Research a question with the search tools and answer with citations of what they returned.",
                 building.build_agent, "pubmedqa", "agent_score",
                 ("accuracy", "citation_validity", "citation_coverage", "gold_found", "tool_calls",
                  "hallucinated_outputs", "answered_rate"),
                 agent.examples, agent.evaluate, agent.compile, agent.run),
)}


def entry(name: str) -> ProgramEntry:
    """The entry of ``name``; an unknown name is a ValueError listing the known ones."""
    try:
        return PROGRAMS[name]
    except KeyError:
        raise ValueError(f"unknown program {name!r}; choose from {', '.join(PROGRAMS)}") from None


def build(name: str, **options: Any):
    """The program ``name`` built with ``options`` (``artifact=`` for a compiled one; the rest as its builder in
    :mod:`tracerag.building` documents): ``tracerag.build("rag")`` is the RAG program on its bundled defaults."""
    return entry(name).build(**options)
