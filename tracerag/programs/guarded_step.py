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

Timeouts and retries belong to the LM client (``config.make_lm`` passes ``--lm-timeout`` and
``--lm-retries`` to ``dspy.LM``); this module only sees the failure that comes out of them. A user's own
``dspy.LM`` that sets no ``timeout`` would wait for a stalled endpoint as long as its client does
(DSPy's native engine: 600 s a read; LiteLLM: 6,000 s), so each stage passes it the policy's timeout
for that call (``call_config``); one that sets its own keeps it.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
import unicodedata
from collections import Counter
from collections.abc import Awaitable, Callable, Generator
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import dspy
from dspy.utils.exceptions import AdapterParseError

from ..lm_policy import LMPolicy, policy, set_policy  # the policy's home; kept importable from here
from ..lm_transport import at_most
from .fault_budget import FaultBudget, current_budget

__all__ = ["BREAKER", "LMPolicy", "LMStep", "Pipeline", "Stages", "Work", "call_config", "failure_line", "lm_of",
           "lm_step", "policy", "reset_lm_guard", "says_nothing", "set_policy", "warning_summary", "work"]

logger = logging.getLogger("tracerag.lm")


def lm_of(predictor) -> Any | None:
    """The LM a predictor call will use: its own, else the configured one (None: no LM)."""
    return getattr(predictor, "lm", None) or dspy.settings.lm


def says_nothing(text: Any) -> bool:
    """True for text of nothing but whitespace, punctuation and control characters ("", "  ", "?!。"): an
    LM can make nothing of it, so no stage spends a call on it. Letters, digits and symbols are content."""
    return isinstance(text, str) and all(unicodedata.category(ch)[0] in "PZC" for ch in text)


def _lm_key(lm) -> tuple[str, str]:
    """One endpoint, however many LM objects point at it (optimizers copy LMs)."""
    kwargs = getattr(lm, "kwargs", None) or {}
    return str(getattr(lm, "model", type(lm).__name__)), str(kwargs.get("api_base") or kwargs.get("base_url") or "")


class CircuitBreaker:
    """Per process, per endpoint and per stage: closed (calls go through), open (calls are skipped), with
    one probe call let through every ``probe_seconds`` while open. Thread-safe (evaluation runs threads).

    Two keys count consecutive failures: the endpoint (every stage's calls: a total outage opens it after
    ``breaker_failures`` calls, whichever stages made them) and the (endpoint, stage) pair (a stage whose
    calls fail while the others succeed opens alone; the others' successes do not reset it). The probe
    interval runs from when the last probe ended, and one probe is in flight at a time, so a probe slower
    than the interval never turns every later call into a probe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures: Counter = Counter()  # consecutive failures per key
        self._opened: dict[tuple, float] = {}  # key -> when it opened or its last probe ended
        self._probing: set[tuple] = set()  # keys whose probe call is in flight

    def allow(self, lm, stage: str = "") -> bool:
        endpoint = _lm_key(lm)
        with self._lock:
            key = endpoint if endpoint in self._opened else (endpoint, stage) if (endpoint, stage) in self._opened \
                else None
            if key is None:
                return True
            if key in self._probing or time.monotonic() - self._opened[key] < policy().probe_seconds:
                return False
            self._probing.add(key)  # this call is the probe; the others keep skipping
            return True

    def record(self, lm, ok: bool, stage: str = "") -> None:
        endpoint = _lm_key(lm)
        keys = (endpoint, (endpoint, stage))
        with self._lock:
            self._probing.difference_update(keys)
            if ok:
                for key in keys:
                    self._failures.pop(key, None)
                    if self._opened.pop(key, None) is not None:
                        logger.warning("LM %s answers again%s; LM stages are back on", endpoint[0],
                                       f" for stage {stage}" if key != endpoint else "")
                return
            now = time.monotonic()
            for key in keys:
                self._failures[key] += 1
                if key in self._opened:
                    self._opened[key] = now  # a failed probe: the next one waits a whole interval
                elif self._failures[key] >= policy().breaker_failures and endpoint not in self._opened:
                    self._opened[key] = now  # (a stage opens alone only while its endpoint is not open)
                    what = "" if key == endpoint else f" at stage {stage}"
                    logger.warning("LM %s failed %d calls in a row%s; using the no-LM path and probing it again "
                                   "every %g s", endpoint[0], self._failures[key], what, policy().probe_seconds)

    def is_open(self, lm, stage: str | None = None) -> bool:
        """Whether calls to this endpoint (or, with ``stage``, that stage's calls) are being skipped."""
        endpoint = _lm_key(lm)
        with self._lock:
            return endpoint in self._opened or (stage is not None and (endpoint, stage) in self._opened)

    def reset(self) -> None:
        with self._lock:
            self._failures.clear()
            self._opened.clear()
            self._probing.clear()


BREAKER = CircuitBreaker()
_repeats: Counter = Counter()  # (stage, failure kind) -> failures not logged (a first one was)
_repeats_lock = threading.Lock()


_KEY_VARIABLE = re.compile(r"\b[A-Z][A-Z0-9_]*_API_KEY\b")  # a provider's key variable, named in an error


def failure_line(exc: BaseException, lm=None, *, cut_at: float | None = None) -> str:
    """One line a user can act on: the exception type and first line, and the setting that changes it
    (with the LM's own timeout and retries when it has them). ``cut_at``: the call was cut after that many
    seconds because the run's LM fault budget had no more for it (not the LM's own timeout)."""
    name = type(exc).__name__
    if cut_at is not None:
        return (f"{name}: cut after {cut_at:.1f} s, all the run's LM fault budget had left for it "
                "(--lm-fault-budget or TRACERAG_LM_FAULT_BUDGET)")
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    lowered = text.lower()
    timeout = (getattr(lm, "kwargs", None) or {}).get("timeout")
    timeout = timeout if isinstance(timeout, int | float) else policy().timeout
    retries = getattr(lm, "num_retries", policy().retries)
    if "timed out" in lowered or "timeout" in name.lower():
        return f"{name}: no reply within {timeout:g} s (raise it with --lm-timeout or TRACERAG_LM_TIMEOUT)"
    if "parse" in name.lower() or "empty or null" in lowered:
        return f"{name}: the reply did not have the expected fields"
    if "CollectionLimit" in name or "larger than" in lowered:  # the reply cap: never retried
        return f"{name}: {text[:200]} (not retried: the same endpoint would send it again)"
    if "NotConfigured" in name or "MissingCredential" in name or "api key" in lowered or "credential" in lowered:
        names = list(dict.fromkeys(["TRACERAG_API_KEY", *_KEY_VARIABLE.findall(text)]))  # config.ENV_API_KEY
        return f"{name}: the LM has no API key: set {' or '.join(names)} (or --api-key)"
    if name.startswith("LM") or "connect" in lowered:
        return f"{name}: {text[:200]} (after {retries} retries; --lm-retries or TRACERAG_LM_RETRIES)"
    return f"{name}: {text[:200]}"


def _warn(stage: str, predictor, what: str, fallback: str) -> None:
    key = (stage, what.split(":")[0])
    with _repeats_lock:
        first = key not in _repeats
        _repeats[key] += 0 if first else 1
    if first:
        name = getattr(getattr(predictor, "signature", None), "__name__", type(predictor).__name__)
        logger.warning("LM stage %s (%s) failed: %s; %s. Repeats are counted, not logged.", stage, name, what,
                       fallback)


def warning_summary() -> list[str]:
    """One line per kind of failure that repeated: how many more times it happened."""
    with _repeats_lock:
        return [f"LM stage {stage} failed {n} more times ({kind})" for (stage, kind), n in sorted(_repeats.items())
                if n]


def reset_lm_guard() -> None:
    """Forget breaker state and warning counts (tests; a long-lived app switching endpoints)."""
    BREAKER.reset()
    with _repeats_lock:
        _repeats.clear()


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


def _takes_timeout(lm) -> bool:
    """A ``dspy.LM`` over a model string takes a per-call ``timeout``; a custom engine refuses client
    settings, and another ``BaseLM`` may not know the key."""
    return isinstance(lm, dspy.LM) and isinstance(getattr(lm, "_engine_spec", "auto"), str)


def call_config(lm) -> dict[str, Any]:
    """Per-call settings for ``lm`` (a Predict's ``config``): the policy's timeout for a ``dspy.LM`` over a
    model string that sets none itself; nothing for any other LM."""
    if _takes_timeout(lm) and lm.kwargs.get("timeout") is None:
        return {"timeout": policy().timeout}
    return {}


def _with_config(predictor, lm, inputs: dict[str, Any], limit: float | None = None) -> dict[str, Any]:
    """``inputs`` plus ``config=call_config(lm)`` for a predictor that takes a ``config`` (a Predict, or one
    that says so with ``takes_config``), merged over one the caller gave; the timeout given (the LM's own
    included) is at most ``limit``, what the run's fault budget has left for the call."""
    extra = call_config(lm)
    if limit is not None and _takes_timeout(lm):
        own = extra.get("timeout", lm.kwargs.get("timeout"))
        extra = {**extra, "timeout": max(min(own, limit), 0.001)} if isinstance(own, int | float) else extra
    if not extra or not (isinstance(predictor, dspy.Predict) or getattr(predictor, "takes_config", False)):
        return inputs
    return {**inputs, "config": {**extra, **inputs.get("config", {})}}


def _async_capable(lm) -> bool:
    """Whether ``lm`` has an async path of its own. A ``dspy.LM`` over a model string has one; one over a
    custom engine object only with an ``async_engine``; another ``BaseLM`` when it implements ``aforward``
    or ``acall``. Without one, the stage runs its sync call in a worker thread (same result, same bounds)."""
    if isinstance(lm, dspy.LM):
        return isinstance(getattr(lm, "_engine_spec", "auto"), str) or getattr(lm, "_async_engine_spec", None) \
            is not None
    cls = type(lm)
    return cls.aforward is not dspy.BaseLM.aforward or cls.acall is not dspy.BaseLM.acall


class _Charged:
    """One LM call's account with the run's fault budget: the limit it got, the failure it is charged."""

    def __init__(self, budget: FaultBudget | None, lm, stage: str) -> None:
        self.budget, self.endpoint, self.stage = budget, _lm_key(lm), stage
        self.limit = budget.remaining(self.endpoint, stage) if budget is not None else None
        self.started = budget.now() if budget is not None else 0.0
        # the limit holds for a bounded LM (``config.BoundedLM``: ``at_most``) and one given the timeout per call
        self.enforced = callable(getattr(lm, "worst_case", None)) or _takes_timeout(lm)

    def within(self):
        """The call cut at what the budget has left for it (no limit without a budget)."""
        return nullcontext() if self.limit is None else at_most(self.limit)

    def answered(self) -> None:
        if self.budget is not None:
            self.budget.answered(self.endpoint, self.stage)

    def failed(self, exc: BaseException) -> float | None:
        """Charge a call that brought no reply; a reply that came back but did not parse is the model's
        answer, not a fault of the endpoint (see ``fault_budget``). The seconds it took when the budget's
        limit cut it, else None."""
        if self.budget is None:
            return None
        if isinstance(exc, AdapterParseError):
            self.answered()
            return None
        seconds = self.budget.now() - self.started
        self.budget.charge(seconds, self.endpoint, self.stage)
        return seconds if self.enforced and self.limit is not None and seconds >= self.limit * 0.99 else None


async def _ainvoke(predictor, lm, inputs: dict[str, Any]) -> Any:
    acall = getattr(predictor, "acall", None)
    if callable(acall) and _async_capable(lm):
        return await acall(**inputs)
    return await asyncio.to_thread(predictor, **inputs)  # contextvars (dspy.context, callbacks) go along


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
        account = _Charged(current_budget(), lm, stage)
        try:
            with account.within():
                out = predictor(**_with_config(predictor, lm, inputs, account.limit))
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
        account = _Charged(current_budget(), lm, stage)
        try:
            with account.within():
                out = await _ainvoke(predictor, lm, _with_config(predictor, lm, inputs, account.limit))
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
        lm = lm_of(predictor)
        if lm is None:
            return None
        if self._says_nothing(inputs):
            self.skipped.append(stage)
            return None
        budget = current_budget()
        if budget is not None and not budget.admits(_lm_key(lm), stage):
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
        BREAKER.record(lm, ok=False, stage=stage)
        what = failure_line(exc, lm, cut_at=cut_at)
        _warn(stage, predictor, what, fallback)
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
        return "lm_failed" if self.fallbacks else "empty_input" if self.skipped else None

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
