"""What every program's service shares: the base of its request bodies, the bounds on what one request may
hold, the error a request the program cannot serve is, and what a program hands the service
(``ProgramService``: its endpoint, MCP tool, models and hooks).

Why models: one declaration validates a request (an unknown field, a wrong type or a missing one is a 422
naming the field), documents it in ``/openapi.json``, and types the MCP tools' arguments. A response is the
program's result model (``program_result``: its ``Prediction``'s fields under the same names), as JSON; the
service writes the converted prediction as is, so a response costs no second validation. Each program's own
request model and hooks are its package's ``service`` module.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .errors import TraceragError

# Characters of a query or question: far above any real one (the longest bundled utterance has 58), and a
# bound on what one request may cost (embedding and searching a 20,000-character question took 3.5 s).
MAX_QUESTION = 4_000
MAX_TEXT = 20_000  # characters of a planner's requirements: a document rather than a question
MAX_NAMES = 100  # rooms or devices in one scope list of a given parse


class Request(BaseModel):
    """A request body: an unknown field is an error, never ignored."""

    model_config = ConfigDict(extra="forbid")


class RequestError(TraceragError, ValueError):
    """A request that validates but that this program cannot serve (an unknown home): a 422 naming the field."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}", field=field)
        self.message = message


class ErrorField(BaseModel):
    field: str = Field(description="where in the body, e.g. query or templates.0.text")
    message: str


class ErrorResponse(BaseModel):
    """Every 4xx and 5xx: one line saying what to change, and for a 422 the fields at fault."""

    error: str
    fields: list[ErrorField] = Field(default_factory=list)


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


def store_described(store) -> dict[str, Any] | None:
    """What a store behind the store protocol says it is (backend, secret-free URI, embedder, rows)."""
    return None if store is None else {**to_jsonable(store.describe()), "rows": store.count()}


def as_keywords(program, request: BaseModel) -> tuple[Any, dict[str, Any]]:
    """The program as it is, called with the request's fields by name (what most programs take)."""
    return program, request.model_dump()


@dataclass(frozen=True)
class ProgramService:
    """How the service offers one program: the HTTP path, the MCP tool's name, the request model and the
    response model (the program's result model), and the hooks that differ per program."""

    path: str  # POST path of the HTTP service
    tool: str  # MCP tool name
    request: type[BaseModel]
    response: type[BaseModel]  # its package's ProgramResult
    mcp_tool: Callable[[Callable], Callable]  # (answer) -> the typed async tool function calling answer(**args)
    prepare: Callable[[Any, BaseModel], tuple[Any, dict[str, Any]]] = as_keywords  # (program, request)
    embedder_id: Callable[[Any], str | None] = lambda program: None  # what /v1/programs says it embeds with
    store_summary: Callable[[Any], dict[str, Any] | None] = lambda program: None  # and what it searches
    # the embedders its queries are embedded with: each computes one vector before the service says it is ready
    embedders: Callable[[Any], Iterable[Any]] = lambda program: ()
    # what it holds beyond memory (the agent's tool servers, child processes), released when the service stops
    close: Callable[[Any], None] = lambda program: None
