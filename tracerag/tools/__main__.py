"""Run the search agent's tool server: ``python -m tracerag.tools [--transport stdio|http] …``.

Over stdio (the default) stdout is the protocol channel, so everything else (logs, ingestion
progress, stray prints while starting) goes to stderr. Without ``--bank`` the server searches the
bundled PubMedQA abstracts, ingested once into the cache directory for the chosen embedder.

``--programs commands,rag`` (or ``--program rag=FILE`` for an artifact) adds the retrieval programs as
tools: that server is a front end, ``python -m tracerag.serving.mcp_server`` (this package sits below the
programs and does not import them), to which this command hands over by name.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from pathlib import Path

logger = logging.getLogger("tracerag.tools")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m tracerag.tools", description="Serve pubmed_search and "
                                "browse_webpage over MCP (stdio or streamable HTTP).")
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                   help="stdio (default; the client spawns this process) or streamable HTTP")
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765); the endpoint is /mcp")
    p.add_argument("--bank", type=Path, help="serve this CosineBank of chunks (made by `tracerag ingest`) "
                   "instead of the bundled PubMedQA abstracts")
    p.add_argument("--documents", type=Path, help="with --bank: the JSONL the bank was ingested from, so "
                   "results carry whole documents and their metadata")
    p.add_argument("--embedder", help="local | lexical | http://host:port/v1 (env TRACERAG_EMBEDDER; "
                   "must be the embedder the bank was built with)")
    p.add_argument("--embed-model", help="model name for an HTTP embedder (env TRACERAG_EMBED_MODEL)")
    p.add_argument("--browse-root", type=Path, help="directory browse_webpage may read; without it the "
                   "tool is not offered")
    p.add_argument("--programs", action="append", default=[], metavar="NAMES",
                   help="also offer these programs as tools, on their bundled defaults: commands, experience, "
                        "rag, planner, agent (comma-separated or repeated)")
    p.add_argument("--program", action="append", default=[], metavar="NAME=ARTIFACT",
                   help="also offer this program as a tool, from a compiled artifact (repeatable)")
    p.add_argument("--concurrency", type=int, default=4, help="program calls running at once (default 4)")
    p.add_argument("--log-level", default="WARNING", choices=("DEBUG", "INFO", "WARNING", "ERROR"))
    args = p.parse_args(argv)
    if args.documents and not args.bank:
        p.error("--documents goes with --bank (the bundled corpus brings its own)")
    if args.browse_root is not None and not args.browse_root.is_dir():
        p.error(f"--browse-root {args.browse_root}: not a directory")
    return args


def make_search(args: argparse.Namespace):
    """The PubMedSearch the flags describe (ingests the bundled corpus on first use)."""
    from tracerag.documents.corpus import read_documents
    from tracerag.documents.hybrid import HybridRetriever
    from tracerag.stores.cosine_bank import CosineBank

    from ..config import configure, get_embedder
    from .pubmed_corpus import PubMedSearch

    configure(embedder=args.embedder, embed_model=args.embed_model)
    embedder = get_embedder()
    if args.bank is None:
        return PubMedSearch.pubmedqa(embedder)
    documents = {doc.id: doc for doc in read_documents(args.documents)} if args.documents else None
    return PubMedSearch(HybridRetriever(CosineBank.load(args.bank, embedder)), documents)


def main(argv: list[str] | None = None, offer=None) -> int:
    """Serve the tools; ``offer(server, args)`` adds more to the server (the programs) and returns what to
    close at the end. With ``--programs``/``--program`` and no ``offer``, the programs' server takes over."""
    args = parse_args(argv)
    if (args.programs or args.program) and offer is None:
        import runpy

        sys.argv = ["python -m tracerag.serving.mcp_server", *(sys.argv[1:] if argv is None else argv)]
        runpy.run_module("tracerag.serving.mcp_server", run_name="__main__")
        return 0
    logging.basicConfig(stream=sys.stderr, level=args.log_level, format="%(asctime)s %(name)s: %(message)s")
    from .server import build_server

    with contextlib.redirect_stdout(sys.stderr):  # nothing may reach the stdio channel before the protocol
        from tracerag.stores.cosine_bank import BankError
        from tracerag.tools.mcp_client import ToolSourceError

        try:
            search = make_search(args)
            server = build_server(search, args.browse_root)
            offered = offer(server, args) if offer is not None else []
        except (ValueError, KeyError, OSError, BankError, ToolSourceError) as e:  # a bad embedder spec, a missing
            print(f"tracerag-tools: cannot start: {e}", file=sys.stderr)     # bank or artifact, a broken corpus
            return 2
    # One query at a time over a small matrix: threaded BLAS saves nothing, and on a busy 2-core machine
    # its workers made some processes search the bundled corpus in 6-8 ms instead of 1.6 ms. Large banks
    # are unaffected: their search threads itself, with BLAS held at one thread anyway.
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
    logger.info("serving %r over %s", search, args.transport)
    try:
        if args.transport == "stdio":
            server.run("stdio")
        else:
            print(f"tracerag-tools: MCP endpoint http://{args.host}:{args.port}/mcp", file=sys.stderr, flush=True)
            server.run("streamable-http", host=args.host, port=args.port)
    finally:  # the agent's own tool server is a child process
        for served in offered:
            served.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
