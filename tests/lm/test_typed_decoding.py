"""Typed outputs by construction: the JSON schema a call decodes against is the signature's output types (every
field required, objects closed, the enums of its Literals) with the bounds the program declares, the home's
rooms among them; ``TypedJSONAdapter`` hands it to an LM that takes one and parses the reply with DSPy's own
JSONAdapter. No model here: an engine that records the request answers."""

import json

import dspy
from dspy.lm15 import Message, Response, TextPart, Usage

import tracerag
from tracerag.commands.signatures import ArbitrateCapability, ParseCommand
from tracerag.device_operations import OPERATIONS
from tracerag.lm.typed_decoding import TypedJSONAdapter, adapter_for, output_schema, schema_of
from tracerag.signatures.query_ir import QueryIR

ROOMS = ["客厅", "主卧", "书房"]


def _ir_schema(rooms):
    return output_schema(ParseCommand, {"utterance": "打开客厅的灯", "rooms": rooms})["$defs"]["QueryIR"]


def test_the_parse_schema_is_closed_typed_and_bounded():
    schema = output_schema(ParseCommand, {"rooms": ROOMS})
    assert schema["required"] == ["ir"] and schema["additionalProperties"] is False
    ir = schema["$defs"]["QueryIR"]
    props = ir["properties"]
    assert ir["required"] == list(QueryIR.model_fields) and ir["additionalProperties"] is False
    assert props["operation"]["anyOf"][0]["enum"] == list(OPERATIONS) and props["operation"]["anyOf"][1] == {
        "type": "null"}
    assert "Light" in props["type_hint"]["enum"] and "Unknown" in props["type_hint"]["enum"]
    assert props["quantifier"]["enum"] == ["one", "any", "all", "except"]
    assert props["action"]["maxLength"] == 40 and props["name_hint"]["maxLength"] == 40
    assert props["scope_include"]["items"]["enum"] == ROOMS and props["scope_include"]["maxItems"] == 6
    assert props["scope_exclude"]["items"] == {"type": "string", "maxLength": 40}  # a room or a device excepted
    assert "default" not in json.dumps(schema)


def test_rooms_are_choices_only_where_the_call_knows_them():
    assert _ir_schema([])["properties"]["scope_include"]["items"] == {"type": "string", "maxLength": 40}
    assert _ir_schema(["客厅", "客厅"])["properties"]["scope_include"]["items"]["enum"] == ["客厅"]


def test_the_arbitration_schema_allows_only_an_option_that_exists():
    decision = output_schema(ArbitrateCapability, {"options": ["a", "b"]})["$defs"]["ArbitrationDecision"]
    assert decision["properties"]["choice_index"]["anyOf"] == [{"type": "integer", "enum": [0, 1]}, {"type": "null"}]
    assert decision["properties"]["question"]["anyOf"][0]["maxLength"] == 300


class SchemaEngine:
    """An engine that takes a JSON schema and answers every call with ``reply``; keeps each request."""

    supports_response_schema = True
    supported_params = frozenset({"response_format", "max_tokens", "temperature"})

    def __init__(self, reply: dict) -> None:
        self.reply, self.requests = reply, []

    def complete(self, request):
        self.requests.append(request)
        text = json.dumps(self.reply, ensure_ascii=False)
        return Response(id=None, model="schema", message=Message.assistant([TextPart(text)]), finish_reason="stop",
                        usage=Usage(input_tokens=1, output_tokens=1, total_tokens=2))


class PlainEngine(SchemaEngine):
    supports_response_schema = False
    supported_params = frozenset({"max_tokens", "temperature"})


IR = {"operation": "on", "action": "打开", "type_hint": "Light", "name_hint": "", "scope_include": ["客厅"],
      "scope_exclude": [], "quantifier": "one"}


