"""The agent's side of the tools: persistent MCP connections, and a toolbox that maps protocol calls
onto them.

Why a background event loop: the agent loop is synchronous (DSPy modules), but an MCP session is
asynchronous and costly to open (a subprocess, a handshake, a bank load). :class:`MCPToolSource` keeps
one ``ClientSession`` open in a daemon thread running its own asyncio loop; each ``call`` is submitted
to that loop and waited for, so a warm call costs one round trip. ``acall`` submits it the same way and
awaits it from the caller's own event loop (``SearchAgent.aforward``), so no thread waits for the tool.

Why ``call`` never raises: a tool failure is information for the model, not a crash of the agent. A
tool error, a timeout, a dead server or a closed connection all come back as ``ToolResult(error=…)``,
rendered as ``<tool_output>Error: …</tool_output>``. A dead server is not restarted: every later call
says so at once, and the caller decides whether to open a new source.

:class:`Toolbox` gathers several sources under the protocol's tool names. An external server whose
tool does the same job under another name serves the protocol name through an alias (see
:data:`DEFAULT_ALIASES`); a call's text (``<call_tool …>text</call_tool>``) goes to the tool's main
argument, the first required string property of its input schema (``query``, ``url``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import logging
import os
import shlex
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol, TextIO, runtime_checkable

from ..errors import InvalidValue, TraceragError
from .protocol_writing import ToolCall
from .reply_parsing import cast_parameter
from .tool_results import ToolResult, main_argument, parameter_types

__all__ = ["DEFAULT_ALIASES", "DEFAULT_TIMEOUT", "MCPToolSource", "ToolResult", "ToolSource", "ToolSourceError",
           "Toolbox", "main_argument", "parameter_types", "snippets_from"]

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 30.0  # seconds per call
DEFAULT_CONNECT_TIMEOUT = 300.0  # the first start of the local server ingests the bundled corpus (~30 s)
# protocol tool name -> tool names of known external servers that do the same job, tried in order
DEFAULT_ALIASES: dict[str, tuple[str, ...]] = {
    "google_search": ("serper_google_webpage_search",),
    "browse_webpage": ("crawl4ai_fetch_webpage_content",),
}
_SNIPPET_TEXT_KEYS = ("text", "snippet", "content", "abstract", "markdown", "description")
_SNIPPET_ID_KEYS = ("id", "pmid", "url", "link", "uri")


class ToolSourceError(TraceragError, RuntimeError):
    """A tool source could not be opened (the server did not start, or did not answer the handshake)."""


@runtime_checkable
class ToolSource(Protocol):
    """Anything that offers named tools: an MCP connection, or an in-process adapter (E-utilities)."""

    def input_schemas(self) -> dict[str, dict[str, Any]]:
        """Tool name -> JSON schema of its arguments."""
        ...

    def tool_schemas(self) -> dict[str, dict[str, type]]: ...

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult: ...

    def close(self) -> None: ...


# -- results ---------------------------------------------------------------------------------------


def _normalize_snippet(item: Mapping[str, Any], fallback_id: str) -> dict[str, Any]:
    """A result item as a protocol snippet: ``id`` and ``text`` always, metadata when present."""
    snippet = {k: v for k, v in item.items() if v is not None}
    snippet_id = next((item[k] for k in _SNIPPET_ID_KEYS if item.get(k) not in (None, "")), fallback_id)
    snippet["id"] = str(snippet_id)
    text = next((item[k] for k in _SNIPPET_TEXT_KEYS if isinstance(item.get(k), str)), "")
    snippet["text"] = text
    return snippet


def snippets_from(structured: Any, texts: Sequence[str], tool: str, arguments: Mapping[str, Any],
                  fallback_id: str) -> tuple[list[dict[str, Any]], int | None]:
    """(snippets, total) from a tool's answer: its structured ``results`` list when it has one, else its
    text as one snippet (id: the ``url`` argument when there is one, else ``fallback_id``)."""
    if isinstance(structured, Mapping) and isinstance(structured.get("results"), list):
        items = [r for r in structured["results"] if isinstance(r, Mapping)]
        snippets = [_normalize_snippet(r, f"{fallback_id}.{i}") for i, r in enumerate(items, start=1)]
        total = structured.get("total")
        return snippets, total if isinstance(total, int) and not isinstance(total, bool) else None
    text = "\n".join(t for t in texts if t)
    if not text:
        return [], None
    url = arguments.get("url")
    return [{"id": str(url) if isinstance(url, str) and url else fallback_id, "text": text}], None


# -- an MCP connection -----------------------------------------------------------------------------


def _child_stderr() -> TextIO:
    """Where a spawned server's stderr goes: ours, when it is a real file (not a capture buffer)."""
    try:
        sys.stderr.fileno()
        return sys.stderr
    except (AttributeError, OSError, ValueError):
        return sys.__stderr__


