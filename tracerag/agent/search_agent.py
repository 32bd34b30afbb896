"""SearchAgent: question -> interleaved trajectory of tool calls, real tool outputs and a cited answer.

Each step is one call of the DSPy-managed policy ``AgentStep`` (its instructions and demos are saved,
loaded and compiled with the program), sent with the protocol's stop sequences through the guarded
stage ``step`` (``guarded_step.Stages``: the policy's own LM, the circuit breaker, one-line warnings).
The reply is read by ``tools.reply_parsing.parse_reply``: the first call runs through the toolbox (MCP
tools), the real ``<tool_output>`` is appended and the loop goes on; an ``<answer>`` ends it. A reply
the adapter cannot parse (no field header) is still read as raw protocol text, not as a failure.

Limits and fallbacks (an app never sees an exception from the LM or a tool):
- a per-tool cap (pubmed_search 3) and a total cap: over a cap the model gets an error tool output
  and must answer; calling again ends the run (``stop_reason="tool_limit"``);
- a reply with neither call nor answer (an empty ``<answer>`` included) gets one nudge; a second ends
  the run (``"no_action"``);
- ``max_steps`` LM calls at most (``"max_steps"``);
- no LM configured: one search with the question, and an extractive answer citing the top snippets
  (``"no_lm"``, ``hint="no_lm"``);
- a run that would end without an answer because of the LM (a step failing: 5xx, timeout, a body
  that is not JSON, an empty reply, a reply over ``MAX_REPLY_CHARS``, ``"lm_error"``; an answer that
  cannot stand: over ``MAX_ANSWER_CHARS``, more than ``MAX_CITATIONS`` ids, or citing only ids no tool
  returned, ``"invalid_answer"`` (``reply_limits``); or ``no_action``, ``max_steps``, ``tool_limit``)
  answers like the no-LM path, from the snippets the tools returned so far, and when there are none
  after the no-LM path's one search with the question. ``stop_reason`` keeps the real reason;
  ``hint="lm_failed"`` and ``lm_fallbacks=["step"]`` mark it. An LM failing at its first step thus
  gives exactly the no-LM answer;
- a question that says nothing (empty, blanks, punctuation): no LM call, the no-LM answer
  (``stop_reason="no_lm"``), ``hint="empty_input"``, ``lm_skipped=["step"]``.
The extractive answer is the runtime's text: snippet text passes through ``escape_tool_text`` (the
``<tool_output>`` escaping), so a document cannot close the answer, add a call or cite; it cites only
ids the tools returned, and only those that read back as themselves inside ``<cite id="…">``.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from typing import Any, Protocol

import dspy
from dspy.utils.exceptions import AdapterParseError
from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..errors import InvalidValue
from ..hints import Hint
from ..lm.calls import lm_of
from ..lm.reply_limits import MAX_ANSWER_CHARS, MAX_CITATIONS, MAX_REPLY_CHARS, ReplyRejected, given_ids
from ..programs.guarded_step import Pipeline, Stages, lm_step, work
from ..tools.budget import ToolBudget
from ..tools.cite_tags import extract_citations, keep_cited
from ..tools.protocol_writing import ToolCall, escape_tool_text, format_call, format_tool_output
from ..tools.reply_parsing import FINISH_END, FINISH_LENGTH, FINISH_STOP, STOP_SEQUENCES, parse_reply, restore_stop
from ..tools.trajectory import ToolCallRecord, Trajectory
from .result import AgentResult
from .signatures import AgentStep

__all__ = ["AgentConfig", "SearchAgent"]

NUDGE = ("[system] Your reply had neither a tool call nor an answer. Call one tool with "
         '<call_tool name="...">...</call_tool>, or give the final <answer>.')
TRUNCATED = ("[system] Your reply was cut off by the length limit inside its tool call, so the call did not "
             "run. Write a shorter reply: one closed <call_tool> or the final <answer>.")
_FIRST_SENTENCE = re.compile(r"^(.{20,300}?[.!?])(?:\s|$)", re.S)
EVIDENCE_LEAD = "The closest evidence found:"  # the extractive answer's opening, with or without an LM
_CITABLE_ID = re.compile(r"[^\s\"'<>&=,;]+")


class ToolResultLike(Protocol):
    tool: str
    snippets: list[dict[str, Any]]
    error: str | None

    def to_output(self) -> str: ...


class ToolboxLike(Protocol):
    """What the agent needs from its tools (``tools.mcp_client.Toolbox`` is the real one)."""

    def schemas(self) -> dict[str, dict[str, type]]: ...

    def call(self, call: ToolCall) -> ToolResultLike: ...


class AgentConfig(BaseModel):
    """SearchAgent's settings: the caps on its tool calls and steps, and its fallback answer."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    per_tool_calls: dict[str, int] = Field(default_factory=lambda: {"pubmed_search": 3})
    """Calls allowed per tool, by name."""
    default_tool_calls: int = Field(3, ge=0, le=50)
    """The cap of a tool not named in per_tool_calls."""
    max_tool_calls: int = Field(6, ge=0, le=100)
    """Total cap."""
    max_steps: int = Field(10, ge=1, le=200)
    """LM calls per run."""
    evidence_snippets: int = Field(3, ge=1, le=10)
    """Snippets cited by the extractive fallback answer."""
    sub_task: str = "answer a research question from the literature with cited sources"
    """For exported traces."""

    @model_validator(mode="after")
    def _room_to_answer(self) -> AgentConfig:
        if self.max_steps < 2:
            raise InvalidValue("max_steps must leave room for a call and an answer (>= 2)")
        return self


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _think(text: str) -> str:
    """The last ``<think>`` block's text (an unclosed one runs to the end), in one pass."""
    text, found, at = text or "", "", 0
    while (start := text.find("<think>", at)) != -1:
        close = text.find("</think>", start + 7)
        found = text[start + 7 : close if close != -1 else len(text)]
        if close == -1:
            break
        at = close + 8
    return found.strip()


