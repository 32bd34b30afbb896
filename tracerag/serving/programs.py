"""The programs a service offers: which ones, how each is built, and how a request becomes its JSON answer.

Both front ends use this module, so the HTTP service (``tracerag serve``) and the MCP tools
(``python -m tracerag.tools --programs``) build the same programs and answer the same JSON:

- :data:`ENDPOINTS` offers each program the registry lists, as its package's ``service`` module describes it
  (endpoint, MCP tool, request and response models, the hooks that differ per program);
- :func:`load_programs` builds them through the registry (:mod:`tracerag.registry`, what ``tracerag
  run``/``evaluate`` build too), from an artifact or on the bundled defaults;
- :meth:`ServedProgram.respond` / :meth:`ServedProgram.arespond` call a program with a validated request
  and turn its ``Prediction`` into JSON under the same field names;
- :class:`Runner` bounds how many calls run at once and keeps them off the event loop;
- :class:`Startup` loads and warms them in the background while the service already answers (``/healthz``
  says "starting" until it is done): a service is ready only when its first call costs what every call does;
- :func:`own_temp_dir` / :func:`remove_stale_temp_dirs`: the temp directory a service keeps its temporary
  state in (``tracerag-serve-<pid>-…``), and the removal, at the next start, of those a killed service left.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..data_files.processes import process_alive
from ..errors import InvalidValue, TraceragError
from ..registry import PROGRAMS
from ..service_models import ProgramService, to_jsonable

__all__ = ["DEFAULT_SOURCE", "ENDPOINTS", "TEMP_PREFIX", "Endpoint", "Runner", "ServedProgram", "Startup",
           "embedders_of", "load_programs", "own_temp_dir", "parse_program_specs", "remove_stale_temp_dirs",
           "warm_up"]

logger = logging.getLogger(__name__)

DEFAULT_SOURCE = "bundled default"


@dataclass(frozen=True)
class Endpoint:
    """Where the service offers one of the registry's programs: its entry's ``ProgramService`` (path, MCP tool,
    request and response models, the hooks that differ per program), under the registry's name."""

    name: str  # the registry's name: tracerag run/evaluate <name>, --program <name>=…
    service: ProgramService

    @property
    def path(self) -> str:
        return self.service.path

    @property
    def tool(self) -> str:
        return self.service.tool

    @property
    def request(self) -> type[BaseModel]:
        return self.service.request

    @property
    def response(self) -> type[BaseModel]:
        return self.service.response

    @property
    def program_class(self) -> str:
        return PROGRAMS[self.name].program_class

    @property
    def summary(self) -> str:
        return PROGRAMS[self.name].summary


ENDPOINTS: dict[str, Endpoint] = {name: Endpoint(name, entry.service()) for name, entry in PROGRAMS.items()
                                  if entry.service is not None}
BY_PATH = {e.path: e for e in ENDPOINTS.values()}


def parse_program_specs(values: list[str] | None) -> dict[str, str | None]:
    """``["commands=out/c.json", "rag"]`` (or ``"commands,rag"`` items) → {name: artifact or None}; none given:
    all five on their defaults. An unknown or repeated name is a ValueError."""
    specs: dict[str, str | None] = {}
    for value in values or []:
        for item in value.split(",") if "=" not in value else [value]:
            name, _, artifact = item.strip().partition("=")
            name = name.strip()
            if name not in ENDPOINTS:
                raise InvalidValue(f"unknown program {name!r} in --program; choose from {', '.join(ENDPOINTS)}")
            if name in specs:
                raise InvalidValue(f"program {name!r} is given twice")
            specs[name] = artifact.strip() or None
    return specs or dict.fromkeys(ENDPOINTS)


def prediction_json(prediction) -> dict[str, Any]:
    """Every field of a ``dspy.Prediction``, under its own name, as JSON data."""
    return {key: to_jsonable(value) for key, value in prediction.toDict().items()}


