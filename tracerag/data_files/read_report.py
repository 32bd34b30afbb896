"""What reading a user's data did: items read, variants normalised, items skipped and why.

Real files arrive in shapes a little off the documented format (a list of plain-string steps, a tool
given as ``{"name": …}``, ``"true"`` for true, a UTF-8 BOM, a FIFO where a file should be). Readers
are liberal: they normalise what they can understand and count each kind of normalisation once here,
skip what they cannot with one ``file:line: field: what was expected`` line, and never let a data set
shrink silently: ``check`` fails when nothing usable is left or more than ``max_skipped`` of the
items were skipped.

Files are opened only when they are regular files (a FIFO would block forever, a directory raise),
read up to a size cap, and decoded as UTF-8 with a BOM stripped (``read_regular``).

Two JSON values no reader can use are named, not passed on: an integer longer than Python converts
(``sys.get_int_max_str_digits()``, 4,300 digits by default) is a ``NumberTooLong`` naming its line
(``load_json``), never Python's own message; NaN and ±Infinity (which Python's JSON reads, though JSON
has neither) are refused wherever an id, label or caption is read (``not_finite`` says which one a
value is), so no device is named "nan".
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ..errors import TraceragError

__all__ = ["BOM", "DEFAULT_MAX_BYTES", "DataSetShrunk", "FileProblem", "NumberTooLong", "ReadReport", "Unreadable",
           "load_json", "may_hold_lone_surrogate", "not_finite", "open_regular", "read_capped", "read_regular",
           "regular_file", "text_problem"]

DEFAULT_MAX_BYTES = 64 * 1024 * 1024  # one data file; a larger one is a clear error, not a memory blow-up
BOM = b"\xef\xbb\xbf"


class FileProblem(TraceragError, ValueError):
    """A file that cannot be read as data: not a regular file, too large, not UTF-8. Names the file."""


class Unreadable(TraceragError, ValueError):
    """One item a reader cannot understand and skips: ``reason`` is its count key in the report, the
    message its ``field: what was expected`` line."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


class NumberTooLong(TraceragError, ValueError):
    """JSON holding an integer longer than Python converts; ``line`` is the 1-based line it is on (0 when
    it cannot be told). The message says what is wrong; the reader adds the file and line."""

    def __init__(self, line: int):
        super().__init__(f"a number with more than {sys.get_int_max_str_digits():,} digits; no field takes one")
        self.line = line