def _value(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def _finish(entry: dict | None, reply: str) -> str | None:
    """How the LM stopped, from its history entry: ``"length"`` (the token limit), ``"stop"`` (a stop
    sequence ended the reply), ``"end"`` (the model ended the reply itself and wrote on, or its server
    says no stop string matched), None when not known. OpenAI-style servers say ``"stop"`` for both a stop
    sequence and the model's own end; the completion then tells them apart: a stop sequence leaves the
    reply last in it (no ``[[ ## completed ## ]]`` after), while an ended reply is followed by the rest."""
    if not isinstance(entry, dict):
        return None
    response = entry.get("response")
    response = response[-1] if isinstance(response, (tuple, list)) and response else response
    reason = _value(response, "finish_reason")
    choice = None
    data = _value(response, "provider_data")
    choices = _value(data, "choices") or _value(response, "choices") or []
    if isinstance(choices, (list, tuple)) and choices:
        choice = choices[0]
        reason = reason or _value(choice, "finish_reason")
    if reason == "length":
        return FINISH_LENGTH
    if reason not in ("stop", None):
        return None
    if isinstance(choice, dict) and "stop_reason" in choice:  # vLLM: the stop string matched, or None at EOS
        return FINISH_STOP if choice["stop_reason"] in STOP_SEQUENCES else FINISH_END
    outputs = entry.get("outputs") or []
    raw = outputs[-1] if outputs else None
    raw = _value(raw, "text") if not isinstance(raw, str) else raw
    if reason is None or not isinstance(raw, str):
        return None
    return FINISH_STOP if raw.rstrip().endswith(reply.rstrip()) else FINISH_END


def _tool_outputs(result: ToolResultLike) -> dict[str, Any]:
    snippets = list(result.snippets or [])
    return {"ids": [str(sn.get("id", "")) for sn in snippets], "scores": [sn.get("score") for sn in snippets],
            "error": result.error}


class _Recorder:
    """Collects the LM history entries of one policy call (DSPy records each call in the history of
    every module in ``settings.caller_modules``; this one is per call, so threads never mix)."""

    def __init__(self):
        self.history: list[dict] = []


def _citable_id(value: Any) -> str | None:
    """A snippet id as the evidence answer may write it in ``<cite id="…">``, or None when it cannot be
    written so that it reads back as exactly itself: empty, or holding a quote, markup, ``&``, ``=``
    or a separator of an id list (whitespace, ``,`` ``;``). Such a snippet is not cited."""
    if value is None:
        return None
    sid = str(value)
    if not _CITABLE_ID.fullmatch(sid):
        return None
    return sid if [c.ids for c in extract_citations(f'<cite id="{sid}">x</cite>')] == [[sid]] else None


def _evidence_answer(records: list[ToolCallRecord], n: int, lead: str) -> str | None:
    """The fallback answer: the first snippets the tools returned, each cited by its id.

    A snippet's text is a document's, never markup: it passes through ``escape_tool_text`` (the
    ``<tool_output>`` escaping), so it cannot close the answer, open a call or add a cite; only ids the
    tools returned and that read back as themselves are written (``_citable_id``)."""
    seen, parts = set(), []
    for record in records:
        for snippet in record.result:
            sid = _citable_id(snippet.get("id"))
            if sid is None or sid in seen or len(parts) >= n:
                continue
            seen.add(sid)
            text = " ".join(str(snippet.get("text") or snippet.get("title") or "").split())
            sentence = _FIRST_SENTENCE.match(text)
            quoted = escape_tool_text((sentence.group(1) if sentence else text[:300]).strip())
            parts.append(f'<cite id="{sid}">{quoted}</cite>')
    return f"{lead} " + " ".join(parts) if parts else None


class _ProtocolStep:
    """The policy as the guarded stage calls it: with the stop sequences, returning the reply text. A
    reply the adapter cannot parse is still protocol text (a model that skips the field header); only an
    empty one is a failure. ``lm`` and ``signature`` are the policy's (its own LM, warnings). After each
    call ``finish`` says how the LM stopped (``_finish``), read from the LM's response."""

    takes_config = True  # per-call LM settings (the guard's timeout) go to the policy with the stops

    def __init__(self, policy: dspy.Predict):
        self.policy = policy
        self.finish: str | None = None

    @property
    def lm(self):
        return self.policy.lm

    @property
    def signature(self):
        return self.policy.signature

    def __call__(self, config: dict | None = None, **inputs) -> str:
        self.finish = None
        recorder = _Recorder()
        with self._recording(recorder):
            try:
                config = {**(config or {}), "stop": list(STOP_SEQUENCES)}
                reply = self.policy(**inputs, config=config).reply or ""
            except AdapterParseError as exc:
                reply = _unparsed_reply(exc)
        return self._finished(recorder, reply)

    async def acall(self, config: dict | None = None, **inputs) -> str:
        """``__call__`` through the policy's async path (``Predict.acall``)."""
        self.finish = None
        recorder = _Recorder()
        with self._recording(recorder):
            try:
                config = {**(config or {}), "stop": list(STOP_SEQUENCES)}
                reply = (await self.policy.acall(**inputs, config=config)).reply or ""
            except AdapterParseError as exc:
                reply = _unparsed_reply(exc)
        return self._finished(recorder, reply)

    @staticmethod
    def _recording(recorder: _Recorder):
        return dspy.context(caller_modules=[*(dspy.settings.caller_modules or []), recorder])

    def _finished(self, recorder: _Recorder, reply: str) -> str:
        self.finish = _finish(recorder.history[-1] if recorder.history else None, reply)
        return reply


def _bounded_reply(reply: str) -> str:
    """The step's check: a reply over ``MAX_REPLY_CHARS`` is no step (the stage falls back)."""
    if len(reply) > MAX_REPLY_CHARS:
        raise ReplyRejected(f"the reply is {len(reply):,} characters; the cap is {MAX_REPLY_CHARS:,}")
    return reply


def _answer_problem(answer: str, records: list[ToolCallRecord]) -> str | None:
    """Why an LM's answer cannot stand, or None: longer than ``MAX_ANSWER_CHARS``, more than
    ``MAX_CITATIONS`` distinct ids cited, or citations none of which a tool returned (an answer before
    any search cites only invented ids). A few unknown ids among returned ones are kept, and recorded
    as the trajectory's ``invalid_citations``."""
    if len(answer) > MAX_ANSWER_CHARS:
        return f"the answer is {len(answer):,} characters; the cap is {MAX_ANSWER_CHARS:,}"
    returned = {str(snippet.get("id")) for record in records for snippet in record.result}
    try:
        given_ids([i for c in extract_citations(answer) for i in c.ids], returned, "the answer's citations",
                  MAX_CITATIONS)
    except ReplyRejected as exc:
        return str(exc)
    return None


def _unparsed_reply(exc: AdapterParseError) -> str:
    """A reply the adapter could not parse is still protocol text; an empty one is a failure (raised on)."""
    if not str(exc.lm_response or "").strip():
        raise exc
    return str(exc.lm_response)


class SearchAgent(dspy.Module):
    """Drive a chat LM through the tag protocol over MCP tools; every run returns a Trajectory."""

    def __init__(self, toolbox: ToolboxLike | None = None, config: AgentConfig | dict | None = None):
        super().__init__()
        self.config = config if isinstance(config, AgentConfig) else AgentConfig(**(config or {}))
        self.policy = dspy.Predict(AgentStep)
        self._toolbox = toolbox

    @property
    def toolbox(self) -> ToolboxLike:
        """The tools; without one given, the bundled local MCP server (started on first use)."""
        if self._toolbox is None:
            from ..tools.mcp_client import Toolbox

            self._toolbox = Toolbox.open()
        return self._toolbox

    def close(self) -> None:
        """Close the tools (their servers are child processes); a toolbox never opened is not started for it, and
        one with nothing to close (no ``close``) is left."""
        close = getattr(self._toolbox, "close", None)
        if close is not None:
            close()

    def forward(self, question: str) -> dspy.Prediction:
        """The prediction, with the fields of :class:`~tracerag.agent.result.AgentResult`: ``trajectory``,
        ``answer``, ``ids_cited``, ``invalid_cited_ids`` (cited, no tool returned them: dropped from the answer),
        ``returned_ids``, ``stop_reason``, ``hint`` (None; ``no_lm``; ``lm_failed``: the LM left the run without
        an answer and the extractive answer stands in), the tool calls and the LM's outcome, ``ms``."""
        stages = Stages(subject=question)
        return stages.run(self._pipeline(question, stages))

    async def aforward(self, question: str) -> dspy.Prediction:
        """``forward`` for ``await program.acall(...)``: each step through the LM's async path, each tool
        call awaited through ``Toolbox.acall`` (an MCP call holds no thread); the same prediction."""
        stages = Stages(subject=question)
        return await stages.arun(self._pipeline(question, stages))

    def _pipeline(self, question: str, stages: Stages) -> Pipeline:
        started = time.perf_counter()
        if lm_of(self.policy) is None:
            trajectory, hint = (yield from self._without_lm(question)), Hint.NO_LM
        else:
            trajectory = yield from self._run(question, stages)
            hint = stages.hint
        return AgentResult.prediction(
            trajectory=trajectory, answer=trajectory.final_answer, ids_cited=trajectory.ids_cited,
            invalid_cited_ids=trajectory.invalid_citations,
            returned_ids=trajectory.returned_ids, stop_reason=trajectory.stop_reason,
            tool_calls=trajectory.total_tool_calls, hallucinated_outputs=trajectory.hallucinated_outputs,
            hint=hint, lm_fallbacks=list(stages.fallbacks), lm_errors=list(stages.errors), lm_calls=stages.calls,
            lm_skipped=list(stages.skipped),
            ms=round((time.perf_counter() - started) * 1000, 2))

    # -- the loop ----------------------------------------------------------------------------------

    def _schemas(self) -> dict[str, dict[str, type]]:
        return self.toolbox.schemas()  # the first use may start the bundled tool server

    def _run(self, question: str, stages: Stages) -> Pipeline:
        cfg = self.config
        schemas = yield work(self._schemas)
        budget = ToolBudget(cfg.per_tool_calls, cfg.default_tool_calls, cfg.max_tool_calls)
        interleaved: list[str] = []  # the trajectory a fine-tuning set keeps
        transcript: list[str] = []  # what the policy reads: the same plus nudges
        records: list[ToolCallRecord] = []
        answer, reasoning, stop_reason = None, "", "max_steps"
        hallucinated = truncated = markup = 0
        dropped: list[str] = []
        nudged = refused = False
        step = _ProtocolStep(self.policy)
        for _ in range(cfg.max_steps):
            raw = yield lm_step("step", step, check=_bounded_reply, fallback="answering from the evidence so far",
                                question=question, tools=budget.describe(schemas), trajectory="\n".join(transcript))
            if raw is None:  # the step failed (logged and recorded by the stage), or the question says nothing
                stop_reason = "lm_error" if stages.fallbacks else "no_lm"
                break
            parsed = parse_reply(restore_stop(raw, step.finish), schemas)
            hallucinated += parsed.hallucinated_outputs
            if parsed.call is not None and parsed.unterminated and step.finish == FINISH_LENGTH:
                # the token limit cut the call: it never runs; the reply's text before it stays
                truncated += 1
                before = parsed.clean_text[: -len(format_call(parsed.call))].strip()
                if before:
                    interleaved.append(before)
                    transcript.append(before)
                transcript.append(TRUNCATED)
                continue
            markup += parsed.markup_removed
            if parsed.clean_text:
                interleaved.append(parsed.clean_text)
                transcript.append(parsed.clean_text)
            if parsed.call is not None:
                call = parsed.call
                refusal = budget.refusal(call.name)
                if refusal and refused:  # told to answer, it called again
                    stop_reason = "tool_limit"
                    break
                if not refusal:
                    budget.spend(call.name)
                record, output = self._refuse(call, refusal) if refusal else (yield from self._execute(call))
                record.thought = _think(parsed.clean_text)
                refused = refused or bool(refusal)
                records.append(record)
                interleaved.append(output)
                transcript.append(output)
            elif parsed.answer is not None and parsed.answer.strip():
                problem = _answer_problem(parsed.answer, records)
                if problem:  # the answer the LM gave cannot stand: the evidence answer does
                    stages.fell_back("step", problem)
                    stop_reason = "invalid_answer"
                    break
                # the ids no tool returned leave the answer (the trajectory records them as invalid)
                answer, dropped = keep_cited(parsed.answer, {str(i) for r in records for i in r.ids})
                reasoning, stop_reason = _think(parsed.clean_text), "answered"
                break
            elif nudged:
                stop_reason = "no_action"
                break
            else:
                nudged = True
                transcript.append(NUDGE)
        if answer is None:  # the LM left the run without an answer: answer as without an LM
            if stop_reason not in ("lm_error", "invalid_answer", "no_lm"):  # (those recorded already)
                stages.fell_back("step", f"the run ended without an answer ({stop_reason})")
            answer = yield from self._evidence_fallback(question, records, interleaved)
        return self._trajectory(question, interleaved, records, answer, reasoning, hallucinated, stop_reason,
                                stages.calls, truncated=truncated, markup_removed=markup, dropped=dropped)

    def _evidence_fallback(self, question: str, records: list[ToolCallRecord], interleaved: list[str]) -> Pipeline:
        """The no-LM answer from the snippets returned so far; with none yet, after the no-LM search
        (its call and output join ``records`` and ``interleaved``)."""
        n = self.config.evidence_snippets
        answer = _evidence_answer(records, n, EVIDENCE_LEAD)
        if answer is None:
            call, record, output = yield from self._question_search(question)
            records.append(record)
            # the question is the user's text: format_call escapes it (it cannot open a tag), and the
            # trajectory reads back as the call that ran
            interleaved += [format_call(call), output]
            answer = _evidence_answer([record], n, EVIDENCE_LEAD)
        if answer:
            interleaved.append(f"<answer>{answer}</answer>")
        return answer

    def _execute(self, call: ToolCall) -> Pipeline:
        """Run one tool call (awaited through the toolbox's ``acall`` on the async path, a worker thread for a
        toolbox without one), reported as a span named after the tool."""
        stamp = _now()
        started = time.perf_counter()
        result = yield work(self.toolbox.call, call, afn=getattr(self.toolbox, "acall", None), span=call.name,
                            outputs=_tool_outputs, inputs={"query": call.query, "params": dict(call.params)})
        record = ToolCallRecord(tool=call.name, parameters=dict(call.params), query=call.query,
                                result=list(result.snippets or []), error=result.error, timestamp=stamp,
                                duration_ms=round((time.perf_counter() - started) * 1000, 2))
        return record, result.to_output()

    @staticmethod
    def _refuse(call: ToolCall, refusal: str) -> tuple[ToolCallRecord, str]:
        record = ToolCallRecord(tool=call.name, parameters=dict(call.params), query=call.query, error=refusal,
                                executed=False, timestamp=_now())
        return record, format_tool_output(error=refusal)

    def _question_search(self, question: str) -> Pipeline:
        """The no-LM path's one search: pubmed_search (else the first tool) with the question."""
        call = ToolCall("pubmed_search", {"limit": self.config.evidence_snippets}, question)
        schemas = yield work(self._schemas)
        if call.name not in schemas:
            call = ToolCall(next(iter(schemas), call.name), {}, question)
        record, output = yield from self._execute(call)
        return call, record, output

    def _without_lm(self, question: str) -> Pipeline:
        """No LM: one search with the question, and the top snippets as a cited, extractive answer."""
        interleaved: list[str] = []
        records: list[ToolCallRecord] = []
        answer = yield from self._evidence_fallback(question, records, interleaved)
        return self._trajectory(question, interleaved, records, answer, "", 0, "no_lm", 0)

    @staticmethod
    def _trajectory(question, interleaved, records, answer, reasoning, hallucinated, stop_reason, steps, *,
                    truncated: int = 0, markup_removed: int = 0, dropped: list[str] = ()) -> Trajectory:
        cited = list(dict.fromkeys(i for c in extract_citations(answer or "") for i in c.ids))
        executed = [r for r in records if r.executed]
        return Trajectory(question=question, interleaved_text="\n".join(interleaved), tool_calls=records,
                          final_answer=answer, total_tool_calls=len(executed),
                          tools_used=list(dict.fromkeys(r.tool for r in executed)), ids_cited=cited,
                          hallucinated_outputs=hallucinated, stop_reason=stop_reason, reasoning=reasoning,
                          steps=steps, truncated=truncated, markup_removed=markup_removed,
                          dropped_citations=list(dropped))
