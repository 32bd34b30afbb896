"""The LMs tracerag builds: a ``dspy.LM`` bounded in time and bytes whatever its endpoint does.

Why: DSPy's engines bound each socket read, not a call, and honour any Retry-After a server sends. A
``BoundedLM`` ends each attempt at its timeout, caps the wait between retries and the reply's decoded bytes
(``transport``), and ends the whole call by ``worst_case()``. ``make_lm`` builds one from a model string with
the process's policy (``policy``).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging

import dspy

from .policy import policy
from .transport import (
    DEFAULT_TIMEOUT,
    MAX_REPLY_BYTES,
    BoundedEngines,
    call_deadline,
    call_limit,
    call_time_left,
    install_litellm_sessions,
)

logger = logging.getLogger("tracerag.lm")


MAX_RETRY_WAIT = 10.0  # seconds; the longest wait between two attempts of one LM call
_retry_wait_cap: contextvars.ContextVar[float | None] = contextvars.ContextVar("tracerag_lm_retry_wait", default=None)


def _cap_dspy_retry_waits() -> bool:
    """Bound DSPy's wait between retries by the calling LM's cap (`BoundedLM` sets it for its calls).

    DSPy 3.4 sleeps whatever a server's Retry-After says before retrying (a 503 with ``Retry-After:
    1000`` holds a call for 1000 s per retry) and offers no setting for it; its one wait function,
    ``dspy.clients.execution._delay``, is wrapped here. Calls of any other LM are left exactly as they
    were. False when this DSPy has no such function (then waits are DSPy's own)."""
    from dspy.clients import execution

    delay = getattr(execution, "_delay", None)
    if delay is None:
        return False
    if getattr(delay, "tracerag_capped", False):
        return True

    def capped_delay(exc, attempt):
        wait, cap = delay(exc, attempt), _retry_wait_cap.get()
        if cap is None:
            return wait
        left = call_time_left()  # no wait past the call's deadline: the next attempt could not run
        return min(wait, cap) if left is None else min(wait, cap, left)

    capped_delay.tracerag_capped = True  # type: ignore[attr-defined]
    execution._delay = capped_delay
    return True


class BoundedLM(dspy.LM):
    """A ``dspy.LM`` bounded in time and bytes whatever its endpoint does.

    - each attempt ends ``timeout`` seconds after it starts, however slowly the server sends, and a reply
      is read up to ``max_bytes`` decoded bytes (``lm_transport``: DSPy's native engine, which serves
      ``openai/…``, ``hosted_vllm/…``, ``ollama_chat/…``, gets a bounded transport);
    - the wait before a retry is at most ``min(timeout, MAX_RETRY_WAIT)`` seconds, whatever the server's
      Retry-After asks for (DSPy honours it uncapped);
    - the whole call ends by ``worst_case()`` seconds.

    Retries stay inside one call, so callbacks (``on_lm_start``) still see one LM call per request, and
    DSPy's cache and history work as for any ``dspy.LM``."""

    def __init__(self, *args, max_bytes: int = MAX_REPLY_BYTES, **kwargs):
        super().__init__(*args, **kwargs)
        self._engine_store = BoundedEngines(max_bytes)

    def __setstate__(self, state):  # deepcopy and unpickling give a fresh store: keep it bounded
        super().__setstate__(state)
        max_bytes = getattr(state.get("_engine_store"), "max_bytes", None)
        self._engine_store = BoundedEngines(max_bytes or MAX_REPLY_BYTES)

    def __getstate__(self):
        state = super().__getstate__()
        state["_engine_store"] = BoundedEngines(self._engine_store.max_bytes)  # the cap, not the engines
        return state

    def _timeout(self, kwargs=None) -> float | None:
        timeout = (kwargs or {}).get("timeout", self.kwargs.get("timeout"))
        ok = isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0
        return float(timeout) if ok else None

    def retry_wait(self, kwargs=None) -> float:
        timeout = self._timeout(kwargs)
        return min(timeout, MAX_RETRY_WAIT) if timeout else MAX_RETRY_WAIT

    def worst_case(self, kwargs=None) -> float:
        """Seconds one call can last: every attempt at its timeout, and the capped waits between them."""
        timeout = self._timeout(kwargs) or DEFAULT_TIMEOUT
        return timeout * (self.num_retries + 1) + self.num_retries * self.retry_wait(kwargs)

    @contextlib.contextmanager
    def _bounded(self, kwargs):
        # a run's fault budget may leave less than the worst case (``lm_transport.at_most``): the call ends then
        limit = call_limit()
        seconds = self.worst_case(kwargs) if limit is None else min(self.worst_case(kwargs), max(limit, 0.0))
        token = _retry_wait_cap.set(min(self.retry_wait(kwargs), seconds))
        try:
            with call_deadline(seconds, attempt=self._timeout(kwargs) or DEFAULT_TIMEOUT,
                               max_bytes=self._engine_store.max_bytes):
                yield
        finally:
            _retry_wait_cap.reset(token)

    def __call__(self, *args, **kwargs):
        with self._bounded(kwargs):
            return super().__call__(*args, **kwargs)

    async def acall(self, *args, **kwargs):
        with self._bounded(kwargs):
            return await super().acall(*args, **kwargs)

    def close(self):
        transports = self._engine_store.transports()
        super().close()
        for transport in transports:
            transport.close()

    async def aclose(self):
        import asyncio

        transports = self._engine_store.transports(asyncio.get_running_loop())
        try:
            await super().aclose()
        finally:
            for transport in transports:
                await transport.aclose()


def make_lm(model: str, api_base: str | None = None, api_key: str | None = None, *, timeout: float | None = None,
            retries: int | None = None, max_bytes: int = MAX_REPLY_BYTES, **kwargs) -> dspy.LM:
    """A dspy.LM for any LiteLLM model string (openai/…, hosted_vllm/…, ollama_chat/…), bounded whatever
    the endpoint does (``BoundedLM``).

    ``timeout`` (seconds) bounds each attempt from connect to the reply's last byte, however slowly the
    server sends; ``retries`` retries a transient failure (both default to the configured policy); the
    wait before a retry is at most ``min(timeout, 10 s)`` even when the server's Retry-After asks for
    more. One call therefore lasts at most ``timeout * (retries + 1) + retries * min(timeout, 10)``
    seconds (timeout=3, retries=1: 9 s), and reads at most ``max_bytes`` decoded bytes of a reply (8 MB;
    a gzip bomb or an endless body fails at the cap, not retried).

    ``llamacpp/<path.gguf>`` or ``llamacpp/smollm2`` is a model run in-process (``local_model.make_local_lm``:
    the ``local`` extra; no endpoint, key or retries; each call ends by ``timeout``)."""
    from .local_model import is_local

    if is_local(model):
        from .local_model import make_local_lm

        return make_local_lm(model, timeout=timeout or policy().timeout, **kwargs)
    _cap_dspy_retry_waits()
    if api_key:  # none given: DSPy reads the provider's variable (OPENAI_API_KEY…); an explicit None would not
        kwargs["api_key"] = api_key
    lm = BoundedLM(model, api_base=api_base, timeout=timeout or policy().timeout,
                   num_retries=policy().retries if retries is None else retries, max_bytes=max_bytes, **kwargs)
    _warn_when_not_native(lm)
    return lm


def _warn_when_not_native(lm: dspy.LM) -> None:
    """When DSPy will send this LM's calls through LiteLLM (a model prefix its native engine does not
    serve, extra client settings, a ``<PROVIDER>_API_BASE`` variable), give LiteLLM bounded sessions:
    they bound the calls it makes through the OpenAI SDK (``openai/…``). Its other providers use
    LiteLLM's own clients, which bound each read only; say so."""
    from dspy.clients.backend_selection import select_backend

    try:
        native = select_backend(lm).native
    except Exception:  # DSPy refuses the settings: the first call says why
        return
    if native:
        return
    ours = install_litellm_sessions()
    if not (ours and lm.model.startswith("openai/")):
        logger.warning(
            "LM %s goes through LiteLLM: each read is bounded by the timeout, but not the whole call nor the "
            "size of a reply (an openai/, hosted_vllm/ or ollama_chat/ model string with api_base is bounded "
            "in both)", lm.model)
