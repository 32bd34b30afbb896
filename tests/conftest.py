"""Shared fixtures: a small hand-written home, a cached real embedder, and a fake LM engine.

The fake LM is a DSPy 3.4 engine object (complete(request) -> dspy.lm15.Response): it reads the
prompt, recognises the signature by its fields and answers like a model would, so whole programs
and optimizers run through DSPy's real adapter and parsing code without any network.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# gRPC (pymilvus) logs its keepalive pings on stderr at every level; the tests read their own output
os.environ.setdefault("GRPC_VERBOSITY", "NONE")

import dspy  # noqa: E402
import pytest  # noqa: E402
from dspy.lm15 import Message, Response, ServerError, TextPart, Usage  # noqa: E402

import tracerag.config  # noqa: E402

# DSPy's response cache would answer a test from an earlier test's good reply and hide an outage (and
# write to the user's ~/.dspy_cache): every test talks to its LM for real.
dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
from tracerag.embedding.embedders import LocalUSEEmbedder  # noqa: E402
from tracerag.embedding.embedding_cache import CachedEmbedder  # noqa: E402

# ---------------------------------------------------------------------------------------------
# A small home that holds the design's known failure cases.

ROOMS = {"r-living": "客厅", "r-bed": "主卧", "r-study": "书房", "r-kitchen": "厨房"}

SPECS = {
    "p-light": [
        {"id": "main-switch-on", "description": "打开电源", "type": None, "value_range": None},
        {"id": "main-switch-off", "description": "关闭电源", "type": None, "value_range": None},
        {"id": "main-switchLevel-setLevel", "description": "设置亮度", "type": "integer",
         "value_range": {"min": 0, "max": 100, "unit": "%"}},
        {"id": "main-colorTemperature-setColorTemperature", "description": "设置色温", "type": "integer",
         "value_range": {"min": 2700, "max": 6500, "unit": "K"}},
    ],
    "p-shade": [
        {"id": "main-windowShade-open", "description": "打开窗帘", "type": None, "value_range": None},
        {"id": "main-windowShade-close", "description": "关闭窗帘", "type": None, "value_range": None},
        {"id": "main-windowShadeLevel-setShadeLevel", "description": "设置窗帘开合度", "type": "integer",
         "value_range": {"min": 0, "max": 100, "unit": "%"}},
        {"id": "main-windowShadeTiltLevel-setShadeTiltLevel", "description": "设置百叶角度",
         "type": "integer", "value_range": {"min": 0, "max": 100, "unit": "%"}},
    ],
    "p-ac": [
        {"id": "main-switch-on", "description": "打开空调", "type": None, "value_range": None},
        {"id": "main-switch-off", "description": "关闭空调", "type": None, "value_range": None},
        {"id": "main-airConditionerMode-setAirConditionerMode", "description": "设置空调模式", "type": "string",
         "value_range": None, "value_list": [{"value": "cool", "description": "制冷"},
                                             {"value": "heat", "description": "制热"},
                                             {"value": "dry", "description": "除湿"}]},
        {"id": "main-thermostatCoolingSetpoint-setCoolingSetpoint", "description": "设置制冷温度",
         "type": "number", "value_range": {"min": 16, "max": 30, "unit": "C"}},
    ],
    "p-plug": [
        {"id": "main-switch-on", "description": "turn on", "type": None, "value_range": None},
        {"id": "main-switch-off", "description": "turn off", "type": None, "value_range": None},
    ],
    "p-aroma": [
        {"id": "main-switch-on", "description": "打开香薰", "type": None, "value_range": None},
        {"id": "main-switch-off", "description": "关闭香薰", "type": None, "value_range": None},
    ],
}

# (device id, label, room id, category, profile)
DEVICES = [
    ("light-living-1", "客厅吸顶灯", "r-living", "Light", "p-light"),
    ("light-living-2", "客厅落地灯", "r-living", "Light", "p-light"),
    ("shade-living", "客厅窗帘", "r-living", "Blind", "p-shade"),
    ("light-bed", "主卧台灯", "r-bed", "Light", "p-light"),
    ("shade-bed", "主卧窗帘", "r-bed", "Blind", "p-shade"),
    ("ac-bed", "主卧空调", "r-bed", "AirConditioner", "p-ac"),
    ("ac-living", "客厅空调", "r-living", "AirConditioner", "p-ac"),
    ("lamp-study", "客厅老伙计", "r-study", "Light", "p-light"),  # room word in a name, other room
    ("plug-fridge", "冰箱插座", "r-kitchen", "SmartPlug", "p-plug"),
    ("aroma-bed", "香薰机", "r-bed", "Aroma", "p-aroma"),  # category outside the allowed list
]


def two_commands(on: str, off: str) -> list[dict]:
    """A profile of two commands without values ("main-lock-lock", "main-lock-unlock")."""
    return [{"id": on, "description": on.rsplit("-", 1)[1], "type": None, "value_range": None},
            {"id": off, "description": off.rsplit("-", 1)[1], "type": None, "value_range": None}]


# Profiles of one switch-like capability each: the homes built to confuse by name use them
ON_OFF_SPECS = {
    "p-switch": two_commands("main-switch-on", "main-switch-off"),
    "p-lock": two_commands("main-lock-lock", "main-lock-unlock"),
    "p-valve": two_commands("main-valve-open", "main-valve-close"),
    "p-door": two_commands("main-doorControl-open", "main-doorControl-close"),
    "p-gate": two_commands("main-garageDoorControl-open", "main-garageDoorControl-close"),
    "p-siren": two_commands("main-alarm-siren", "main-alarm-off"),
    "p-panel": two_commands("main-securitySystem-armAway", "main-securitySystem-disarm"),
    "p-blind": two_commands("main-windowShade-open", "main-windowShade-close"),
}


def device_json(device_id, label, room_id, category, profile, model=None, specs=SPECS):
    return {"deviceId": device_id, "name": model or f"model-{profile}", "label": label, "roomId": room_id,
            "locationId": "loc-1", "profile": {"id": profile},
            "components": [{"id": "main", "label": "main",
                            "capabilities": [{"id": c["id"].split("-")[1], "version": 1}
                                             for c in specs.get(profile, SPECS.get(profile, []))],
                            "categories": [{"name": category, "categoryType": "manufacturer"}]}]}


def write_home(directory: Path, devices=DEVICES, specs=SPECS, rooms=ROOMS) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "devices.json").write_text(
        json.dumps({"items": [device_json(*d, specs=specs) for d in devices]}, ensure_ascii=False, indent=2),
        encoding="utf-8")
    (directory / "rooms.json").write_text(
        json.dumps({"items": [{"roomId": k, "name": v} for k, v in rooms.items()]}, ensure_ascii=False),
        encoding="utf-8")
    (directory / "spec.jsonl").write_text(
        "".join(json.dumps({"profileId": p, "capabilities": caps}, ensure_ascii=False) + "\n"
                for p, caps in specs.items()), encoding="utf-8")
    return directory


@pytest.fixture
def lm_timeout():
    """Set the process-wide LM timeout for one test (``lm_timeout(0.3)``); the policy as it was afterwards."""
    from tracerag.lm.policy import policy, set_policy

    before = policy()
    yield lambda seconds: set_policy(timeout=seconds)
    set_policy(**before.__dict__)


@pytest.fixture(autouse=True)
def fresh_lm_state():
    """Each test starts as a new process would: no LM or adapter configured, a closed circuit breaker
    and no counted warnings (all of them are per process)."""
    from tracerag.lm.failures import reset_lm_guard

    dspy.configure(lm=None, adapter=None)
    reset_lm_guard()
    yield
    reset_lm_guard()


@pytest.fixture
def home_dir(tmp_path) -> Path:
    return write_home(tmp_path / "tiny")


@pytest.fixture(scope="session")
def embedder(tmp_path_factory):
    """The real default embedder behind a per-session cache."""
    return CachedEmbedder(LocalUSEEmbedder(), tmp_path_factory.mktemp("cache") / "embeddings.sqlite")


@pytest.fixture
def index(home_dir, embedder):
    from tracerag.home_commands.home import Home
    from tracerag.home_commands.home_index import CommandIndex

    return CommandIndex(Home.load(home_dir), embedder)


# ---------------------------------------------------------------------------------------------
# The fake LM.

def _field(text: str, name: str) -> str | None:
    text = text.split("\n\nRespond with the corresponding output fields")[0]  # the adapter's closing instruction
    match = re.search(rf"\[\[ ## {name} ## \]\]\n(.*?)(?=\n\[\[ ## |\Z)", text, re.S)
    return match.group(1).strip() if match else None


class FakeEngine:
    """Answers ParseCommand from a table of gold IRs (or a default) and ArbitrateCapability from a script;
    the experience signatures as a model would (see `_experience`).

    mode: "ok" (well-formed answers), "garbage" (unparsable text), "error" (raise like a dead server);
    `fail` maps a signature name to "garbage" or "error" for that signature only.
    `sufficiency`: CheckSufficiency answers in order (the last one repeats).
    `summary_ids`: extra task_ids SummarizeExperience claims to have used (e.g. a hallucinated one).
    `rewrites`: the queries RewriteQuery answers with.
    """

    def __init__(self, irs: dict | None = None, arbitration: dict | None = None, mode: str = "ok",
                 other_answer: str = "Parse the utterance; pick type_hint from the allowed categories.",
                 fail: dict | None = None, sufficiency: list[bool] | None = None, summary_ids: list[str] = (),
                 relevant: set[str] | None = None, malformed: set[str] = frozenset(), grounded: list[bool] = (True,),
                 rewrites: list[str] | None = None):
        self.irs = irs or {}
        self.rewrites = rewrites  # RewriteQuery's text_queries (None: "how to solve: <question>")
        self.other_answer = other_answer
        self.arbitration = arbitration or {"choice_index": 0}
        self.mode = mode
        self.fail = fail or {}
        self.sufficiency = list(sufficiency or [False])
        self.summary_ids = list(summary_ids)
        self.relevant = relevant  # GradeRelevance: ids scored 0.9 (None: chunks sharing a question word)
        self.malformed = set(malformed)  # GradeRelevance: ids whose batch item is malformed
        self.grounded = list(grounded)  # VerifyGroundedness answers in order (the last one repeats)
        self.calls: list[str] = []
        self.inputs: list[tuple[str, str]] = []  # (signature, user message) for experience calls

    def complete(self, request):
        system = request.system if isinstance(request.system, str) else "".join(p.text for p in request.system or [])
        # the last user message; with images it mixes text and image parts, keep the text
        user = "\n".join(getattr(p, "text", None) or "" for p in request.messages[-1].parts)
        _, text = self.answer(system, user, tuple(request.config.stop or ()))
        return Response(id=None, model="fake", message=Message.assistant([TextPart(text)]), finish_reason="stop",
                        usage=Usage(input_tokens=len(system + user) // 4, output_tokens=len(text) // 4,
                                    total_tokens=(len(system + user) + len(text)) // 4))

    def answer(self, system: str, user: str, stop: tuple[str, ...] = ()) -> tuple[str, str]:
        """(the signature recognised, the reply text); raises like a dead server in "error" modes.
        ``complete`` (DSPy's engine door) and the HTTP stub server (``lm_server``) both answer with it."""
        if self.mode == "error":
            from dspy import lm15

            raise lm15.ServerError("fake server is down")
        known = self._known_signature(system, user)
        name = "other"
        if known is not None:
            name, text = known
            self.calls.append(name)
            self.inputs.append((name, user))
            if self.fail.get(name) == "error":
                from dspy import lm15

                raise lm15.ServerError(f"fake {name} failed")
            if self.fail.get(name) == "garbage":
                text = "I would rather not say."
        elif "`utterance`" in system and "`ir`" in system:
            name = "ParseCommand"
            self.calls.append(name)
            utterance = _field(user, "utterance")
            ir = self.irs.get(utterance, {"action": "打开", "type_hint": "Unknown", "name_hint": "",
                                          "scope_include": [], "scope_exclude": [], "quantifier": "one"})
            text = f"[[ ## ir ## ]]\n{json.dumps(ir, ensure_ascii=False)}\n\n[[ ## completed ## ]]"
        elif "`decision`" in system:
            name = "ArbitrateCapability"
            self.calls.append(name)
            text = f"[[ ## decision ## ]]\n{json.dumps(self.arbitration, ensure_ascii=False)}\n\n[[ ## completed ## ]]"
        else:  # any other signature (an optimizer's own, e.g. GEPA's reflection): fill every output field
            self.calls.append("other")
            declared = system.split("Your output fields are:")[-1].split("All interactions")[0]
            outputs = re.findall(r"^\d+\. `(\w+)`", declared, re.M)
            if "Outputs will be a JSON object" in system:  # JSONAdapter callers, e.g. GEPA's reflection
                text = json.dumps({f: self.other_answer for f in outputs})
            else:
                text = "".join(f"[[ ## {f} ## ]]\n{self.other_answer}\n\n" for f in outputs) + "[[ ## completed ## ]]"
        if self.mode == "garbage":
            text = "Sure! Here is what I think: the lights, probably."
        return name, text

    def _known_signature(self, system: str, user: str) -> tuple[str, str] | None:
        """The experience and RAG signatures, recognised by their field names; None for anything else."""
        def answer(**fields) -> str:
            return "".join(f"[[ ## {k} ## ]]\n{v}\n\n" for k, v in fields.items()) + "[[ ## completed ## ]]"

        if "`grades`" in system:
            question = set(re.findall(r"\w{5,}", (_field(user, "question") or "").lower()))
            chunks = re.findall(r"^\[(\S+?)\] (.*)$", _field(user, "chunks") or "", re.M)
            single = len(chunks) == 1
            items = []
            for cid, text in chunks:
                hit = cid in self.relevant if self.relevant is not None else bool(question & set(
                    re.findall(r"\w{5,}", text.lower())))
                if cid in self.malformed and not single:
                    items.append({"id": cid, "score": "very high"})
                else:
                    items.append({"id": cid, "score": 0.9 if hit else 0.1, "reason": "on topic" if hit else "off"})
            return "GradeRelevance", answer(grades=json.dumps(items))
        if "`previous_query`" in system:
            return "RefineQuery", answer(query=f"refined {_field(user, 'previous_query')}")
        if "`avoid_claims`" in system:
            ids = re.findall(r"^\[(\S+?)\]", _field(user, "chunks") or "", re.M)
            avoid = _field(user, "avoid_claims") or "[]"
            text = f"Yes, it helps [{ids[0]}]."
            if avoid.strip() == "[]" and len(ids) > 1:
                text += f" The effect was large [{ids[1]}]."
            return "AnswerWithCitations", answer(answer=text, verdict="yes")
        if "`unsupported_claims`" in system:
            ok = self.grounded.pop(0) if len(self.grounded) > 1 else self.grounded[0]
            return "VerifyGroundedness", answer(grounded=str(ok), unsupported_claims=json.dumps(
                [] if ok else ["The effect was large"]), missing_evidence="" if ok else "a measured effect size")
        if "`text_queries`" in system:
            question = _field(user, "question") or ""
            context = _field(user, "search_context") or ""
            queries = self.rewrites or [f"how to solve: {question}"]
            queries = queries + ([f"gap: {context.splitlines()[-1]}"] if context else [])
            return "RewriteQuery", answer(text_queries=json.dumps(queries), image_caption="a picture")
        if "`experience`" in system and "`task_ids`" in system:
            ids = re.findall(r"^\[([\w.-]+)\]", _field(user, "candidates") or "", re.M)
            used = ids[:2] + self.summary_ids
            return "SummarizeExperience", answer(
                experience=f"Use the tools of {', '.join(ids[:2])} in order and double-check the result.",
                task_ids=json.dumps(used))
        if "`sufficient`" in system:
            value = self.sufficiency.pop(0) if len(self.sufficiency) > 1 else self.sufficiency[0]
            return "CheckSufficiency", answer(sufficient=str(value), gap="" if value else "how to verify the answer")
        if "`usefulness`" in system:
            return "JudgeExperience", answer(usefulness="0.75", reason="names the right tools")
        if "`caption`" in system and "`images`" in system:
            return "CaptionImages", answer(caption=f"an image for: {_field(user, 'question')}")
        return None

    def stream(self, request):  # the programs never stream
        raise NotImplementedError

    def close(self):
        pass


@pytest.fixture
def fake_lm():
    """Factory: fake_lm(irs=..., arbitration=..., mode=...) configures DSPy with it for the test."""
    created = []

    def make(**kwargs):
        engine = FakeEngine(**kwargs)
        lm = dspy.LM("fake/model", engine=engine, cache=False, num_retries=0)
        dspy.configure(lm=lm, adapter=dspy.ChatAdapter(use_json_adapter_fallback=False))
        created.append(engine)
        return engine

    yield make
    dspy.configure(lm=None)


@pytest.fixture
def cli_lm(monkeypatch):
    """Factory: cli_lm(EngineClass, **kwargs) makes every LM the CLI configures a fresh fake engine of
    that class; returns the list the engines are appended to, in order."""
    def patch(engine_class=FakeEngine, **kwargs):
        engines = []

        def make_lm(*args, **kw):
            engines.append(engine_class(**kwargs))
            return dspy.LM("fake/model", engine=engines[-1], cache=False, num_retries=0)

        monkeypatch.setattr(tracerag.config, "make_lm", make_lm)
        return engines

    yield patch
    dspy.configure(lm=None)


# ---------------------------------------------------------------------------------------------
# A small traces directory: three task families and one incorrect trace.

FAMILIES = {
    "receipt": ("add up a shopping receipt", ["ocr", "calculator"],
                ["What did I pay in total for {x}, tax included?", "Sum the items on my {x} receipt.",
                 "How much was the {x} bill with tax?"],
                "OCR the receipt line by line, then add the items and apply the printed tax rate."),
    "timezone": ("convert a clock time across zones", ["web_search", "python"],
                 ["What time is 9:00 in Tokyo when it is noon in {x}?", "Convert 18:30 {x} time to Berlin time.",
                  "When is a 10am {x} meeting in Sydney?"],
                 "Look up the UTC offsets in force on that date, then convert with zoneinfo."),
    "plant": ("identify a plant and its pet toxicity", ["image_search", "wikipedia"],
              ["Is this {x} plant safe for my cat?", "Which plant is this {x} one on my balcony?",
               "Name the {x} houseplant in the photo."],
              "Reverse image search the leaves, confirm the species on a reference page, check ASPCA toxicity."),
}
PLACES = ["Lisbon", "Nairobi", "Lima", "Oslo"]


def make_trace(family: str, n: int, *, is_correct: bool = True, caption: str | None = None, images=()) -> dict:
    sub_task, tools, questions, reasoning = FAMILIES[family]
    trace = {"task_id": f"{family}-{n:04d}", "question": questions[n % len(questions)].format(x=PLACES[n % 4]),
             "sub_task": sub_task, "images": list(images), "tools": tools,
             "steps": [{"thought": f"use {t}", "tool": t, "tool_input": "...", "observation": "..."} for t in tools],
             "reasoning": reasoning, "final_answer": "42", "is_correct": is_correct, "family": family}
    if caption:
        trace["caption"] = caption
    return trace


def write_traces(directory: Path, traces: list[dict]) -> Path:
    for trace in traces:
        path = directory / "tasks" / trace["task_id"] / "trace.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(trace, ensure_ascii=False), encoding="utf-8")
    return directory


@pytest.fixture
def traces_dir(tmp_path) -> Path:
    traces = [make_trace(f, n) for f in FAMILIES for n in range(1, 5)]
    traces.append(make_trace("receipt", 9, is_correct=False))
    return write_traces(tmp_path / "traces", traces)


# ---------------------------------------------------------------------------------------------
# A small chunk bank (SelfReflectiveRAG) and a tool result (SearchAgent's in-process toolboxes).

ABSTRACTS = {
    "100": "Statins lower LDL cholesterol in adults with diabetes. The trial followed 2,000 patients for five years. "
           "Cardiovascular events fell by a quarter in the statin group.",
    "200": "Aspirin before colonoscopy does not raise bleeding risk. A cohort of 800 patients was studied. "
           "Bleeding rates were similar with and without aspirin.",
    "300": "Telephone counselling increased mammography use among women in an HMO. Tailored letters helped less. "
           "Effects were largest after the first contact.",
    "400": "Vitamin D supplements did not prevent fractures in older adults. The randomised trial enrolled 5,000 "
           "people. Falls were also unchanged.",
    "500": "Exercise programmes reduced depressive symptoms in teenagers. Sessions ran three times a week. "
           "Benefits faded after the programme ended.",
    "600": "Smartphone reminders improved adherence to asthma inhalers. Adherence rose from half to two thirds. "
           "Emergency visits dropped slightly.",
    "700": "Night shifts were linked to weight gain among nurses. The survey covered 3,000 nurses. "
           "Longer rotations showed stronger links.",
    "800": "Hand sanitiser stations cut infections on hospital wards. Compliance was audited monthly. "
           "Infection rates fell by a third.",
}


@pytest.fixture
def retriever(tmp_path, embedder):
    """A hybrid retriever over ABSTRACTS, chunked small so each abstract gives a few chunks."""
    from tracerag.documents.corpus import ingest_documents
    from tracerag.documents.hybrid import HybridRetriever
    from tracerag.stores.cosine_bank import CosineBank

    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in ABSTRACTS.items()), encoding="utf-8")
    ingest_documents(path, tmp_path / "bank", embedder, size=120, overlap=0)
    return HybridRetriever(CosineBank.load(tmp_path / "bank", embedder))


