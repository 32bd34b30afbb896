"""The store protocol on a real Milvus server (the PyPI standalone, in a loopback-only network namespace):
its expression parser, consistency and index, which Milvus Lite's engine behind the test server lacks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

import milvus_standalone  # noqa: E402


@pytest.mark.milvus_server
def test_the_store_protocol_holds_on_a_real_milvus_server():
    why = milvus_standalone.available()
    if why:
        pytest.skip(why)
    # one process: the tests name their collections by a per-process counter on the one shared server
    suite = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "-m", "not slow",
             str(ROOT / "tests" / "stores" / "test_vector_store.py"), "-k", "milvus-standalone"]
    assert milvus_standalone.run_inside(suite) == 0