@dataclass
class ServedProgram:
    """One loaded program and what ``/v1/programs`` says about it."""

    endpoint: Endpoint
    program: Any
    source: str = DEFAULT_SOURCE  # the artifact path, the data options (bank=DIR) or DEFAULT_SOURCE
    metadata: dict[str, Any] = field(default_factory=dict)  # the artifact's sidecar; {} for a default

    @property
    def name(self) -> str:
        return self.endpoint.name

    def prepare(self, request: BaseModel) -> tuple[Any, dict[str, Any]]:
        """(the program to call, its keyword arguments) for a validated request (``RequestError``: one it cannot
        serve)."""
        return self.endpoint.service.prepare(self.program, request)

    def respond(self, request: BaseModel) -> dict[str, Any]:
        """Call the program (blocking) and return its prediction as JSON. The call is one run with its own LM
        fault budget (``lm.fault_budget``; no share of its time): its failing LM calls take at most
        ``--lm-fault-budget`` seconds, then its remaining stages fall back."""
        from ..lm.fault_budget import lm_fault_budget

        program, kwargs = self.prepare(request)
        with lm_fault_budget(share=0.0):
            return prediction_json(program(**kwargs))

    async def arespond(self, request: BaseModel) -> dict[str, Any]:
        """``respond`` through ``await program.acall(...)``: LM calls on the event loop, retrieval in a thread."""
        from ..lm.fault_budget import lm_fault_budget

        program, kwargs = self.prepare(request)
        with lm_fault_budget(share=0.0):
            return prediction_json(await program.acall(**kwargs))

    def describe(self) -> dict[str, Any]:
        return {"program": self.endpoint.program_class, "endpoint": self.endpoint.path, "mcp_tool": self.endpoint.tool,
                "source": self.source, "metadata": self.metadata,
                "embedder": _known(self.endpoint.service.embedder_id, self.program),
                "store": _known(self.endpoint.service.store_summary, self.program)}

    def embedders(self) -> list[Any]:
        """The embedders its queries are embedded with, as its service names them (none found: [])."""
        return list(_known(self.endpoint.service.embedders, self.program) or ())

    def close(self) -> None:
        """Release what the program holds beyond memory, as its service says (the agent: its tool servers)."""
        self.endpoint.service.close(self.program)


def _known(describe, program):
    """What ``describe`` finds on the program; None for a program built otherwise (an app's own subclass)."""
    try:
        return describe(program)
    except (AttributeError, StopIteration, TypeError):
        return None


class LoadingStopped(TraceragError):
    """The service was stopped while its programs were loading (what was loaded is closed)."""


DATA_OPTIONS = ("homes", "bank", "store", "dataset", "bank_dir", "browse_root")  # builder options naming data


def _data_source(options: Mapping[str, Any]) -> str:
    """Where a program not loaded from an artifact reads its data: the data flags given, else the bundled data
    (a store URI holds no credential: opening one refuses it)."""
    given = [f"{key}={options[key]}" for key in DATA_OPTIONS if options.get(key) is not None]
    return ", ".join(given) or DEFAULT_SOURCE


