"""Reading JSON Lines files with errors that name the file and line.

Every data format here (homes, queries, traces' queries, documents) is JSONL, and a user fixing a
broken file needs ``file:line`` and the field, not a traceback. Lines end at "\\n" only: JSON strings
may hold U+2028/U+2029 raw, which ``str.splitlines`` would wrongly split on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

__all__ = ["iter_json_lines"]


def iter_json_lines(path: Path, error: type[Exception] = ValueError) -> Iterator[tuple[str, dict]]:
    """Yield ("file:line", object) for each non-blank line, streaming; problems raise ``error``."""
    if not path.is_file():
        raise error(f"{path}: file is missing")
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, start=1):
            where = f"{path}:{lineno}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise error(f"{where}: not UTF-8 (byte {e.start + 1})") from None
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise error(f"{where}: invalid JSON ({e.msg} at column {e.colno})") from None
            if not isinstance(row, dict):
                raise error(f"{where}: expected a JSON object")
            yield where, row
