"""Split a document into overlapping, sentence-aligned chunks with stable ids.

Why sentences: a chunk that ends mid-sentence embeds a half thought and cites badly, so chunks are
packed from whole sentences up to ``size`` characters, and the next chunk repeats the last ~``overlap``
characters' worth of whole sentences so that a fact straddling a boundary is whole in one of them.
Why stable ids and hashes: ``<doc_id>#<n>`` plus a hash of the chunk text let re-ingestion recognise
a chunk it already stored (and a document whose text changed) without embedding anything.

Whitespace is normalised first (runs become one space; a blank line is a paragraph break, which
always ends a sentence), so chunk texts, and therefore ids and hashes, do not depend on line wrapping.
Pure Python and deterministic.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from ..errors import InvalidValue

__all__ = ["Chunk", "chunk_text", "split_sentences", "text_hash"]

DEFAULT_SIZE = 500
DEFAULT_OVERLAP = 100

_PARAGRAPH_RE = re.compile(r"\s*\n\s*\n\s*")
_SPACE_RE = re.compile(r"\s+")
# A sentence ends after . ! ? (and closing quotes/brackets) followed by a space and a character that is
# not a lower-case letter ("e.g. the" stays whole), or after a CJK terminator, or at a paragraph break.
_BOUNDARY_RE = re.compile(r"[.!?][\"'”’)\]]*(?= (?![a-z]))|[。！？；][”’」』）]*|\n\n")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One piece of a document: ``id`` is ``<doc_id>#<index>``, ``hash`` identifies ``text``."""

    id: str
    doc_id: str
    index: int
    text: str
    hash: str


def text_hash(text: str) -> str:
    """16 hex digits of SHA-256: identifies a chunk's text across runs and machines."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def normalize_whitespace(text: str) -> str:
    """Paragraph breaks become ``\\n\\n``, every other whitespace run one space; ends are stripped."""
    paragraphs = _PARAGRAPH_RE.split(text.strip())
    return "\n\n".join(_SPACE_RE.sub(" ", p) for p in paragraphs if p.strip())


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of whitespace-normalised ``text``, without surrounding whitespace."""
    spans, start = [], 0
    for match in _BOUNDARY_RE.finditer(text):
        _add_span(spans, text, start, match.end())
        start = match.end()
    _add_span(spans, text, start, len(text))
    return spans


def _add_span(spans: list[tuple[int, int]], text: str, start: int, end: int) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        spans.append((start, end))


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` after whitespace normalisation (the units chunks are packed from)."""
    text = normalize_whitespace(text)
    return [text[s:e] for s, e in _sentence_spans(text)]


def _fit_spans(text: str, span: tuple[int, int], size: int) -> list[tuple[int, int]]:
    """A sentence longer than ``size`` split on whitespace into pieces of at most ``size`` characters.

    A single word longer than ``size`` (a URL, a CJK run without spaces) is cut every ``size`` characters.
    """
    start, end = span
    if end - start <= size:
        return [span]
    words: list[tuple[int, int]] = []
    for match in re.finditer(r"\S+", text[start:end]):
        ws, we = start + match.start(), start + match.end()
        words.extend((i, min(i + size, we)) for i in range(ws, we, size))
    pieces: list[tuple[int, int]] = []
    piece_start, piece_end = words[0]
    for ws, we in words[1:]:
        if we - piece_start <= size:
            piece_end = we
        else:
            pieces.append((piece_start, piece_end))
            piece_start, piece_end = ws, we
    pieces.append((piece_start, piece_end))
    return pieces


def _carry(units: list[tuple[int, int]], overlap: int) -> list[tuple[int, int]]:
    """The trailing units of a finished chunk to repeat: ``overlap`` characters rounded to whole units.

    Units are added from the end while that brings the carried length nearer to ``overlap``; the whole
    chunk is never carried, so every chunk adds new text.
    """
    carried: list[tuple[int, int]] = []
    for unit in reversed(units[1:]):
        length = (carried[-1][1] if carried else unit[1]) - unit[0]
        current = (carried[-1][1] - carried[0][0]) if carried else 0
        if abs(length - overlap) >= abs(current - overlap):
            break
        carried.insert(0, unit)
    return carried


def chunk_text(doc_id: str, text: str, *, size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP) -> list[Chunk]:
    """Chunks of at most ``size`` characters, packed from whole sentences, consecutive ones sharing ~``overlap``.

    The overlap is rounded to whole sentences (to the nearer of the lengths just below and just above
    ``overlap``) and dropped where the next sentence would not fit beside it. Empty text gives no chunks.
    """
    if size <= 0:
        raise InvalidValue(f"size must be positive, got {size}")
    if not 0 <= overlap < size:
        raise InvalidValue(f"overlap must be in [0, size), got {overlap} with size {size}")
    text = normalize_whitespace(text)
    units = [piece for span in _sentence_spans(text) for piece in _fit_spans(text, span, size)]
    groups: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] = []
    for unit in units:
        if current and unit[1] - current[0][0] > size:
            groups.append(current)
            current = _carry(current, overlap) if overlap else []
            while current and unit[1] - current[0][0] > size:  # the carried sentences must leave room
                current.pop(0)
        current.append(unit)
    if current:
        groups.append(current)
    chunks = []
    for n, group in enumerate(groups):
        piece = text[group[0][0] : group[-1][1]]
        chunks.append(Chunk(id=f"{doc_id}#{n}", doc_id=doc_id, index=n, text=piece, hash=text_hash(piece)))
    return chunks
