"""The tool server end to end: the real `python -m tracerag.tools` over stdio and streamable HTTP.

One stdio server for the module (lexical embedder, so it starts in a few seconds); the HTTP test
starts its own on a free 127.0.0.1 port.
"""

from __future__ import annotations

import os

import pytest
from http_tool_server import http_tool_server
from overlap import HANG_S

from tracerag.datasets.pubmedqa import load_pubmedqa_questions
from tracerag.tools.mcp_client import MCPToolSource, Toolbox, ToolSourceError
from tracerag.tools.reply_parsing import parse_reply
from tracerag.tools.server import MAX_PAGE_CHARS, page_to_text, read_local_page, resolve_local_page

PAGE = """<!DOCTYPE html><html><head><title>Statins &amp; the heart</title>
<style>body { color: red; }</style><script>var tracking = "secret-script";</script></head>
<body><nav>Home</nav><h1>Statins</h1><p>Statins lower   LDL
cholesterol.</p><ul><li>first point</li><li>second point</li></ul><noscript>enable js</noscript>
<p>Dose &lt;20 mg<br>daily.</p></body></html>"""


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    """The tools tests' shared cache: the bundled corpus is ingested into it once per session."""
    path = tmp_path_factory.getbasetemp() / "tools-cache"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRACERAG_CACHE_DIR", str(path))  # the server inherits this environment
        yield path


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    base = tmp_path_factory.mktemp("site")
    root = base / "root"
    (root / "docs").mkdir(parents=True)
    (root / "page.html").write_text(PAGE, encoding="utf-8")
    (root / "docs" / "notes.txt").write_text("  plain notes\n", encoding="utf-8")
    (root / "long.txt").write_text("x" * (MAX_PAGE_CHARS + 100), encoding="utf-8")
    (base / "secret.txt").write_text("do not read", encoding="utf-8")
    (root / "escape.txt").symlink_to(base / "secret.txt")
    os.link(base / "secret.txt", root / "hard.txt")  # a hard link inside the root to a file outside it
    return root


@pytest.fixture(scope="module")
def tools(cache_dir, site):
    with MCPToolSource.local(embedder="lexical", browse_root=site, timeout=20) as source:
        yield source


def test_schemas_leave_out_the_main_argument(tools):
    assert tools.tool_schemas() == {"pubmed_search": {"limit": int, "offset": int}, "browse_webpage": {}}


def test_search_finds_the_question_own_abstract(tools):
    questions = load_pubmedqa_questions("pubmedqa", "dev")[:5]
    for q in questions:
        result = tools.call("pubmed_search", {"query": q.question})
        assert result.error is None
        assert q.pmid in result.ids, q.question
        assert len(result.ids) == 5 and result.total >= 5
    top = result.snippets[0]
    assert top["text"] and top["keywords"] and isinstance(top.get("year", 0), int)  # 58 abstracts have no year
    assert f'<snippet id="{top["id"]}">' in result.to_output()
    assert result.to_output().startswith(f"<tool_output>\nFound {result.total} results. Showing top 5:")


def test_limit_and_offset_page_through_results(tools):
    query = "vitamin D deficiency in children"
    four = tools.call("pubmed_search", {"query": query, "limit": 4})
    first = tools.call("pubmed_search", {"query": query, "limit": 2})
    second = tools.call("pubmed_search", {"query": query, "limit": 2, "offset": 2})
    assert first.ids + second.ids == four.ids
    assert first.total == second.total == four.total


@pytest.mark.parametrize(("arguments", "message"), [
    ({"limit": 0}, "limit must be an integer from 1 to 50, got 0"),
    ({"limit": 500}, "limit must be an integer from 1 to 50, got 500"),
    ({"offset": -3}, "offset must be an integer >= 0, got -3"),
    ({"limit": "many"}, "limit"),
])
def test_bad_arguments_are_tool_errors(tools, arguments, message):
    result = tools.call("pubmed_search", {"query": "asthma", **arguments})
    assert result.snippets == [] and message in result.error
    assert result.to_output().startswith("<tool_output>Error: ")


def test_browse_reads_html_as_text(tools, site):
    url = (site / "page.html").as_uri()
    result = tools.call("browse_webpage", {"url": url})
    assert result.error is None and result.total == 1 and result.ids == [url]
    page = result.snippets[0]
    assert page["title"] == "Statins & the heart"
    assert "Statins lower LDL cholesterol." in page["text"] and "Dose <20 mg\ndaily." in page["text"]
    assert "first point\nsecond point" in page["text"]
    assert "secret-script" not in page["text"] and "color: red" not in page["text"] and "enable js" not in page["text"]


def test_browse_reads_relative_paths_and_truncates(tools):
    notes = tools.call("browse_webpage", {"url": "docs/notes.txt"})
    assert notes.snippets[0] == {"id": "docs/notes.txt", "title": "notes.txt", "text": "plain notes"}
    long = tools.call("browse_webpage", {"url": "long.txt"}).snippets[0]["text"]
    assert long.startswith("x" * MAX_PAGE_CHARS) and long.endswith(f"[truncated: showing {MAX_PAGE_CHARS} of "
                                                                   f"{MAX_PAGE_CHARS + 100} characters]")


