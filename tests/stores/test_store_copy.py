"""copy_store and `tracerag store copy`: numpy <-> Milvus Lite round trips, resuming, verification."""

from __future__ import annotations

import argparse
import importlib.util

import numpy as np
import pytest

from tracerag.registry import PROGRAMS
from tracerag.store_cli import add_store_commands, cmd_store, open_program_store
from tracerag.stores import store_copy
from tracerag.stores.store_copy import CopyReport, copy_store, verify_copy
from tracerag.stores.stores import open_store
from tracerag.stores.vector_store import StoreError

DIM = 16
HAVE_MILVUS = all(importlib.util.find_spec(m) is not None for m in ("pymilvus", "milvus_lite"))
milvus = pytest.mark.skipif(not HAVE_MILVUS, reason='needs pip install -e ".[milvus]"')


def unit_rows(n: int, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture
def source(tmp_path):
    store = open_store(tmp_path / "src", embedder_id="emb", dim=DIM, create=True)
    vectors = unit_rows(57, seed=3)
    ids = [f"row-{i}" for i in range(57)]
    store.upsert(ids, vectors, [{"i": i, "text": f"text {i}", "tags": ["a", i]} for i in range(57)])
    return store


def rows_of(store) -> dict:
    out = {}
    for batch in store.scan(100, with_vectors=True):
        for x, m, v in zip(batch.ids, batch.metadata, batch.vectors, strict=True):
            out[x] = (m, v)
    return out


@milvus
def test_numpy_to_milvus_to_numpy_round_trip(source, tmp_path):
    lite = f"milvus:{tmp_path / 'copy.db'}?collection=traces"
    there = copy_store(source, lite, batch_size=10)
    assert there.ok and (there.rows_read, there.written, there.skipped) == (57, 57, 0)
    assert there.sampled == 57 and there.min_cosine >= 0.9999
    back = copy_store(lite, str(tmp_path / "back"), batch_size=20)
    assert back.ok and back.target_count == 57
    original, final = rows_of(source), rows_of(open_store(tmp_path / "back"))
    assert original.keys() == final.keys()
    for x, (meta, vector) in original.items():
        assert final[x][0] == meta and float(final[x][1] @ vector) >= 0.9999
    assert "verified" in back.summary()
    with open_store(lite) as milvus_store:
        assert milvus_store.describe().embedder_id == "emb"  # created with the source's embedder and dim


@pytest.mark.parametrize("target", ["numpy", pytest.param("milvus", marks=milvus)])
def test_an_interrupted_copy_resumes_where_it_stopped(source, tmp_path, monkeypatch, target):
    uri = str(tmp_path / "dst") if target == "numpy" else f"milvus:{tmp_path / 'dst.db'}"
    monkeypatch.setattr(store_copy, "NUMPY_WRITE_ROWS", 10)  # numpy writes every 10 rows, like Milvus batches
    calls = []

    def interrupt(done: int, total: int) -> None:
        calls.append(done)
        if done >= 30:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        copy_store(source, uri, batch_size=10, progress=interrupt)
    with open_store(uri) as partial:
        assert partial.count() == 30
    again = copy_store(source, uri, batch_size=10)
    assert again.ok and (again.written, again.skipped) == (27, 30)  # the rerun skips what is there
    third = copy_store(source, uri, batch_size=10)
    assert third.ok and (third.written, third.skipped) == (0, 57)


def test_verification_reports_changed_missing_and_extra_rows(source, tmp_path):
    report = copy_store(source, str(tmp_path / "dst"), sample=57)
    assert report.ok
    target = open_store(tmp_path / "dst")
    target.upsert(["row-5"], unit_rows(1, seed=99), [{"i": 5, "text": "text 5", "tags": ["a", 5]}])
    target.upsert(["row-6"], rows_of(source)["row-6"][1][None, :], [{"i": "changed"}])
    target.upsert(["stray"], unit_rows(1, seed=98))
    target.delete(["row-7"])
    checked = verify_copy(source, target, [f"row-{i}" for i in range(57)], CopyReport("src", "dst"))
    assert not checked.ok
    assert set(checked.mismatched) == {"row-5", "row-6"} and checked.missing == ["row-7"]
    assert checked.min_cosine < 0.9
    text = checked.summary()
    assert "VERIFICATION FAILED" in text and "row-7" in text and "differ" in text


def test_copy_refuses_the_same_store_and_another_embedder(source, tmp_path):
    with pytest.raises(StoreError, match="same store"):
        copy_store(source, str(tmp_path / "src"))
    open_store(tmp_path / "other", embedder_id="another", dim=DIM, create=True)
    with pytest.raises(StoreError, match="cannot be mixed"):
        copy_store(source, str(tmp_path / "other"))


def test_the_store_copy_command(source, tmp_path, capsys):
    parser = argparse.ArgumentParser(prog="tracerag")
    add_store_commands(parser.add_subparsers(dest="verb", required=True))
    args = parser.parse_args(["store", "copy", "--from", str(tmp_path / "src"), "--to", str(tmp_path / "dst"),
                              "--batch-size", "25"])
    assert args.verb == "store" and cmd_store(args) == 0
    assert "57 rows read, 57 written" in capsys.readouterr().out
    args = parser.parse_args(["store", "copy", "--from", str(tmp_path / "src"), "--to", str(tmp_path / "dst"),
                              "--json"])
    assert cmd_store(args) == 0
    assert '"skipped": 57' in capsys.readouterr().out


@pytest.mark.parametrize("backend", ["numpy", pytest.param("milvus", marks=milvus)])
def test_open_program_store_fills_an_empty_template_store_once(tmp_path, embedder, backend):
    uri = str(tmp_path / "tpl") if backend == "numpy" else f"milvus:{tmp_path / 'tpl.db'}"
    store = open_program_store(PROGRAMS["planner"].store_fill, uri, embedder)
    count = store.count()
    assert count > 10
    store.close()
    again = open_program_store(PROGRAMS["planner"].store_fill, uri, embedder)  # not empty: returned as it is
    assert again.count() == count
    again.close()


def test_the_programs_that_run_on_a_store_say_how_it_is_filled():
    assert [name for name, entry in PROGRAMS.items() if entry.store_fill is not None] == ["experience", "rag",
                                                                                          "planner"]


_COPIER = """
import sys
from tracerag.stores import store_copy
store_copy.NUMPY_WRITE_ROWS = 50
def tell(done, total):
    print(done, flush=True)
store_copy.copy_store(sys.argv[1], sys.argv[2], batch_size=50, progress=tell)
"""


@pytest.mark.slow
def test_a_copy_killed_mid_run_resumes_to_a_verified_copy(tmp_path):
    """kill -9 of `store copy` after its first writes, three times: the target opens each time, and a rerun
    completes a copy that verifies (nothing torn, nothing twice)."""
    import signal
    import subprocess
    import sys

    src = open_store(tmp_path / "src", embedder_id="emb", dim=DIM, create=True)
    ids = [f"row-{i}" for i in range(3000)]
    src.upsert(ids, unit_rows(3000, seed=5), [{"i": i} for i in range(3000)])
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", _COPIER, str(tmp_path / "src"), str(tmp_path / "dst")],
                                stdout=subprocess.PIPE, text=True)
        proc.stdout.readline()  # a first batch written
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        with open_store(tmp_path / "dst") as partial:
            assert partial.count() <= 3000 and len(set(rows_of(partial))) == partial.count()
    final = copy_store(tmp_path / "src", str(tmp_path / "dst"), batch_size=500)
    assert final.ok and final.target_count == 3000 and "verified" in final.summary()
