"""SearchAgent: question -> interleaved trajectory of tool calls, real tool outputs and a cited answer.

Each step is one call of the DSPy-managed policy ``AgentStep`` (its instructions and demos are saved,
loaded and compiled with the program), sent with the protocol's stop sequences. The reply is read by
``tools.protocol.parse_reply``: the first call runs through the toolbox (MCP tools), the real
``<tool_output>`` is appended and the loop goes on; an ``<answer>`` ends it.

Limits and fallbacks (an app never sees an exception from the LM or a tool):
- a per-tool cap (pubmed_search 3) and a total cap: over a cap the model gets an error tool output
  and must answer; calling again ends the run (``stop_reason="tool_limit"``);
- a reply with neither call nor answer gets one nudge; a second ends the run (``"no_action"``);
- ``max_steps`` LM calls at most (``"max_steps"``);
- no LM configured: one search with the question, and an extractive answer citing the top snippets
  (``"no_lm"``); the LM failing mid-run: the same extractive answer from what the tools returned so
  far (``"lm_error"``); a reply the adapter cannot parse is read as raw protocol text.
"""

from __future__ import annotations

import logging
import re
import time
from datetime import UTC, datetime
from typing import Any, Protocol

import dspy
from dspy.utils.exceptions import AdapterParseError
from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..signatures.agent import AgentStep
from ..tools.budget import ToolBudget
from ..tools.protocol import (
    STOP_SEQUENCES,
    ToolCall,
    extract_citations,
    format_call,
    format_tool_output,
    parse_reply,
    restore_stop,
)
from ..tools.trajectory import ToolCallRecord, Trajectory

__all__ = ["AgentConfig", "SearchAgent"]

logger = logging.getLogger(__name__)

NUDGE = ("[system] Your reply had neither a tool call nor an answer. Call one tool with "
         '<call_tool name="...">...</call_tool>, or give the final <answer>.')
_THINK = re.compile(r"<think>(.*?)(?:</think>|$)", re.S)
_FIRST_SENTENCE = re.compile(r"^(.{20,300}?[.!?])(?:\s|$)", re.S)


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
    model_config = ConfigDict(extra="forbid")

    per_tool_calls: dict[str, int] = Field(default_factory=lambda: {"pubmed_search": 3})
    default_tool_calls: int = Field(3, ge=0, le=50)  # the cap of a tool not named in per_tool_calls
    max_tool_calls: int = Field(6, ge=0, le=100)  # total cap
    max_steps: int = Field(10, ge=1, le=200)  # LM calls per run
    evidence_snippets: int = Field(3, ge=1, le=10)  # snippets cited by the extractive fallback answer
    sub_task: str = "answer a research question from the literature with cited sources"  # for exported traces

    @model_validator(mode="after")
    def _room_to_answer(self) -> AgentConfig:
        if self.max_steps < 2:
            raise ValueError("max_steps must leave room for a call and an answer (>= 2)")
        return self


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _think(text: str) -> str:
    found = _THINK.findall(text or "")
    return found[-1].strip() if found else ""


