"""MCPToolSource and Toolbox against a small scripted MCP server (a real subprocess over stdio).

The scripted server stands in for external servers: a web search and a crawler under their own
names (served through the protocol aliases), a tool with typed parameters, a slow tool, a failing
one, and one that kills its own process mid-call.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from tracerag.tools.mcp_client import (
    MCPToolSource,
    Toolbox,
    ToolResult,
    ToolSourceError,
    main_argument,
    parameter_types,
    snippets_from,
)
from tracerag.tools.protocol_writing import ToolCall
from tracerag.tools.reply_parsing import parse_reply

SERVER = textwrap.dedent('''
    import asyncio, os, time
    from typing import Any
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer("scripted", log_level="ERROR")

    @server.tool()
    def serper_google_webpage_search(query: str, num_results: int = 2) -> dict[str, Any]:
        """A web search that answers with link/snippet items, like the Serper server."""
        items = [{"title": f"{query} #{i}", "link": f"https://example.org/{i}", "snippet": f"about {query} {i}"}
                 for i in range(num_results)]
        return {"results": items, "total": 1000}

    @server.tool()
    def crawl4ai_fetch_webpage_content(url: str) -> str:
        return f"markdown of {url}"

    @server.tool()
    def echo_text(loud: bool, message: str, times: int = 1, ratio: float = 1.0) -> str:
        text = " ".join([message.upper() if loud else message] * times)
        return f"{text} x{ratio}"

    @server.tool()
    def slow(seconds: float) -> str:
        time.sleep(seconds)
        return "done"

    @server.tool()
    def fail(reason: str) -> str:
        raise ToolError(f"refused: {reason}")

    @server.tool()
    def die(reason: str) -> str:
        os._exit(3)

    @server.tool()
    def whoami(question: str) -> str:
        return str(os.getpid())

    WAVE = {"size": 0, "arrived": 0, "all_in": asyncio.Event()}

    @server.tool()
    async def expect_together(n: int) -> str:
        """From now on, nap_search answers only once n calls of it are in at once (30 s at most)."""
        WAVE.update(size=n, arrived=0, all_in=asyncio.Event())
        return "expecting"

    @server.tool()
    async def nap_search(query: str, limit: int = 2) -> dict[str, Any]:
        """A search that waits without blocking the server (calls overlap); its ids say whether the calls
        expect_together asked for came together ("nap-") or not ("alone-")."""
        prefix = "nap"
        if WAVE["size"]:
            WAVE["arrived"] += 1
            if WAVE["arrived"] >= WAVE["size"]:
                WAVE["all_in"].set()
            try:
                await asyncio.wait_for(WAVE["all_in"].wait(), 30)
            except TimeoutError:
                prefix = "alone"
        return {"results": [{"id": f"{prefix}-{i}", "text": f"{query}: finding {i}."} for i in range(limit)]}

    server.run("stdio")
''')


@pytest.fixture(scope="module")
def script(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("scripted") / "server.py"
    path.write_text(SERVER, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def box(script):
    """One Toolbox over one scripted server, opened from a command-line spec."""
    with Toolbox.open([f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"]) as toolbox:
        yield toolbox


def test_schemas_by_protocol_name_with_aliases(box):
    schemas = box.schemas()
    assert schemas["google_search"] == {"num_results": int}
    assert schemas["browse_webpage"] == {}
    assert schemas["echo_text"] == {"loud": bool, "times": int, "ratio": float}  # "message" is the call's text
    assert "pubmed_search" not in schemas


def test_an_alias_serves_the_protocol_name(box):
    result = box.call(ToolCall("google_search", {"num_results": "3"}, "mcp transports"))
    assert result.tool == "google_search" and result.error is None
    assert result.ids == ["https://example.org/0", "https://example.org/1", "https://example.org/2"]
    assert result.total == 1000
    assert result.snippets[1]["text"] == "about mcp transports 1"
    assert result.snippets[1]["title"] == "mcp transports #1"


def test_text_output_is_one_snippet_named_by_the_url(box):
    result = box.call(ToolCall("browse_webpage", {}, "https://example.org/page"))
    assert result.snippets == [{"id": "https://example.org/page", "text": "markdown of https://example.org/page"}]
    assert result.total is None


def test_text_output_without_url_gets_a_numbered_id(box):
    first = box.call(ToolCall("echo_text", {"loud": "yes", "times": "2", "ratio": "0.5"}, "hi"))
    second = box.call(ToolCall("echo_text", {"loud": "false"}, "hi"))
    assert first.snippets[0]["text"] == "HI HI x0.5" and second.snippets[0]["text"] == "hi x1.0"
    assert first.ids[0].startswith("echo_text-") and first.ids != second.ids


def test_a_parsed_reply_runs_through_the_toolbox(box):
    reply = parse_reply('<think>search</think><call_tool name="google_search" num_results="1">dspy</call_tool>',
                        box.schemas())
    assert reply.call.params == {"num_results": 1}
    assert box.call(reply.call).ids == ["https://example.org/0"]


def test_unknown_tool_lists_the_available_ones(box):
    result = box.call(ToolCall("image_search", {}, "cats"))
    assert result.error.startswith("unknown tool 'image_search'; available: browse_webpage, ")
    assert "google_search" in result.error
    assert result.to_output() == f"<tool_output>Error: {result.error}</tool_output>"


@pytest.mark.parametrize(("params", "message"), [
    ({"num_results": "many"}, "parameter 'num_results' of google_search must be an integer, got 'many'"),
    ({"num_results": "2.5"}, "must be an integer"),
    ({"k": "3"}, "google_search has no parameter 'k'; its parameters: num_results"),
])
def test_bad_parameters_are_errors(box, params, message):
    assert message in box.call(ToolCall("google_search", params, "x")).error


def test_bad_boolean_and_number(box):
    assert "must be a boolean" in box.call(ToolCall("echo_text", {"loud": "perhaps"}, "x")).error
    assert "must be a number" in box.call(ToolCall("echo_text", {"loud": "1", "ratio": "half"}, "x")).error


def test_a_tool_error_is_a_result(box):
    result = box.call(ToolCall("fail", {}, "no"))
    assert result.snippets == [] and "refused: no" in result.error


def test_a_timeout_is_a_result_and_the_session_survives(script):
    with MCPToolSource.stdio(sys.executable, [str(script)], timeout=0.5) as source:
        result = source.call("slow", {"seconds": 1.5})  # unbounded, it would answer "done" after 1.5 s
        assert result.error == "slow timed out after 0.5s"
        assert source.call("slow", {"seconds": 0}).snippets[0]["text"] == "done"
    assert "connection is closed" in source.call("slow", {"seconds": 0}).error


def test_a_server_dying_mid_call_and_a_killed_server_give_errors(script):
    with MCPToolSource.stdio(sys.executable, [str(script)], timeout=10) as source:
        result = source.call("die", {"reason": "now"})
        assert "unavailable" in result.error and "exited or crashed" in result.error
        again = source.call("echo_text", {"loud": False, "message": "still there?"})
        assert "unavailable" in again.error
    with MCPToolSource.stdio(sys.executable, [str(script)], timeout=10) as source:
        pid = int(source.call("whoami", {"question": "pid"}).snippets[0]["text"])
        os.kill(pid, signal.SIGKILL)
        result = source.call("echo_text", {"loud": False, "message": "hello?"})
        assert "unavailable" in result.error  # not the 10 s timeout waited out: "timed out after 10s"
    assert "unavailable" in source.call("whoami", {"question": "after close"}).error


def test_a_command_that_is_not_a_server_raises_when_opened():
    with pytest.raises(ToolSourceError, match="could not open the MCP connection"):
        MCPToolSource.stdio(sys.executable, ["-c", "print('not MCP')"], connect_timeout=20)
    with pytest.raises(ToolSourceError):
        MCPToolSource.stdio("/nonexistent/tool-server", [], connect_timeout=20)


# -- toolbox wiring without a server ----------------------------------------------------------------


class FakeSource:
    def __init__(self, schemas: dict, answer: str = "fake"):
        self.schemas, self.answer, self.calls, self.closed = schemas, answer, [], False

    def input_schemas(self):
        return self.schemas

    def tool_schemas(self):
        return {name: parameter_types(schema) for name, schema in self.schemas.items()}

    def call(self, name, arguments):
        self.calls.append((name, arguments))
        return ToolResult(name, [{"id": self.answer, "text": str(arguments)}], 1)

    def close(self):
        self.closed = True


SEARCH = {"type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
          "required": ["query"]}


def test_the_first_source_wins_and_a_native_name_beats_an_alias():
    first, second = FakeSource({"pubmed_search": SEARCH}, "first"), FakeSource({"pubmed_search": SEARCH}, "second")
    crawler = FakeSource({"crawl4ai_fetch_webpage_content": {"properties": {"url": {"type": "string"}}}}, "crawler")
    native = FakeSource({"browse_webpage": {"properties": {"url": {"type": "string"}}}}, "native")
    box = Toolbox([first, second, crawler, native])
    assert box.call(ToolCall("pubmed_search", {"limit": 2}, "q")).ids == ["first"]
    assert first.calls == [("pubmed_search", {"query": "q", "limit": 2})]
    assert box.call(ToolCall("browse_webpage", {}, "u")).ids == ["native"]
    box.close()
    assert all(s.closed for s in (first, second, crawler, native))


def test_custom_aliases():
    source = FakeSource({"my_search": SEARCH})
    box = Toolbox([source], aliases={"pubmed_search": "my_search"})
    result = box.call(ToolCall("pubmed_search", {}, "q"))
    assert result.tool == "pubmed_search" and source.calls == [("my_search", {"query": "q"})]
    assert "google_search" not in box.schemas()


def test_open_rejects_an_unknown_pubmed_source():
    with pytest.raises(ValueError, match="unknown pubmed source 'bing'"):
        Toolbox.open(pubmed="bing")


def test_main_argument_and_parameter_types():
    schema = {"properties": {"n": {"type": "integer"}, "lang": {"type": "string"},
                             "q": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                             "on": {"type": ["boolean", "null"]}, "tags": {"type": "array"}},
              "required": ["q", "n"]}
    assert main_argument(schema) == "q"  # the first *required* string property
    assert parameter_types(schema) == {"n": int, "lang": str, "on": bool, "tags": str}
    assert main_argument({"properties": {"url": {"type": "string"}}}) == "url"
    assert main_argument({"properties": {"n": {"type": "integer"}}}) is None


def test_snippets_from_structured_and_text():
    structured = {"total": 2, "results": [{"pmid": 12, "abstract": "a"}, {"url": "u", "content": "c"}, "junk"]}
    snippets, total = snippets_from(structured, [], "search", {}, "search-1")
    assert total == 2
    assert [(s["id"], s["text"]) for s in snippets] == [("12", "a"), ("u", "c")]
    assert snippets_from(None, ["one", "two"], "t", {}, "t-4") == ([{"id": "t-4", "text": "one\ntwo"}], None)
    assert snippets_from(None, [], "t", {}, "t-5") == ([], None)


def test_optimizers_deep_copies_share_the_open_toolbox(box):
    import copy

    from tracerag.agent.search_agent import SearchAgent

    agent = SearchAgent(box)
    assert copy.deepcopy(box) is box and agent.deepcopy().toolbox is box


# -- acall: the same calls awaited from the caller's event loop, no thread waiting for them ----------------


def _unnumbered(result: ToolResult) -> ToolResult:
    """A result with its snippets' numbered ids (``echo_text-3``) left out: they count calls."""
    return replace(result, snippets=[{k: v for k, v in s.items() if k != "id" or "-" not in v or "/" in v}
                                     for s in result.snippets])


