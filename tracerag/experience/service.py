"""ExperienceRetrieval as a service: a new task (with images as data URLs) in, the distilled experience and the
tasks it came from out (the program's result model), and its MCP tool ``retrieve_experience``."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator

from ..errors import InvalidValue
from ..service_models import MAX_QUESTION, ProgramService, Request, store_described
from .result import ExperienceResult


class ExperienceRequest(Request):
    """A new agent task for ``ExperienceRetrieval``."""

    question: str = Field(max_length=MAX_QUESTION, description="the new task's question")
    images: list[str] = Field(default_factory=list, max_length=8,
                              description="images as data: URLs (data:image/png;base64,…); the service reads no "
                                          "paths and fetches no URLs for a client")
    caption: str | None = Field(None, max_length=MAX_QUESTION, description="a description of the task's images")
    sub_task: str | None = Field(None, max_length=1000, description="the task type")

    @field_validator("images")
    @classmethod
    def _data_urls(cls, images: list[str]) -> list[str]:
        for i, image in enumerate(images):
            if not image.startswith("data:image/"):
                raise InvalidValue(f"images[{i}] must be a data:image/… URL")
        return images


ExperienceResponse = ExperienceResult  # the response body is the program's result, field for field


def mcp_tool(answer):
    async def retrieve_experience(
        question: Annotated[str, Field(description="the new task's question")],
        caption: Annotated[str | None, Field(description="a description of the task's images")] = None,
        sub_task: Annotated[str | None, Field(description="the task type")] = None,
        images: Annotated[list[str] | None, Field(description="data:image/… URLs")] = None,
    ) -> ExperienceResult:
        return await answer(question=question, caption=caption, sub_task=sub_task, images=images)
    return retrieve_experience


SERVICE = ProgramService(
    "/v1/experience", "retrieve_experience", ExperienceRequest, ExperienceResult, mcp_tool,
    embedder_id=lambda program: program.store.describe().embedder_id if program.store is not None else None,
    store_summary=lambda program: store_described(program.store),
    embedders=lambda program: [program.embedder])
