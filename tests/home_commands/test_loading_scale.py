"""Readers stay linear in the file size with a small constant: a home of thousands of devices, a data
set of many thousand lines.

Timing on a shared machine is noisy, so each check takes the median of a few runs, allows a generous
factor, and measures once more before failing. A reader that rescans the file or re-reads it per item
grows with the square of the size and fails the scaling checks (4x the items in at most ~6x the time)
by a wide margin however noisy the machine.
"""

import gc
import json
import statistics
import sys
import time
from pathlib import Path

import pytest

from tracerag.data_files.read_report import ReadReport
from tracerag.datasets.experience import load_experience_queries
from tracerag.datasets.smarthome import load_queries
from tracerag.documents.corpus import read_documents
from tracerag.home_commands.home import Home

ROOT = Path(__file__).parents[2]
BUNDLED = ROOT / "tracerag" / "datasets" / "data"
OVER_JSON = 6.0  # a reader may take this many times json.loads of the same files
SCALING = 6.0  # 4x the items may take this many times as long (linear: 4, quadratic: 16)

# timings of many-thousand-line files: with the long sweeps, where a busy machine cannot crowd them
pytestmark = pytest.mark.slow


def _median_seconds(read, runs: int) -> float:
    times = []
    for _ in range(runs):
        gc.collect()
        started = time.perf_counter()
        read()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _ratio(slow, fast, limit: float, runs: int = 3) -> float:
    """Median time of ``slow`` over that of ``fast``; over ``limit``, measured once more and the lower
    kept, so one burst of load on the machine cannot fail a check that a real regression fails every time."""
    ratio = _median_seconds(slow, runs) / _median_seconds(fast, runs)
    if ratio > limit:
        ratio = min(ratio, _median_seconds(slow, runs) / _median_seconds(fast, runs))
    return ratio


def _json_loads_of(*paths: Path):
    """What parsing the files costs with nothing else: json.loads of each JSON file or JSONL line."""
    def parse():
        for path in paths:
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".jsonl":
                [json.loads(line) for line in text.split("\n") if line.strip()]
            else:
                json.loads(text)
    return parse


@pytest.fixture(scope="module")
def homes(tmp_path_factory):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from synthetic_home import replicate_home

    root = tmp_path_factory.mktemp("homes")
    return {n: replicate_home("home_large", root / f"home_{n}", n) for n in (1250, 5000)}


def test_a_5000_device_home_loads_within_a_small_multiple_of_json_loads(homes):
    home = homes[5000]
    assert len(Home.load(home, log_warnings=False).devices) == 5000
    files = [home / "devices.json", home / "rooms.json", home / "spec.jsonl"]
    ratio = _ratio(lambda: Home.load(home, log_warnings=False), _json_loads_of(*files), OVER_JSON)
    assert ratio <= OVER_JSON, f"Home.load took {ratio:.1f}x json.loads of its files"


def test_home_loading_grows_linearly_with_the_devices(homes):
    ratio = _ratio(lambda: Home.load(homes[5000], log_warnings=False),
                   lambda: Home.load(homes[1250], log_warnings=False), SCALING)
    assert ratio <= SCALING, f"4x the devices took {ratio:.1f}x the time"


def _write_lines(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def _bundled_rows(relative: str) -> list[dict]:
    text = (BUNDLED / relative).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _smarthome_queries(tmp_path: Path, n: int) -> tuple[Path, object]:
    rows = _bundled_rows("smarthome/home_large/queries.jsonl")
    path = _write_lines(tmp_path / f"smarthome_{n}" / "queries.jsonl",
                        [{**rows[i % len(rows)], "id": f"q-{i:06d}"} for i in range(n)])
    return path, lambda: load_queries(path, "home_large", ReadReport("queries"))


def _experience_queries(tmp_path: Path, n: int) -> tuple[Path, object]:
    rows = _bundled_rows("experience/queries.jsonl")
    path = _write_lines(tmp_path / f"experience_{n}" / "queries.jsonl",
                        [{**rows[i % len(rows)], "id": f"q-{i:06d}"} for i in range(n)])
    return path, lambda: load_experience_queries(path.parent, report=ReadReport("queries"))


def _documents(tmp_path: Path, n: int) -> tuple[Path, object]:
    rows = _bundled_rows("pubmedqa/abstracts.jsonl")[:50]
    path = _write_lines(tmp_path / f"documents_{n}" / "docs.jsonl",
                        [{**rows[i % len(rows)], "pmid": str(10_000_000 + i)} for i in range(n)])
    return path, lambda: read_documents(path, report=ReadReport("documents"))


READERS = {"smart-home queries": (_smarthome_queries, 2000), "experience queries": (_experience_queries, 2000),
           "documents": (_documents, 1000)}


@pytest.mark.parametrize("name", READERS)
def test_jsonl_readers_are_linear_and_close_to_json_loads(name, tmp_path):
    make, lines = READERS[name]
    small_path, read_small = make(tmp_path, lines // 4)
    large_path, read_large = make(tmp_path, lines)
    ratio = _ratio(read_large, read_small, SCALING)
    assert ratio <= SCALING, f"{name}: 4x the lines took {ratio:.1f}x the time"
    ratio = _ratio(read_large, _json_loads_of(large_path), OVER_JSON)
    assert ratio <= OVER_JSON, f"{name}: reading took {ratio:.1f}x json.loads of its lines"
