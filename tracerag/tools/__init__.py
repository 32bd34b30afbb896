"""Tool use for SearchAgent: the tag protocol (``protocol``); MCP tool clients and servers build on it."""

from .protocol import Citation, ParsedReply, ToolCall, extract_citations, parse_reply

__all__ = ["Citation", "ParsedReply", "ToolCall", "extract_citations", "parse_reply"]
