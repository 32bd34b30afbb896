"""SearchAgent's artifact: its config only; the tools are the app's to give at load time."""

from __future__ import annotations

from pathlib import Path


def describe(program, where: Path | None = None) -> dict:
    return {"program": "SearchAgent", "config": program.config.model_dump(), "embedder": None}


def rebuild(path: Path, meta: dict, *, tools=None, **_):
    """``tools``: the app's Toolbox (default: the bundled local MCP server, started on first use)."""
    from .search_agent import AgentConfig, SearchAgent

    return SearchAgent(tools, AgentConfig(**meta["config"]))
