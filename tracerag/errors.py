"""One root for the errors tracerag raises on purpose: ``except tracerag.TraceragError`` catches what the library
means to tell its caller (data it cannot read, a store it cannot use, a service that failed), never a bug.

Each error keeps the built-in base it had (``ValueError`` for bad input, ``RuntimeError`` or ``OSError`` for
what failed, ``ImportError`` for a missing extra), so code that caught those still does.

Where an error is about a place in a file, it says so in fields as well as in its one-line message, so a
caller can point at it without parsing text: ``path`` (the file), ``line`` (1-based), ``field`` (the key,
``"relevant_task_ids[2]"``) and ``hint`` (what to do about it). Each is None when it does not apply.
"""

from __future__ import annotations

import re


class TraceragError(Exception):
    """The root of tracerag's own errors; ``path``, ``line``, ``field``, ``hint`` say where and what to do."""

    def __init__(self, *args, path: str | None = None, line: int | None = None, field: str | None = None,
                 hint: str | None = None) -> None:
        super().__init__(*args)
        self.path = None if path is None else str(path)
        self.line, self.field, self.hint = line, field, hint


_LOCATION = re.compile(r"^(?P<path>[^\n]+?):(?P<line>\d+)(?::|$)(?: field (?P<q>['\"])(?P<field>[^'\"\n]+)(?P=q))?")


class DataFileError(TraceragError, ValueError):
    """A user's data file that cannot be read. Its message is written ``<file>:<line>: field '<name>': ...``
    (line and field where they apply), and ``path``, ``line`` and ``field`` are read from it when not given,
    so every reader that follows the convention gets the fields without restating them."""

    def __init__(self, message: str = "", *, path: str | None = None, line: int | None = None,
                 field: str | None = None, hint: str | None = None) -> None:
        found = _LOCATION.match(message)
        if found and path is None:
            path, line = found["path"], int(found["line"]) if line is None else line
            field = found["field"] if field is None else field
        super().__init__(message, path=path, line=line, field=field, hint=hint)


# The errors a library call raises about what it was given, each keeping the built-in base callers catch.

class InvalidValue(TraceragError, ValueError):
    """A value tracerag cannot use: an argument, a setting, a field of a file or a request."""


class InvalidType(TraceragError, TypeError):
    """An object of a kind tracerag cannot use where it was given (a store, a bullet, a program to save)."""


class FileMissing(TraceragError, FileNotFoundError):
    """A file or directory tracerag was pointed at is not there."""


class UnknownKey(TraceragError, KeyError):
    """A name tracerag does not hold (a home the program does not index, an id the bank does not have)."""


class NotCallable(TraceragError, RuntimeError):
    """Something that only describes (a span's tool) was called."""


class OutOfRange(TraceragError, IndexError):
    """A row number past the end of what is stored."""