def _evidence_answer(records: list[ToolCallRecord], n: int, lead: str) -> str | None:
    """The fallback answer: the first snippets the tools returned, each cited by its id."""
    seen, parts = set(), []
    for record in records:
        for snippet in record.result:
            sid = str(snippet.get("id", ""))
            if not sid or sid in seen or len(parts) >= n:
                continue
            seen.add(sid)
            text = " ".join(str(snippet.get("text") or snippet.get("title") or "").split())
            sentence = _FIRST_SENTENCE.match(text)
            parts.append(f'<cite id="{sid}">{(sentence.group(1) if sentence else text[:300]).strip()}</cite>')
    return f"{lead} " + " ".join(parts) if parts else None


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

    def forward(self, question: str) -> dspy.Prediction:
        started = time.perf_counter()
        trajectory = self._run(question) if dspy.settings.lm is not None else self._without_lm(question)
        return dspy.Prediction(
            trajectory=trajectory, answer=trajectory.final_answer, ids_cited=trajectory.ids_cited,
            returned_ids=trajectory.returned_ids, stop_reason=trajectory.stop_reason,
            tool_calls=trajectory.total_tool_calls, hallucinated_outputs=trajectory.hallucinated_outputs,
            lm_calls=trajectory.steps, ms=round((time.perf_counter() - started) * 1000, 2))

    # -- the loop ----------------------------------------------------------------------------------

    def _run(self, question: str) -> Trajectory:
        cfg = self.config
        schemas = self.toolbox.schemas()
        budget = ToolBudget(cfg.per_tool_calls, cfg.default_tool_calls, cfg.max_tool_calls)
        interleaved: list[str] = []  # the trajectory a fine-tuning set keeps
        transcript: list[str] = []  # what the policy reads: the same plus nudges
        records: list[ToolCallRecord] = []
        answer, reasoning, stop_reason = None, "", "max_steps"
        hallucinated = steps = 0
        nudged = refused = False
        for _ in range(cfg.max_steps):
            steps += 1
            try:
                raw = self._step(question, budget.describe(schemas), "\n".join(transcript))
            except Exception as exc:  # the documented contract: the run ends with what it has
                logger.warning("SearchAgent step failed, answering from the evidence so far: %s", exc)
                stop_reason = "lm_error"
                answer = _evidence_answer(records, cfg.evidence_snippets, "The search found:")
                break
            parsed = parse_reply(restore_stop(raw), schemas)
            hallucinated += parsed.hallucinated_outputs
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
                record, output = self._refuse(call, refusal) if refusal else self._execute(call)
                record.thought = _think(parsed.clean_text)
                refused = refused or bool(refusal)
                records.append(record)
                interleaved.append(output)
                transcript.append(output)
            elif parsed.answer is not None:
                answer, reasoning, stop_reason = parsed.answer, _think(parsed.clean_text), "answered"
                break
            elif nudged:
                stop_reason = "no_action"
                break
            else:
                nudged = True
                transcript.append(NUDGE)
        return self._trajectory(question, interleaved, records, answer, reasoning, hallucinated, stop_reason, steps)

    def _step(self, question: str, tools: str, trajectory: str) -> str:
        """One policy call with the stop sequences; an unparsable reply is still read as protocol text."""
        try:
            return self.policy(question=question, tools=tools, trajectory=trajectory,
                               config={"stop": list(STOP_SEQUENCES)}).reply or ""
        except AdapterParseError as exc:
            return str(exc.lm_response or "")

    def _execute(self, call: ToolCall) -> tuple[ToolCallRecord, str]:
        stamp = _now()
        started = time.perf_counter()
        result = self.toolbox.call(call)
        record = ToolCallRecord(tool=call.name, parameters=dict(call.params), query=call.query,
                                result=list(result.snippets or []), error=result.error, timestamp=stamp,
                                duration_ms=round((time.perf_counter() - started) * 1000, 2))
        return record, result.to_output()

    @staticmethod
    def _refuse(call: ToolCall, refusal: str) -> tuple[ToolCallRecord, str]:
        record = ToolCallRecord(tool=call.name, parameters=dict(call.params), query=call.query, error=refusal,
                                executed=False, timestamp=_now())
        return record, format_tool_output(error=refusal)

    def _without_lm(self, question: str) -> Trajectory:
        """No LM: one search with the question, and the top snippets as a cited, extractive answer."""
        call = ToolCall("pubmed_search", {"limit": self.config.evidence_snippets}, question)
        schemas = self.toolbox.schemas()
        if call.name not in schemas:
            call = ToolCall(next(iter(schemas), call.name), {}, question)
        record, output = self._execute(call)
        answer = _evidence_answer([record], self.config.evidence_snippets, "Without an LM, the closest evidence found:")
        interleaved = [format_call(call), output] + ([f"<answer>{answer}</answer>"] if answer else [])
        return self._trajectory(question, interleaved, [record], answer, "", 0, "no_lm", 0)

    @staticmethod
    def _trajectory(question, interleaved, records, answer, reasoning, hallucinated, stop_reason, steps) -> Trajectory:
        cited = list(dict.fromkeys(i for c in extract_citations(answer or "") for i in c.ids))
        executed = [r for r in records if r.executed]
        return Trajectory(question=question, interleaved_text="\n".join(interleaved), tool_calls=records,
                          final_answer=answer, total_tool_calls=len(executed),
                          tools_used=list(dict.fromkeys(r.tool for r in executed)), ids_cited=cited,
                          hallucinated_outputs=hallucinated, stop_reason=stop_reason, reasoning=reasoning,
                          steps=steps)
