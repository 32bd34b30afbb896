"""Every LM stage is a guarded step: bounded, counted, and never worse than having no LM.

A program declares its LM stages (``parse``, ``grade``, ``answer``, …) and what each falls back to;
``Stages.call`` runs one stage's predictor and returns its checked output, or ``None`` when the stage
must take its fallback. Why one mechanism instead of a try/except per program:

- **the user's LM**: a stage uses its predictor's own LM (``set_lm``, per-predictor LMs) before
  ``dspy.settings.lm`` (``dspy.context(lm=...)`` included), so no program second-guesses it;
- **a circuit breaker per process**: after ``breaker_failures`` consecutive failed calls to one LM
  (transport error, timeout, or a reply that does not parse or check), stages skip it and fall back
  at once; one probe call is let through every ``probe_seconds``, and a success closes it again. An
  endpoint that is down costs a few timeouts per run, not a timeout per example;
- **nothing asked, nothing spent**: a stage whose subject says nothing (empty, blanks, punctuation only:
  ``says_nothing``) takes its fallback without a call, counted in ``skipped`` (not a failure). The
  subject is the program call's own input when the program gives it (``Stages(subject=question)``),
  else the stage's text inputs, all of them;
- **typed, capped replies**: each stage's ``check`` raises on a reply the program cannot use (wrong
  types, over a cap of ``reply_limits``, ids the stage was not given): the stage falls back, counted;
- **a fault budget per run**: inside an evaluation or a compile (``fault_budget.lm_fault_budget``; a served
  request has one of its own), the calls that bring no reply may take ``fault_budget`` seconds plus 10 % of
  the run's time; each call is cut at what is left (its failure line says so), and once it is spent every
  stage takes its fallback at once (counted), so a stalled endpoint, or one failing on some inputs only,
  costs a run about a minute, not a timeout per example. A stage failing while the endpoint answers the
  others may spend half of it, then that stage alone falls back for the rest of the run;
- **visible fallbacks**: each program call gets the list of stages that fell back (reported as
  ``lm_fallbacks`` and ``hint="lm_failed"``), and warnings are one line each: the first failure of a
  kind is logged, repeats are counted and summed up by ``warning_summary()``.

**Sync and async, one logic**: ``Stages.acall`` is ``Stages.call`` awaiting the predictor's async path
(``predictor.acall``; an LM without an async client runs its sync call in a worker thread), with the
same admission, counting, breaker and fallbacks. A program writes its pipeline once, as a generator that
yields ``lm_step(...)`` (a guarded stage) and ``work(...)`` (retrieval, a tool call; optionally reported
as a span, see ``spans``) requests; ``Stages.run`` drives it for ``forward``, ``Stages.arun`` for
``aforward``, so both give the same prediction. On the async path a work request runs in a worker thread,
unless it names an async twin (``work(fn, ..., afn=...)``: the same result, awaited on the event loop):
remote embedders, rerankers and MCP tools are awaited there, so waiting for a service holds no thread.

The LM side of each call (its breaker, timeout, fault budget and failure line) is ``tracerag.lm``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Awaitable, Callable, Generator
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from ..hints import Hint
from ..lm.breaker import BREAKER, lm_key

# The LM side of a stage (``lm.calls``, ``lm.failures``, ``lm.fault_budget``: DSPy's settings and errors) is
# imported when a stage runs: a pipeline that yields no LM step, a program run without an LM, loads no DSPy.

__all__ = ["LMStep", "Pipeline", "Stages", "Work", "lm_step", "says_nothing", "work"]


def says_nothing(text: Any) -> bool:
    """True for text of nothing but whitespace, punctuation and control characters ("", "  ", "?!。"): an
    LM can make nothing of it, so no stage spends a call on it. Letters, digits and symbols are content."""
    return isinstance(text, str) and all(unicodedata.category(ch)[0] in "PZC" for ch in text)


@dataclass(frozen=True)
class LMStep:
    """A pipeline's request for one guarded LM stage (``lm_step``): what ``Stages.call`` takes."""

    stage: str
    predictor: Any
    check: Callable[[Any], Any] | None
    fallback: str
    inputs: dict[str, Any]