@dataclass
class ToolResult:
    """What a toolbox returns for one call (``tools.mcp_client.ToolResult``'s shape)."""

    tool: str
    snippets: list = field(default_factory=list)
    error: str | None = None

    def to_output(self) -> str:
        from tracerag.tools.protocol_writing import format_tool_output

        return format_tool_output(self.snippets, self.error)


# ---------------------------------------------------------------------------------------------
# The fake LM for TraceablePlanner.

INVENTED = "mat-99999"


class PlannerEngine(FakeEngine):
    """Answers GeneratePlan (recognised by its `bullets_used` output field) like a model that cites inline.

    The plan cites the first bullet as [id] in a step, the second as (id) in a step's text, the first
    template bare in the objective, and ``INVENTED`` in a safety note; it reports the first bullet and
    "none" in bullets_used and the second template in templates_used (which the text never cites).
    plan_mode: "ok", "garbage" (unparsable), "error" (the server fails), "no_steps" (parses, invalid Plan).
    Any other signature goes to the conftest engine.
    """

    def __init__(self, plan_mode: str = "ok", invent: bool = True, **kwargs):
        super().__init__(**kwargs)
        self.plan_mode = plan_mode
        self.invent = invent
        self.prompts: list[str] = []

    def answer(self, system: str, user: str, stop: tuple[str, ...] = ()) -> tuple[str, str]:
        if "`bullets_used`" not in system:
            return super().answer(system, user, stop)
        self.calls.append("GeneratePlan")
        self.prompts.append(user)
        if self.plan_mode == "error":
            raise ServerError("fake GeneratePlan failed")
        bullets = re.findall(r"^\[([\w-]+)\]", _field(user, "bullets") or "", re.M)
        templates = re.findall(r"^\[([\w-]+)\]", _field(user, "templates") or "", re.M)
        plan = {"objective": f"Amplify the fragment following {templates[0] if templates else 'the usual method'}.",
                "materials": ["master mix", "primers"],
                "steps": [{"text": f"Thaw the mix on ice [{bullets[0]}].", "cites": [bullets[0]]},
                          f"Add a control ({bullets[1]}).",
                          {"text": "Run the thermocycler program.", "cites": []}],
                "safety_notes": [f"Wear gloves [{INVENTED}]." if self.invent else "Wear gloves."],
                "expected_outcome": "One band per sample."}
        if self.plan_mode == "no_steps":
            plan["steps"] = []
        text = (f"[[ ## plan ## ]]\n{json.dumps(plan)}\n\n[[ ## bullets_used ## ]]\n{json.dumps([bullets[0], 'none'])}"
                f"\n\n[[ ## templates_used ## ]]\n{json.dumps(templates[1:2])}\n\n[[ ## completed ## ]]")
        if self.plan_mode == "garbage":
            text = "Here is a lovely plan: do the PCR, then celebrate."
        return "GeneratePlan", text


