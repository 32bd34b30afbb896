"""LM and embedder settings: from `configure(...)`, CLI flags, or environment fallbacks.

This is the only module that reads the environment. No LM is a normal state: every program has a
no-LM path. The embedder defaults to the embedded multilingual encoder with an on-disk cache, so
re-indexing an unchanged home costs nothing.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from .embedding.embedder_choice import make_embedder
from .embedding.embedders import Embedder
from .embedding.embedding_cache import default_cache_path
from .errors import InvalidValue
from .lm.policy import LMPolicy, policy, set_policy

if TYPE_CHECKING:  # DSPy is imported by the calls that use it: reading the settings does not need it
    import dspy

ENV_LM, ENV_API_BASE, ENV_API_KEY = "TRACERAG_LM", "TRACERAG_API_BASE", "TRACERAG_API_KEY"
ENV_EMBEDDER, ENV_EMBED_MODEL, ENV_CACHE_DIR = "TRACERAG_EMBEDDER", "TRACERAG_EMBED_MODEL", "TRACERAG_CACHE_DIR"
ENV_LM_TIMEOUT, ENV_LM_RETRIES = "TRACERAG_LM_TIMEOUT", "TRACERAG_LM_RETRIES"
ENV_LM_FAULT_BUDGET = "TRACERAG_LM_FAULT_BUDGET"


@dataclass
class Settings:
    """Where the LM and the embedder come from. Flags win over environment variables."""

    lm: str | None = None
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False)
    embedder: str = "local"
    embed_model: str | None = None
    cache_dir: Path | None = None
    lm_timeout: float = LMPolicy.timeout  # seconds without a reply before an LM call fails
    lm_retries: int = LMPolicy.retries  # retries of a transient LM failure
    lm_fault_budget: float = LMPolicy.fault_budget  # seconds of failed LM calls one evaluation may spend (+10 %)

    @classmethod
    def resolve(cls, lm=None, api_base=None, api_key=None, embedder=None, embed_model=None, cache_dir=None,
                lm_timeout=None, lm_retries=None, lm_fault_budget=None):
        env = os.environ
        cache = cache_dir or env.get(ENV_CACHE_DIR)
        return cls(
            lm=lm or env.get(ENV_LM) or None,
            api_base=api_base or env.get(ENV_API_BASE) or None,
            api_key=api_key or env.get(ENV_API_KEY) or None,
            embedder=embedder or env.get(ENV_EMBEDDER) or "local",
            embed_model=embed_model or env.get(ENV_EMBED_MODEL) or None,
            cache_dir=Path(cache) if cache else default_cache_path().parent,
            lm_timeout=_number(lm_timeout, ENV_LM_TIMEOUT, float, LMPolicy.timeout, minimum=0.001),
            lm_retries=_number(lm_retries, ENV_LM_RETRIES, int, LMPolicy.retries, minimum=0),
            lm_fault_budget=_number(lm_fault_budget, ENV_LM_FAULT_BUDGET, float, LMPolicy.fault_budget, minimum=0),
        )


def _number(value, env_name: str, kind: type, default, *, minimum):
    """A flag's value, else the environment's, else the default; a bad value names where it came from."""
    source = "value" if value is not None else env_name
    raw = value if value is not None else os.environ.get(env_name)
    if raw is None or raw == "":
        return default
    try:
        number = kind(raw)
    except (TypeError, ValueError):
        raise InvalidValue(f"{source} {raw!r} is not a {'number' if kind is float else 'whole number'}") from None
    if number < minimum:
        raise InvalidValue(f"{source} {raw!r} must be at least {minimum}")
    return number


def make_lm(*args, **kwargs):
    """``lm.bounded_lm.make_lm``, imported when an LM is made: reading the settings loads no LM client."""
    from .lm.bounded_lm import make_lm as make

    return make(*args, **kwargs)


# made: (what an LM was built from, that LM); given: the policy settings a configure() call was given
_state: dict = {"embedder": None, "made": (None, None), "given": set(), "adapter": None}


def configured_lm():
    """DSPy's configured LM (``dspy.settings.lm``), or None; read without importing DSPy when nothing has imported
    it yet, since no LM can be configured before."""
    dspy = sys.modules.get("dspy")
    return dspy.settings.lm if dspy is not None else None


def missing_key(lm) -> list[str]:
    """The environment variables, any of which would give ``lm`` the API key it needs and lacks
    (``["TRACERAG_API_KEY", "OPENAI_API_KEY"]``); [] when it needs none. Offline: it reads DSPy's routing
    (the native engine's provider and the variables it reads; LiteLLM's ``validate_environment`` for a
    model routed there) and sends nothing. A provider that takes no key (a local vLLM or Ollama), a key
    given, or an LM over a custom engine (not a model string) needs nothing."""
    import dspy

    if not isinstance(lm, dspy.LM) or not isinstance(getattr(lm, "_engine_spec", "auto"), str) \
            or lm.kwargs.get("api_key"):
        return []
    from dspy.clients.backend_selection import select_backend

    try:
        selected = select_backend(lm)
    except Exception:  # DSPy refuses the settings: the first call says why
        return []
    if selected.native:
        from dspy._vendor.lm15.registry import lookup

        provider = getattr(selected.resolution, "provider", None)
        names = tuple(getattr(lookup(provider), "env_keys", ()) or ()) if provider else ()
        missing = [] if any(os.environ.get(name) for name in names) else list(names)
    else:
        import litellm

        base = lm.kwargs.get("api_base") or lm.kwargs.get("base_url")
        missing = litellm.validate_environment(model=lm.model, api_base=base).get("missing_keys") or []
    return [ENV_API_KEY, *missing] if missing else []


def configure(lm: str | dspy.BaseLM | None = None, embedder: str | Embedder | None = None, *,
              api_base: str | None = None, api_key: str | None = None, embed_model: str | None = None,
              cache_dir: str | Path | None = None, timeout: float | None = None,
              retries: int | None = None, fault_budget: float | None = None, import_dspy: bool = True) -> Settings:
    """Set what is given and leave the rest alone.

    ``lm``: a model string (built with ``timeout``/``retries`` by ``make_lm``) or your own dspy LM (used
    as is); not given, the LM named by ``TRACERAG_LM`` when there is one, else DSPy's current LM is kept
    (no LM is the no-LM path of every program). ``timeout`` / ``retries`` (env ``TRACERAG_LM_TIMEOUT``,
    ``TRACERAG_LM_RETRIES``; once given, kept by later calls that do not give them) bound every call of
    an LM built from a model string: each attempt ends ``timeout`` seconds after it starts whatever the
    server sends, a reply is read up to 8 MB, so one call lasts at most
    ``timeout * (retries + 1) + retries * min(timeout, 10)`` seconds (defaults 30 s and 2: 150 s).
    Your own dspy LM keeps its own settings, except that one which sets no ``timeout`` gets ``timeout``
    on each call of a program stage (else a stalled endpoint holds a call for the client's default: 600 s
    a read with DSPy's native engine, 6,000 s with LiteLLM); its calls are bounded per read only.
    ``fault_budget`` (env ``TRACERAG_LM_FAULT_BUDGET``, kept like ``timeout``; default 40) bounds what LM
    faults cost one evaluation: its calls that bring no reply may take that many seconds plus 10 % of the
    run's time, then the rest of the run takes the no-LM path (``lm.fault_budget``; ``inf``: no limit).
    ``embedder`` and its options replace the embedder only when given.

    The adapter is set only when none is configured (or the one set is the one an earlier call set): ChatAdapter
    without the JSON fallback, so a garbled answer costs one call and takes the program's fallback path instead
    of a silent second call; for an in-process model (``lm="llamacpp/..."``) the typed JSON adapter
    (``lm.typed_decoding``), whose replies are decoded against the signature's schema.

    ``import_dspy=False``, with no LM given or named and DSPy not imported yet, leaves DSPy alone (no adapter is
    set): for a process that makes no LM call, such as a command-line run without an LM, whose first answer
    would otherwise wait for DSPy to be imported.
    """
    settings = Settings.resolve(lm if isinstance(lm, str) else None, api_base, api_key,
                                embedder if isinstance(embedder, str) else None, embed_model, cache_dir,
                                timeout, retries, fault_budget)
    # timeout/retries/fault_budget: given now, else as an earlier configure() was given them, else env or default
    for key, value, resolved in (("timeout", timeout, settings.lm_timeout), ("retries", retries, settings.lm_retries),
                                 ("fault_budget", fault_budget, settings.lm_fault_budget)):
        if value is not None or key not in _state["given"]:
            set_policy(**{key: resolved})
        if value is not None:
            _state["given"].add(key)
    settings = replace(settings, lm_timeout=policy().timeout, lm_retries=policy().retries,
                       lm_fault_budget=policy().fault_budget)
    if import_dspy or lm is not None or settings.lm or "dspy" in sys.modules:
        _configure_dspy(lm, settings)
    if embedder is not None and not isinstance(embedder, str):
        _state["embedder"] = embedder
    elif embedder is not None or embed_model is not None or cache_dir is not None or _state["embedder"] is None:
        _state["embedder"] = make_embedder(settings.embedder, api_key=settings.api_key, model=settings.embed_model,
                                           cache_dir=settings.cache_dir)
    return settings


def _configure_dspy(lm: str | dspy.BaseLM | None, settings: Settings) -> None:
    """DSPy's LM and adapter as ``configure`` documents them."""
    import dspy

    from .lm.typed_decoding import adapter_for

    changes: dict = {}
    made_spec, made_lm = _state["made"]
    ours = made_lm is not None and dspy.settings.lm is made_lm  # the current LM is one tracerag built
    model, base, key = settings.lm, settings.api_base, settings.api_key
    if lm is None and not model and ours:  # the LM tracerag built stays, with the bounds now in force
        model, base, key = made_spec[:3]
    if isinstance(lm, dspy.BaseLM):
        changes["lm"] = lm
    elif model and (lm is not None or dspy.settings.lm is None or ours):
        spec = (model, base, key, settings.lm_timeout, settings.lm_retries)
        if not (ours and spec == made_spec):
            changes["lm"] = make_lm(model, base, key, timeout=settings.lm_timeout, retries=settings.lm_retries)
            _state["made"] = (spec, changes["lm"])
    current = dspy.settings.adapter
    if current is None or current is _state.get("adapter"):  # none set, or the one set here: fit it to the LM
        adapter = adapter_for(changes.get("lm", dspy.settings.lm))
        if current is None or type(adapter) is not type(current):
            changes["adapter"] = _state["adapter"] = adapter
    if changes:
        dspy.configure(**changes)


def get_embedder() -> Embedder:
    """The configured embedder; the cached local default when `configure` was never called."""
    if _state["embedder"] is None:
        settings = Settings.resolve()
        _state["embedder"] = make_embedder(settings.embedder, api_key=settings.api_key,
                                           model=settings.embed_model, cache_dir=settings.cache_dir)
    return _state["embedder"]
