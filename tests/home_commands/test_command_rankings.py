"""Speed work on CommandIndex must not move a single answer: every bundled query (no-LM and gold parse)
and ~700 utterances on a 1,000-device building give the parse, top-10 and bulk plan of the snapshot."""

from __future__ import annotations

import math

import pytest
from command_rankings import load_snapshot, rankings

SCORE_TOLERANCE = 1e-3  # scores are rounded to 4 places; summation order may move the last one


def _differences(where: str, want, got, out: list[str]) -> None:
    if isinstance(want, dict) and isinstance(got, dict):
        for key in sorted(set(want) | set(got)):
            _differences(f"{where}.{key}", want.get(key), got.get(key), out)
    elif isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for i, (a, b) in enumerate(zip(want, got, strict=True)):
            _differences(f"{where}[{i}]", a, b, out)
    elif isinstance(want, float) and isinstance(got, float):
        if not math.isclose(want, got, abs_tol=SCORE_TOLERANCE):
            out.append(f"{where}: {want} -> {got}")
    elif want != got:
        out.append(f"{where}: {want!r} -> {got!r}")


@pytest.fixture(scope="module")
def current(embedder):
    return rankings(embedder)


@pytest.mark.parametrize("part", ["bundled", "building"])
def test_rankings_match_the_snapshot(current, part):
    want = load_snapshot()[part]
    assert sorted(current[part]) == sorted(want)
    out: list[str] = []
    for key in want:
        _differences(key, want[key], current[part][key], out)
    assert not out, f"{len(out)} differences, first: " + "\n".join(out[:15])
