"""Each program's prediction holds exactly the fields of its result model (``<package>/result.py``), with the
declared types, and the service answers with that model: a field forward() gains that the model does not
declare fails here, not in a client. Every program runs for real, without an LM, on small data."""

from __future__ import annotations

import typing

import dspy
import pytest
from faults.test_agent_faults import Library
from faults.test_planner_faults import PLAYBOOK, TEMPLATES

from tracerag.program_result import FieldsDisagree, ProgramResult
from tracerag.registry import PROGRAMS
from tracerag.serving.programs import prediction_json

SERVED = [name for name, entry in PROGRAMS.items() if entry.service is not None]


def _commands(request) -> list:
    from tracerag.commands.command_retrieval import CommandRetrieval

    program = CommandRetrieval(request.getfixturevalue("index"))
    return [program(query=q) for q in ("打开客厅的灯", "所有灯都关掉", "hello", "x" * 1001)]


def _experience(request) -> list:
    from tracerag.experience.experience_retrieval import ExperienceConfig, ExperienceRetrieval
    from tracerag.memory.experience_bank import build_experience_bank
    from tracerag.stores.cosine_bank import CosineBank

    bank, embedder = request.getfixturevalue("tmp_path") / "bank", request.getfixturevalue("embedder")
    build_experience_bank(request.getfixturevalue("traces_dir"), bank, embedder)
    program = ExperienceRetrieval(CosineBank.load(bank, embedder), ExperienceConfig(enable=True))
    return [program(question="Sum my receipt with tax."), program(question="  "), ExperienceRetrieval()(question="x")]


def _rag(request) -> list:
    from tracerag.rag.self_reflective_rag import RAGConfig, SelfReflectiveRAG

    program = SelfReflectiveRAG(request.getfixturevalue("retriever"), RAGConfig(k=4))
    return [program(question="Do statins lower cholesterol in diabetes patients?"), program(question="?")]


def _planner(request) -> list:
    from tracerag.planner.traceable_planner import TraceablePlanner

    return [TraceablePlanner()(requirements="Set up a PCR.", bullets=PLAYBOOK, templates=TEMPLATES),
            TraceablePlanner()(requirements=" ")]


def _agent(request) -> list:
    from tracerag.agent.search_agent import SearchAgent

    program = SearchAgent(Library())
    return [program(question="Do statins lower cholesterol in diabetes patients?"), program(question="")]


SAMPLES = {"commands": _commands, "experience": _experience, "rag": _rag, "planner": _planner, "agent": _agent}


def test_every_served_program_is_sampled_here():
    assert sorted(SAMPLES) == sorted(SERVED)


@pytest.mark.parametrize("name", SERVED)
def test_a_real_prediction_has_exactly_the_result_models_fields(name, request):
    result = PROGRAMS[name].service().response
    assert issubclass(result, ProgramResult)
    for pred in SAMPLES[name](request):
        assert set(pred.keys()) == set(result.model_fields), name
        typed = result.model_validate(prediction_json(pred))  # the values have the declared types, as JSON
        assert not typed.model_extra


@pytest.mark.parametrize("name", SERVED)
def test_the_mcp_tool_returns_the_result_model(name):
    service = PROGRAMS[name].service()

    async def answer(**arguments):
        return arguments

    tool = service.mcp_tool(answer)
    assert typing.get_type_hints(tool)["return"] is service.response


def test_a_prediction_with_a_field_its_model_does_not_declare_is_refused():
    class Result(ProgramResult):
        answer: str
        hint: str | None

    assert Result.prediction(answer="yes", hint=None).answer == "yes"
    with pytest.raises(FieldsDisagree, match=r"not declared: \['extra'\]; missing: none"):
        Result.prediction(answer="yes", hint=None, extra=1)
    with pytest.raises(FieldsDisagree, match=r"not declared: none; missing: \['hint'\]"):
        Result.prediction(answer="yes")


def test_reading_a_prediction_through_its_model_keeps_its_values():
    class Result(ProgramResult):
        answer: str
        ids: list[str]

    ids = ["a"]
    read = Result.of(dspy.Prediction(answer="yes", ids=ids))
    assert read.answer == "yes" and read.ids is ids  # no copy, no validation


def test_each_result_field_is_described_by_its_docstring_in_the_schema():
    """The service's schemas (OpenAPI, MCP) describe each result field by the docstring under it, read without
    pydantic's scan of every loaded module."""
    from tracerag.commands.result import CommandsResult
    from tracerag.rag.result import RAGResult

    fields = CommandsResult.model_json_schema()["properties"]
    assert fields["candidates"]["description"] == "The (device, command) candidates, best first, at most ``k``."
    assert fields["parse_source"]["description"].startswith("Where the parse came from: lm, rules")
    assert all(field.get("description") for field in fields.values())
    assert all(field.get("description") for field in RAGResult.model_json_schema()["properties"].values())