def load_programs(specs: Mapping[str, str | None], options: Mapping[str, Mapping[str, Any]] | None = None,
                  *, stop: threading.Event | None = None,
                  on_loaded: Callable[[str, str, float], None] | None = None,
                  on_loading: Callable[[str, str], None] | None = None,
                  on_built: Callable[[ServedProgram], None] | None = None) -> dict[str, ServedProgram]:
    """Build each program of ``specs`` ({name: artifact or None}) through the registry, with its builder's
    keyword ``options`` ({name: {option: value}}; none: the bundled defaults); a failure closes what was
    already started and raises. ``stop`` set: no further program is built (``LoadingStopped``).

    ``on_loading(name, where from)`` hears each program before it is built, ``on_loaded(name, where from,
    seconds)`` after; ``on_built(program)`` gets each as soon as it is built, before the next is started (the
    service answers it from then on); what it raises stops the loading like a failed build."""
    from ..artifacts import read_meta
    from ..registry import build

    options = options or {}
    # the programs on their defaults that run on a store: --bank and --store name one store, not one for each
    on_store = {n for n, a in specs.items() if a is None and n in PROGRAMS and PROGRAMS[n].store_fill is not None}
    for shared in ("bank", "store"):
        users = sorted(n for n in on_store if options.get(n, {}).get(shared))
        if len(users) > 1:
            raise InvalidValue(f"--{shared} is ambiguous with {' and '.join(users)} on their defaults; serve all but "
                               f"one from an artifact (--program NAME=FILE) or in separate services")
    served: dict[str, ServedProgram] = {}
    try:
        for name, artifact in specs.items():
            if stop is not None and stop.is_set():
                raise LoadingStopped(f"stopped while loading; {name} was not loaded")
            started = time.perf_counter()
            source = artifact or _data_source(options.get(name, {}))
            if on_loading is not None:
                on_loading(name, source)
            program = build(name, **{**options.get(name, {}), "artifact": artifact})
            served[name] = ServedProgram(ENDPOINTS[name], program, source, read_meta(artifact) if artifact else {})
            logger.info("loaded %s from %s", name, source)
            if on_loaded is not None:  # (name, where from, seconds): a long start says what it is doing
                on_loaded(name, source, time.perf_counter() - started)
            if on_built is not None:
                on_built(served[name])
    except BaseException:
        for program in served.values():
            program.close()
        raise
    return served


class Runner:
    """Runs program calls with at most ``concurrency`` at once, off the event loop.

    ``mode="thread"`` calls ``program(...)`` in a worker thread; ``mode="async"`` awaits ``program.acall``
    (its LM calls wait on the loop without holding a thread; its retrieval runs in a thread).
    """

    def __init__(self, concurrency: int = 8, mode: str = "thread"):
        if mode not in ("thread", "async"):
            raise InvalidValue(f"unknown call mode {mode!r}; choose thread or async")
        self.concurrency = concurrency
        self.mode = mode
        self._limiter = None  # made on first use: an anyio limiter belongs to a running event loop

    async def run(self, served: ServedProgram, request: BaseModel) -> dict[str, Any]:
        import anyio

        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.concurrency)
        if self.mode == "async":
            async with self._limiter:
                return await served.arespond(request)
        return await anyio.to_thread.run_sync(served.respond, request, limiter=self._limiter)


# -- startup: load, then warm, while the service already answers ---------------------------------------


def embedders_of(programs: Mapping[str, ServedProgram]) -> list[Any]:
    """The distinct embedders the programs embed queries with, each unwrapped to the model behind its
    cache (``CachedEmbedder.inner``), so embedding with it computes a vector instead of reading one."""
    found: dict[int, Any] = {}
    for served in programs.values():
        for embedder in served.embedders():
            while getattr(embedder, "inner", None) is not None:
                embedder = embedder.inner
            if embedder is not None and callable(getattr(embedder, "embed", None)):
                found.setdefault(id(embedder), embedder)
    return list(found.values())


def warm_up(programs: Mapping[str, ServedProgram], stop: threading.Event | None = None, *,
            retry: bool = True, on_wait: Callable[[str], None] | None = None) -> None:
    """Compute one embedding with each embedder of ``programs``, so the model is loaded (or the embedding
    service has answered) before the first call. A failure is retried (1 s, 2 s, … up to 30 s apart; ``on_wait``
    hears why) until it succeeds or ``stop`` is set; with ``retry=False`` it is logged and left."""
    for embedder in embedders_of(programs):
        delay = 1.0
        while True:
            try:
                started = time.perf_counter()
                embedder.embed(["warm-up"])
                logger.info("embedder %s warm in %.1f s", getattr(embedder, "id", embedder),
                            time.perf_counter() - started)
                break
            except Exception as exc:
                why = f"embedder {getattr(embedder, 'id', embedder)!s} did not answer: {type(exc).__name__}: {exc}"
                if not retry:
                    logger.warning("%s (the first calls will load it)", why)
                    break
                logger.warning("%s; trying again in %g s", why, delay)
                if on_wait is not None:
                    on_wait(why)
                if stop is None:
                    time.sleep(delay)
                elif stop.wait(delay):
                    raise LoadingStopped("stopped while warming the embedder") from None
                delay = min(delay * 2, 30.0)


