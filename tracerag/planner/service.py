"""TraceablePlanner as a service: requirements, playbook bullets and templates in, the plan and the ids it used
out (the program's result model), and its MCP tool ``plan``."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, field_validator

from ..service_models import MAX_TEXT, ProgramService, Request
from .result import PlanResult


class TemplateIn(Request):
    """A retrieved reference passage handed to the planner."""

    id: str | None = Field(None, description="default: derived from the text (tpl-<hash8>)")
    title: str = ""
    text: str = Field(min_length=1, max_length=100_000)
    score: float | None = None


class PlanRequest(Request):
    """Requirements, playbook bullets and templates for ``TraceablePlanner``."""

    requirements: str = Field(max_length=MAX_TEXT)
    bullets: list[str] | str = Field(default_factory=list,
                                     description="playbook lines '[slug-00001] helpful=X harmful=Y :: text', as a "
                                                 "list or one text")
    templates: list[TemplateIn] | None = Field(None, description="reference passages, best first")

    @field_validator("bullets")
    @classmethod
    def _playbook(cls, bullets: list[str] | str) -> list[str] | str:
        from ..memory.playbook import parse_playbook

        for line in [bullets] if isinstance(bullets, str) else bullets:
            parse_playbook(line, "<bullets>")  # a malformed line is a ValueError naming it: a 422, not a 500
        return bullets


PlanResponse = PlanResult  # the response body is the program's result, field for field


def prepare(program, request: PlanRequest) -> tuple[Any, dict[str, Any]]:
    templates = None if request.templates is None else [t.model_dump() for t in request.templates]
    return program, {"requirements": request.requirements, "bullets": request.bullets, "templates": templates}


def mcp_tool(answer):
    async def plan(
        requirements: Annotated[str, Field(description="what the plan must achieve")],
        bullets: Annotated[list[str] | None, Field(description="playbook lines '[slug-00001] helpful=X "
                                                               "harmful=Y :: text'")] = None,
        templates: Annotated[list[TemplateIn] | None, Field(description="reference passages {id?, title?, "
                                                                      "text, score?}, best first")] = None,
    ) -> PlanResult:
        given = None if templates is None else [t.model_dump(exclude_unset=True) for t in templates]
        return await answer(requirements=requirements, bullets=bullets, templates=given)
    return plan


SERVICE = ProgramService(
    "/v1/plan", "plan", PlanRequest, PlanResult, mcp_tool, prepare,
    embedders=lambda program: [getattr(program.retrieve_templates, "embedder", None)])  # a template store's
