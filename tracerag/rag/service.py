"""SelfReflectiveRAG as a service: a question in, the cited answer and what it was drawn from out (the program's
result model), and its MCP tool ``answer_with_citations``."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..service_models import MAX_QUESTION, ProgramService, Request, store_described
from .result import RAGResult


class RAGRequest(Request):
    """A question for ``SelfReflectiveRAG``."""

    question: str = Field(max_length=MAX_QUESTION)


RAGResponse = RAGResult  # the response body is the program's result, field for field


def mcp_tool(answer):
    async def answer_with_citations(question: Annotated[str, Field(description="the question")]) -> RAGResult:
        return await answer(question=question)
    return answer_with_citations


SERVICE = ProgramService(
    "/v1/rag", "answer_with_citations", RAGRequest, RAGResult, mcp_tool,
    embedder_id=lambda program: program.retriever.describe().embedder_id,
    store_summary=lambda program: store_described(program.retriever.store),
    embedders=lambda program: [getattr(program.retriever, "embedder", None)])
