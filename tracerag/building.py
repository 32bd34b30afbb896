"""What every program's builder shares: the default embedder, and the banks built for one process.

Each program's builder is its package's ``building`` module, shared by the command line (``tracerag
run/evaluate/compile``), the HTTP service, the MCP tools and apps (``tracerag.build("rag")``), so all of them
run the same program for the same options. A builder reads no command-line flags and no environment: the LM
and the embedder come from :func:`tracerag.configure` (or ``embedder=``).
"""

from __future__ import annotations

import atexit

__all__ = ["TEMP_BANKS", "embedder_or_default"]

TEMP_BANKS: list[str] = []  # banks built for one process on the bundled traces, removed at exit


@atexit.register
def _remove_temp_banks() -> None:
    import shutil

    for path in TEMP_BANKS:
        shutil.rmtree(path, ignore_errors=True)


def embedder_or_default(embedder):
    from .config import get_embedder

    return embedder if embedder is not None else get_embedder()
