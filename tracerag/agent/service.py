"""SearchAgent as a service: a question in, the answer, its citations and the whole trajectory out (the
program's result model), and its MCP tool ``research``."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..service_models import MAX_QUESTION, ProgramService, Request
from .result import AgentResult


class AgentRequest(Request):
    """A question for ``SearchAgent``."""

    question: str = Field(max_length=MAX_QUESTION)


AgentResponse = AgentResult  # the response body is the program's result, field for field


def mcp_tool(answer):
    async def research(question: Annotated[str, Field(description="the question")]) -> AgentResult:
        return await answer(question=question)
    return research


SERVICE = ProgramService(
    "/v1/agent", "research", AgentRequest, AgentResult, mcp_tool,
    store_summary=lambda program: {"tools": program.toolbox.names if program.toolbox is not None else []},
    close=lambda program: program.close())  # its tool servers are child processes
