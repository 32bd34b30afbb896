"""Tool use for SearchAgent: the tag protocol (``protocol``), call caps (``budget``), run records
(``trajectory``), the MCP client (``mcp_client``) and the local MCP server (``server``, run with
``python -m tracerag.tools``). The client is imported on first use, so ``import tracerag`` does not load
the MCP SDK."""

from .protocol import Citation, ParsedReply, ToolCall, extract_citations, parse_reply
from .trajectory import ToolCallRecord, Trajectory

__all__ = ["Citation", "ParsedReply", "ToolCall", "ToolCallRecord", "Toolbox", "Trajectory", "extract_citations",
           "parse_reply"]


def __getattr__(name: str):
    if name == "Toolbox":
        from .mcp_client import Toolbox

        return Toolbox
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
