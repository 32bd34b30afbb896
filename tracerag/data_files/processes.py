"""Whether the process that left something behind (a temp directory, a journal entry) still runs on this host.

A pid alone is not enough: pids are reused, so a writer records its start time too (``process_start``) and a
live process with another start time is not the writer.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["process_alive", "process_start"]


def process_start(pid: int) -> str | None:
    """When process ``pid`` started (Linux: clock ticks after boot, from /proc), or None if unknown."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2 :].split()  # after "pid (comm) ": the state is field 3
    return fields[19].decode() if len(fields) > 19 else None


def process_alive(pid: int, start: str | None = None) -> bool:
    """Whether process ``pid`` runs on this host (another user's counts), and, where ``start`` was recorded,
    is the same process (a reused pid is not it). This process is alive."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # runs, as another user
        pass
    now_start = process_start(pid)
    return start is None or now_start is None or now_start == start
