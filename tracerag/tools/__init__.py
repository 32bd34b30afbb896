"""Tool use for SearchAgent: the tag protocol (replies read by ``reply_parsing``, the tags found by
``protocol_tags``, calls and tool outputs written by ``protocol_writing``, cites read by ``cite_tags``), call
caps (``budget``), run records (``trajectory``), the MCP client (``mcp_client``) and the local MCP server
(``server``, run with ``python -m tracerag.tools``). The client is imported on first use, so ``import tracerag``
does not load the MCP SDK."""

from .cite_tags import Citation, extract_citations
from .protocol_writing import ToolCall
from .reply_parsing import ParsedReply, parse_reply
from .trajectory import ToolCallRecord, Trajectory

__all__ = ["Citation", "ParsedReply", "ToolCall", "ToolCallRecord", "Toolbox", "Trajectory", "extract_citations",
           "parse_reply"]


def __getattr__(name: str):
    if name == "Toolbox":
        from .mcp_client import Toolbox

        return Toolbox
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
