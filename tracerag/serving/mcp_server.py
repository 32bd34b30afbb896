"""``python -m tracerag.serving.mcp_server``: the search agent's MCP tool server with the registry's programs
offered as tools too (``--programs commands,rag``, ``--program rag=FILE`` for an artifact), built as
``tracerag serve`` builds them; their LM comes from TRACERAG_LM / TRACERAG_API_BASE / TRACERAG_API_KEY (none:
each program's no-LM path). Every flag of ``python -m tracerag.tools`` applies.

A front end, so it lives beside the HTTP service: the tool server (``tracerag.tools``) sits below the
programs and cannot build them. ``python -m tracerag.tools --programs …`` hands over to this module.
"""

from __future__ import annotations

import sys

from ..tools import __main__ as tool_server

PROG = "python -m tracerag.serving.mcp_server"


def offer_programs(server, args) -> list:
    """Add the programs ``--programs``/``--program`` name to ``server`` as tools; the programs, to close."""
    from ..config import configure
    from .mcp_tools import add_program_tools
    from .programs import load_programs, parse_program_specs

    configure()  # the LM from the environment, like every command; the embedder was configured by the tools
    specs = parse_program_specs(args.programs + args.program)
    programs = load_programs(specs, {name: {"tool_embedder": args.embedder} for name in specs if _starts_tools(name)})
    add_program_tools(server, programs, args.concurrency)
    return list(programs.values())


def _starts_tools(name: str) -> bool:
    """Whether the program starts tool servers of its own (its builder takes ``tool_embedder``): they search
    with this server's embedder."""
    import inspect

    from ..registry import entry

    return "tool_embedder" in inspect.signature(entry(name).build).parameters


def main(argv: list[str] | None = None) -> int:
    from .programs import parse_program_specs

    args = tool_server.parse_args(argv)
    try:  # a bad name fails before the corpus or a program is loaded
        parse_program_specs(args.programs + args.program)
    except ValueError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    return tool_server.main(argv, offer=offer_programs)


if __name__ == "__main__":
    sys.exit(main())
