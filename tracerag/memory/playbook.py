"""Playbook bullets and reference templates: the citable units a TraceablePlanner is handed.

A playbook is a text file of bullets, one a line, in the established format

    [<slug>-<5 digits>] helpful=<n> harmful=<n> :: <text>

(``[mat-00001] helpful=3 harmful=0 :: Thaw enzymes on ice.``), optionally grouped under ``#`` headings
and blank lines. Why this format: the id is what a plan cites, so it must be stable and greppable, and
the counters let a curator see which bullets keep helping or misleading. Parsing is strict (a line that is
neither a bullet, a heading/comment nor blank is an error naming file:line), so the file a curator edits
is the file the planner sees, and writing an unchanged playbook back gives the same bytes.

Templates are retrieved passages (earlier plans, protocols) shown to the LM beside the bullets. They get
a stable id ``tpl-<hash8>`` from their text when none is given, so the same passage has the same id in
every retrieval, whatever its rank or title.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from ..data_files.durable import write_durably
from ..data_files.read_report import DEFAULT_MAX_BYTES, open_regular, read_capped
from ..errors import DataFileError, InvalidType, InvalidValue

__all__ = ["BULLET_ID_PATTERN", "TEMPLATE_ID_PATTERN", "Bullet", "Playbook", "PlaybookError", "Template",
           "TemplateIndex", "apply_feedback", "as_template", "index_templates", "load_playbook", "parse_playbook",
           "template_id"]

SLUG_PATTERN = r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*"
BULLET_ID_PATTERN = rf"{SLUG_PATTERN}-\d{{5}}"
TEMPLATE_ID_PATTERN = r"tpl-[0-9a-f]{8}|template-\d{3}"

_COUNT = r"0|[1-9]\d*"  # no leading zeros: the canonical form is the only form, so writing back is byte-stable
_BULLET_LINE = re.compile(
    rf"\[(?P<id>(?P<slug>{SLUG_PATTERN})-(?P<num>\d{{5}}))\] helpful=(?P<helpful>{_COUNT}) "
    rf"harmful=(?P<harmful>{_COUNT}) :: (?P<text>.*\S.*)")
_SLUG = re.compile(SLUG_PATTERN)
FEEDBACK_TAGS = ("helpful", "harmful", "neutral")


class PlaybookError(DataFileError):
    """A playbook that cannot be read or an update that does not fit it; the message names file:line or id."""


@dataclass(frozen=True)
class Bullet:
    id: str
    slug: str
    helpful: int
    harmful: int
    text: str

    def render(self) -> str:
        """The bullet's playbook line (also how the LM sees it)."""
        return f"[{self.id}] helpful={self.helpful} harmful={self.harmful} :: {self.text}"


@dataclass(frozen=True)
class Playbook:
    """The file's lines in order: a ``Bullet`` or a raw heading/comment/blank line (kept verbatim).

    Immutable: updates return a new Playbook, so a program deep-copied by an optimizer never shares a
    half-updated one.
    """

    lines: tuple[Bullet | str, ...] = ()
    newline: str = "\n"
    final_newline: bool = True
    source: str = field(default="<string>", compare=False)

    @property
    def bullets(self) -> list[Bullet]:
        return [line for line in self.lines if isinstance(line, Bullet)]

    @property
    def ids(self) -> list[str]:
        return [b.id for b in self.bullets]

    def get(self, bullet_id: str) -> Bullet | None:
        return self._by_id.get(bullet_id)

    @cached_property
    def _by_id(self) -> dict[str, Bullet]:
        """id -> its (first) bullet, built once: a dataset looks up every case's bullets here."""
        index: dict[str, Bullet] = {}
        for bullet in self.bullets:
            index.setdefault(bullet.id, bullet)
        return index

    def to_text(self) -> str:
        rendered = [line.render() if isinstance(line, Bullet) else line for line in self.lines]
        text = self.newline.join(rendered)
        return text + self.newline if rendered and self.final_newline else text

    def save(self, path: str | Path) -> None:
        """Write atomically (a temporary file renamed over the target), so a reader never sees half a file."""
        write_durably(path, self.to_text())

    def next_id(self, slug: str) -> str:
        """The next free id for ``slug``: one past the highest number ever used, so a deleted id is never reused."""
        if not _SLUG.fullmatch(slug):
            raise PlaybookError(f"invalid slug {slug!r}: lowercase letters and digits, '-' or '_' between parts")
        numbers = [int(b.id.rsplit("-", 1)[1]) for b in self.bullets if b.slug == slug]
        number = max(numbers, default=0) + 1
        if number > 99999:
            raise PlaybookError(f"{self.source}: slug {slug!r} has no 5-digit id left")
        return f"{slug}-{number:05d}"

    def add(self, slug: str, text: str, helpful: int = 0, harmful: int = 0) -> tuple[Playbook, Bullet]:
        """A new playbook with a new bullet after the last bullet of its slug (at the end for a new slug)."""
        text = " ".join(text.split())
        if not text:
            raise PlaybookError("a bullet needs some text")
        bullet = Bullet(self.next_id(slug), slug, helpful, harmful, text)
        lines = list(self.lines)
        last = max((i for i, line in enumerate(lines) if isinstance(line, Bullet) and line.slug == slug), default=None)
        if last is None:
            lines.append(bullet)
        else:
            lines.insert(last + 1, bullet)
        return replace(self, lines=tuple(lines)), bullet


