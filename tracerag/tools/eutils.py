"""Real PubMed search through NCBI E-utilities, for users with internet: the same ``(total, snippets)``
as the offline corpus, so the agent cannot tell which one answered.

One search is two requests: ``esearch`` (JSON; the PMIDs of a page, by relevance, and the hit count)
then ``efetch`` (XML; title, authors, journal, year and abstract of those PMIDs). NCBI allows 3
requests a second without an API key and 10 with one, so requests are spaced accordingly; a 429 or
5xx answer (and a dropped connection) is retried with exponential backoff, honouring ``Retry-After``
(up to 30 s). Any other non-2xx answer is an error naming the endpoint and the status (never the API
key), and so is a search past its total deadline or an answer past the size cap: the requests go
through the project's one bounded HTTP call, :func:`tracerag.http_json.request`.

:class:`EUtilsToolSource` serves it as the ``pubmed_search`` tool of a
:class:`~tracerag.tools.mcp_client.Toolbox`, in-process (no MCP server needed).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import xml.etree.ElementTree as ET
from typing import Any

from ..errors import InvalidValue, TraceragError
from ..http_json import MAX_BYTES, LoopClients, arequest, bounded_async_client, bounded_client, request
from .pubmed_corpus import MAX_LIMIT, Snippet, check_search_arguments
from .tool_results import ToolResult, parameter_types

__all__ = ["DEFAULT_BASE_URL", "EUtilsError", "EUtilsToolSource", "PubMedEUtils", "parse_pubmed_xml"]

DEFAULT_BASE_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"


class EUtilsError(TraceragError, RuntimeError):
    """E-utilities refused or broke: the message names the endpoint and the HTTP status or cause."""


def _text(element: ET.Element | None) -> str:
    """All text inside an element (inline markup such as <i> or <sup> kept as its text), spaces collapsed."""
    return " ".join("".join(element.itertext()).split()) if element is not None else ""


def _year(article: ET.Element) -> int | None:
    for path in (".//Journal/JournalIssue/PubDate/Year", ".//Journal/JournalIssue/PubDate/MedlineDate",
                 ".//ArticleDate/Year", ".//PubmedData/History/PubMedPubDate/Year"):
        value = _text(article.find(path))
        if value[:4].isdigit():
            return int(value[:4])
    return None


def _authors(article: ET.Element) -> str:
    """"Smith J, Doe AB, Roe C et al.": the first three authors, as PubMed lists them."""
    names = []
    for author in article.findall(".//Article/AuthorList/Author"):
        last, initials = _text(author.find("LastName")), _text(author.find("Initials"))
        name = f"{last} {initials}".strip() if last else _text(author.find("CollectiveName"))
        if name:
            names.append(name)
    return ", ".join(names[:3]) + (" et al." if len(names) > 3 else "")


def _abstract(article: ET.Element) -> str:
    parts = []
    for section in article.findall(".//Article/Abstract/AbstractText"):
        text = _text(section)
        label = section.get("Label")
        if text:
            parts.append(f"{label}: {text}" if label else text)
    return " ".join(parts)


def parse_pubmed_xml(xml: str | bytes) -> dict[str, Snippet]:
    """{PMID: snippet} for every ``PubmedArticle`` of an efetch answer (books and records without a PMID
    are skipped). Raises EUtilsError when the XML does not parse."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as e:
        raise EUtilsError(f"efetch answered with XML that does not parse ({e})") from None
    out: dict[str, Snippet] = {}
    for article in root.iter("PubmedArticle"):
        pmid = _text(article.find("MedlineCitation/PMID"))
        if not pmid:
            continue
        snippet: Snippet = {"id": pmid, "text": _abstract(article)}
        optional: dict[str, Any] = {"title": _text(article.find(".//Article/ArticleTitle")),
                                    "authors": _authors(article), "year": _year(article),
                                    "journal": _text(article.find(".//Article/Journal/Title")),
                                    "keywords": [_text(d) for d in article.findall(".//MeshHeading/DescriptorName")]}
        snippet.update({k: v for k, v in optional.items() if v})  # type: ignore[typeddict-item]
        out[pmid] = snippet
    return out


