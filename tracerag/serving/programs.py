"""The programs a service offers: which ones, how each is built, and how a request becomes its JSON answer.

Both front ends use this module, so the HTTP service (``tracerag serve``) and the MCP tools
(``python -m tracerag.tools --programs``) build the same programs and answer the same JSON:

- :data:`ENDPOINTS` names each program's endpoint, MCP tool, request and response models;
- :func:`load_programs` builds them through the registry (:mod:`tracerag.registry`, what ``tracerag
  run``/``evaluate`` build too), from an artifact or on the bundled defaults;
- :meth:`ServedProgram.respond` / :meth:`ServedProgram.arespond` call a program with a validated request
  and turn its ``Prediction`` into JSON under the same field names;
- :class:`Runner` bounds how many calls run at once and keeps them off the event loop.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from ..registry import PROGRAMS
from . import requests as rq

__all__ = ["DEFAULT_SOURCE", "ENDPOINTS", "Endpoint", "RequestError", "Runner", "ServedProgram", "load_programs",
           "parse_program_specs", "to_jsonable"]

logger = logging.getLogger(__name__)

DEFAULT_SOURCE = "bundled default"


@dataclass(frozen=True)
class Endpoint:
    """Where the service offers one of the registry's programs, and the models of its requests and answers."""

    name: str  # the registry's name: tracerag run/evaluate <name>, --program <name>=…
    path: str  # POST path of the HTTP service
    tool: str  # MCP tool name
    request: type[BaseModel]
    response: type[BaseModel]

    @property
    def program_class(self) -> str:
        return PROGRAMS[self.name].program_class

    @property
    def summary(self) -> str:
        return PROGRAMS[self.name].summary


ENDPOINTS: dict[str, Endpoint] = {e.name: e for e in (
    Endpoint("commands", "/v1/commands", "find_smart_home_command", rq.CommandsRequest, rq.CommandsResponse),
    Endpoint("experience", "/v1/experience", "retrieve_experience", rq.ExperienceRequest, rq.ExperienceResponse),
    Endpoint("rag", "/v1/rag", "answer_with_citations", rq.RAGRequest, rq.RAGResponse),
    Endpoint("planner", "/v1/plan", "plan", rq.PlanRequest, rq.PlanResponse),
    Endpoint("agent", "/v1/agent", "research", rq.AgentRequest, rq.AgentResponse),
)}
BY_PATH = {e.path: e for e in ENDPOINTS.values()}


class RequestError(ValueError):
    """A request that validates but that this program cannot serve (an unknown home): a 422 naming the field."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def parse_program_specs(values: list[str] | None) -> dict[str, str | None]:
    """``["commands=out/c.json", "rag"]`` (or ``"commands,rag"`` items) → {name: artifact or None}; none given:
    all five on their defaults. An unknown or repeated name is a ValueError."""
    specs: dict[str, str | None] = {}
    for value in values or []:
        for item in value.split(",") if "=" not in value else [value]:
            name, _, artifact = item.strip().partition("=")
            name = name.strip()
            if name not in ENDPOINTS:
                raise ValueError(f"unknown program {name!r} in --program; choose from {', '.join(ENDPOINTS)}")
            if name in specs:
                raise ValueError(f"program {name!r} is given twice")
            specs[name] = artifact.strip() or None
    return specs or dict.fromkeys(ENDPOINTS)


def to_jsonable(value: Any) -> Any:
    """A prediction's value as JSON data: pydantic models and dataclasses as objects, tuples as lists."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value))
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_jsonable(v) for v in value]
    return str(value)


def prediction_json(prediction) -> dict[str, Any]:
    """Every field of a ``dspy.Prediction``, under its own name, as JSON data."""
    return {key: to_jsonable(value) for key, value in prediction.toDict().items()}


