"""The service's request and response bodies as pydantic models.

Why models: one declaration validates a request (an unknown field, a wrong type or a missing one is a 422
naming the field), documents it in ``/openapi.json``, and types the MCP tools' arguments. Responses carry
the program's ``Prediction`` fields under the same names, as JSON; the models describe them (the service
writes the converted prediction as is, so a response costs no second validation).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..device_categories import UNKNOWN_CATEGORY
from ..device_operations import Operation
from ..home_commands.command_results import BulkPlan, Candidate, Withheld
from ..signatures.planner import Plan
from ..signatures.query_ir import CategoryName, Quantifier, QueryIR
from ..tools.trajectory import Trajectory

# Characters of a query or question: far above any real one (the longest bundled utterance has 58), and a
# bound on what one request may cost (embedding and searching a 20,000-character question took 3.5 s).
MAX_QUESTION = 4_000
MAX_TEXT = 20_000  # characters of a planner's requirements: a document rather than a question
MAX_NAMES = 100  # rooms or devices in one scope list of a given parse


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class QueryIRIn(_Request):
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


class CommandsRequest(_Request):
    """An utterance for ``CommandRetrieval``."""

    query: str = Field(max_length=MAX_QUESTION, description="the utterance, e.g. 打开客厅的灯")
    home: str | None = Field(None, description="home name; required when the program indexes several homes")
    ir: QueryIRIn | None = Field(None, description="a parse the caller already has: used instead of parsing")

    @field_validator("ir")
    @classmethod
    def _as_query_ir(cls, ir: QueryIRIn | None) -> QueryIR | None:
        """The checked parse as the ``QueryIR`` the program takes."""
        return None if ir is None else QueryIR(**ir.model_dump())


class RAGRequest(_Request):
    """A question for ``SelfReflectiveRAG``."""

    question: str = Field(max_length=MAX_QUESTION)


class ExperienceRequest(_Request):
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
                raise ValueError(f"images[{i}] must be a data:image/… URL")
        return images


class TemplateIn(_Request):
    """A retrieved reference passage handed to the planner."""

    id: str | None = Field(None, description="default: derived from the text (tpl-<hash8>)")
    title: str = ""
    text: str = Field(min_length=1, max_length=100_000)
    score: float | None = None


class PlanRequest(_Request):
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


class AgentRequest(_Request):
    """A question for ``SearchAgent``."""

    question: str = Field(max_length=MAX_QUESTION)


# -- responses: the Prediction's fields, as JSON ---------------------------------------------------


class _Response(BaseModel):
    model_config = ConfigDict(extra="allow")  # a field a program gains later still reaches the client


class CommandsResponse(_Response):
    candidates: list[Candidate]
    bulk: BulkPlan | None
    ir: QueryIR
    parse_source: str
    hint: str | None
    withheld: list[Withheld]
    unresolved: list[str] = []
    unanswered: str = ""
    lm_overruled: list[str]
    lm_parse: QueryIR | None
    lm_fallbacks: list[str]
    lm_errors: list[str]
    lm_calls: int
    home: str


class RAGResponse(_Response):
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


class ExperienceResponse(_Response):
    experience: str
    section: str
    task_ids: list[list[str]]
    retrieved_task_ids: list[list[str]]
    used_task_ids: list[str]
    queries: list[list[str]]
    rounds: int
    lm_calls: int
    hint: str | None
    lm_fallbacks: list[str]
    lm_errors: list[str]
    error: str | None


class PlanResponse(_Response):
    plan: Plan | None
    bullets_used: list[str]
    templates_used: list[str]
    hallucinated_ids: list[str]
    retrieved_bullet_ids: list[str]
    retrieved_template_ids: list[str]
    lm_calls: int
    error: str | None
    hint: str | None
    lm_fallbacks: list[str]
    metadata: dict[str, Any]


class AgentResponse(_Response):
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


class ErrorField(BaseModel):
    field: str = Field(description="where in the body, e.g. query or templates.0.text")
    message: str


class ErrorResponse(BaseModel):
    """Every 4xx and 5xx: one line saying what to change, and for a 422 the fields at fault."""

    error: str
    fields: list[ErrorField] = Field(default_factory=list)