def load_json(text: str | bytes):
    """``json.loads(text)``; an integer past Python's digit limit raises ``NumberTooLong`` naming its line
    (a ``json.JSONDecodeError`` and a ``RecursionError`` pass through as they are)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError:  # the only other ValueError json raises: int() of a digit run past the limit
        raise NumberTooLong(_long_number_line(text)) from None


def _long_number_line(text: str | bytes) -> int:
    """The line of the first integer literal past the digit limit (digits right after a JSON value
    opener: ``:`` ``[`` ``,`` or the start), or 0 when none is found that way."""
    limit = sys.get_int_max_str_digits()
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    match = re.search(rf"(?:^|[:\[,])\s*-?[0-9]{{{limit + 1},}}(?![0-9.eE])", text)
    return text.count("\n", 0, match.end()) + 1 if match else 0


def not_finite(value) -> str | None:
    """``"NaN"``, ``"Infinity"`` or ``"-Infinity"`` for a float that is one, else None: no id, label
    or caption may be one (``str(nan)`` would name a device "nan")."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else "Infinity" if value > 0 else "-Infinity"
    return None


class DataSetShrunk(TraceragError, ValueError):
    """Too much of a data set was skipped (or nothing usable is left): the run stops, saying why."""


def open_regular(path: str | Path, error: type[Exception] = FileProblem, max_bytes: int | None = None) -> IO[bytes]:
    """``path`` opened for binary reading, refused (as ``error``, naming the file) unless it is a regular
    file of at most ``max_bytes``. Opened non-blocking and checked with fstat on the open descriptor, so a
    FIFO never blocks and a swap between a check and the open cannot slip another kind of file in."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise error(f"{path}: file is missing") from None
    except IsADirectoryError:
        raise error(f"{path}: is a directory, not a file") from None
    except OSError as exc:
        raise error(f"{path}: cannot be opened ({exc.strerror or exc})") from None
    return regular_file(fd, path, error, max_bytes)


def regular_file(fd: int, path: str | Path, error: type[Exception] = FileProblem,
                 max_bytes: int | None = None) -> IO[bytes]:
    """The descriptor ``fd`` (opened with ``O_NONBLOCK``, so opening a FIFO did not block) as a binary
    file, when fstat says it is a regular file of at most ``max_bytes``; else it is closed and ``error``
    raised naming ``path``. For readers that open relative to a directory handle (the bank loader)."""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = ("a directory" if stat.S_ISDIR(info.st_mode) else "a FIFO" if stat.S_ISFIFO(info.st_mode)
                    else "a socket" if stat.S_ISSOCK(info.st_mode) else "a device")
            raise error(f"{path}: is {kind}, not a regular file")
        if max_bytes is not None and info.st_size > max_bytes:
            raise error(f"{path}: {info.st_size:,} bytes is over the {max_bytes:,}-byte limit for one file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | Path, max_bytes: int = DEFAULT_MAX_BYTES, *, report: ReadReport | None = None) -> str:
    """The text of a regular file (see ``open_regular``), a UTF-8 BOM stripped (counted in ``report``)."""
    with open_regular(path, FileProblem, max_bytes) as f:
        data = read_capped(f, max_bytes)
    if len(data) > max_bytes:  # it grew after the check
        raise FileProblem(f"{path}: over the {max_bytes:,}-byte limit for one file")
    if data.startswith(BOM):
        data = data[len(BOM):]
        if report is not None:
            report.normalise("BOM stripped")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FileProblem(f"{path}: not UTF-8 (byte {exc.start + 1})") from None


def read_capped(f: IO[bytes], max_bytes: int) -> bytes:
    """Up to ``max_bytes + 1`` bytes of ``f``. The first read is sized to the file, as ``f.read(max_bytes +
    1)`` would allocate the whole cap (64 MB) for every file, however small; only a file that grew since
    it was opened is read on to the cap."""
    size = os.fstat(f.fileno()).st_size
    data = f.read(min(size, max_bytes) + 1)
    if len(data) > size:
        data += f.read(max_bytes + 1 - len(data))
    return data


def text_problem(value) -> str | None:
    """Why a string (or the strings inside a list/dict) cannot be stored as UTF-8, or None.

    JSON can carry a lone surrogate (``"\\ud800"``) that Python decodes but no UTF-8 file can hold."""
    if isinstance(value, str):
        if value.isascii():  # O(1): an ASCII string holds no surrogate
            return None
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"holds a character UTF-8 cannot store (U+{ord(value[exc.start]):04X}, a lone surrogate)"
        return None
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list | tuple) else ()
    for item in items:
        if not (isinstance(item, str) and item.isascii()):
            problem = text_problem(item)
            if problem:
                return problem
    return None


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def may_hold_lone_surrogate(json_text: str) -> bool:
    """False when no string decoded from this JSON text can hold a lone surrogate, so a reader can skip
    ``text_problem`` on each of them. Decoded UTF-8 cannot hold a surrogate; only a ``\\uD800``-``\\uDFFF``
    escape can make one (a pair of them, as for an emoji, also says True: the answer may be cautious)."""
    return _SURROGATE_ESCAPE.search(json_text) is not None


@dataclass
class ReadReport:
    """Counts for one read: ``read`` items, normalisations per kind, skips per reason, and the lines."""

    what: str = "items"
    read: int = 0
    normalised: Counter = field(default_factory=Counter)  # kind -> items it was applied to
    skipped: Counter = field(default_factory=Counter)  # reason -> items
    problems: list[str] = field(default_factory=list)  # "file:line: field: what was expected", one per skip

    def normalise(self, kind: str) -> None:
        self.normalised[kind] += 1

    def skip(self, where: str, reason: str, detail: str = "") -> None:
        """Count an item left out: ``reason`` is the short kind (the count's key), ``detail`` the line."""
        self.skipped[reason] += 1
        self.problems.append(f"{where}: {detail or reason}")

    @property
    def kept(self) -> int:
        return self.read - sum(self.skipped.values())

    def to_dict(self) -> dict:
        return {"read": self.read, "kept": self.kept, "normalised": dict(sorted(self.normalised.items())),
                "skipped": dict(sorted(self.skipped.items()))}

    def summary(self) -> str:
        """One line: ``read 120 traces, kept 118; normalised: steps as strings 40; skipped: not JSON 2``."""
        line = f"read {self.read} {self.what}, kept {self.kept}"
        if self.normalised:
            line += "; normalised: " + ", ".join(f"{k} {n}" for k, n in sorted(self.normalised.items()))
        if self.skipped:
            line += "; skipped: " + ", ".join(f"{k} {n}" for k, n in sorted(self.skipped.items()))
        return line

    def check(self, max_skipped: float, source: str) -> None:
        """Raise DataSetShrunk when nothing usable is left, or more than ``max_skipped`` (a share, 0..1)
        of the items read were skipped; the message names the source, the counts and the first problems."""
        skipped = sum(self.skipped.values())
        if self.read and not self.kept:
            reason = f"none of the {self.read} {self.what} read is usable"
        elif self.read and skipped / self.read > max_skipped:
            reason = (f"{skipped} of {self.read} {self.what} skipped ({skipped / self.read:.0%}), over the "
                      f"{max_skipped:.0%} allowed (--max-skipped)")
        else:
            return
        more = len(self.problems) - 3
        first = "; ".join(self.problems[:3]) + (f"; and {more} more" if more > 0 else "")
        raise DataSetShrunk(f"{source}: {reason}: {first}")
