"""CommandRetrieval as a service: its request (an utterance, a home, optionally a parse of the caller's own),
its response (the program's result model), and its MCP tool ``find_smart_home_command``."""

from __future__ import annotations

import copy
from typing import Annotated, Any

from pydantic import ConfigDict, Field, field_validator

from ..device_categories import UNKNOWN_CATEGORY
from ..device_operations import Operation
from ..service_models import MAX_NAMES, MAX_QUESTION, ProgramService, Request, RequestError
from ..signatures.query_ir import CategoryName, Quantifier, QueryIR
from .result import CommandsResult


class QueryIRIn(Request):
    """A :class:`~tracerag.signatures.query_ir.QueryIR` as a caller gives it: checked, never repaired.

    ``QueryIR`` itself normalises what an LM gets wrong (an unknown quantifier becomes "one", a number
    becomes ""), because a sloppy parse must not fail a program; a caller's own parse that is wrong is a
    mistake to report, so here an unknown key or a wrong type or value is a 422 naming the field."""

    model_config = ConfigDict(extra="forbid", strict=True)

    operation: Operation | None = Field(None, description="what is to be done, from the closed set: on, off, "
                                                          "set_level, unlock, next ... (read from the action if "
                                                          "not given)")
    action: str = Field("", max_length=MAX_QUESTION, description="Chinese intent phrase, e.g. 打开")
    type_hint: CategoryName = Field(UNKNOWN_CATEGORY, description="the device category, or Unknown")
    name_hint: str = Field("", max_length=MAX_QUESTION, description="device name words the user said")
    scope_include: list[str] = Field(default_factory=list, max_length=MAX_NAMES, description="rooms limited to")
    scope_exclude: list[str] = Field(default_factory=list, max_length=MAX_NAMES,
                                     description="rooms excluded, or the name of a single device excepted")
    quantifier: Quantifier = Field("one", description="one | any | all | except")


class CommandsRequest(Request):
    """An utterance for ``CommandRetrieval``."""

    query: str = Field(max_length=MAX_QUESTION, description="the utterance, e.g. 打开客厅的灯")
    home: str | None = Field(None, description="home name; required when the program indexes several homes")
    ir: QueryIRIn | None = Field(None, description="a parse the caller already has: used instead of parsing")

    @field_validator("ir")
    @classmethod
    def _as_query_ir(cls, ir: QueryIRIn | None) -> QueryIR | None:
        """The checked parse as the ``QueryIR`` the program takes."""
        return None if ir is None else QueryIR(**ir.model_dump())


CommandsResponse = CommandsResult  # the response body is the program's result, field for field


def prepare(program, request: CommandsRequest) -> tuple[Any, dict[str, Any]]:
    """The home must be one the program indexes; a parse the caller gives is used instead of parsing."""
    homes = sorted(program.indexes)
    if request.home is None and len(homes) > 1:
        raise RequestError("home", f"required: this program indexes several homes {homes}")
    if request.home is not None and request.home not in program.indexes:
        raise RequestError("home", f"unknown home {request.home!r}; this program indexes {homes}")
    if request.ir is not None and program.ir_source != "gold":
        program = copy.copy(program)  # shares the indexes and predictors; only this call uses the given parse
        program.ir_source = "gold"
    return program, {"query": request.query, "home": request.home, "ir": request.ir}


def mcp_tool(answer):
    async def find_smart_home_command(
        query: Annotated[str, Field(description="the utterance, e.g. 打开客厅的灯")],
        home: Annotated[str | None, Field(description="home name, when the program indexes several")] = None,
        ir: Annotated[QueryIRIn | None, Field(description="a QueryIR the caller already has")] = None,
    ) -> CommandsResult:
        return await answer(query=query, home=home, ir=ir.model_dump(exclude_unset=True) if ir else None)
    return find_smart_home_command


SERVICE = ProgramService(
    "/v1/commands", "find_smart_home_command", CommandsRequest, CommandsResult, mcp_tool, prepare,
    embedder_id=lambda program: next(iter(program.indexes.values())).embedder.id,
    store_summary=lambda program: {"homes": {home: len(index.home.devices)
                                             for home, index in sorted(program.indexes.items())}},
    embedders=lambda program: [getattr(index, "embedder", None) for index in program.indexes.values()])