@pytest.mark.parametrize("call", [
    ToolCall("google_search", {"num_results": "3"}, "mcp transports"),
    ToolCall("browse_webpage", {}, "https://example.org/page"),
    ToolCall("echo_text", {"loud": "yes", "times": "2", "ratio": "0.5"}, "hi"),
    ToolCall("image_search", {}, "cats"),
    ToolCall("google_search", {"k": "3"}, "x"),
    ToolCall("fail", {}, "no"),
])
def test_acall_gives_what_call_gives(box, call):
    assert _unnumbered(asyncio.run(box.acall(call))) == _unnumbered(box.call(call))


def test_an_awaited_timeout_is_a_result_and_the_session_survives(script):
    with MCPToolSource.stdio(sys.executable, [str(script)], timeout=0.5) as source:
        assert asyncio.run(source.acall("slow", {"seconds": 1.5})).error == "slow timed out after 0.5s"
        assert asyncio.run(source.acall("slow", {"seconds": 0})).snippets[0]["text"] == "done"
    assert "connection is closed" in asyncio.run(source.acall("slow", {"seconds": 0})).error


def test_agent_tool_calls_are_awaited_without_a_thread_each(script):
    """The SearchAgent's aforward awaits ``Toolbox.acall``: 6 agents with ONE worker thread for the loop have
    their searches in flight at once (the server answers none until all 6 are in), with the predictions of the
    sync path."""
    from tracerag.agent.search_agent import SearchAgent

    with MCPToolSource.stdio(sys.executable, [str(script)]) as source:
        agent = SearchAgent(Toolbox([source], aliases={"pubmed_search": "nap_search"}))  # no LM: one search
        questions = [f"Does treatment {i} help?" for i in range(6)]
        sync = [agent(question=q) for q in questions]

        async def together():
            asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(1))
            return await asyncio.gather(*(agent.acall(question=q) for q in questions))

        assert source.call("expect_together", {"n": len(questions)}).error is None
        preds = asyncio.run(together())  # a worker thread per call would queue them: ids "alone-"
    for a, s in zip(preds, sync, strict=True):
        assert (a.answer, a.returned_ids, a.ids_cited, a.trajectory.interleaved_text) == \
            (s.answer, s.returned_ids, s.ids_cited, s.trajectory.interleaved_text)
        assert a.returned_ids[0] == "nap-0" and a.stop_reason == "no_lm"