def parse_playbook(text: str, source: str = "<string>") -> Playbook:
    """Parse playbook text; a malformed line is a PlaybookError naming ``source:line``.

    Accepted lines: bullets, lines starting with ``#`` (headings, comments) and blank lines. Ids must be
    unique. LF and CRLF files both round-trip byte for byte through ``to_text``.
    """
    if not text:
        return Playbook(source=source)
    newline = "\r\n" if "\r\n" in text else "\n"
    final_newline = text.endswith("\n")
    raw_lines = text.split("\n")
    if final_newline:
        raw_lines.pop()
    lines: list[Bullet | str] = []
    seen: dict[str, int] = {}
    for lineno, raw in enumerate(raw_lines, start=1):
        where = f"{source}:{lineno}"
        if newline == "\r\n":
            if not raw.endswith("\r") and (lineno < len(raw_lines) or final_newline):
                raise PlaybookError(f"{where}: mixed line endings (the file uses CRLF, this line LF)")
            raw = raw.removesuffix("\r")
        if not raw.strip() or raw.lstrip().startswith("#"):
            lines.append(raw)
            continue
        match = _BULLET_LINE.fullmatch(raw)
        if not match:
            raise PlaybookError(f"{where}: not a bullet; expected '[slug-00001] helpful=N harmful=N :: text' "
                                f"(or a '#' heading, or a blank line), got {raw[:80]!r}")
        bullet_id = match["id"]
        if bullet_id in seen:
            raise PlaybookError(f"{where}: bullet id {bullet_id!r} already used on line {seen[bullet_id]}")
        seen[bullet_id] = lineno
        lines.append(Bullet(bullet_id, match["slug"], int(match["helpful"]), int(match["harmful"]), match["text"]))
    return Playbook(tuple(lines), newline, final_newline, source)


def load_playbook(path: str | Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Playbook:
    """Read and parse a playbook file (UTF-8, a BOM stripped); errors name the file and line.

    ``path`` is a file, or a bundled playbook by its dataset name ("planner/playbooks/lab.txt"). Only a
    regular file of at most ``max_bytes`` is read: a FIFO or a directory is refused without blocking."""
    path = _playbook_path(path)
    with open_regular(path, PlaybookError, max_bytes) as f:
        raw = read_capped(f, max_bytes)
    if len(raw) > max_bytes:
        raise PlaybookError(f"{path}: over the {max_bytes:,}-byte limit for one file")
    raw = raw.removeprefix(b"\xef\xbb\xbf")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise PlaybookError(f"{path}:{line}: not UTF-8") from None
    return parse_playbook(text, str(path))


def _playbook_path(path: str | Path) -> Path:
    """The path itself when it exists, else the bundled file of that name; a missing one stays as given
    (its error names the path the caller wrote)."""
    path = Path(path)
    if os.path.lexists(path):
        return path
    from ..data_files.bundled import resolve_dataset

    try:
        return resolve_dataset(path)
    except FileNotFoundError:
        return path


def apply_feedback(playbook: Playbook, feedback: Mapping[str, str] | Iterable[tuple[str, str]]) -> Playbook:
    """A new playbook with counters bumped: ``{"mat-00001": "helpful", "proc-00002": "harmful"}``.

    Tags are "helpful", "harmful" or "neutral" (no change); pairs may repeat an id to count twice. An id
    the playbook does not hold is an error, not a silent no-op: feedback about a hallucinated id is the
    caller's to filter (a TraceablePlanner prediction lists those in ``hallucinated_ids``).
    """
    pairs = list(feedback.items() if isinstance(feedback, Mapping) else feedback)
    known = set(playbook.ids)
    unknown = sorted({bullet_id for bullet_id, _ in pairs if bullet_id not in known})
    if unknown:
        raise PlaybookError(f"{playbook.source}: no bullet with id {', '.join(unknown)}")
    bad = sorted({str(tag) for _, tag in pairs if tag not in FEEDBACK_TAGS})
    if bad:
        raise PlaybookError(f"feedback tags must be one of {list(FEEDBACK_TAGS)}, got {bad}")
    helpful: dict[str, int] = {}
    harmful: dict[str, int] = {}
    for bullet_id, tag in pairs:
        if tag == "helpful":
            helpful[bullet_id] = helpful.get(bullet_id, 0) + 1
        elif tag == "harmful":
            harmful[bullet_id] = harmful.get(bullet_id, 0) + 1
    lines = tuple(replace(line, helpful=line.helpful + helpful.get(line.id, 0),
                          harmful=line.harmful + harmful.get(line.id, 0))
                  if isinstance(line, Bullet) and (line.id in helpful or line.id in harmful) else line
                  for line in playbook.lines)
    return replace(playbook, lines=lines)


# -- templates ---------------------------------------------------------------------------------------


def template_id(text: str) -> str:
    """``tpl-<first 8 hex of sha256(text)>``: from the text only, as a title often carries the retrieval rank."""
    return "tpl-" + hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:8]


