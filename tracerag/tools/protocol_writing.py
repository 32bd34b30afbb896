"""Writing the search agent's tag protocol: a tool call as the model writes it, and the runtime's tool output.

A call is text in an HTML-like notation, and reading it (:func:`~.reply_parsing.parse_reply`) is the exact
inverse of writing it here: :func:`format_call` escapes the tool name, every parameter and the query (``&``,
``<``, ``>``, quotes, backticks, and the whitespace the reader would fold), and the reader decodes character
references (:func:`unescape`: ``&gt;``, ``&quot;``, ``&#xa;``) after removing the markup a model wrote. So
``parse_reply(format_call(call)).call == call`` for any strings, and the call the model sees in its trajectory
is the call that ran. Escaped text is text: ``&lt;b&gt;`` in a query is the three characters ``<b>``, as it is
in a tool output (:func:`format_tool_output`, whose fields :func:`escape_tool_text` escapes so that a tool's
text can never close the output block, open an answer or inject a call).
"""

from __future__ import annotations

import html
import html.entities
import re
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidValue

__all__ = ["ToolCall", "escape_attr", "escape_tool_text", "format_call", "format_tool_output", "unescape"]

_REFERENCE = re.compile(r"&(#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_SPACES = re.compile(r"\s+")
_ATTR_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;",
                               "`": "&#x60;"})


@dataclass(frozen=True)
class ToolCall:
    name: str
    params: dict[str, Any]  # the attributes other than name, cast by the tool's schema when one is given
    query: str


def _reference(m: re.Match) -> str:
    ref = m.group(1)
    if ref[0] != "#":
        return html.entities.html5.get(ref + ";", m.group())
    number = int(ref[2:], 16) if ref[1] in "xX" else int(ref[1:])
    return chr(number) if 0 < number <= 0x10FFFF and not 0xD800 <= number <= 0xDFFF else m.group()


def unescape(text: str) -> str:
    """``text`` with its character references decoded: named ones with their ``;`` (``&gt;``,
    ``&quot;``) and numeric ones (``&#62;``, ``&#x3e;``) as the character they number. Unlike
    ``html.unescape`` nothing else changes (``AT&T`` and ``&copy`` stay), so it undoes
    :func:`format_call` exactly."""
    return _REFERENCE.sub(_reference, text) if "&" in text else text


def escape_attr(value: str) -> str:
    """``value`` as an attribute value: markup characters, quotes and backticks as references."""
    return value.translate(_ATTR_ESCAPES)


def _references(run: str) -> str:
    return "".join(f"&#x{ord(c):x};" for c in run)


def _escape_words(text: str) -> str:
    """Text the reader folds (a query, a tool name) escaped so that folding leaves it as it is: markup
    characters as references, and every whitespace run but a single inner space as references."""
    text = escape_attr(text)
    n = len(text)

    def keep(m: re.Match) -> str:
        run = m.group()
        if m.start() == 0 or m.end() == n or run[0] != " ":
            return _references(run)
        return " " + _references(run[1:])

    return _SPACES.sub(keep, text)


_ATTR_KEY = re.compile(r"[A-Za-z_][\w-]*")


def format_call(call: ToolCall) -> str:
    """The call as the model writes it; ``parse_reply`` reads back exactly ``call`` (parameters as
    strings unless the tool's schema types them). ValueError for a parameter name no attribute can
    hold (``name`` is the tool's own)."""
    attrs = []
    for key, value in call.params.items():
        if not isinstance(key, str) or not _ATTR_KEY.fullmatch(key) or key.casefold() == "name":
            raise InvalidValue(f"tool call {call.name!r}: parameter name {key!r} cannot be written as an attribute")
        attrs.append(f' {key}="{escape_attr(str(value))}"')
    return f'<call_tool name="{_escape_words(call.name)}"{"".join(attrs)}>{_escape_words(call.query)}</call_tool>'


def escape_tool_text(text: str) -> str:
    """Tool output is data, never instructions: escape markup so it cannot close the output block,
    open an answer or inject a call."""
    return html.escape(text or "", quote=False)


def format_tool_output(snippets: list[dict[str, Any]] | None = None, error: str | None = None,
                       total: int | None = None) -> str:
    """The runtime's ``<tool_output>``: one ``<snippet id>`` per result (fields escaped), or an error.

    A snippet is a dict with ``id`` and ``text`` and, when known, ``title``, ``authors``, ``year`` and
    ``journal``; ``total`` (how many results the tool found) adds a "Found N results" line.
    """
    if error is not None:
        return f"<tool_output>Error: {escape_tool_text(error)}</tool_output>"
    snippets = snippets or []
    blocks = [] if total is None else [f"Found {total} results. Showing top {len(snippets)}:"]
    for s in snippets:
        meta = " | ".join(f"{k.title()}: {escape_tool_text(str(s[k]))}" for k in ("year", "journal") if s.get(k))
        lines = [f"Title: {escape_tool_text(str(s['title']))}" if s.get("title") else ""]
        authors = escape_tool_text(str(s.get("authors") or ""))
        lines.append(f"Authors: {authors}" + (f" | {meta}" if meta else "") if authors else meta)
        lines.append(f"Abstract: {escape_tool_text(str(s.get('text') or ''))}")
        snippet_id = escape_tool_text(str(s.get("id", ""))).replace('"', "&quot;")
        blocks.append(f'<snippet id="{snippet_id}">' + "\n".join(x for x in lines if x) + "</snippet>")
    return "<tool_output>\n" + "\n".join(blocks) + "\n</tool_output>"
