"""Reading JSON Lines files with errors that name the file and line.

Every data format here (homes, queries, traces' queries, documents) is JSONL, and a user fixing a
broken file needs ``file:line`` and the field, not a traceback. Lines end at "\\n" only: JSON strings
may hold U+2028/U+2029 raw, which ``str.splitlines`` would wrongly split on.

Only regular files are opened (a FIFO would block forever, a directory raise): the file is opened
non-blocking and checked with ``fstat`` on the open descriptor. A UTF-8 BOM on the first line is
stripped. With a ``report`` (a ``ReadReport``), every non-blank line is counted as read, the stripped
BOM is counted as a normalisation, and with ``skip_bad_lines`` a line that is not UTF-8, not JSON, not
an object or holds an integer longer than Python converts (``read_report.load_json``) is counted as
skipped (with its ``file:line``) instead of ending the read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from .read_report import BOM, NumberTooLong, load_json, open_regular

__all__ = ["iter_json_lines"]

def iter_json_lines(path: Path, error: type[Exception] = ValueError, *, report=None, skip_bad_lines: bool = False,
                    max_bytes: int | None = None) -> Iterator[tuple[str, dict]]:
    """Yield ("file:line", object) for each non-blank line, streaming; problems raise ``error``.

    ``max_bytes`` caps the file's size (a clear error above it); ``report``/``skip_bad_lines`` as in
    the module's docstring."""
    path = Path(path)
    with open_regular(path, error, max_bytes) as f:
        for lineno, raw in enumerate(f, start=1):
            where = f"{path}:{lineno}"
            if lineno == 1 and raw.startswith(BOM):
                raw = raw[len(BOM):]
                if report is not None:
                    report.normalise("BOM stripped")
            row, problem = _parse(raw)
            if row is None and problem is None:
                continue  # a blank line
            if report is not None:
                report.read += 1
            if problem is not None:
                reason, detail = problem
                if skip_bad_lines and report is not None:
                    report.skip(where, reason, detail)
                    continue
                raise error(f"{where}: {detail}")
            yield where, row


def _parse(raw: bytes) -> tuple[dict | None, tuple[str, str] | None]:
    """(object, None), (None, (reason, detail)) for a bad line, or (None, None) for a blank one."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return None, ("not UTF-8", f"not UTF-8 (byte {e.start + 1})")
    if not line.strip():
        return None, None
    try:
        row = load_json(line.rstrip("\r\n"))  # so an error's column is on the line, not past its end
    except json.JSONDecodeError as e:
        return None, ("not JSON", f"invalid JSON ({e.msg} at column {e.colno})")
    except NumberTooLong as e:
        return None, ("number too long", str(e))
    except RecursionError:
        return None, ("not JSON", "invalid JSON (nested too deeply)")
    if not isinstance(row, dict):
        return None, ("not an object", "expected a JSON object")
    return row, None