def test_the_adapter_sends_the_schema_for_this_call_and_parses_with_dspy():
    engine = SchemaEngine({"ir": IR})
    lm = dspy.LM("schema/model", engine=engine, cache=False)
    with dspy.context(lm=lm, adapter=TypedJSONAdapter()):
        out = dspy.Predict(ParseCommand)(utterance="打开客厅的灯", rooms=ROOMS)
    assert isinstance(out.ir, QueryIR) and out.ir.scope_include == ["客厅"] and out.ir.operation == "on"
    sent = schema_of(engine.requests[0].config.response_format)
    assert sent["$defs"]["QueryIR"]["properties"]["scope_include"]["items"]["enum"] == ROOMS


def test_an_lm_that_takes_no_schema_gets_jsonadapters_own_request():
    engine = PlainEngine({"ir": IR})
    with dspy.context(lm=dspy.LM("plain/model", engine=engine, cache=False), adapter=TypedJSONAdapter()):
        out = dspy.Predict(ParseCommand)(utterance="打开客厅的灯", rooms=ROOMS)
    assert out.ir.type_hint == "Light" and schema_of(engine.requests[0].config.response_format) is None
    forced = SchemaEngine({"ir": IR})
    forced.supports_response_schema = False  # a server DSPy knows nothing of, that the user knows takes one
    with dspy.context(lm=dspy.LM("plain/model", engine=forced, cache=False),
                      adapter=TypedJSONAdapter(schema_always=True)):
        dspy.Predict(ParseCommand)(utterance="打开客厅的灯", rooms=ROOMS)
    assert schema_of(forced.requests[0].config.response_format)["required"] == ["ir"]


def test_configure_fits_its_own_adapter_to_the_lm_and_keeps_yours():
    class Typed(dspy.LM):
        typed_decoding = True

    typed = Typed("schema/model", engine=SchemaEngine({"ir": IR}), cache=False)
    assert isinstance(adapter_for(typed), TypedJSONAdapter)
    assert type(adapter_for(dspy.LM("openai/x"))) is dspy.ChatAdapter
    tracerag.configure(lm=typed)
    assert isinstance(dspy.settings.adapter, TypedJSONAdapter)
    tracerag.configure(lm=dspy.LM("schema/other", engine=PlainEngine({}), cache=False))
    assert type(dspy.settings.adapter) is dspy.ChatAdapter  # the adapter configure set follows the LM
    mine = dspy.XMLAdapter()
    dspy.configure(adapter=mine)
    tracerag.configure(lm=typed)
    assert dspy.settings.adapter is mine  # yours stays


def test_an_openai_compatible_server_gets_the_schema_when_told_it_takes_one():
    """A local server DSPy's capability table does not know (llama.cpp's, Ollama, vLLM) gets the call's schema as
    ``response_format`` over tracerag's bounded transport with ``schema_always=True``."""
    import pytest
    from conftest import FakeEngine
    from dspy.utils.exceptions import AdapterParseError
    from lm_server import StubLMServer

    with StubLMServer(FakeEngine()) as stub:
        bodies, respond = [], stub._respond
        stub._respond = lambda body: (bodies.append(body), respond(body))[1]
        with dspy.context(lm=stub.lm(), adapter=TypedJSONAdapter(schema_always=True)), \
                pytest.raises(AdapterParseError):
            dspy.Predict(ParseCommand)(utterance="打开客厅的灯", rooms=ROOMS)  # the stub answers in another format
    sent = bodies[0]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["strict"] is True
    assert sent["json_schema"]["schema"]["$defs"]["QueryIR"]["properties"]["scope_include"]["items"]["enum"] == ROOMS


def test_a_signatures_own_output_fields_take_their_declared_bounds():
    from tracerag.lm.typed_decoding import Bound, bound

    class Note(dspy.Signature):
        topic: str = dspy.InputField()
        note: str = dspy.OutputField()
        tags: list[str] = dspy.OutputField()
        mood: str = dspy.OutputField()

    bound(Note, note=Bound(max_length=120), tags=Bound(max_items=3, max_length=20),
          mood=Bound(choices=lambda inputs: inputs.get("moods")))
    props = output_schema(Note, {"moods": ["calm", "glad"]})["properties"]
    assert props["note"]["maxLength"] == 120
    assert props["tags"]["maxItems"] == 3 and props["tags"]["items"] == {"type": "string", "maxLength": 20}
    assert props["mood"]["enum"] == ["calm", "glad"]
    assert "enum" not in output_schema(Note, {})["properties"]["mood"]  # no choices in this call's inputs