@pytest.mark.parametrize(("url", "message"), [
    ("../secret.txt", "outside the browse root"),
    ("escape.txt", "outside the browse root"),  # a symlink pointing out
    ("hard.txt", "has 2 hard links; refused"),  # a hard link to a file outside
    ("https://example.org/", "does not fetch from the network"),
    ("ftp://example.org/x", "unsupported URL scheme 'ftp'"),
    ("file://otherhost/etc/passwd", "another host"),
    ("missing.html", "no such file"),
    ("docs", "no such file"),
])
def test_browse_refuses_what_is_not_a_file_inside_the_root(tools, url, message):
    result = tools.call("browse_webpage", {"url": url})
    assert result.snippets == [] and message in result.error


def test_browse_refuses_an_absolute_path_outside_the_root(tools, site):
    result = tools.call("browse_webpage", {"url": str(site.parent / "secret.txt")})
    assert "outside the browse root" in result.error
    assert "do not read" not in result.to_output()


def test_a_model_reply_runs_end_to_end_through_a_toolbox(tools, site):
    box = Toolbox([tools])  # not closed here: the module's server is shared
    q = load_pubmedqa_questions("pubmedqa", "dev")[1]
    reply = parse_reply(f'<think>look it up</think><call_tool name="pubmed_search" limit="2">{q.question}',
                        box.schemas())
    result = box.call(reply.call)
    assert reply.call.params == {"limit": 2} and q.pmid in result.ids and len(result.ids) == 2
    page = box.call(parse_reply('<call_tool name="browse_webpage">page.html</call_tool>').call)
    assert page.snippets[0]["title"] == "Statins & the heart"


def test_a_server_that_cannot_start_raises_when_opened(cache_dir, tmp_path):
    # its exit ends the wait: not "no MCP handshake within 30s", the (hang guard's) connect timeout
    with pytest.raises(ToolSourceError, match="could not open the MCP connection"):
        MCPToolSource.local(bank=tmp_path / "no-bank", embedder="lexical", connect_timeout=HANG_S)


def test_streamable_http_transport(cache_dir, tmp_path):
    with http_tool_server(["--embedder", "lexical"], tmp_path) as url, \
            MCPToolSource.http(url, connect_timeout=30) as source:
        assert sorted(source.tool_schemas()) == ["pubmed_search"]  # no --browse-root: no browse tool
        q = load_pubmedqa_questions("pubmedqa", "dev")[0]
        result = source.call("pubmed_search", {"query": q.question, "limit": 3})
        assert q.pmid in result.ids and len(result.ids) == 3
        assert "limit must be" in source.call("pubmed_search", {"query": "x", "limit": 0}).error


# -- in-process units -------------------------------------------------------------------------------


def test_page_to_text_without_title():
    assert page_to_text("<div>a<b>b</b></div><div>c\n d</div><pre>x\n  y</pre>") == (None, "ab\nc d\nx\ny")


def test_resolve_local_page(tmp_path):
    (tmp_path / "a b.html").write_text("x", encoding="utf-8")
    assert resolve_local_page((tmp_path / "a b.html").as_uri(), tmp_path) == (tmp_path / "a b.html").resolve()
    assert resolve_local_page("a b.html", tmp_path) == (tmp_path / "a b.html").resolve()
    with pytest.raises(ValueError, match="url is empty"):
        resolve_local_page("  ", tmp_path)


def test_read_local_page_checks_the_open_file_not_only_the_name(tmp_path, monkeypatch):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("do not read", encoding="utf-8")
    (root / "page.txt").write_text("fine", encoding="utf-8")
    assert read_local_page("page.txt", root) == ((root / "page.txt").resolve(), b"fine")
    os.link(outside / "secret.txt", root / "hard.txt")
    with pytest.raises(ValueError, match="hard.txt: has 2 hard links; refused") as refused:
        read_local_page("hard.txt", root)
    assert "do not read" not in str(refused.value)
    (root / "link.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(ValueError, match="outside the browse root"):
        read_local_page("link.txt", root)
    os.mkfifo(root / "pipe.html")
    with pytest.raises(ValueError, match="no such file|not a regular file"):  # never blocks on a FIFO
        read_local_page("pipe.html", root)

    # the name checked, then swapped for a symlink out before the open: O_NOFOLLOW refuses it
    import tracerag.tools.server as server

    def swapped(url, given_root):
        (root / "swap.txt").unlink(missing_ok=True)
        (root / "swap.txt").symlink_to(outside / "secret.txt")
        return root.resolve() / "swap.txt"

    monkeypatch.setattr(server, "resolve_local_page", swapped)
    with pytest.raises(ValueError, match="symbolic link"):
        read_local_page("swap.txt", root)

    # a directory on the way swapped for a symlink out: the descriptor's real path is outside
    (outside / "docs").mkdir()
    (outside / "docs" / "a.txt").write_text("do not read", encoding="utf-8")
    (root / "docs").symlink_to(outside / "docs")
    monkeypatch.setattr(server, "resolve_local_page", lambda url, given_root: root.resolve() / "docs" / "a.txt")
    with pytest.raises(ValueError, match="outside the browse root"):
        read_local_page("docs/a.txt", root)
