"""The bad-input campaign: files as users' real data arrives, each run through the real reader.

Each format has a module here (``traces.py``, ``homes.py``, …) with ``FORMAT`` (its name) and
``VARIANTS``: a list of ``Variant(name, expect, run)``. ``run(tmp_path)`` writes the variant's files
under ``tmp_path`` and calls the reader a user's command would call; it returns normally when the
data was read (the variant ``accepted``, possibly after normalisation, or its bad item ``skipped``
with a reason the reader reported — return "skipped" then), and raises the reader's documented data
error (a ``ValueError`` whose message names the file) when it ``rejected`` the input.

``outcome`` classifies what happened; anything else is a ``traceback`` (an exception that is not a
clear data error) or a ``hang`` (no answer within the time limit). The campaign's goal is zero of
both; ``test_campaign.py`` asserts each variant's expected outcome and ``benchmarks/bench_bad_inputs.py``
prints the table.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

OUTCOMES = ("accepted", "skipped", "rejected", "traceback", "hang")


@dataclass(frozen=True)
class Variant:
    name: str
    expect: str  # accepted | skipped | rejected
    run: Callable[[Path], str | None]  # returns "skipped" when the reader skipped the bad item, else None


@dataclass(frozen=True)
class Outcome:
    kind: str  # one of OUTCOMES
    detail: str = ""  # the error line, or the exception for a traceback


def outcome(variant: Variant, tmp_path: Path, timeout: float = 10.0) -> Outcome:
    """Run one variant in a daemon thread (a hang cannot stop the campaign) and classify the result."""
    result: list[Outcome] = []

    def work():
        try:
            returned = variant.run(tmp_path)
            result.append(Outcome("skipped" if returned == "skipped" else "accepted"))
        except ValueError as exc:  # the readers' data errors are ValueErrors naming the file
            text = str(exc)
            clear = "\n" not in text.strip() and (str(tmp_path) in text or ":" in text)
            result.append(Outcome("rejected" if clear else "traceback", text))
        except Exception as exc:  # noqa: BLE001 - anything else is what the campaign is looking for
            result.append(Outcome("traceback", f"{type(exc).__name__}: {exc}"))

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(timeout)
    return result[0] if result else Outcome("hang", f"no answer within {timeout:g} s")
