"""The search agent's tools as an MCP server: ``pubmed_search`` over a local corpus, ``browse_webpage``
over local files.

Why MCP: the agent's runtime then calls local and external tools (a web search, a crawler) the same
way, and any MCP client can use these. Both tools return structured content ``{"total": int,
"results": [snippet, …]}`` (the JSON also arrives as text for clients without structured output); a
bad argument or an unreadable page is a tool error (``isError``) whose message says what to change.

``browse_webpage`` never touches the network: it reads ``file://`` URLs or paths resolved inside
``browse_root`` (symlinks included), so a model cannot make the server fetch a URL or read files
elsewhere. The check holds at open time, not only by name: the file is opened without following a final
symlink and without blocking, and the open descriptor must be a regular file with one link (a hard link
inside the root may name a file outside it) whose real path lies inside the root. HTML is reduced to its
readable text; a page is cut at :data:`MAX_PAGE_CHARS` characters.

With ``--programs commands,rag`` or ``--program rag=FILE`` the server also offers the retrieval programs
as tools (``tracerag.serving.mcp_tools``).
"""

from __future__ import annotations

import errno
import logging
import os
import re
import stat
from html.parser import HTMLParser
from pathlib import Path
from typing import Annotated
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

from ..errors import InvalidValue
from .pubmed_corpus import MAX_LIMIT, PubMedSearch, Snippet

__all__ = ["MAX_PAGE_BYTES", "MAX_PAGE_CHARS", "SERVER_NAME", "SearchResults", "build_server", "page_to_text",
           "read_local_page", "resolve_local_page"]

logger = logging.getLogger(__name__)

SERVER_NAME = "tracerag-tools"
MAX_PAGE_CHARS = 20_000  # about 5k tokens: a long article's body, without flooding the agent's context
MAX_PAGE_BYTES = 5_000_000  # read no more of a file than this (a page is never this large)
_SPACES = re.compile(r"\s+")
_HTML_SUFFIXES = (".html", ".htm", ".xhtml")
_SKIPPED = {"script", "style", "noscript", "template", "svg", "head", "iframe", "object"}
_BLOCKS = {"p", "div", "br", "li", "ul", "ol", "tr", "table", "section", "article", "header", "footer", "nav",
           "aside", "main", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "figure", "figcaption",
           "dt", "dd", "hr", "form", "title"}


class SearchResults(TypedDict):
    """What every tool returns: ``total`` results found, and the ones shown."""

    total: int
    results: list[Snippet]


class _TextExtractor(HTMLParser):
    """Readable text of an HTML page: script/style and the head dropped, one line per block element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title_parts: list[str] = []
        self._skip = 0
        self._pre = 0  # inside <pre>, line breaks are content
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in _SKIPPED:
            self._skip += 1
        elif tag == "pre":
            self._pre += 1
        if tag in _BLOCKS:
            self.parts.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag in _SKIPPED and self._skip:
            self._skip -= 1
        elif tag == "pre" and self._pre:
            self._pre -= 1
        if tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title_parts.append(data)
        elif not self._skip:
            self.parts.append(data if self._pre else _SPACES.sub(" ", data))  # source line breaks are spaces


def page_to_text(html: str) -> tuple[str | None, str]:
    """(title, text) of an HTML document: one line per block element, spaces collapsed, blank lines dropped."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).split("\n"))
    title = " ".join("".join(parser.title_parts).split()) or None
    return title, "\n".join(line for line in lines if line)


def resolve_local_page(url: str, root: Path) -> Path:
    """The file a ``file://`` URL or a path names, which must lie inside ``root``; ValueError otherwise."""
    url = url.strip()
    if not url:
        raise InvalidValue("url is empty; pass a file:// URL or a path inside the browse root")
    parsed = urlparse(url)
    scheme = parsed.scheme.lower()
    if scheme in ("http", "https"):
        raise InvalidValue(f"{url}: this server does not fetch from the network; only local files inside "
                           f"the browse root can be read")
    if scheme == "file":
        if parsed.netloc not in ("", "localhost"):
            raise InvalidValue(f"{url}: file URLs on another host ({parsed.netloc}) are not served")
        given = Path(url2pathname(unquote(parsed.path)))
    elif len(scheme) > 1:  # a one-letter "scheme" is a Windows drive
        raise InvalidValue(f"{url}: unsupported URL scheme {scheme!r}; use a file:// URL or a path")
    else:
        given = Path(url)
    root = root.resolve()
    try:
        target = (given if given.is_absolute() else root / given).resolve()
    except OSError as exc:  # the path changed under us (a link swapped in and out): refuse, never crash
        raise InvalidValue(f"{url}: cannot be resolved inside the browse root ({exc.strerror or exc})") from None
    if not target.is_relative_to(root):
        raise InvalidValue(f"{url}: outside the browse root {root}; only files inside it can be read")
    if not target.is_file():
        raise InvalidValue(f"{url}: no such file inside the browse root")
    return target


