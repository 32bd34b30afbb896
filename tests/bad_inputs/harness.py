"""The bad-input campaign: files as users' real data arrives, each run through the real reader.

Each format has a module here (``traces.py``, ``homes.py``, …) with ``FORMAT`` (its name) and
``VARIANTS``: a list of ``Variant(name, expect, run)``. ``run(tmp_path)`` writes the variant's files
under ``tmp_path`` and calls the reader a user's command would call; it returns normally when the
data was read (the variant ``accepted``, possibly after normalisation, or its bad item ``skipped``
with a reason the reader reported — return "skipped" then), and raises the reader's documented data
error (a ``ValueError`` whose message names the file) when it ``rejected`` the input.

``outcome`` classifies what happened; anything else is a ``traceback`` (an exception that is not a
clear data error) or a ``hang`` (no answer within the time limit). Two more outcomes are failures a
variant detects itself, by checking what the reader or program returned: a ``wrong result`` (raise
:class:`WrongResult`: the input was accepted and the result is one a metric or a user would trust, but
wrong — a forged id among the cited ones, a row carrying its neighbour's metadata, a label that can
never be hit) and a ``leak`` (raise :class:`Leak`: content from outside the allowed root or dataset
reached an output or an error message, or protocol markup the runtime did not write reached an answer
or a trajectory). The campaign's goal is zero of all four; ``test_campaign.py`` asserts each variant's
expected outcome and ``benchmarks/bench_bad_inputs.py`` prints the table.

A bank's documented data error is ``BankError`` (a RuntimeError); it counts as a data error like the
readers' ValueErrors.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tracerag.stores.bank_errors import BankError

OUTCOMES = ("accepted", "skipped", "rejected", "traceback", "hang", "wrong result", "leak")
DATA_ERRORS = (ValueError, BankError)  # the readers' one-line data errors, each naming its file


class WrongResult(AssertionError):
    """Raised by a variant whose input was accepted with a result that is wrong (and would be trusted)."""


class Leak(AssertionError):
    """Raised by a variant when content from outside the allowed root reached an output or an error,
    or markup the runtime did not write reached an answer or a trajectory."""


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
        except WrongResult as exc:
            result.append(Outcome("wrong result", str(exc)))
        except Leak as exc:
            result.append(Outcome("leak", str(exc)))
        except DATA_ERRORS as exc:  # the readers' data errors are ValueErrors (a bank's BankError) naming the file
            text = str(exc)
            clear = "\n" not in text.strip() and (str(tmp_path) in text or ":" in text)
            result.append(Outcome("rejected" if clear else "traceback", text))
        except Exception as exc:  # noqa: BLE001 - anything else is what the campaign is looking for
            result.append(Outcome("traceback", f"{type(exc).__name__}: {exc}"))

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(timeout)
    return result[0] if result else Outcome("hang", f"no answer within {timeout:g} s")