@dataclass(frozen=True)
class Work:
    """A pipeline's request for non-LM work (``work``): retrieval, a tool call. ``Stages.run`` runs it in
    line, ``Stages.arun`` awaits ``afn`` when given (the same result as ``fn``, e.g. a remote call over
    an async client), else runs ``fn`` in a worker thread; with a ``span`` name it is reported to DSPy's
    callbacks as one span (``spans.span``) with ``span_inputs`` and ``span_outputs(result)``."""

    fn: Callable[..., Any]
    args: tuple
    kwargs: dict[str, Any]
    span: str | None = None
    span_inputs: dict[str, Any] = field(default_factory=dict)
    span_outputs: Callable[[Any], dict[str, Any]] | None = None
    afn: Callable[..., Awaitable[Any]] | None = None


def lm_step(stage: str, predictor, *, check: Callable[[Any], Any] | None = None,
            fallback: str = "using the no-LM result", **inputs) -> LMStep:
    """``result = yield lm_step(...)`` in a pipeline: ``Stages.call``'s result (None: the stage fell back)."""
    return LMStep(stage, predictor, check, fallback, inputs)


def work(fn: Callable[..., Any], *args, span: str | None = None, inputs: dict[str, Any] | None = None,
         outputs: Callable[[Any], dict[str, Any]] | None = None, afn: Callable[..., Awaitable[Any]] | None = None,
         **kwargs) -> Work:
    """``result = yield work(fn, ...)`` in a pipeline: ``fn(*args, **kwargs)`` (on the async path ``await
    afn(*args, **kwargs)`` when given, else ``fn`` in a worker thread); an exception it raises is raised
    at the ``yield``."""
    return Work(fn, args, kwargs, span, dict(inputs or {}), outputs, afn)


Pipeline = Generator[LMStep | Work, Any, Any]


