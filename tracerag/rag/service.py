"""SelfReflectiveRAG as a service: a question in, the cited answer and what it was drawn from out, and its MCP
tool ``answer_with_citations``."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from ..service_models import MAX_QUESTION, ProgramService, Request, Response, store_described


class RAGRequest(Request):
    """A question for ``SelfReflectiveRAG``."""

    question: str = Field(max_length=MAX_QUESTION)


class RAGResponse(Response):
    answer: str
    verdict: str
    grounded: bool | None
    hint: str | None
    retrieved_ids: list[str]
    retrieved_per_round: list[list[str]]
    kept_ids: list[str]
    context_ids: list[str]
    cited_ids: list[str]
    invalid_cited_ids: list[str]
    grades: dict[str, dict[str, Any]]
    unsupported_claims: list[str]
    queries: list[str]
    rounds: int
    lm_calls: int
    lm_fallbacks: list[str]
    lm_errors: list[str]
    regraded: int
    seconds: float
    chunk_doc_ids: dict[str, str]
    context_texts: dict[str, str]


def mcp_tool(answer):
    async def answer_with_citations(question: Annotated[str, Field(description="the question")]) -> RAGResponse:
        return await answer(question=question)
    return answer_with_citations


SERVICE = ProgramService(
    "/v1/rag", "answer_with_citations", RAGRequest, RAGResponse, mcp_tool,
    embedder_id=lambda program: program.retriever.describe().embedder_id,
    store_summary=lambda program: store_described(program.retriever.store))
