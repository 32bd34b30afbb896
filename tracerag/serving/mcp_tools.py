"""The programs as MCP tools, beside the HTTP service: ``find_smart_home_command``, ``retrieve_experience``,
``answer_with_citations``, ``plan``, ``research`` (each typed by its package's ``service.mcp_tool``).

Each answers the JSON the HTTP service (``tracerag serve``) answers, through the same code
(:mod:`tracerag.serving.programs`); a request the program cannot take is a tool error naming the field.
``python -m tracerag.tools --programs ...`` adds them to the agent's tool server.
"""

from __future__ import annotations

import functools
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import ValidationError

from ..service_models import RequestError
from .programs import Runner

__all__ = ["add_program_tools"]


def add_program_tools(server: MCPServer, programs: dict, concurrency: int = 4) -> None:
    """One tool per loaded program (``tracerag.serving.programs.ServedProgram``), named by its endpoint's
    ``tool``; each validates its arguments with the HTTP service's request model and answers its JSON."""
    runner = Runner(concurrency)
    annotations = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    async def answer(name: str, **arguments: Any) -> Any:
        served = programs[name]
        try:
            request = served.endpoint.request.model_validate({k: v for k, v in arguments.items() if v is not None})
        except ValidationError as e:
            raise ToolError("; ".join(f"{'.'.join(map(str, x['loc'])) or 'arguments'}: {x['msg']}"
                                      for x in e.errors())) from None
        try:
            found = await runner.run(served, request)
        except RequestError as e:
            raise ToolError(str(e)) from None
        return served.endpoint.response.model_validate(found)  # the typed answer the tool's output schema states

    for name, served in programs.items():
        endpoint = served.endpoint
        tool = endpoint.service.mcp_tool(functools.partial(answer, name))
        server.tool(name=endpoint.tool, description=endpoint.summary, annotations=annotations)(tool)