@dataclass
class Stages:
    """The LM stages of one program call: the calls made and the stages that fell back, in order.

    ``call`` and ``acall`` run one stage (sync / async) with the same admission, counting, breaker and
    fallback (``_admit``, ``_failed``, ``_passed``); only the LM call itself differs. ``run`` and ``arun``
    drive a whole pipeline written once as a generator that yields ``lm_step``/``work`` requests, so a
    program's ``forward`` and ``aforward`` are the same code and give the same prediction."""

    calls: int = 0
    fallbacks: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # one line per fallback: what went wrong
    subject: str | None = None  # the program call's own input: when it says nothing, every stage is skipped
    skipped: list[str] = field(default_factory=list)  # stages not called because their subject says nothing

    def call(self, stage: str, predictor, *, check: Callable[[Any], Any] | None = None,
             fallback: str = "using the no-LM result", **inputs) -> Any | None:
        """``check(predictor(**inputs))`` (the output itself without ``check``), or None after recording
        the fallback. ``check`` raises on an output the program cannot use (wrong types, empty)."""
        lm = self._admit(stage, predictor, inputs)
        if lm is None:
            return None
        from ..lm.calls import Charged, with_config
        from ..lm.fault_budget import current_budget

        account = Charged(current_budget(), lm, stage)
        try:
            with account.within():
                out = predictor(**with_config(predictor, lm, inputs, account.limit))
        except Exception as exc:  # any failure of the LM: the stage's fallback
            return self._failed(stage, predictor, lm, exc, fallback, cut_at=account.failed(exc))
        account.answered()
        try:
            value = check(out) if check is not None else out
        except Exception as exc:  # a reply the program cannot use: the stage's fallback
            return self._failed(stage, predictor, lm, exc, fallback)
        return self._passed(lm, value, stage)

    async def acall(self, stage: str, predictor, *, check: Callable[[Any], Any] | None = None,
                    fallback: str = "using the no-LM result", **inputs) -> Any | None:
        """``call`` awaiting the predictor's async path (``predictor.acall``; a worker thread for an LM
        without one): the same fallbacks, counts, breaker and the LM client's own timeout."""
        lm = self._admit(stage, predictor, inputs)
        if lm is None:
            return None
        from ..lm.calls import Charged, ainvoke, with_config
        from ..lm.fault_budget import current_budget

        account = Charged(current_budget(), lm, stage)
        try:
            with account.within():
                out = await ainvoke(predictor, lm, with_config(predictor, lm, inputs, account.limit))
        except Exception as exc:  # cancellation (a BaseException) is not a failure: it propagates
            return self._failed(stage, predictor, lm, exc, fallback, cut_at=account.failed(exc))
        account.answered()
        try:
            value = check(out) if check is not None else out
        except Exception as exc:
            return self._failed(stage, predictor, lm, exc, fallback)
        return self._passed(lm, value, stage)

    def _admit(self, stage: str, predictor, inputs: dict[str, Any]) -> Any | None:
        """The LM to call, counted; None when there is none, when the stage's subject says nothing
        (skipped) or when the breaker skips it (a fallback)."""
        from ..lm.calls import lm_of
        from ..lm.fault_budget import current_budget

        lm = lm_of(predictor)
        if lm is None:
            return None
        if self._says_nothing(inputs):
            self.skipped.append(stage)
            return None
        budget = current_budget()
        if budget is not None and not budget.admits(lm_key(lm), stage):
            self.fell_back(stage, "the run's LM fault budget is spent" if budget.spent else
                           "this stage's share of the run's LM fault budget is spent")
            return None
        if not BREAKER.allow(lm, stage):
            self.fell_back(stage, "the LM is skipped after repeated failures")
            return None
        self.calls += 1
        return lm

    def _failed(self, stage: str, predictor, lm, exc: BaseException, fallback: str, *,
                cut_at: float | None = None) -> None:
        from ..lm.failures import failure_line, warn_once

        BREAKER.record(lm, ok=False, stage=stage)
        what = failure_line(exc, lm, cut_at=cut_at)
        warn_once(stage, predictor, what, fallback)
        self.fell_back(stage, what)
        return None

    @staticmethod
    def _passed(lm, value: Any, stage: str) -> Any:
        BREAKER.record(lm, ok=True, stage=stage)
        return value

    def fell_back(self, stage: str, why: str) -> None:
        """Record a fallback the program decided itself (e.g. a reply that says nothing usable)."""
        self.fallbacks.append(stage)
        self.errors.append(f"{stage}: {why}")

    def _says_nothing(self, inputs: dict[str, Any]) -> bool:
        if self.subject is not None:
            return says_nothing(self.subject)
        texts = [value for value in inputs.values() if isinstance(value, str)]
        return bool(texts) and all(says_nothing(text) for text in texts)

    @property
    def hint(self) -> str | None:
        """``lm_failed`` when a stage fell back, else ``empty_input`` when one was skipped (its subject said
        nothing), else None."""
        return Hint.LM_FAILED if self.fallbacks else Hint.EMPTY_INPUT if self.skipped else None

    # -- pipelines -------------------------------------------------------------------------------

    def run(self, pipeline: Pipeline) -> Any:
        """Drive a pipeline synchronously; its return value is the result."""
        value, error = None, None
        while True:
            try:
                step = pipeline.throw(error) if error is not None else pipeline.send(value)
            except StopIteration as done:
                return done.value
            value, error = None, None
            try:
                if isinstance(step, LMStep):
                    value = self.call(step.stage, step.predictor, check=step.check, fallback=step.fallback,
                                      **step.inputs)
                else:
                    with _span(step) as handle:
                        value = step.fn(*step.args, **step.kwargs)
                        _set_outputs(handle, step, value)
            except Exception as exc:  # raised into the pipeline at its yield
                error = exc

    async def arun(self, pipeline: Pipeline) -> Any:
        """Drive a pipeline asynchronously: LM stages through ``acall``, work through its ``afn`` or in a
        worker thread."""
        value, error = None, None
        while True:
            try:
                step = pipeline.throw(error) if error is not None else pipeline.send(value)
            except StopIteration as done:
                return done.value
            value, error = None, None
            try:
                if isinstance(step, LMStep):
                    value = await self.acall(step.stage, step.predictor, check=step.check, fallback=step.fallback,
                                             **step.inputs)
                else:
                    with _span(step) as handle:
                        if step.afn is not None:
                            value = await step.afn(*step.args, **step.kwargs)
                        else:
                            import asyncio  # loaded already on an event loop; a sync run need not import it

                            value = await asyncio.to_thread(step.fn, *step.args, **step.kwargs)
                        _set_outputs(handle, step, value)
            except Exception as exc:
                error = exc


def _span(step: Work):
    from .spans import span

    return span(step.span, step.span_inputs) if step.span else nullcontext(None)


def _set_outputs(handle, step: Work, value: Any) -> None:
    if handle is not None and handle.active and step.span_outputs is not None:
        handle.outputs = step.span_outputs(value)
