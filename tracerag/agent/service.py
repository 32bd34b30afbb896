"""SearchAgent as a service: a question in, the answer, its citations and the whole trajectory out, and its MCP
tool ``research``."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..service_models import MAX_QUESTION, ProgramService, Request, Response
from ..tools.trajectory import Trajectory


class AgentRequest(Request):
    """A question for ``SearchAgent``."""

    question: str = Field(max_length=MAX_QUESTION)


class AgentResponse(Response):
    trajectory: Trajectory
    answer: str | None
    ids_cited: list[str]
    returned_ids: list[str]
    stop_reason: str
    tool_calls: int
    hallucinated_outputs: int
    hint: str | None
    lm_fallbacks: list[str]
    lm_errors: list[str]
    lm_calls: int
    ms: float


def mcp_tool(answer):
    async def research(question: Annotated[str, Field(description="the question")]) -> AgentResponse:
        return await answer(question=question)
    return research


SERVICE = ProgramService(
    "/v1/agent", "research", AgentRequest, AgentResponse, mcp_tool,
    store_summary=lambda program: {"tools": program.toolbox.names if program.toolbox is not None else []})