class MCPToolSource:
    """One MCP server connection kept open for many calls; see the module docstring.

    Build it with :meth:`stdio`, :meth:`http` or :meth:`local`. ``timeout`` bounds each call;
    ``connect_timeout`` bounds starting the server and the handshake (a failure raises ToolSourceError).
    """

    def __init__(self, connect: Callable[[], AbstractAsyncContextManager[Any]], label: str, *,
                 timeout: float = DEFAULT_TIMEOUT, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
                 failure_hint: str = "") -> None:
        self.label = label
        self.timeout = timeout
        self._connect = connect
        self._tools: dict[str, dict[str, Any]] = {}
        self._session: Any = None
        self._down: str | None = None  # why the connection is gone, once it is
        self._counters: dict[str, itertools.count] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"mcp {label}", daemon=True)
        self._thread.start()
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task | None = None
        self._finished = threading.Event()  # set when the connection task has fully wound down
        ready: concurrent.futures.Future = concurrent.futures.Future()
        asyncio.run_coroutine_threadsafe(self._run(ready), self._loop)
        try:
            ready.result(connect_timeout)
        except concurrent.futures.TimeoutError:
            self.close()
            raise ToolSourceError(f"{label}: no MCP handshake within {connect_timeout:g}s") from None
        except BaseException as e:
            self.close()
            raise ToolSourceError(f"{label}: could not open the MCP connection: {_describe(e)}{failure_hint}") from e

    # -- constructors ----------------------------------------------------------------------------

    @classmethod
    def stdio(cls, command: str, args: Sequence[str] = (), env: Mapping[str, str] | None = None, *,
              timeout: float = DEFAULT_TIMEOUT, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> MCPToolSource:
        """Spawn ``command args…`` and speak MCP over its stdin/stdout (its stderr goes to ours).

        ``env`` is added to the SDK's minimal inherited environment (PATH, HOME, …).
        """
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(command=command, args=list(args), env=dict(env) if env else None)
        label = " ".join([Path(command).name, *args])
        return cls(lambda: stdio_client(params, errlog=_child_stderr()), label, timeout=timeout,
                   connect_timeout=connect_timeout, failure_hint=" (the server's own messages are on stderr)")

    @classmethod
    def http(cls, url: str, *, timeout: float = DEFAULT_TIMEOUT,
             connect_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> MCPToolSource:
        """Connect to a streamable-HTTP MCP endpoint (e.g. ``http://127.0.0.1:8765/mcp``)."""
        from mcp.client.streamable_http import streamable_http_client

        return cls(lambda: streamable_http_client(url), url, timeout=timeout, connect_timeout=connect_timeout)

    @classmethod
    def local(cls, *, timeout: float = DEFAULT_TIMEOUT, connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
              **server_flags: Any) -> MCPToolSource:
        """The bundled server (``python -m tracerag.tools``) over stdio, with this process's environment.

        ``server_flags`` become its flags: ``bank=DIR`` → ``--bank DIR``, ``browse_root=…``,
        ``embedder="lexical"``; None is left out, True is a bare flag.
        """
        args = ["-m", "tracerag.tools"]
        for key, value in server_flags.items():
            if value is None or value is False:
                continue
            args.append("--" + key.replace("_", "-"))
            if value is not True:
                args.append(str(value))
        return cls.stdio(sys.executable, args, env=dict(os.environ), timeout=timeout, connect_timeout=connect_timeout)

    # -- the connection's life, on the background loop --------------------------------------------

    async def _run(self, ready: concurrent.futures.Future) -> None:
        from mcp import ClientSession

        self._stop = asyncio.Event()
        self._task = asyncio.current_task()
        try:
            async with self._connect() as streams, ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                listing = await session.list_tools()
                self._tools = {t.name: dict(t.input_schema or {}) for t in listing.tools}
                self._session = session
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as e:  # the handshake failed, or the transport broke down under us
            if not ready.done():
                ready.set_exception(e)
            else:
                self._down = f"the connection broke: {_describe(e)}"
                logger.warning("%s: %s", self.label, self._down)
            if not isinstance(e, Exception):
                raise
        finally:
            self._session = None
            self._down = self._down or "the connection is closed"
            self._finished.set()

    async def _call(self, name: str, arguments: dict[str, Any]) -> Any:
        return await self._session.call_tool(name, arguments, read_timeout_seconds=self.timeout)

    # -- the synchronous API ---------------------------------------------------------------------

    def input_schemas(self) -> dict[str, dict[str, Any]]:
        return {name: dict(schema) for name, schema in self._tools.items()}

    def tool_schemas(self) -> dict[str, dict[str, type]]:
        """Tool name -> {parameter: type}, the main text argument left out (it is the call's text)."""
        return {name: parameter_types(schema) for name, schema in self._tools.items()}

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Run one tool; every failure is a ToolResult with ``error`` (see the module docstring)."""
        future = self._submit(name, arguments)
        if isinstance(future, ToolResult):
            return future
        try:
            outcome = future.result(self.timeout + 5.0)  # the session's own timeout fires first
        except Exception as e:
            outcome = e
        return self._settle(name, arguments, outcome, future)

    async def acall(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """``call`` awaited from any event loop: the call runs on the connection's loop and the caller's
        loop waits for it without holding a thread; the same results and errors. Cancelling the caller
        cancels the call."""
        future = self._submit(name, arguments)
        if isinstance(future, ToolResult):
            return future
        try:
            outcome = await asyncio.wait_for(asyncio.wrap_future(future), self.timeout + 5.0)
        except Exception as e:
            outcome = e
        return self._settle(name, arguments, outcome, future)

    def _submit(self, name: str, arguments: dict[str, Any]) -> concurrent.futures.Future | ToolResult:
        if self._session is None:
            return ToolResult(name, error=f"tool server {self.label} is unavailable: {self._down or 'not connected'}")
        return asyncio.run_coroutine_threadsafe(self._call(name, dict(arguments)), self._loop)

    def _settle(self, name: str, arguments: dict[str, Any], outcome: Any, future: concurrent.futures.Future
                ) -> ToolResult:
        """The ToolResult of a call's outcome (the SDK's result, or the exception the wait raised)."""
        from mcp.shared.exceptions import MCPError
        from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        if isinstance(outcome, TimeoutError):
            future.cancel()
            return ToolResult(name, error=f"{name} timed out after {self.timeout:g}s")
        if isinstance(outcome, MCPError):
            if outcome.code == REQUEST_TIMEOUT:
                return ToolResult(name, error=f"{name} timed out after {self.timeout:g}s")
            if outcome.code == CONNECTION_CLOSED:
                self._down = "the server closed the connection (it exited or crashed)"
                return ToolResult(name, error=f"tool server {self.label} is unavailable: {self._down}")
            return ToolResult(name, error=f"{name} failed: {outcome.message}")
        if isinstance(outcome, Exception):
            return ToolResult(name, error=f"{name} failed: {_describe(outcome)}")
        texts = [block.text for block in outcome.content if getattr(block, "type", None) == "text"]
        if outcome.is_error:
            return ToolResult(name, error=" ".join(texts).strip() or f"{name} reported an error without a message")
        counter = self._counters.setdefault(name, itertools.count(1))
        snippets, total = snippets_from(outcome.structured_content, texts, name, arguments, f"{name}-{next(counter)}")
        return ToolResult(name, snippets, total)

    def close(self) -> None:
        """End the session (a spawned server is stopped) and the background loop; safe to call twice.

        The session is asked to end; one still starting up (or stuck) is cancelled, which also stops
        a spawned server (the SDK closes its stdin, then terminates it).
        """
        if self._loop.is_closed():
            return
        self._session = None
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if not self._finished.wait(10.0) and self._task is not None:
            self._loop.call_soon_threadsafe(self._task.cancel)
            self._finished.wait(10.0)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5.0)
        if not self._thread.is_alive():
            self._loop.close()

    def __enter__(self) -> MCPToolSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "open" if self._session is not None else f"down ({self._down})"
        return f"MCPToolSource({self.label!r}, tools={sorted(self._tools)}, {state})"


def _describe(error: BaseException) -> str:
    """One line for an error, unwrapping the exception groups anyio task groups raise."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


# -- the toolbox -----------------------------------------------------------------------------------


class Toolbox:
    """Protocol tool names served by several sources; the first source offering a name serves it.

    ``aliases`` (default :data:`DEFAULT_ALIASES`) let a protocol name be served by a tool of another
    name when no source offers the protocol name itself.
    """

    def __init__(self, sources: Sequence[ToolSource],
                 aliases: Mapping[str, str | Sequence[str]] | None = None) -> None:
        self.sources = list(sources)
        self._routes: dict[str, tuple[ToolSource, str]] = {}
        for source in self.sources:
            for tool in source.input_schemas():
                self._routes.setdefault(tool, (source, tool))
        for protocol_name, targets in (DEFAULT_ALIASES if aliases is None else aliases).items():
            if protocol_name in self._routes:
                continue
            for target in [targets] if isinstance(targets, str) else targets:
                source = next((s for s in self.sources if target in s.input_schemas()), None)
                if source is not None:
                    self._routes[protocol_name] = (source, target)
                    break

    @classmethod
    def open(cls, specs: Sequence[str] | None = None, *, pubmed: str = "local", bank: str | Path | None = None,
             browse_root: str | Path | None = None, embedder: str | None = None, timeout: float = DEFAULT_TIMEOUT,
             aliases: Mapping[str, str | Sequence[str]] | None = None) -> Toolbox:
        """Open the sources ``specs`` name: "local" (the bundled server, with ``bank``, ``browse_root`` and
        ``embedder``), an ``http(s)://`` streamable-HTTP endpoint, or a command line for a stdio server.

        Without specs: "local". ``pubmed="eutils"`` answers ``pubmed_search`` from NCBI E-utilities
        (internet needed) ahead of any server; the default local server is then started only when
        there is a ``browse_root`` to serve.
        """
        if pubmed not in ("local", "eutils"):
            raise InvalidValue(f"unknown pubmed source {pubmed!r}; choose 'local' or 'eutils'")
        if specs is None:
            specs = ["local"] if pubmed == "local" or browse_root is not None else []
        sources: list[ToolSource] = []
        try:
            if pubmed == "eutils":
                from .eutils import EUtilsToolSource

                sources.append(EUtilsToolSource())
            for spec in specs:
                spec = spec.strip()
                if spec == "local":
                    sources.append(MCPToolSource.local(bank=bank, browse_root=browse_root, embedder=embedder,
                                                       timeout=timeout))
                elif spec.startswith(("http://", "https://")):
                    sources.append(MCPToolSource.http(spec, timeout=timeout))
                else:
                    argv = shlex.split(spec)
                    if not argv:
                        raise InvalidValue("an empty tool server spec")
                    sources.append(MCPToolSource.stdio(argv[0], argv[1:], timeout=timeout))
        except BaseException:
            for source in sources:
                source.close()
            raise
        return cls(sources, aliases)

    @property
    def names(self) -> list[str]:
        return sorted(self._routes)

    def schemas(self) -> dict[str, dict[str, type]]:
        """Protocol name -> {parameter: type}, for ``parse_reply(text, schemas)``."""
        return {name: source.tool_schemas()[tool] for name, (source, tool) in self._routes.items()}

    def call(self, call: ToolCall) -> ToolResult:
        """Run a parsed protocol call; unknown tools, bad parameters and tool failures come back as errors."""
        routed = self._route(call)
        if isinstance(routed, ToolResult):
            return routed
        source, tool, arguments = routed
        return replace(source.call(tool, arguments), tool=call.name)

    async def acall(self, call: ToolCall) -> ToolResult:
        """``call`` awaited: a source with ``acall`` (an MCP connection, E-utilities) is awaited without a
        thread; another runs in a worker thread. The same results."""
        routed = self._route(call)
        if isinstance(routed, ToolResult):
            return routed
        source, tool, arguments = routed
        acall = getattr(source, "acall", None)
        result = await acall(tool, arguments) if acall is not None else await asyncio.to_thread(source.call, tool,
                                                                                                  arguments)
        return replace(result, tool=call.name)

    def _route(self, call: ToolCall) -> tuple[ToolSource, str, dict[str, Any]] | ToolResult:
        """(source, its tool name, the call's arguments), or the error a bad call gets."""
        route = self._routes.get(call.name)
        if route is None:
            return ToolResult(call.name, error=f"unknown tool {call.name!r}; available: {', '.join(self.names)}")
        source, tool = route
        schema = source.input_schemas()[tool]
        main = main_argument(schema)
        types = parameter_types(schema)
        arguments: dict[str, Any] = {main: call.query} if main else {}
        for key, value in call.params.items():
            if key not in types:
                known = ", ".join(types) or "none"
                return ToolResult(call.name, error=f"{call.name} has no parameter {key!r}; its parameters: {known}")
            try:
                arguments[key] = cast_parameter(value, types[key])
            except ValueError as e:
                return ToolResult(call.name, error=f"parameter {key!r} of {call.name} must be {e}, got {value!r}")
        return source, tool, arguments

    def close(self) -> None:
        for source in self.sources:
            try:
                source.close()
            except Exception as e:  # closing the others matters more
                logger.warning("closing a tool source failed: %s", _describe(e))

    def __deepcopy__(self, memo: dict) -> Toolbox:
        """Optimizers deep-copy programs many times; they all share the open connections."""
        return self

    def __enter__(self) -> Toolbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Toolbox({', '.join(f'{n}->{t}' if n != t else n for n, (_, t) in sorted(self._routes.items()))})"