# ---------------------------------------------------------------------------------------------
# The fake LM for SearchAgent.

AGENT_FAKE_ID = "00000000"  # an id no tool ever returns


class AgentEngine(FakeEngine):
    """Answers AgentStep (recognised by its `trajectory` input) like a chat model speaking the tag protocol.

    Before any tool output it searches with the question's first long words; after one it answers
    "Yes." citing the first snippet id it was shown. Like a real server it cuts its text at the
    request's stop sequences (dropping the stop sequence itself) unless ``ignore_stop``.
    ``agent``: "ok"; "unclosed" (the call runs into the next line); "hallucinate" (writes a fake
    <tool_output> after its call); "multi" (three calls in one reply); "chatty" (neither call nor
    answer); "greedy" (never stops calling); "cite_fake" (also cites AGENT_FAKE_ID); "no_header"
    (raw protocol text without the adapter's field header); "error" (the server fails).
    Any other signature goes to the conftest engine.
    """

    def __init__(self, agent: str = "ok", ignore_stop: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.agent = agent
        self.ignore_stop = ignore_stop
        self.stops: list[tuple[str, ...]] = []

    def _reply(self, question: str, trajectory: str) -> str:
        words = [w for w in re.findall(r"[A-Za-z][\w-]{3,}", question)][:5]
        call = f'<call_tool name="pubmed_search" limit="3">{" ".join(words)}</call_tool>'
        ids = re.findall(r'<snippet id="([^"]+)"', trajectory)
        searched = "<tool_output>" in trajectory
        mode = self.agent
        if mode == "chatty":
            return "<think>Let me think about this some more.</think> I am not sure yet."
        if mode == "greedy" or not searched:
            if mode == "unclosed":
                return "<think>Search first.</think>\n" + call.replace("</call_tool>", "\nmore text")
            if mode == "hallucinate":
                return (f"<think>Search first.</think>\n{call}<tool_output><snippet id=\"{AGENT_FAKE_ID}\">"
                        "Title: Invented\nAbstract: made up</snippet></tool_output>\n<answer>Yes.</answer>")
            if mode == "multi":
                second = call.replace('limit="3"', 'limit="9"')
                return f"<think>Search three ways.</think>\n{call}\n{second}\n{call}"
            return f"<think>Search first.</think>\n{call}"
        cites = f'<cite id="{ids[0]}">The study reports a clear effect.</cite>' if ids else "Nothing was found."
        if mode == "cite_fake":
            cites += f' <cite ids="{ids[0] if ids else ""}, {AGENT_FAKE_ID}">Also confirmed elsewhere.</cite>'
        return f"<think>The snippets answer it.</think>\n<answer>Yes. {cites}</answer>"

    def answer(self, system: str, user: str, stop: tuple[str, ...] = ()) -> tuple[str, str]:
        if "`trajectory`" not in system or "`reply`" not in system:
            return super().answer(system, user, stop)
        self.calls.append("AgentStep")
        self.inputs.append(("AgentStep", user))
        self.stops.append(stop)
        if self.agent == "error":
            raise ServerError("fake AgentStep failed")
        reply = self._reply(_field(user, "question") or "", _field(user, "trajectory") or "")
        text = reply if self.agent == "no_header" else f"[[ ## reply ## ]]\n{reply}\n\n[[ ## completed ## ]]"
        if not self.ignore_stop:
            cuts = [text.find(s) for s in stop if s in text]
            text = text[:min(cuts)] if cuts else text
        return "AgentStep", text


@pytest.fixture
def agent_lm():
    """Factory: agent_lm(agent=..., ignore_stop=...) configures DSPy with an AgentEngine for the test."""
    def make(**kwargs):
        engine = AgentEngine(**kwargs)
        dspy.configure(lm=dspy.LM("fake/model", engine=engine, cache=False, num_retries=0),
                       adapter=dspy.ChatAdapter(use_json_adapter_fallback=False))
        return engine

    yield make
    dspy.configure(lm=None)


@pytest.fixture(scope="session")
def milvus_server(tmp_path_factory):
    """Milvus Lite's engine serving gRPC on a free 127.0.0.1 port for the whole session (tests/milvus_server.py);
    every call must carry its ``token`` (put it in TRACERAG_MILVUS_TOKEN). Skipped without the Milvus extra."""
    import importlib.util

    if any(importlib.util.find_spec(m) is None for m in ("pymilvus", "milvus_lite")):
        pytest.skip('needs pip install -e ".[milvus]"')
    from milvus_server import milvus_server as serve

    with serve(tmp_path_factory.mktemp("milvus-server") / "data") as server:
        yield server
