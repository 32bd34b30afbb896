"""The programs as MCP tools, beside the HTTP service: ``find_smart_home_command``, ``retrieve_experience``,
``answer_with_citations``, ``plan``, ``research``.

Each answers the JSON the HTTP service (``tracerag serve``) answers, through the same code
(:mod:`tracerag.serving.programs`); a request the program cannot take is a tool error naming the field.
``python -m tracerag.tools --programs ...`` adds them to the agent's tool server.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field, ValidationError

from . import requests as rq
from .programs import RequestError, Runner

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

    def offer(name: str):
        """Register the function as the tool of program ``name`` (when it is loaded), with its summary."""
        def register(fn):
            if name in programs:
                endpoint = programs[name].endpoint
                server.tool(name=endpoint.tool, description=endpoint.summary, annotations=annotations)(fn)
            return fn
        return register

    @offer("commands")
    async def find_smart_home_command(
        query: Annotated[str, Field(description="the utterance, e.g. 打开客厅的灯")],
        home: Annotated[str | None, Field(description="home name, when the program indexes several")] = None,
        ir: Annotated[rq.QueryIRIn | None, Field(description="a QueryIR the caller already has")] = None,
    ) -> rq.CommandsResponse:
        return await answer("commands", query=query, home=home, ir=ir.model_dump(exclude_unset=True) if ir else None)

    @offer("experience")
    async def retrieve_experience(
        question: Annotated[str, Field(description="the new task's question")],
        caption: Annotated[str | None, Field(description="a description of the task's images")] = None,
        sub_task: Annotated[str | None, Field(description="the task type")] = None,
        images: Annotated[list[str] | None, Field(description="data:image/… URLs")] = None,
    ) -> rq.ExperienceResponse:
        return await answer("experience", question=question, caption=caption, sub_task=sub_task, images=images)

    @offer("rag")
    async def answer_with_citations(question: Annotated[str, Field(description="the question")]) -> rq.RAGResponse:
        return await answer("rag", question=question)

    @offer("planner")
    async def plan(
        requirements: Annotated[str, Field(description="what the plan must achieve")],
        bullets: Annotated[list[str] | None, Field(description="playbook lines '[slug-00001] helpful=X "
                                                               "harmful=Y :: text'")] = None,
        templates: Annotated[list[rq.TemplateIn] | None, Field(description="reference passages {id?, title?, "
                                                                         "text, score?}, best first")] = None,
    ) -> rq.PlanResponse:
        given = None if templates is None else [t.model_dump(exclude_unset=True) for t in templates]
        return await answer("planner", requirements=requirements, bullets=bullets, templates=given)

    @offer("agent")
    async def research(question: Annotated[str, Field(description="the question")]) -> rq.AgentResponse:
        return await answer("agent", question=question)