@dataclass
class ServedProgram:
    """One loaded program and what ``/v1/programs`` says about it."""

    endpoint: Endpoint
    program: Any
    source: str = DEFAULT_SOURCE  # the artifact path, or DEFAULT_SOURCE
    metadata: dict[str, Any] = field(default_factory=dict)  # the artifact's sidecar; {} for a default

    @property
    def name(self) -> str:
        return self.endpoint.name

    def prepare(self, request: BaseModel) -> tuple[Any, dict[str, Any]]:
        """(the program to call, its keyword arguments) for a validated request."""
        name, program = self.name, self.program
        if name == "commands":
            homes = sorted(program.indexes)
            if request.home is None and len(homes) > 1:
                raise RequestError("home", f"required: this program indexes several homes {homes}")
            if request.home is not None and request.home not in program.indexes:
                raise RequestError("home", f"unknown home {request.home!r}; this program indexes {homes}")
            if request.ir is not None and program.ir_source != "gold":
                program = copy.copy(program)  # shares the indexes and predictors; only this call uses the given parse
                program.ir_source = "gold"
            return program, {"query": request.query, "home": request.home, "ir": request.ir}
        if name == "planner":
            templates = None if request.templates is None else [t.model_dump() for t in request.templates]
            return program, {"requirements": request.requirements, "bullets": request.bullets, "templates": templates}
        return program, request.model_dump()

    def respond(self, request: BaseModel) -> dict[str, Any]:
        """Call the program (blocking) and return its prediction as JSON. The call is one run with its own LM
        fault budget (``programs.fault_budget``; no share of its time): its failing LM calls take at most
        ``--lm-fault-budget`` seconds, then its remaining stages fall back."""
        from ..programs.fault_budget import lm_fault_budget

        program, kwargs = self.prepare(request)
        with lm_fault_budget(share=0.0):
            return prediction_json(program(**kwargs))

    async def arespond(self, request: BaseModel) -> dict[str, Any]:
        """``respond`` through ``await program.acall(...)``: LM calls on the event loop, retrieval in a thread."""
        from ..programs.fault_budget import lm_fault_budget

        program, kwargs = self.prepare(request)
        with lm_fault_budget(share=0.0):
            return prediction_json(await program.acall(**kwargs))

    def describe(self) -> dict[str, Any]:
        return {"program": self.endpoint.program_class, "endpoint": self.endpoint.path, "mcp_tool": self.endpoint.tool,
                "source": self.source, "metadata": self.metadata, "embedder": _known(_embedder_id, self),
                "store": _known(_store, self)}

    def close(self) -> None:
        toolbox = getattr(self.program, "toolbox", None)  # the agent's tool servers are child processes
        if toolbox is not None:
            toolbox.close()


def _known(describe, served: ServedProgram):
    """What ``describe`` finds on the program; None for a program built otherwise (an app's own subclass)."""
    try:
        return describe(served.name, served.program)
    except (AttributeError, StopIteration, TypeError):
        return None


def _embedder_id(name: str, program) -> str | None:
    if name == "commands":
        return next(iter(program.indexes.values())).embedder.id
    if name == "rag":
        return program.retriever.describe().embedder_id
    if name == "experience":
        return program.store.describe().embedder_id if program.store is not None else None
    return None  # the planner embeds nothing; the agent's tools bring their own


def _described(store) -> dict[str, Any] | None:
    """What a store behind the store protocol says it is (backend, secret-free URI, embedder, rows)."""
    return None if store is None else {**to_jsonable(store.describe()), "rows": store.count()}


def _store(name: str, program) -> dict[str, Any] | None:
    if name == "commands":
        return {"homes": {home: len(index.home.devices) for home, index in sorted(program.indexes.items())}}
    if name == "rag":
        return _described(program.retriever.store)
    if name == "experience":
        return _described(program.store)
    if name == "agent":
        return {"tools": program.toolbox.names if program.toolbox is not None else []}
    return None


def load_programs(specs: Mapping[str, str | None], options: Mapping[str, Mapping[str, Any]] | None = None
                  ) -> dict[str, ServedProgram]:
    """Build each program of ``specs`` ({name: artifact or None}) through the registry, with its builder's
    keyword ``options`` ({name: {option: value}}; none: the bundled defaults); a failure closes what was
    already started and raises."""
    from ..artifacts import read_meta
    from ..registry import build

    options = options or {}
    on_defaults = {n for n, a in specs.items() if a is None}
    for shared in ("bank", "store"):
        users = sorted(n for n in on_defaults & {"experience", "rag", "planner"} if options.get(n, {}).get(shared))
        if len(users) > 1:
            raise ValueError(f"--{shared} is ambiguous with {' and '.join(users)} on their defaults; serve all but "
                             f"one from an artifact (--program NAME=FILE) or in separate services")
    served: dict[str, ServedProgram] = {}
    try:
        for name, artifact in specs.items():
            program = build(name, **{**options.get(name, {}), "artifact": artifact})
            served[name] = ServedProgram(ENDPOINTS[name], program, artifact or DEFAULT_SOURCE,
                                         read_meta(artifact) if artifact else {})
            logger.info("loaded %s from %s", name, artifact or DEFAULT_SOURCE)
    except BaseException:
        for program in served.values():
            program.close()
        raise
    return served


class Runner:
    """Runs program calls with at most ``concurrency`` at once, off the event loop.

    ``mode="thread"`` calls ``program(...)`` in a worker thread; ``mode="async"`` awaits ``program.acall``
    (its LM calls wait on the loop without holding a thread; its retrieval runs in a thread).
    """

    def __init__(self, concurrency: int = 8, mode: str = "thread"):
        if mode not in ("thread", "async"):
            raise ValueError(f"unknown call mode {mode!r}; choose thread or async")
        self.concurrency = concurrency
        self.mode = mode
        self._limiter = None  # made on first use: an anyio limiter belongs to a running event loop

    async def run(self, served: ServedProgram, request: BaseModel) -> dict[str, Any]:
        import anyio

        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.concurrency)
        if self.mode == "async":
            async with self._limiter:
                return await served.arespond(request)
        return await anyio.to_thread.run_sync(served.respond, request, limiter=self._limiter)