@dataclass(frozen=True)
class Template:
    """A retrieved reference passage. ``id`` may be given ("" or None: derived from the text)."""

    id: str | None
    title: str
    text: str
    score: float | None = None

    def __post_init__(self) -> None:
        if not self.id:
            object.__setattr__(self, "id", template_id(self.text))

    def preview(self, chars: int = 120) -> str:
        """The first ``chars`` characters of the text on one line, for logs and result metadata."""
        flat = " ".join(self.text.split())
        return flat if len(flat) <= chars else flat[: chars - 1].rstrip() + "…"


def as_template(value: Template | Mapping[str, Any]) -> Template:
    """A Template from itself or a dict (``id``?, ``title``?, ``text`` or ``content``, ``score``?)."""
    if isinstance(value, Template):
        return value
    if not isinstance(value, Mapping):
        raise InvalidType(f"a template must be a Template or a mapping, got {type(value).__name__}")
    text = value.get("text", value.get("content"))
    if not isinstance(text, str) or not text.strip():
        raise InvalidValue("a template needs a non-empty 'text' (or 'content')")
    score = value.get("score")
    return Template(value.get("id") or None, str(value.get("title") or ""), text,
                    None if score is None else float(score))


# -- template retrieval through a vector store ---------------------------------------------------------


def index_templates(store: Any, embedder: Any, templates: Sequence[Template | Mapping[str, Any]],
                    batch_size: int = 256) -> int:
    """Embed ``title + text`` of each template and upsert it into ``store`` (a VectorStore) under its id,
    with metadata ``{"title", "text"}``; unchanged templates are skipped. Returns the rows written."""
    import numpy as np

    items = [as_template(t) for t in templates]
    written = 0
    for start in range(0, len(items), batch_size):
        batch = items[start : start + batch_size]
        vectors = np.asarray(embedder.embed([f"{t.title}\n{t.text}".strip() for t in batch]), dtype=np.float32)
        written += store.upsert([t.id for t in batch], vectors,
                                [{"title": t.title, "text": t.text} for t in batch]).written
    return written


class TemplateIndex:
    """Templates searched in a :class:`~..stores.vector_store.VectorStore`: ``index(requirements)`` returns the best
    ``k`` as Templates (``score`` = cosine), best first, so it is a TraceablePlanner ``retrieve_templates``.

    Rows are what :func:`index_templates` writes (metadata ``title`` and ``text``); ``embedder`` must be
    the one the store was built with.
    """

    def __init__(self, store: Any, embedder: Any, *, k: int = 5, min_score: float | None = None) -> None:
        from ..stores.stores import store_and_embedder

        self.store, self.embedder = store_and_embedder(store, embedder)
        self.k = k
        self.min_score = min_score

    def __call__(self, requirements: str) -> list[Template]:
        if self.k <= 0 or not requirements.strip():
            return []
        hits = self.store.search(self.embedder.embed([requirements]), k=self.k, min_score=self.min_score)[0]
        return [Template(h.id, str(h.metadata.get("title") or ""), str(h.metadata.get("text") or ""), h.score)
                for h in hits if str(h.metadata.get("text") or "").strip()]

    def describe(self) -> Any:
        return self.store.describe()

    def __deepcopy__(self, memo: dict) -> TemplateIndex:
        return self

    def __repr__(self) -> str:
        return f"TemplateIndex({self.store!r}, k={self.k})"