def _unbounded(schema, where="") -> list[str]:
    """The places of ``schema`` a decoder may fill without end: a free string with no maxLength, an array with no
    maxItems."""
    if isinstance(schema, list):
        return [hole for i, item in enumerate(schema) for hole in _unbounded(item, f"{where}[{i}]")]
    if not isinstance(schema, dict):
        return []
    holes = []
    if schema.get("type") == "string" and "maxLength" not in schema and "enum" not in schema:
        holes.append(where)
    if schema.get("type") == "array" and "maxItems" not in schema:
        holes.append(where)
    return holes + [hole for key, value in schema.items() for hole in _unbounded(value, f"{where}/{key}")]


def test_every_typed_reply_of_the_programs_is_bounded():
    """A free string or list with no bound is where a small model loops until the token cap (SmolLM2-135M wrote a
    plan's fields and a judge's reason to 512 tokens, and a reply cut there does not parse): every output a
    program decodes against a schema has a bound, whatever its inputs."""
    from tracerag.agent.signatures import AgentStep
    from tracerag.experience.signatures import CheckSufficiency, JudgeExperience, RewriteQuery, SummarizeExperience
    from tracerag.planner.signatures import GeneratePlan
    from tracerag.rag.signatures import AnswerWithCitations, GradeRelevance, RefineQuery, VerifyGroundedness

    signatures = [RewriteQuery, SummarizeExperience, CheckSufficiency, JudgeExperience, GradeRelevance, RefineQuery,
                  AnswerWithCitations, VerifyGroundedness, GeneratePlan, AgentStep, ArbitrateCapability]
    holes = {sig.__name__: _unbounded(output_schema(sig, {})) for sig in signatures}
    assert {name: found for name, found in holes.items() if found} == {}
    assert output_schema(AnswerWithCitations)["properties"]["verdict"]["enum"] == ["yes", "no", "maybe", ""]


def test_each_reply_is_parsed_once_as_dspys_callbacks_see_it():
    """DSPy wraps an adapter subclass's parse with its callbacks again; a reply TypedJSONAdapter parses is one parse
    to a callback (a failed parse counted once)."""
    from dspy.utils.callback import BaseCallback

    class Parses(BaseCallback):
        def __init__(self):
            self.ends = self.formats = 0

        def on_adapter_parse_end(self, call_id, outputs, exception=None):
            self.ends += 1

        def on_adapter_format_end(self, call_id, outputs, exception=None):
            self.formats += 1

    seen, plain = Parses(), Parses()
    lm = dspy.LM("schema/model", engine=SchemaEngine({"ir": IR}), cache=False)
    for adapter, callback in ((TypedJSONAdapter(), seen), (dspy.JSONAdapter(), plain)):
        with dspy.context(lm=lm, adapter=adapter, callbacks=[callback]):
            dspy.Predict(ParseCommand)(utterance="打开客厅的灯", rooms=ROOMS)
    assert seen.ends == 1 and seen.formats == plain.formats  # as DSPy's own JSONAdapter


def test_the_experience_summary_may_draw_only_on_the_candidates_it_was_given():
    """SmolLM2-135M wrote a task id of its own ("10000000000000000000000000000000"): the summary's task_ids are
    choices among the ids heading its candidates."""
    from tracerag.experience.experience_retrieval import Candidate, format_candidates
    from tracerag.experience.signatures import SummarizeExperience

    step = {"tool": "ocr", "thought": "[x]"}
    candidates = format_candidates([Candidate("receipt-total-0001", 0.9, 0.9, {"question": "Total? [see photo]"}),
                                    Candidate("bird-id-0002", 0.8, 0.8, {"steps": [step]})])
    ids = output_schema(SummarizeExperience, {"candidates": candidates})["properties"]["task_ids"]
    assert ids["items"]["enum"] == ["receipt-total-0001", "bird-id-0002"] and ids["maxItems"] == 5