class Startup:
    """A service's programs, loaded and warmed in a background thread (:meth:`start`) while it answers.

    ``state`` is ``"starting"`` until every program is built (:func:`load_programs`) and every embedder has
    computed one vector (:func:`warm_up`), then ``"ready"`` (``programs`` holds them), or ``"failed"``
    (``error`` holds why; ``on_failed`` is called, e.g. to stop the server), or ``"stopped"`` (:meth:`close`
    was called first: it stops a load in progress after the program being built, and closes what was loaded).

    Programs loaded one by one (:meth:`loading`) are answered as each is ready (:meth:`ready_for`: built and its
    embedders warm), while the next ones load: the first program of a cold start answers in seconds, not after
    the last one. ``pending`` says what each program not ready yet is doing (``/healthz``).

    ``Startup.of(programs)``: programs built by the caller, warmed at once (a failure to warm is logged)."""

    def __init__(self, names: Sequence[str], load: Callable[[threading.Event], dict[str, ServedProgram]],
                 on_failed: Callable[[BaseException], None] | None = None,
                 on_ready: Callable[[float], None] | None = None):
        self.names = list(names)
        self.state = "starting"
        self.programs: dict[str, ServedProgram] = {}  # the programs ready to answer
        self.pending: dict[str, str] = dict.fromkeys(self.names, "loading")  # name -> what it is doing
        self.error: BaseException | None = None
        self.waiting: str | None = None  # why warming is retried, for the log
        self.on_failed = on_failed
        self.on_ready = on_ready  # called with the seconds loading and warming took
        self._load = load
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @classmethod
    def loading(cls, specs: Mapping[str, str | None], options: Mapping[str, Mapping[str, Any]] | None = None,
                on_failed: Callable[[BaseException], None] | None = None,
                on_ready: Callable[[float], None] | None = None,
                on_loaded: Callable[[str, str, float], None] | None = None,
                on_loading: Callable[[str, str], None] | None = None) -> Startup:
        """The programs of ``specs`` built as :func:`load_programs` builds them (``on_loading`` and ``on_loaded``
        hear each), each warmed and answered as soon as it is built."""
        def load(stop: threading.Event) -> dict[str, ServedProgram]:
            def loading(name: str, source: str) -> None:
                startup.pending[name] = "loading"
                if on_loading is not None:
                    on_loading(name, source)

            return load_programs(specs, options, stop=stop, on_loaded=on_loaded, on_loading=loading,
                                 on_built=startup._one_built)

        startup = cls(list(specs), load, on_failed, on_ready)
        startup.pending = dict.fromkeys(startup.names, "waiting")  # for the ones before it
        return startup

    def ready_for(self, name: str) -> bool:
        """Whether ``name`` answers now (built and warm), the others maybe still loading."""
        return name in self.programs and self.state in ("starting", "ready")

    def _one_built(self, served: ServedProgram) -> None:
        """Warm one program just built and answer it from now on (the load goes on with the next)."""
        self.pending[served.name] = "warming its embedder"
        warm_up({served.name: served}, self._stop, on_wait=self._waiting)
        with self._lock:
            self.programs[served.name] = served
            self.pending.pop(served.name, None)

    @classmethod
    def of(cls, programs: Mapping[str, ServedProgram]) -> Startup:
        """Programs the caller built: ready once warmed, which happens here (one try per embedder)."""
        startup = cls(list(programs), lambda stop: dict(programs))
        warm_up(programs, retry=False)
        startup.programs, startup.state, startup.pending = dict(programs), "ready", {}
        return startup

    @property
    def ready(self) -> bool:
        return self.state == "ready"

    def start(self) -> None:
        """Load and warm in a daemon thread (once; a no-op when already started or ready)."""
        with self._lock:
            if self._thread is not None or self.state != "starting":
                return
            self._thread = threading.Thread(target=self.run, name="tracerag-startup", daemon=True)
            self._thread.start()

    def run(self) -> None:
        """Load and warm in this thread; the outcome is in ``state``."""
        started = time.perf_counter()
        loaded = False
        try:
            programs = self._load(self._stop)
            loaded = True
            if self._stop.is_set():
                raise LoadingStopped("stopped while loading")
            unwarmed = {name: p for name, p in programs.items() if name not in self.programs}
            self.pending.update(dict.fromkeys(unwarmed, "warming its embedder"))
            warm_up(unwarmed, self._stop, on_wait=self._waiting)
            with self._lock:
                self.programs = programs
        except BaseException as exc:
            self.error, self.state = exc, "stopped" if isinstance(exc, LoadingStopped) else "failed"
            if loaded:
                self.close_programs()
            else:  # load_programs closed what it built, including those already answered
                with self._lock:
                    self.programs = {}
            if not isinstance(exc, LoadingStopped):
                if self.on_failed is not None:  # it reports the error (serve: its one error line)
                    self.on_failed(exc)
                else:
                    logger.error("loading the programs failed: %s", exc)
            if not isinstance(exc, Exception):
                raise
            return
        self.waiting, self.state, self.pending = None, "ready", {}
        seconds = time.perf_counter() - started
        logger.info("ready: %s loaded and warm in %.1f s", ", ".join(self.programs), seconds)
        if self.on_ready is not None:
            self.on_ready(seconds)

    def _waiting(self, why: str) -> None:
        self.waiting = why

    def close(self, timeout: float | None = None) -> None:
        """Stop loading (after the program being built; waits for it, up to ``timeout``) and close the
        programs."""
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        self.close_programs()

    def close_programs(self) -> None:
        with self._lock:
            programs, self.programs = self.programs, {}
        for served in programs.values():
            try:
                served.close()
            except Exception as exc:  # closing the others matters more
                logger.warning("closing %s failed: %s", served.name, exc)