def _descriptor_path(fd: int) -> Path | None:
    """The path the kernel holds for an open descriptor (Linux /proc), or None where it is not available."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return None


def read_local_page(url: str, root: Path) -> tuple[Path, bytes]:
    """(path, up to MAX_PAGE_BYTES bytes) of the file ``url`` names inside ``root``; ValueError otherwise.

    The checks are made on the open descriptor, so a name swapped after :func:`resolve_local_page`
    cannot redirect the read: a final symlink is not followed (O_NOFOLLOW), a FIFO does not block
    (O_NONBLOCK), and the file must be regular, have one link, and really lie inside the root."""
    root = root.resolve()
    path = resolve_local_page(url, root)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InvalidValue(f"{url}: became a symbolic link while being opened; refused") from None
        raise InvalidValue(f"{url}: cannot be opened ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InvalidValue(f"{url}: not a regular file inside the browse root")
        if info.st_nlink > 1:
            raise InvalidValue(f"{url}: has {info.st_nlink} hard links; refused, as another of its names may lie "
                               f"outside the browse root")
        real = _descriptor_path(fd)
        if real is None:  # no /proc: the resolved name must still be this very file
            real = Path(os.path.realpath(path))
            now = os.stat(real)
            if (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino):
                raise InvalidValue(f"{url}: changed while being opened; refused")
        if not real.is_relative_to(root):
            raise InvalidValue(f"{url}: outside the browse root {root}; only files inside it can be read")
        with os.fdopen(fd, "rb") as f:
            fd = -1
            raw = f.read(MAX_PAGE_BYTES)
    finally:
        if fd >= 0:
            os.close(fd)
    return path, raw


def _read_page(url: str, root: Path) -> SearchResults:
    path, raw = read_local_page(url, root)
    text = raw.decode("utf-8", errors="replace")
    title: str | None = None
    if path.suffix.lower() in _HTML_SUFFIXES or re.match(r"\s*(<!doctype html|<html)", text[:512], re.I):
        title, text = page_to_text(text)
    else:
        text = text.strip()
    if len(text) > MAX_PAGE_CHARS:
        text = text[:MAX_PAGE_CHARS] + f"\n[truncated: showing {MAX_PAGE_CHARS} of {len(text)} characters]"
    return {"total": 1, "results": [{"id": url, "title": title or path.name, "text": text}]}


def build_server(search: PubMedSearch, browse_root: Path | None = None) -> MCPServer:
    """An MCP server named ``tracerag-tools`` with ``pubmed_search`` and, when ``browse_root`` is given,
    ``browse_webpage`` (without a root there is nothing it may read, so it is not offered). The programs
    join it as tools through ``tracerag.serving.mcp_tools``."""
    server = MCPServer(SERVER_NAME, instructions="Search biomedical abstracts with pubmed_search; read a local "
                       "page with browse_webpage when it is offered.", log_level="WARNING")
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(annotations=read_only)
    def pubmed_search(
        query: Annotated[str, Field(description="keywords or a question")],
        limit: Annotated[int, Field(description=f"results to return, 1 to {MAX_LIMIT}")] = 5,
        offset: Annotated[int, Field(description="results to skip, for the next page")] = 0,
    ) -> SearchResults:
        """Search PubMed-style abstracts; one result per article (id = PMID) with its abstract, year and
        MeSH keywords."""
        try:
            total, snippets = search.search(query, limit=limit, offset=offset)
        except ValueError as e:
            raise ToolError(str(e)) from None
        return {"total": total, "results": snippets}

    if browse_root is not None:
        root = Path(browse_root).resolve()
        if not root.is_dir():
            raise InvalidValue(f"browse root {root} is not a directory")

        @server.tool(annotations=read_only)
        def browse_webpage(
            url: Annotated[str, Field(description="a file:// URL or a path inside the browse root")],
        ) -> SearchResults:
            """Read a local web page or text file; returns its title and readable text."""
            try:
                return _read_page(url, root)
            except (ValueError, OSError) as e:
                raise ToolError(str(e)) from None

    return server
