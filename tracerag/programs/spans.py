"""Retrieval steps and tool calls as spans in DSPy's callback system.

DSPy reports LM calls, adapters and modules to its callbacks (``dspy.configure(callbacks=[...])``,
``dspy.context(callbacks=...)``), and ``mlflow.dspy.autolog()`` and OpenTelemetry exporters build
their traces from those events. Plain-Python retrieval is invisible to them, so a user debugging a bad
answer would see the prompt but not what was retrieved. Each program's retrieval step and each agent
tool call is therefore reported as one tool span: ``on_tool_start(call_id, instance, inputs)`` with the
step's inputs (query text, k, …) and ``on_tool_end(call_id, outputs, exception)`` with what it returned
(``{"ids": [...], "scores": [...]}``, plus a few step-specific fields). ``instance`` is a ``dspy.Tool``
named after the step (``corpus.search``, ``pubmed_search``, …), so callbacks that read a tool's
``name``, ``desc`` and ``args`` (MLflow's ``Tool.<name>`` spans) work unchanged. While a span is open,
``ACTIVE_CALL_ID`` is its id, so anything it calls nests under it, and it nests under the program's
own module span.

The span names, one per kind of step:

- ``command_index.search`` (CommandRetrieval): inputs ``query``, ``k``, ``home``, ``ir``; outputs the
  candidates as ``device_id/command_id`` ids and their fused scores;
- ``command_index.plan_bulk`` (CommandRetrieval, all/except queries only): outputs the chosen
  ``command_id``, the hint and the target device ids;
- ``experience_bank.search`` (ExperienceRetrieval, one per round): inputs ``queries``, ``k``,
  ``min_score``, ``rerank_query``; outputs the task ids and retrieval scores after dedupe, and the
  reranked ids and scores;
- ``corpus.search`` (SelfReflectiveRAG, one per round): inputs ``query``, ``k``; outputs chunk ids,
  fused scores and their documents' ids;
- ``templates.retrieve`` (TraceablePlanner, when it calls its template retriever): inputs ``query``
  (the requirements) and ``k``; outputs template ids and scores;
- the tool's own name (SearchAgent, one per executed tool call: ``pubmed_search``, ``browse_webpage``):
  inputs ``query`` and the call's parameters; outputs the snippet ids, their scores when the tool gives
  them, and the tool's error.

Nothing is built when no callback is configured: a span then costs one settings lookup. Before anything has
imported DSPy no callback can be configured, so a span of a run without an LM (which loads no DSPy) costs a
dictionary look-up and imports nothing.
"""

from __future__ import annotations

import logging
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..errors import NotCallable

if TYPE_CHECKING:
    import dspy

__all__ = ["COMMAND_BULK", "COMMAND_SEARCH", "CORPUS_SEARCH", "EXPERIENCE_SEARCH", "Span", "TEMPLATE_SEARCH",
           "span", "span_tool"]

logger = logging.getLogger(__name__)

COMMAND_SEARCH = "command_index.search"
COMMAND_BULK = "command_index.plan_bulk"
EXPERIENCE_SEARCH = "experience_bank.search"
CORPUS_SEARCH = "corpus.search"
TEMPLATE_SEARCH = "templates.retrieve"

_DESCRIPTIONS = {
    COMMAND_SEARCH: "Search the home's command index for (device, command) candidates of an utterance.",
    COMMAND_BULK: "Choose the command of an all/except utterance and expand it to its target devices.",
    EXPERIENCE_SEARCH: "Search the experience bank for solved tasks similar to the queries, then rerank them.",
    CORPUS_SEARCH: "Hybrid (dense + BM25) search of the chunk corpus.",
    TEMPLATE_SEARCH: "Retrieve reference templates for the requirements.",
}


class Span:
    """The handle of an open span: set ``outputs`` (a dict) before it closes."""

    __slots__ = ("active", "outputs")

    def __init__(self, active: bool) -> None:
        self.active = active  # False: no callback listens, so outputs need not be computed
        self.outputs: dict[str, Any] | None = None


_tools: dict[tuple[str, tuple[str, ...]], dspy.Tool] = {}
_tools_lock = threading.Lock()


def _not_called(**kwargs) -> None:  # the span's Tool only names the step; the program runs the step itself
    raise NotCallable("a span's tool is a description, not a callable tool")


def span_tool(name: str, args: tuple[str, ...] = ()) -> dspy.Tool:
    """The ``dspy.Tool`` a span reports as its instance (one per name and argument names, reused)."""
    import dspy

    key = (name, tuple(args))
    with _tools_lock:
        tool = _tools.get(key)
        if tool is None:
            tool = dspy.Tool(_not_called, name=name, desc=_DESCRIPTIONS.get(name, f"The {name} tool."),
                             args={a: {} for a in args}, arg_types={a: Any for a in args})
            _tools[key] = tool
    return tool


def _callbacks() -> list:
    dspy = sys.modules.get("dspy")  # not imported yet: nothing can have configured a callback
    return list(dspy.settings.get("callbacks", None) or []) if dspy is not None else []


def _safely(callback, handler: str, **kwargs) -> None:
    try:
        getattr(callback, handler)(**kwargs)
    except Exception as exc:  # like DSPy: a broken callback never breaks the program
        logger.warning("callback %s failed in %s: %s", type(callback).__name__, handler, exc)


@contextmanager
def span(name: str, inputs: dict[str, Any]) -> Iterator[Span]:
    """``with span("corpus.search", {"query": q, "k": 10}) as s: ...; s.outputs = {"ids": ..., "scores": ...}``.

    Reports ``on_tool_start`` / ``on_tool_end`` to the configured DSPy callbacks; an exception in the
    block is reported as the span's exception and raised on."""
    callbacks = _callbacks()
    handle = Span(bool(callbacks))
    if not callbacks:
        yield handle
        return
    from dspy.utils.callback import ACTIVE_CALL_ID

    call_id = uuid.uuid4().hex
    tool = span_tool(name, tuple(inputs))
    for callback in callbacks:
        _safely(callback, "on_tool_start", call_id=call_id, instance=tool, inputs=dict(inputs))
    token = ACTIVE_CALL_ID.set(call_id)
    error: BaseException | None = None
    try:
        yield handle
    except BaseException as exc:
        error = exc
        raise
    finally:
        ACTIVE_CALL_ID.reset(token)
        outputs = handle.outputs if error is None else None
        for callback in callbacks:
            _safely(callback, "on_tool_end", call_id=call_id, outputs=outputs, exception=error)