# -- the service's temp directory ---------------------------------------------------------------------

TEMP_PREFIX = "tracerag-serve-"
_OWN_TEMP = re.compile(rf"{re.escape(TEMP_PREFIX)}(\d+)-[A-Za-z0-9_]+")


def own_temp_dir(root: str | Path | None = None) -> Path:
    """A new directory ``tracerag-serve-<pid>-XXXXXXXX`` in ``root`` (default: the system temp directory) for
    everything temporary a service makes; removed when it stops, or by the next start if it is killed."""
    return Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-", dir=root))


def remove_stale_temp_dirs(root: str | Path | None = None) -> list[Path]:
    """Remove the ``tracerag-serve-<pid>-…`` directories in ``root`` (default: the system temp directory) whose
    process is gone, as a killed service leaves them; those of a running process, another user's, and any
    other name are left. Returns what was removed."""
    root = Path(root if root is not None else tempfile.gettempdir())
    removed = []
    try:
        entries = list(root.iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = _OWN_TEMP.fullmatch(entry.name)
        if match is None or int(match.group(1)) == os.getpid() or process_alive(int(match.group(1))):
            continue
        try:
            info = entry.lstat()
        except OSError:
            continue
        getuid = getattr(os, "getuid", None)
        if not entry.is_dir() or entry.is_symlink() or getuid is not None and info.st_uid != getuid():
            continue
        shutil.rmtree(entry, ignore_errors=True)
        if not entry.exists():
            removed.append(entry)
            logger.info("removed %s, left by a service (pid %s) that was killed", entry, match.group(1))
    return removed
