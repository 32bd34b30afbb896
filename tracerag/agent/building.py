"""Building SearchAgent: on its bundled defaults, on the user's data or store, or from a compiled artifact."""

from __future__ import annotations

import os
from pathlib import Path


def build_agent(*, artifact: str | Path | None = None, tools: list[str] | None = None, pubmed: str | None = "local",
                bank: str | Path | None = None, browse_root: str | Path | None = None, tool_embedder: str | None = None,
                cache_dir: str | Path | None = None, max_tool_calls: int | None = None):
    """SearchAgent over ``tools`` (MCP tool sources; default: the bundled local MCP server, a child process
    that searches ``bank`` or the PubMedQA abstracts with the ``tool_embedder`` spec), from an artifact when given.
    Close it with ``program.toolbox.close()``.

    Args:
        artifact: a compiled program (``tracerag compile agent``).
        tools: MCP tool sources: ``local``, an ``http(s)://`` URL (streamable HTTP) or a command line (stdio).
        pubmed: ``local`` (the bundled abstracts) or ``eutils`` (NCBI, needs internet).
        bank: the chunk bank the local server searches; ``tool_embedder``: its embedder spec.
        browse_root: the directory ``browse_webpage`` may read.
        cache_dir: the cache directory the local tool server uses.
        max_tool_calls: total tool calls per question.

    Returns:
        The program, ready to call: ``program(question=...)``.
    """
    from ..artifacts import load_program
    from ..config import ENV_CACHE_DIR
    from ..tools.mcp_client import Toolbox
    from .artifact import rebuild
    from .search_agent import SearchAgent

    if cache_dir:  # the local tool server is a child process: it reads the cache directory from here
        os.environ[ENV_CACHE_DIR] = str(cache_dir)
    toolbox = Toolbox.open(tools or None, pubmed=pubmed or "local", bank=bank, browse_root=browse_root,
                           embedder=tool_embedder)
    program = load_program(artifact, "SearchAgent", rebuild, tools=toolbox) if artifact else SearchAgent(toolbox)
    if max_tool_calls is not None:
        program.config = program.config.model_copy(update={"max_tool_calls": max_tool_calls})
    return program
