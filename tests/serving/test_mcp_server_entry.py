"""The programs' MCP server is a front end beside the HTTP service (``python -m tracerag.serving.mcp_server``);
the tool server's ``--programs`` spelling (``python -m tracerag.tools --programs``) hands over to it."""

import sys

import pytest

from tracerag.serving import mcp_server
from tracerag.tools import __main__ as tool_server


def test_an_unknown_program_fails_in_one_line_before_anything_loads(capsys):
    assert mcp_server.main(["--programs", "commands,poetry"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m tracerag.serving.mcp_server: error: unknown program 'poetry'")
    assert "cannot start" not in err  # no corpus or program was loaded first


def test_the_tool_servers_programs_flag_hands_over_to_the_programs_server(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["python -m tracerag.tools"])
    monkeypatch.delitem(sys.modules, "tracerag.serving.mcp_server")  # runpy runs it afresh as __main__
    with pytest.raises(SystemExit) as ended:
        tool_server.main(["--program", "poetry=out/p.json"])
    assert ended.value.code == 2
    assert "python -m tracerag.serving.mcp_server: error: unknown program 'poetry'" in capsys.readouterr().err


def test_only_a_program_that_starts_tools_of_its_own_gets_the_servers_embedder():
    assert [name for name in ("commands", "experience", "rag", "planner", "agent") if mcp_server._starts_tools(name)] \
        == ["agent"]
