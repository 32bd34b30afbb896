"""What a starting service says on its terminal while it loads: the INFO lines that its loading threads log (the
embedder's weights read, each home indexed, each embedder warm, with their seconds), printed as ``tracerag serve:
…`` lines, so a cold start that takes seconds says what it is doing instead of being silent.

Only while starting, and only those threads' lines: a request's INFO lines stay as quiet as before (``-v`` shows
every INFO line the usual way, so this adds nothing then). Warnings from any thread are printed as the command
line prints them (``WARNING name: message``).
"""

from __future__ import annotations

import logging
import sys

__all__ = ["LOADING_THREADS", "StartupLog"]

# the threads that load a service: its programs (``programs.Startup``) and the local embedder's weights
LOADING_THREADS = frozenset({"tracerag-startup", "tracerag-load-use", "tracerag-prepare-use"})
_QUIET = frozenset({"tracerag.serving.programs"})  # its "loaded" and "ready" lines are printed by serve itself


class _StartupLines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.warnings = logging.Formatter("%(levelname)s %(name)s: %(message)s")

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if record.levelno >= logging.WARNING:
                line = self.warnings.format(record)
            elif record.threadName in LOADING_THREADS and record.name not in _QUIET:
                line = f"tracerag serve: {record.getMessage()}"
            else:
                return
            print(line, file=sys.stderr, flush=True)
        except Exception:  # noqa: BLE001 - logging never fails the service
            self.handleError(record)


class StartupLog:
    """Print the loading threads' INFO lines (see the module docstring) from here until :meth:`close` (once the
    service is ready) or the end of the ``with`` block."""

    def __init__(self, verbose: bool = False) -> None:
        self._logger = logging.getLogger("tracerag")
        self._handler = None if verbose else _StartupLines()
        self._saved = (self._logger.level, self._logger.propagate)
        if self._handler is not None:
            self._logger.addHandler(self._handler)
            self._logger.setLevel(logging.INFO)
            self._logger.propagate = False  # the root handler prints warnings only; this one prints them meanwhile

    def close(self) -> None:
        handler, self._handler = self._handler, None
        if handler is not None:
            self._logger.removeHandler(handler)
            self._logger.setLevel(self._saved[0])
            self._logger.propagate = self._saved[1]

    def __enter__(self) -> StartupLog:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
