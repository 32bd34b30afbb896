"""The tag protocol a search agent speaks, and a parser that survives how real models break it.

The model writes ``<think>…</think>``, then exactly one ``<call_tool name="pubmed_search" limit="5">
keywords</call_tool>`` and stops; the runtime answers with ``<tool_output>…</tool_output>``; the model
ends with ``<answer>…</answer>`` whose claims carry ``<cite id="ID">…</cite>``.

Known failure modes this module absorbs (each has a test): a call left unclosed (the model hit a
stop sequence or EOS), several calls in one reply (only the first runs), a ``<tool_output>`` the model
wrote itself (cut away with everything after it, and counted: anything after a fake output rests on
invented data), ``</call>`` as a close, double-, single- or un-quoted attributes, ``ids=`` and
multi-id cites, nested markup inside a cite, hyphenated ids, and a missing ``</answer>``. Pure
functions, no LM; they never raise on any input text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["STOP_SEQUENCES", "Citation", "ParsedReply", "ToolCall", "escape_tool_text", "extract_citations",
           "cast_parameter", "format_call", "format_tool_output", "parse_reply", "restore_stop"]

# Sent to the LM so it stops after its call (the close tag is re-appended when the LM strips it).
STOP_SEQUENCES = ("</call_tool>", "</call>", "<tool_output>")

_OUTPUT = re.compile(r"<tool_output\b")
_STRAY_OUTPUT_CLOSE = re.compile(r"</tool_output\s*>")
_CALL_OPEN = re.compile(r"<call_tool\b([^<>]*)>")
_CALL_CLOSE = re.compile(r"</call(?:_tool)?\s*>")
_NEXT_TAG = re.compile(r"<(?:/?(?:call_tool|call|answer|think|tool_output|cite)\b)")
_ANSWER_OPEN = re.compile(r"<answer\b[^<>]*>")
_ANSWER_CLOSE = re.compile(r"</answer\s*>")
_ATTR = re.compile(r"""([A-Za-z_][\w-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'<>]+))""")
_CITE = re.compile(r"<cite\b([^<>]*)>(.*?)(?:</cite\s*>|(?=<cite\b)|$)", re.S)
_TAG = re.compile(r"<[^<>]*>")
_ID_SPLIT = re.compile(r"[\s,;]+")


@dataclass(frozen=True)
class ToolCall:
    name: str
    params: dict[str, Any]  # the attributes other than name, cast by the tool's schema when one is given
    query: str


@dataclass(frozen=True)
class ParsedReply:
    call: ToolCall | None  # the one call to execute, or None
    answer: str | None  # inner text of <answer> with markup kept (to the end when </answer> is missing)
    hallucinated_outputs: int  # <tool_output> blocks the model wrote itself (removed)
    clean_text: str  # what goes into the trajectory
    ignored_calls: int = 0  # further calls in the same reply, not executed


@dataclass(frozen=True)
class Citation:
    ids: list[str] = field(default_factory=list)
    text: str = ""


def _attributes(raw: str) -> dict[str, str]:
    return {m.group(1): next(g for g in m.groups()[1:] if g is not None) for m in _ATTR.finditer(raw)}


def cast_parameter(value: Any, kind: type) -> Any:
    """A call attribute (a string) as the schema's type; ValueError naming the type when it is not one."""
    if isinstance(value, kind) and not (kind is not bool and isinstance(value, bool)):
        return value
    text = str(value).strip()
    if kind is bool:
        if text.lower() in ("1", "true", "yes", "on"):
            return True
        if text.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError("a boolean (true or false)")
    if kind is int:
        try:
            number = float(text)
        except ValueError:
            raise ValueError("an integer") from None
        if not number.is_integer():
            raise ValueError("an integer")
        return int(number)
    if kind is float:
        try:
            return float(text)
        except ValueError:
            raise ValueError("a number") from None
    return text


def _cast(value: str, kind: type) -> Any:
    try:
        return cast_parameter(value, kind)
    except ValueError:
        return value  # the parser never raises; the tool call reports the bad value to the model


def _first_call(text: str, schemas: Mapping[str, Mapping[str, type]] | None) -> tuple[ToolCall, int, int] | None:
    """(call, start, end) of the first call that names a tool; end is where its text stops."""
    for match in _CALL_OPEN.finditer(text):
        attrs = _attributes(match.group(1))
        name = attrs.pop("name", "").strip()
        if not name:
            continue
        body_start = match.end()
        close = _CALL_CLOSE.search(text, body_start)
        next_tag = _NEXT_TAG.search(text, body_start)
        if close and (next_tag is None or close.start() <= next_tag.start()):
            query, end = text[body_start : close.start()], close.end()
        else:  # unclosed: up to the next tag or the end of the line
            stop = next_tag.start() if next_tag else len(text)
            line_end = text.find("\n", body_start)
            first_line = text[body_start:stop].strip().split("\n")[0] if text[body_start:stop].strip() else ""
            query = first_line
            end = stop if line_end == -1 or line_end > stop else line_end
        schema = (schemas or {}).get(name, {})
        params = {k: _cast(v, schema[k]) if k in schema else v for k, v in attrs.items()}
        return ToolCall(name, params, " ".join(query.split())), match.start(), end
    return None


def _without_calls(text: str) -> str:
    """Text around the executed call or the answer keeps no other call tags (nameless or not)."""
    return _CALL_CLOSE.sub("", _CALL_OPEN.sub("", text)).strip()


def restore_stop(text: str) -> str:
    """Re-append the close tag an LM API strips when it halts on the ``</call_tool>`` stop sequence.

    Only a reply whose last named call is still open at the very end, on one line (no close, no tag,
    no line break after it), is completed; anything else is returned as it is: a call that runs on
    over several lines was never closed by the model, and the parser takes its first line.
    """
    text = text if isinstance(text, str) else ""
    opens = [m for m in _CALL_OPEN.finditer(text) if _attributes(m.group(1)).get("name")]
    if not opens or "\n" in text[opens[-1].end():].strip() or _NEXT_TAG.search(text, opens[-1].end()):
        return text
    return text.rstrip() + "</call_tool>"


def format_call(call: ToolCall) -> str:
    attrs = "".join(f' {k}="{html.escape(str(v), quote=True)}"' for k, v in call.params.items())
    return f'<call_tool name="{call.name}"{attrs}>{call.query}</call_tool>'


def parse_reply(text: str, schemas: Mapping[str, Mapping[str, type]] | None = None) -> ParsedReply:
    """Read one model reply: the first tool call (if it comes before any answer), or the answer.

    ``schemas`` maps a tool name to {parameter: type} for casting attributes (``limit="5"`` → 5).
    """
    text = text if isinstance(text, str) else ""
    hallucinated = len(_OUTPUT.findall(text))
    first_output = _OUTPUT.search(text)
    if first_output:  # the model invented a tool's answer: drop it and all that follows
        text = text[: first_output.start()]
    text = _STRAY_OUTPUT_CLOSE.sub("", text)

    answer_open = _ANSWER_OPEN.search(text)
    found = _first_call(text, schemas)
    if found and (answer_open is None or found[1] < answer_open.start()):
        call, start, end = found
        later = sum(1 for m in _CALL_OPEN.finditer(text, end) if _attributes(m.group(1)).get("name"))
        prefix = _without_calls(text[:start])
        clean = (prefix + "\n" if prefix else "") + format_call(call)
        return ParsedReply(call, None, hallucinated, clean, later)

    if answer_open is None:
        return ParsedReply(None, None, hallucinated, _without_calls(text), 0)
    close = _ANSWER_CLOSE.search(text, answer_open.end())
    answer = _without_calls(text[answer_open.end() : close.start() if close else len(text)])
    prefix = _without_calls(text[: answer_open.start()])
    clean = (prefix + "\n" if prefix else "") + f"<answer>{answer}</answer>"
    ignored = sum(1 for m in _CALL_OPEN.finditer(text) if _attributes(m.group(1)).get("name"))
    return ParsedReply(None, answer, hallucinated, clean, ignored)


def extract_citations(answer_text: str) -> list[Citation]:
    """Every ``<cite id="…">`` / ``<cite ids="a, b">`` in an answer, with its text (inner markup removed)."""
    citations = []
    for match in _CITE.finditer(answer_text or ""):
        attrs = _attributes(match.group(1))
        raw = attrs.get("id") or attrs.get("ids") or ""
        ids = [i for i in _ID_SPLIT.split(raw.strip()) if i]
        inner = _TAG.sub("", match.group(2))
        citations.append(Citation(list(dict.fromkeys(ids)), " ".join(html.unescape(inner).split())))
    return citations


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
