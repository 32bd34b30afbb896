"""PubMedEUtils against a scripted E-utilities service on 127.0.0.1 (esearch JSON, efetch XML).

Like tests/json_service.py, the service answers scripted failures first, in order, and records every
request; E-utilities is GET with query parameters, hence its own small handler here.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlparse

import pytest
from json_service import on_localhost
from overlap import Together

from tracerag.tools.eutils import EUtilsError, EUtilsToolSource, PubMedEUtils, parse_pubmed_xml
from tracerag.tools.mcp_client import Toolbox
from tracerag.tools.protocol_writing import ToolCall

ARTICLES = {
    "111": """<PubmedArticle><MedlineCitation Status="MEDLINE"><PMID Version="1">111</PMID><Article>
      <Journal><JournalIssue><PubDate><MedlineDate>1998 Dec-1999 Jan</MedlineDate></PubDate></JournalIssue>
      <Title>Journal of Tests</Title></Journal>
      <ArticleTitle>Statins and <i>LDL</i> cholesterol.</ArticleTitle>
      <Abstract><AbstractText Label="BACKGROUND">Statins lower LDL.</AbstractText>
      <AbstractText Label="RESULTS">LDL fell by 30%<sup>a</sup>.</AbstractText></Abstract>
      <AuthorList><Author><LastName>Smith</LastName><ForeName>Jane</ForeName><Initials>J</Initials></Author>
      <Author><LastName>Doe</LastName><Initials>AB</Initials></Author>
      <Author><CollectiveName>The Statin Group</CollectiveName></Author>
      <Author><LastName>Roe</LastName><Initials>C</Initials></Author></AuthorList></Article>
      <MeshHeadingList><MeshHeading><DescriptorName UI="D1">Cholesterol, LDL</DescriptorName></MeshHeading>
      </MeshHeadingList></MedlineCitation></PubmedArticle>""",
    "222": """<PubmedArticle><MedlineCitation><PMID Version="1">222</PMID><Article>
      <Journal><JournalIssue><PubDate><Year>2021</Year><Month>Mar</Month></PubDate></JournalIssue>
      <Title>Heart</Title></Journal><ArticleTitle>A short note.</ArticleTitle>
      <Abstract><AbstractText>Plain abstract text.</AbstractText></Abstract>
      <AuthorList><Author><LastName>Lee</LastName><Initials>K</Initials></Author></AuthorList>
      </Article></MedlineCitation></PubmedArticle>""",
    "333": """<PubmedArticle><MedlineCitation><PMID Version="1">333</PMID><Article>
      <Journal><JournalIssue><PubDate><Season>Spring</Season></PubDate></JournalIssue></Journal>
      <ArticleTitle>No abstract, no authors.</ArticleTitle></Article></MedlineCitation></PubmedArticle>""",
}
BOOK = "<PubmedBookArticle><BookDocument><PMID>999</PMID></BookDocument></PubmedBookArticle>"


class EUtilsService:
    def __init__(self):
        self.requests: list[dict] = []  # {"path", **query parameters}
        self.failures: list[tuple[int, dict, str]] = []  # (status, headers, body), answered first
        self.ranking = ["222", "111", "333"]
        self.efetch_body: str | None = None
        self.base_url = ""
        self.latency = 0.0  # seconds before each answer
        self.together: dict[str, Together] = {}  # path ending -> its first requests held until all are in


@contextmanager
def serving(state: EUtilsService) -> Iterator[EUtilsService]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, status, body, content_type="application/json", headers=()):
            data = body.encode()
            self.send_response(status)
            for key, value in dict(headers).items():
                self.send_header(key, value)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            time.sleep(state.latency)
            url = urlparse(self.path)
            for ending, gate in state.together.items():
                if url.path.endswith(ending):
                    gate.arrive()
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            state.requests.append({"path": url.path, **query})
            if state.failures:
                status, headers, body = state.failures.pop(0)
                return self.answer(status, body, "text/plain", headers)
            if url.path.endswith("/esearch.fcgi"):
                start, count = int(query["retstart"]), int(query["retmax"])
                result = {"count": str(len(state.ranking)), "idlist": state.ranking[start : start + count]}
                return self.answer(200, json.dumps({"header": {}, "esearchresult": result}))
            if url.path.endswith("/efetch.fcgi"):
                ids = query["id"].split(",")
                body = state.efetch_body or ("<PubmedArticleSet>" + BOOK + "".join(ARTICLES[i] for i in
                                                                                   sorted(ids)) + "</PubmedArticleSet>")
                return self.answer(200, body, "text/xml")
            self.answer(404, "not found", "text/plain")

    with on_localhost(Handler) as address:
        state.base_url = f"{address}/entrez/eutils"
        yield state


@pytest.fixture
def service():
    with serving(EUtilsService()) as state:
        yield state


@pytest.fixture
def client(service):
    with PubMedEUtils(service.base_url, api_key="SECRET-KEY", retries=2, backoff=0.01, min_interval=0) as c:
        yield c


def test_search_parses_esearch_then_efetch_in_relevance_order(client, service):
    total, snippets = client.search("statins  LDL", limit=2)
    assert total == 3
    assert [s["id"] for s in snippets] == ["222", "111"]  # esearch's order, not efetch's
    assert snippets[1] == {
        "id": "111", "text": "BACKGROUND: Statins lower LDL. RESULTS: LDL fell by 30%a.",
        "title": "Statins and LDL cholesterol.", "authors": "Smith J, Doe AB, The Statin Group et al.",
        "year": 1998, "journal": "Journal of Tests", "keywords": ["Cholesterol, LDL"]}
    assert snippets[0]["authors"] == "Lee K" and snippets[0]["year"] == 2021
    search, fetch = service.requests
    assert search["path"] == "/entrez/eutils/esearch.fcgi"
    assert (search["term"], search["retmax"], search["retstart"], search["db"]) == ("statins LDL", "2", "0", "pubmed")
    assert search["api_key"] == "SECRET-KEY" and search["tool"] == "tracerag"
    assert fetch["id"] == "222,111" and fetch["retmode"] == "xml"


def test_offset_pages_and_a_record_without_abstract(client, service):
    total, snippets = client.search("x", limit=5, offset=2)
    assert total == 3 and snippets == [{"id": "333", "text": "", "title": "No abstract, no authors."}]
    assert service.requests[0]["retstart"] == "2"
    assert client.search("x", limit=5, offset=10) == (3, [])
    assert len(service.requests) == 3  # an empty page fetches nothing


def test_retries_429_honouring_retry_after(client, service):
    service.failures = [(429, {"Retry-After": "0"}, "slow down"), (503, {}, "busy")]
    total, snippets = client.search("x", limit=1)
    assert [s["id"] for s in snippets] == ["222"]
    assert [r["path"].rsplit("/", 1)[1] for r in service.requests] == ["esearch.fcgi"] * 3 + ["efetch.fcgi"]


def test_gives_up_after_the_retries_naming_the_url(client, service):
    service.failures = [(500, {}, "boom")] * 3
    with pytest.raises(EUtilsError) as info:
        client.search("x")
    assert str(info.value) == f"GET {service.base_url}/esearch.fcgi answered HTTP 500 after 3 attempt(s): 'boom'"
    assert len(service.requests) == 3


def test_a_404_is_an_error_at_once_without_the_api_key(client, service):
    service.failures = [(404, {}, "no such endpoint")]
    message = r"/esearch.fcgi answered HTTP 404 after 1 attempt\(s\): 'no such endpoint'$"
    with pytest.raises(EUtilsError, match=message) as info:
        client.search("x")
    assert "SECRET-KEY" not in str(info.value)
    assert len(service.requests) == 1


def test_broken_xml_is_an_error(client, service):
    service.efetch_body = "<PubmedArticleSet><PubmedArticle>"
    with pytest.raises(EUtilsError, match="XML that does not parse"):
        client.search("x")


def test_an_unreachable_host_is_retried_then_an_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    with PubMedEUtils(f"http://127.0.0.1:{port}", retries=1, backoff=0.01, min_interval=0) as client, \
            pytest.raises(EUtilsError, match=r"esearch.fcgi failed after 2 attempt\(s\): ConnectError"):
        client.search("x")


def test_requests_are_spaced_by_min_interval(service):
    with PubMedEUtils(service.base_url, min_interval=0.15) as client:
        started = time.perf_counter()
        client.search("x", limit=1)  # two requests
        client.search("x", limit=1)  # two more
    assert time.perf_counter() - started >= 0.45


def test_arguments_are_checked_before_any_request(client, service):
    with pytest.raises(ValueError, match="limit must be an integer from 1 to 50"):
        client.search("x", limit=0)
    assert service.requests == []


def test_parse_skips_books():
    assert list(parse_pubmed_xml("<PubmedArticleSet>" + BOOK + ARTICLES["222"] + "</PubmedArticleSet>")) == ["222"]


def test_tool_source_never_raises(client, service):
    source = EUtilsToolSource(client)
    assert source.tool_schemas() == {"pubmed_search": {"limit": int, "offset": int}}
    result = source.call("pubmed_search", {"query": "statins", "limit": 1})
    assert result.ids == ["222"] and result.total == 3 and result.error is None
    assert "limit must be" in source.call("pubmed_search", {"query": "statins", "limit": 99}).error
    assert "no parameter 'sort'" in source.call("pubmed_search", {"query": "statins", "sort": "date"}).error
    assert "unknown tool" in source.call("google_search", {"query": "statins"}).error
    service.failures = [(404, {}, "gone")]
    assert "answered HTTP 404" in source.call("pubmed_search", {"query": "statins"}).error


def test_toolbox_serves_pubmed_search_from_eutils(client):
    box = Toolbox([EUtilsToolSource(client)])
    result = box.call(ToolCall("pubmed_search", {"limit": "2"}, "statins"))
    assert result.ids == ["222", "111"]
    assert "Found 3 results. Showing top 2:" in result.to_output()


def test_open_with_eutils_and_no_browse_root_starts_no_local_server():
    with Toolbox.open(pubmed="eutils") as box:  # no request is made until a call
        assert box.names == ["pubmed_search"]
        assert box.schemas() == {"pubmed_search": {"limit": int, "offset": int}}


# -- on an event loop: asearch / acall ---------------------------------------------------------------


def test_asearch_gives_the_answers_requests_and_errors_of_search(client, service):
    for args in (("statins  LDL", 2), ("x", 5, 2), ("x", 5, 10)):
        service.requests = []
        awaited = asyncio.run(client.asearch(*args))
        sent = service.requests
        service.requests = []
        assert awaited == client.search(*args) and sent == service.requests
    service.failures = [(429, {"Retry-After": "0"}, "slow down"), (500, {}, "boom"), (500, {}, "boom")]
    with pytest.raises(EUtilsError) as info:
        asyncio.run(client.asearch("x"))
    assert str(info.value) == f"GET {service.base_url}/esearch.fcgi answered HTTP 500 after 3 attempt(s): 'boom'"
    with pytest.raises(ValueError, match="limit must be"):
        asyncio.run(client.asearch("x", limit=0))


def test_async_requests_share_the_spacing_of_sync_ones(service):
    with PubMedEUtils(service.base_url, min_interval=0.15) as client:
        started = time.perf_counter()

        async def both():
            await asyncio.gather(client.asearch("x", limit=1), asyncio.to_thread(client.search, "x", limit=1))

        asyncio.run(both())  # four requests, one slot each
    assert time.perf_counter() - started >= 0.45


def test_many_acalls_wait_together_without_a_thread_each(service):
    """16 tool calls at once: the 16 esearch requests are in flight together, then the 16 efetch ones (the
    service answers none of each until all 16 are in), where a worker thread per call would queue them behind
    the pool."""
    source = EUtilsToolSource(PubMedEUtils(service.base_url, min_interval=0))
    expected = source.call("pubmed_search", {"query": "statins", "limit": 2})
    service.together = {"/esearch.fcgi": Together(16), "/efetch.fcgi": Together(16)}

    async def burst():
        results = await asyncio.gather(*(source.acall("pubmed_search", {"query": "statins", "limit": 2})
                                         for _ in range(16)))
        threads = [t.name for t in threading.enumerate() if t.name.startswith("asyncio_")]
        return results, threads

    results, threads = asyncio.run(burst())
    assert all(r.ids == expected.ids and r.total == expected.total for r in results)
    assert threads == [] and all(gate.met for gate in service.together.values())
    box = Toolbox([source])
    result = asyncio.run(box.acall(ToolCall("pubmed_search", {"limit": "2"}, "statins")))
    assert result.ids == ["222", "111"]
    assert "unknown tool" in asyncio.run(source.acall("google_search", {"query": "statins"})).error
    service.latency, service.failures = 0.0, [(404, {}, "gone")]
    assert "answered HTTP 404" in asyncio.run(source.acall("pubmed_search", {"query": "statins"})).error
    source.close()