class PubMedEUtils:
    """A small E-utilities client: :meth:`search` gives ``(total, snippets)`` like the offline corpus.

    ``min_interval`` (seconds between requests) defaults to NCBI's limit: 1/3 s, or 1/10 s with an
    API key. ``retries`` is how many times a 429/5xx or a dropped connection is retried. ``timeout``
    bounds each read; ``deadline`` (default ``timeout * (retries + 1)``) bounds a whole :meth:`search`
    (both requests, retries and waits included) and ``max_bytes`` each decoded answer.
    """

    def __init__(self, base_url: str = DEFAULT_BASE_URL, api_key: str | None = None, *, timeout: float = 20.0,
                 retries: int = 3, backoff: float = 1.0, min_interval: float | None = None,
                 tool: str = "tracerag", email: str | None = None, deadline: float | None = None,
                 max_bytes: int = MAX_BYTES) -> None:
        self.base_url = base_url.rstrip("/")
        self.deadline = timeout * (retries + 1) if deadline is None else deadline
        self.max_bytes = max_bytes
        if self.deadline <= 0 or max_bytes <= 0:
            raise InvalidValue(f"deadline and max_bytes must be positive, got {self.deadline}, {max_bytes}")
        self.api_key = api_key
        self.retries = retries
        self.backoff = backoff
        self.min_interval = (0.1 if api_key else 0.34) if min_interval is None else min_interval
        identity = {"tool": tool, "email": email, "api_key": api_key}  # NCBI asks callers to say who they are
        self._identity = {k: v for k, v in identity.items() if v}
        headers = {"User-Agent": f"{tool} (PubMed search tool)"}
        self._client = bounded_client(timeout, headers)
        self._aclients = LoopClients(lambda: bounded_async_client(timeout, headers))
        self._lock = threading.Lock()
        self._last_request = 0.0

    def search(self, query: str, limit: int = 5, offset: int = 0) -> tuple[int, list[Snippet]]:
        """(total hits, snippets of the page ``offset`` … ``offset + limit - 1``), most relevant first."""
        check_search_arguments(query, limit, offset)
        started = time.monotonic()
        total, ids = self._found(self._get("esearch.fcgi", self._esearch(query, limit, offset), started))
        if not ids:
            return total, []
        return total, self._snippets(ids, self._get("efetch.fcgi", self._efetch(ids), started))

    async def asearch(self, query: str, limit: int = 5, offset: int = 0) -> tuple[int, list[Snippet]]:
        """:meth:`search` on an event loop: the same requests, spacing, retries, deadline and errors;
        waiting for NCBI (or for the next request slot) holds no thread."""
        check_search_arguments(query, limit, offset)
        started = time.monotonic()
        total, ids = self._found(await self._aget("esearch.fcgi", self._esearch(query, limit, offset), started))
        if not ids:
            return total, []
        return total, self._snippets(ids, await self._aget("efetch.fcgi", self._efetch(ids), started))

    @staticmethod
    def _esearch(query: str, limit: int, offset: int) -> dict[str, Any]:
        return {"db": "pubmed", "term": " ".join(query.split()), "retmode": "json", "retmax": limit,
                "retstart": offset, "sort": "relevance"}

    @staticmethod
    def _efetch(ids: list[str]) -> dict[str, Any]:
        return {"db": "pubmed", "id": ",".join(ids), "retmode": "xml"}

    def _found(self, body: bytes) -> tuple[int, list[str]]:
        """(total, PMIDs of the page) from an esearch answer."""
        try:
            result = json.loads(body)["esearchresult"]
            total, ids = int(result.get("count", 0)), [str(i) for i in result.get("idlist", [])]
        except (ValueError, KeyError, TypeError) as e:
            raise EUtilsError(f"{self.base_url}/esearch.fcgi answered with unexpected JSON ({e!r})") from None
        if "ERROR" in result and not ids:
            raise EUtilsError(f"{self.base_url}/esearch.fcgi: {result['ERROR']}")
        return total, ids

    @staticmethod
    def _snippets(ids: list[str], body: bytes) -> list[Snippet]:
        articles = parse_pubmed_xml(body)
        return [articles[pmid] for pmid in ids if pmid in articles]

    def _get(self, endpoint: str, params: dict[str, Any], started: float) -> bytes:
        """The body of one E-utilities answer, within the deadline of the search ``started`` then."""
        return request(self._client, "GET", f"{self.base_url}/{endpoint}", params={**params, **self._identity},
                       error=EUtilsError, deadline=self.deadline, started=started, max_bytes=self.max_bytes,
                       max_retries=self.retries, backoff=self.backoff, before=self._wait_turn)

    async def _aget(self, endpoint: str, params: dict[str, Any], started: float) -> bytes:
        return await arequest(self._aclients.get(), "GET", f"{self.base_url}/{endpoint}",
                              params={**params, **self._identity}, error=EUtilsError, deadline=self.deadline,
                              started=started, max_bytes=self.max_bytes, max_retries=self.retries,
                              backoff=self.backoff, before=self._await_turn)

    def _next_turn(self) -> float:
        """Seconds until this caller's request slot, ``min_interval`` after the last one (reserved now,
        so sync and async callers share one spacing without holding a lock while they wait)."""
        with self._lock:
            now = time.monotonic()
            turn = max(now, self._last_request + self.min_interval)
            self._last_request = turn
            return turn - now

    def _wait_turn(self) -> None:
        time.sleep(self._next_turn())

    async def _await_turn(self) -> None:
        await asyncio.sleep(self._next_turn())

    def close(self) -> None:
        self._client.close()
        self._aclients.clear()

    def __enter__(self) -> PubMedEUtils:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PubMedEUtils({self.base_url!r}, api_key={'set' if self.api_key else None})"


_SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "PubMed query: keywords, a question, or field-tagged terms"},
        "limit": {"type": "integer", "default": 5, "description": f"results to return, 1 to {MAX_LIMIT}"},
        "offset": {"type": "integer", "default": 0, "description": "results to skip, for the next page"},
    },
    "required": ["query"],
}


class EUtilsToolSource:
    """``pubmed_search`` answered by :class:`PubMedEUtils`, as a Toolbox source (same API as MCPToolSource)."""

    name = "pubmed_search"

    def __init__(self, client: PubMedEUtils | None = None) -> None:
        self.client = client or PubMedEUtils()

    def input_schemas(self) -> dict[str, dict[str, Any]]:
        return {self.name: _SEARCH_SCHEMA}

    def tool_schemas(self) -> dict[str, dict[str, type]]:
        return {self.name: parameter_types(_SEARCH_SCHEMA)}

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Never raises: a bad argument, an HTTP failure or unparsable answer is ``ToolResult(error=…)``."""
        refused = self._refused(name, arguments)
        if refused is not None:
            return refused
        try:
            total, snippets = self.client.search(*self._search_arguments(arguments))
        except Exception as e:
            return self._failed(name, e)
        return ToolResult(name, [dict(s) for s in snippets], total)

    async def acall(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """:meth:`call` awaited on an event loop (``PubMedEUtils.asearch``): no thread waits for NCBI."""
        refused = self._refused(name, arguments)
        if refused is not None:
            return refused
        try:
            total, snippets = await self.client.asearch(*self._search_arguments(arguments))
        except Exception as e:
            return self._failed(name, e)
        return ToolResult(name, [dict(s) for s in snippets], total)

    def _refused(self, name: str, arguments: dict[str, Any]) -> ToolResult | None:
        if name != self.name:
            return ToolResult(name, error=f"unknown tool {name!r}; this source offers {self.name}")
        unknown = set(arguments) - set(_SEARCH_SCHEMA["properties"])
        if unknown:
            return ToolResult(name, error=f"{name} has no parameter {sorted(unknown)[0]!r}")
        return None

    @staticmethod
    def _search_arguments(arguments: dict[str, Any]) -> tuple[Any, Any, Any]:
        return arguments.get("query", ""), arguments.get("limit", 5), arguments.get("offset", 0)

    @staticmethod
    def _failed(name: str, e: Exception) -> ToolResult:
        if isinstance(e, ValueError | EUtilsError):
            return ToolResult(name, error=str(e))
        return ToolResult(name, error=f"{name} failed: {type(e).__name__}: {e}")  # never let the agent loop die

    def close(self) -> None:
        self.client.close()

    def __repr__(self) -> str:
        return f"EUtilsToolSource({self.client!r})"
