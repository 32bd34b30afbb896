"""The programs as MCP tools: the real ``python -m tracerag.tools --programs commands,rag`` over stdio, called
through the MCP SDK's client; the answers are the HTTP service's JSON, equal to the in-process call."""

from __future__ import annotations

import os
import sys

import anyio
import pytest
from http_tool_server import http_tool_server
from serve_helpers import stable

QUERY, HOME = "把主卧空调调到26度", "home_small"
QUESTION = "Do statins lower LDL cholesterol in diabetes?"


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    path = tmp_path_factory.getbasetemp() / "tools-cache"  # shared with the tools tests: one ingestion
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRACERAG_CACHE_DIR", str(path))
        yield path


@pytest.fixture(scope="module")
def session_results(cache_dir):
    """One server, one session: the tool list and each call's (is_error, structured content, text)."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {k: v for k, v in os.environ.items() if k not in ("TRACERAG_LM", "TRACERAG_API_BASE")}
    params = StdioServerParameters(command=sys.executable, env=env, args=[
        "-m", "tracerag.tools", "--embedder", "lexical", "--programs", "commands,rag"])
    calls = {"commands": ("find_smart_home_command", {"query": QUERY, "home": HOME}),
             "rag": ("answer_with_citations", {"question": QUESTION}),
             "no_home": ("find_smart_home_command", {"query": QUERY}),
             "bad_type": ("answer_with_citations", {"question": 3})}

    async def run():
        results = {}
        with open(os.devnull, "w") as quiet:
            async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                results["tools"] = {t.name: t for t in (await session.list_tools()).tools}
                for key, (tool, arguments) in calls.items():
                    with anyio.fail_after(60):
                        reply = await session.call_tool(tool, arguments)
                    text = " ".join(block.text for block in reply.content if getattr(block, "type", "") == "text")
                    results[key] = (reply.is_error, reply.structured_content, text)
        return results

    return anyio.run(run)


def test_the_loaded_programs_are_offered_as_tools(session_results):
    tools = session_results["tools"]
    assert set(tools) == {"pubmed_search", "find_smart_home_command", "answer_with_citations"}
    assert tools["find_smart_home_command"].input_schema["required"] == ["query"]
    assert "citing" in tools["answer_with_citations"].description
    # typed output, from the same response models as the HTTP service's OpenAPI document
    from tracerag.commands.service import CommandsResponse
    from tracerag.rag.service import RAGResponse

    ir = tools["find_smart_home_command"].input_schema["properties"]["ir"]
    assert "QueryIRIn" in str(ir)  # a typed parse, checked as the HTTP service checks it
    for name, model in (("find_smart_home_command", CommandsResponse), ("answer_with_citations", RAGResponse)):
        schema = tools[name].output_schema
        assert schema and set(schema["properties"]) == set(model.model_json_schema()["properties"]), name


def test_tool_answers_equal_the_in_process_call(session_results, cache_dir):
    from tracerag.commands.command_retrieval import CommandRetrieval, build_indexes
    from tracerag.datasets.smarthome import home_dirs, resolve_dataset
    from tracerag.documents.hybrid import HybridRetriever
    from tracerag.embedding.embedder_choice import make_embedder
    from tracerag.rag.self_reflective_rag import RAGConfig, SelfReflectiveRAG
    from tracerag.serving.programs import prediction_json
    from tracerag.tools.pubmed_corpus import open_pubmedqa_bank

    embedder = make_embedder("lexical", cache_dir=cache_dir)
    commands = CommandRetrieval(build_indexes(home_dirs(resolve_dataset("smarthome")), embedder), ir_source="none")
    is_error, structured, text = session_results["commands"]
    assert not is_error and structured == prediction_json(commands(query=QUERY, home=HOME))
    assert structured["candidates"][0]["category"] == "AirConditioner" and '"candidates"' in text
    rag = SelfReflectiveRAG(HybridRetriever(open_pubmedqa_bank(embedder)), RAGConfig(k=10, max_rounds=2))
    is_error, structured, _ = session_results["rag"]
    assert not is_error and stable(structured) == stable(prediction_json(rag(question=QUESTION)))


def test_bad_arguments_are_tool_errors_naming_the_field(session_results):
    is_error, _, text = session_results["no_home"]
    assert is_error and "home: required" in text
    is_error, _, text = session_results["bad_type"]
    assert is_error and "question" in text


def test_program_tools_over_streamable_http(cache_dir, tmp_path):
    """The same tools reached as a desktop assistant or a remote agent would: streamable HTTP."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from tracerag.commands.command_retrieval import CommandRetrieval, build_indexes
    from tracerag.datasets.smarthome import home_dirs, resolve_dataset
    from tracerag.embedding.embedder_choice import make_embedder
    from tracerag.serving.programs import prediction_json

    async def call(url):
        async with streamable_http_client(url) as streams, ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            with anyio.fail_after(60):
                return await session.call_tool("find_smart_home_command", {"query": QUERY, "home": HOME})

    env = {k: v for k, v in os.environ.items() if k not in ("TRACERAG_LM", "TRACERAG_API_BASE")}
    with http_tool_server(["--embedder", "lexical", "--programs", "commands"], tmp_path, env) as url:
        reply = anyio.run(call, url)
    embedder = make_embedder("lexical", cache_dir=cache_dir)
    commands = CommandRetrieval(build_indexes(home_dirs(resolve_dataset("smarthome")), embedder), ir_source="none")
    assert not reply.is_error and reply.structured_content == prediction_json(commands(query=QUERY, home=HOME))
