"""What a tool source gives the agent (``ToolResult``) and how a tool's JSON schema reads as parameters:
shared by every source, the MCP client and the in-process E-utilities adapter alike."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .protocol_writing import format_tool_output

_JSON_TYPES: dict[str, type] = {"integer": int, "number": float, "boolean": bool, "string": str}


@dataclass(frozen=True)
class ToolResult:
    """What one tool call gave the agent: snippets (with ``total`` when the tool counts), or an error."""

    tool: str
    snippets: list[dict[str, Any]] = field(default_factory=list)
    total: int | None = None
    error: str | None = None

    @property
    def ids(self) -> list[str]:
        return [str(s.get("id", "")) for s in self.snippets]

    def to_output(self) -> str:
        """The ``<tool_output>`` block the model reads."""
        return format_tool_output(self.snippets, self.error, self.total)


def _json_type(prop: Mapping[str, Any]) -> str | None:
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind is None:
        for option in prop.get("anyOf") or prop.get("oneOf") or ():
            if isinstance(option, Mapping) and (inner := _json_type(option)) not in (None, "null"):
                return inner
    return kind if isinstance(kind, str) else None


def main_argument(input_schema: Mapping[str, Any]) -> str | None:
    """The argument a call's text goes to: the first required string property (else the first string one)."""
    props = input_schema.get("properties") or {}
    required = set(input_schema.get("required") or ())
    strings = [name for name, prop in props.items() if isinstance(prop, Mapping) and _json_type(prop) == "string"]
    return next((n for n in strings if n in required), strings[0] if strings else None)


def parameter_types(input_schema: Mapping[str, Any]) -> dict[str, type]:
    """{parameter: Python type} of a tool's arguments other than its main one (unknown JSON types: str)."""
    main = main_argument(input_schema)
    props = input_schema.get("properties") or {}
    return {name: _JSON_TYPES.get(_json_type(prop) or "", str) for name, prop in props.items()
            if name != main and isinstance(prop, Mapping)}
