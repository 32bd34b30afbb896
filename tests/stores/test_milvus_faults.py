"""Milvus Lite stores check themselves on open, after the faults a crash campaign found (kill -9 of a writer,
a full disk, a second process, damaged files):

- a crash between the row upsert and the word-index update is found by the write journal and the word
  index rebuilt on open (row counts still match, so counting could not tell);
- rows the engine holds twice (a writer killed between the two steps of a flush) are found, rewritten as one
  copy with one warning naming the store, and never served twice;
- ``close()`` frees the file for this process and another; a second process gets one line saying the store
  is locked and by whom;
- damaged files are one line naming the file and what to do (a damaged index file or word index is rebuilt
  by opening the store); engine errors are one line, with no engine traceback in the logs;
- a failed upsert says how far it got (and that its rows may still be applied); a full disk still opens
  the store for reading.

The kill -9 campaign (a writer killed at random, then reopened) is ``slow``.
"""

from __future__ import annotations

import glob
import json
import logging
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from milvus_marks import needs_milvus  # noqa: E402

pytestmark = needs_milvus

DIM = 4
N = 100


@pytest.fixture(autouse=True)
def _close_what_the_test_left_open(tmp_path):
    """A failed test's stores would keep their engines (and files' locks) for the rest of the worker's run."""
    yield
    from tracerag.stores import milvus_client

    for key in [k for k in milvus_client._LITE_USERS if k.startswith(str(tmp_path))]:
        milvus_client._LITE_USERS[key] = 1
        milvus_client._release_lite(key)


def _vectors(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _ids(n: int = N) -> list[str]:
    return [f"r{i:03d}" for i in range(n)]


def _texts(word: str, n: int = N) -> list[dict]:
    return [{"text": f"{word} common{i % 7} row{i}"} for i in range(n)]


def _uri(path: Path, collection: str = "docs") -> str:
    return f"milvus:{path}?collection={collection}"


def _filled(path: Path, *, layout: str | None = "bm25", word: str = "oldword"):
    from tracerag.stores.milvus_store import MilvusStore

    store = MilvusStore.open(_uri(path), embedder_id="fault-test", dim=DIM, create=True)
    store.upsert(_ids(), _vectors(N, 0), _texts(word))
    if layout:
        store.word_index(layout=layout)
    return store


def _open(path: Path):
    from tracerag.stores.milvus_store import MilvusStore

    return MilvusStore.open(_uri(path), embedder_id="fault-test", dim=DIM)


def _no_engine_traceback(caplog, capfd) -> None:
    err = capfd.readouterr().err
    assert "Traceback" not in err, err[-2000:]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage()[:300] for r in caplog.records]


def _one_line(error: BaseException) -> str:
    text = str(error)
    assert "\n" not in text and "Traceback" not in text and "MilvusException" not in text, text
    return text


def _run(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=str(ROOT))


# ---------------------------------------------------------------------------------------------
# The word index: a crash between the row upsert and its update is found on open.


@pytest.mark.parametrize("layout", ["bm25", "postings"])
def test_a_failure_between_the_rows_and_the_word_index_is_rebuilt_on_open(tmp_path, layout, monkeypatch, caplog):
    from tracerag.stores import milvus_words_journal

    path = tmp_path / "s.db"
    store = _filled(path, layout=layout)
    words = store.word_index()
    assert [x for x, _ in words.top("oldword", N)] and not words.top("newword", 5)
    monkeypatch.setattr(type(words), "update", _interrupted)
    with pytest.raises(KeyboardInterrupt):
        store.upsert(_ids(), _vectors(N, 1), _texts("newword"))
    monkeypatch.undo()
    assert store.count() == N and words.count() == N  # the counts agree: only the journal can tell
    assert not words.top("newword", 5)
    store.close()

    with caplog.at_level(logging.INFO, logger="tracerag.stores.milvus_store_words"):
        store = _open(path)
    rebuilt = [r.getMessage() for r in caplog.records if "rebuilt" in r.getMessage()]
    assert len(rebuilt) == 1 and "never finished" in rebuilt[0] and str(path) in rebuilt[0], rebuilt
    words = store.word_index()
    assert sorted(x for x, _ in words.top("newword", 2 * N)) == _ids()
    assert not words.top("oldword", 5)
    assert store._journal().pending() == []  # cleared once rebuilt
    store.close()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="tracerag.stores.milvus_store_words"):
        store = _open(path)  # nothing lags now: no second rebuild
    assert not [r for r in caplog.records if "rebuilt" in r.getMessage()]
    assert milvus_words_journal._LIVE_WRITES == set()
    store.close()


def test_a_writer_killed_between_the_rows_and_the_word_index_is_found_on_open(tmp_path):
    path = tmp_path / "s.db"
    _filled(path).close()
    child = _run(f"""
        import os, signal
        import numpy as np
        from tracerag.stores.milvus_store import MilvusStore
        from tracerag.stores.milvus_words_bm25 import BM25Words
        store = MilvusStore.open({_uri(path)!r}, embedder_id="fault-test", dim={DIM})
        def killed(self, rows, **kwargs):
            os.kill(os.getpid(), signal.SIGKILL)
        BM25Words.update = killed
        ids = [f"r{{i:03d}}" for i in range({N})]
        texts = [{{"text": f"newword row{{i}}"}} for i in range({N})]
        store.upsert(ids, np.full(({N}, {DIM}), 0.5, dtype=np.float32), texts)
        print("not killed")
    """)
    assert child.returncode == -signal.SIGKILL, child.stdout + child.stderr[-2000:]
    store = _open(path)
    words = store.word_index()
    assert sorted(x for x, _ in words.top("newword", 2 * N)) == _ids()
    assert not words.top("oldword", 5) and store.count() == N
    store.close()


def test_a_damaged_word_index_is_dropped_and_rebuilt_on_open(tmp_path, caplog, capfd):
    path = tmp_path / "s.db"
    _filled(path).close()
    (data,) = glob.glob(str(path / "collections" / "docs__bm25" / "partitions" / "*" / "data" / "*.parquet"))
    with open(data, "r+b") as f:
        f.truncate(300)
    with caplog.at_level(logging.INFO):
        store = _open(path)
    messages = " | ".join(r.getMessage() for r in caplog.records if r.name.startswith("tracerag"))
    assert f"{data} cannot be read" in messages and "rebuilt over 100 rows" in messages
    assert sorted(x for x, _ in store.word_index().top("oldword", 2 * N)) == _ids()
    store.close()
    _no_engine_traceback(caplog, capfd)


# ---------------------------------------------------------------------------------------------
# Rows the engine holds twice.


def _stored_twice(path: Path) -> None:
    """A store whose 100 rows Milvus Lite holds twice: the state a writer killed between the two steps of a
    flush leaves (the data file and manifest written, the write-ahead log not yet deleted), made through
    pymilvus and the engine: write the rows, keep a copy of the log, flush, put the log back."""
    from milvus_lite.server_manager import server_manager_instance
    from pymilvus import MilvusClient

    from tracerag.stores.vector_store import row_hash

    _filled(path, layout=None).close()
    client = MilvusClient(str(path))
    client.load_collection("docs")
    vectors, texts = _vectors(N, 2), _texts("twice")
    client.upsert("docs", [{"id": x, "vector": v.tolist(), "hash": row_hash(v, m), "metadata": m}
                           for x, v, m in zip(_ids(), vectors, texts, strict=True)])
    wal = path / "collections" / "docs" / "wal"
    kept = {f.name: f.read_bytes() for f in wal.iterdir()}
    assert kept
    client.flush("docs")
    client.close()
    server_manager_instance.release_server(str(path))
    for name, data in kept.items():
        (wal / name).write_bytes(data)
    proof = path.with_name("proof.db")  # without the check, the engine serves every row twice
    shutil.copytree(path, proof)
    client = MilvusClient(str(proof))
    client.load_collection("docs")
    assert client.query("docs", filter="", output_fields=["count(*)"])[0]["count(*)"] == 2 * N
    client.close()
    server_manager_instance.release_server(str(proof))


def test_rows_stored_twice_are_found_repaired_and_reported_in_one_warning(tmp_path, caplog, capfd):
    path = tmp_path / "s.db"
    _stored_twice(path)
    with caplog.at_level(logging.WARNING):
        store = _open(path)
    warnings = [r.getMessage() for r in caplog.records if r.name.startswith("tracerag")]
    assert len(warnings) == 1, warnings
    assert str(path) in warnings[0] and "100 ids were stored more than once" in warnings[0]
    assert "100 identical copies" in warnings[0] and "killed while flushing docs" in warnings[0]
    assert store.count() == N
    hits = store.search(_vectors(3, 5), k=10)
    assert all(len(h) == 10 and len({x.id for x in h}) == 10 for h in hits)
    assert sum(len(b) for b in store.scan(7)) == N
    store.close()
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        _open(path).close()  # repaired for good
    assert not [r for r in caplog.records if r.name.startswith("tracerag")]
    _no_engine_traceback(caplog, capfd)


def test_check_reads_every_id_when_the_crash_left_no_mark(tmp_path, monkeypatch, caplog):
    """Without the mark the check on open looks for (another client opened the store since, another engine
    version), duplicates are served once all the same, and ``check()`` reads every id and repairs them."""
    from tracerag.stores import milvus_client

    path = tmp_path / "s.db"
    _stored_twice(path)
    monkeypatch.setattr(milvus_client, "_lite_crash_marks", lambda path, collection: {})
    store = _open(path)
    assert store.count() == 2 * N  # not checked on open
    assert [len({h.id for h in hits}) for hits in store.search(_vectors(2, 4), k=10)] == [10, 10]  # served once
    assert sorted(x for batch in store.scan(11) for x in batch.ids) == _ids()
    with caplog.at_level(logging.WARNING):
        assert store.check() == N
    assert any("found by check()" in r.getMessage() for r in caplog.records)
    assert store.count() == N and store.check() == 0
    store.close()


def test_duplicates_that_cannot_be_repaired_are_still_served_once(tmp_path, monkeypatch, caplog):
    from tracerag.stores.milvus_errors import StoreDiskFull
    from tracerag.stores.milvus_store import MilvusStore

    path = tmp_path / "s.db"
    _stored_twice(path)

    def full(self, why):
        raise StoreDiskFull(f"{path}: upsert failed: disk full")

    monkeypatch.setattr(MilvusStore, "_repair_duplicates", full)
    with caplog.at_level(logging.WARNING):
        store = _open(path)  # opens for reading all the same
    assert any("searches and scans skip repeated ids" in r.getMessage() for r in caplog.records)
    for hits in store.search(_vectors(4, 6), k=15):
        assert len(hits) == 15 and len({h.id for h in hits}) == 15
    ids = [x for batch in store.scan(9) for x in batch.ids]
    assert sorted(ids) == _ids()
    store.close()


def test_which_copy_of_a_duplicated_id_is_kept():
    from tracerag.stores.milvus_store_checks import _one_copy
    from tracerag.stores.vector_store import row_hash

    def copy(vector, text, hash=None):
        v = np.asarray(vector, dtype=np.float32)
        return {"vector": v.tolist(), "metadata": {"text": text}, "hash": hash or row_hash(v, {"text": text})}

    a, b = copy([1, 0, 0, 0], "a"), copy([0, 1, 0, 0], "b")
    assert _one_copy([a, dict(a)], None) == (a, "identical")
    torn = copy([0, 1, 0, 0], "b", hash=a["hash"])  # a copy whose content does not match its hash
    assert _one_copy([torn, b], None) == (b, "intact")
    assert _one_copy([a, b], b["hash"]) == (b, "lookup")


# ---------------------------------------------------------------------------------------------
# One process at a time; close() lets go.


def test_close_releases_the_file_for_this_process_and_another(tmp_path):
    path = tmp_path / "s.db"
    store = _filled(path, layout=None)
    second = _open(path)  # a second store of the same process shares the engine
    store.close()
    assert second.count() == N  # closing one store leaves the other working
    second.close()
    second.close()  # twice: nothing
    child = _run(f"""
        from tracerag.stores.milvus_store import MilvusStore
        store = MilvusStore.open({_uri(path)!r}, embedder_id="fault-test", dim={DIM})
        store.upsert(["child"], [[0.5] * {DIM}], [{{"text": "from the child"}}])
        print(store.count())
        store.close()
    """)
    assert child.returncode == 0 and child.stdout.strip() == str(N + 1), child.stderr[-2000:]
    for _ in range(2):  # and this process again, twice
        store = _open(path)
        assert store.count() == N + 1 and store.get(["child"])[0].metadata == {"text": "from the child"}
        store.close()


def test_a_second_process_gets_one_line_saying_the_store_is_locked_and_by_whom(tmp_path):
    path = tmp_path / "s.db"
    store = _filled(path, layout=None)
    child = _run(f"""
        from tracerag.stores.milvus_errors import StoreLocked
        from tracerag.stores.milvus_store import MilvusStore
        try:
            MilvusStore.open({_uri(path)!r}, embedder_id="fault-test", dim={DIM})
        except StoreLocked as e:
            print(e)
    """)
    assert child.returncode == 0, child.stderr[-2000:]
    line = child.stdout.strip()
    assert "\n" not in line and line.startswith(f"milvus:{path}") and "locked by another process" in line, line
    assert f"pid {os.getpid()}" in line, line  # the holder, from /proc/locks
    assert "Traceback" not in child.stderr and "Open local milvus failed" not in child.stderr, child.stderr[-2000:]
    store.close()


# ---------------------------------------------------------------------------------------------
# Damaged files and engine errors: one line.


def _truncate(file: str | Path, size: int) -> None:
    with open(file, "r+b") as f:
        f.truncate(size)


@pytest.mark.parametrize("damage", ["rows", "manifest", "schema", "not a directory"])
def test_a_damaged_store_is_one_line_naming_the_file(tmp_path, damage, caplog, capfd):
    from tracerag.stores.milvus_errors import StoreDamaged

    path = tmp_path / "s.db"
    _filled(path).close()
    col = path / "collections" / "docs"
    if damage == "rows":
        file = Path(sorted(glob.glob(str(col / "partitions" / "*" / "data" / "*.parquet")))[0])
        _truncate(file, 300)
    elif damage == "manifest":
        file = col / "manifest.json"
        _truncate(file, 20)
        _truncate(col / "manifest.json.prev", 20)
    elif damage == "schema":
        file = col / "schema.json"
        _truncate(file, 20)
    else:
        shutil.rmtree(path)
        path.write_bytes(b"garbage" * 100)
        file = path
    with caplog.at_level(logging.WARNING), pytest.raises(StoreDamaged) as info:
        _open(path)
    line = _one_line(info.value)
    assert line.startswith(str(path)) and str(file) in line and info.value.file == str(file), line
    assert "restore" in line or "delete" in line
    _no_engine_traceback(caplog, capfd)


def test_a_truncated_index_file_is_deleted_and_rebuilt_on_open(tmp_path, caplog, capfd):
    path = tmp_path / "s.db"
    store = _filled(path, layout=None)
    expected = [h.id for h in store.search(_vectors(1, 9), k=5)[0]]
    store.close()
    (index,) = glob.glob(str(path / "collections" / "docs" / "partitions" / "*" / "indexes" / "*.idx"))
    _truncate(index, 100)  # a writer killed while the engine saved it (it writes index files in place)
    with caplog.at_level(logging.WARNING):
        store = _open(path)
    assert any(f"deleted the damaged index file {index}" in r.getMessage() for r in caplog.records)
    assert [h.id for h in store.search(_vectors(1, 9), k=5)[0]] == expected
    store.close()
    _no_engine_traceback(caplog, capfd)


def test_engine_errors_are_one_line_without_an_engine_traceback(tmp_path, caplog, capfd):
    from pymilvus import MilvusClient

    from tracerag.stores.vector_store import StoreError

    path = tmp_path / "s.db"
    store = _filled(path, layout=None)
    MilvusClient(str(path)).drop_collection("docs")  # the collection goes away under the store
    with caplog.at_level(logging.WARNING), pytest.raises(StoreError) as info:
        store.search(_vectors(1, 3), k=3)
    line = _one_line(info.value)
    assert line.startswith(f"milvus:{path}") and "search failed" in line, line
    store.close()
    _no_engine_traceback(caplog, capfd)


# ---------------------------------------------------------------------------------------------
# Failed writes and a full disk.


def _disk_full(monkeypatch, where: str) -> None:
    """The embedded engine (in this process) meets a full disk: writing the log of the store's rows ("rows"),
    of any collection ("log", so the write journal's first), or flushing rows to their files ("flush")."""
    from milvus_lite.engine import flush
    from milvus_lite.storage import wal

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    for name in ("write_insert", "write_delete"):
        write = getattr(wal.WAL, name)

        def maybe_full(self, batch, _write=write):
            if where == "log" or where == "rows" and f"{os.sep}docs{os.sep}" in self.wal_dir:
                full()
            return _write(self, batch)

        monkeypatch.setattr(wal.WAL, name, maybe_full)
    if where in ("log", "flush"):
        monkeypatch.setattr(flush, "write_data_file", full)
        monkeypatch.setattr(flush, "write_delta_file", full)


@pytest.mark.parametrize("where", ["log", "rows"])
def test_an_upsert_failing_on_a_full_disk_is_one_line_and_the_store_still_reads(tmp_path, where, monkeypatch,
                                                                                 caplog, capfd):
    from tracerag.stores.milvus_errors import StoreDiskFull, StoreWriteFailed

    path = tmp_path / "s.db"
    store = _filled(path)
    _disk_full(monkeypatch, where)
    with caplog.at_level(logging.WARNING), pytest.raises(StoreWriteFailed) as info:
        store.upsert(_ids(), _vectors(N, 1), _texts("newword"))
    line = _one_line(info.value)
    assert "disk full" in line and isinstance(info.value.cause, StoreDiskFull), line
    if where == "log":  # its journal entry could not be written: no row was sent
        assert info.value.applied == "none" and "before changing any row" in line, line
    else:
        assert info.value.applied == "maybe" and "may still be applied" in line and "run it again" in line, line
    assert store.count() == N and len(store.search(_vectors(1, 1), k=5)[0]) == 5  # reads go on
    store.close()
    _no_engine_traceback(caplog, capfd)
    monkeypatch.undo()
    store = _open(path)  # the engine had logged nothing: nothing lands; the word index agrees with the rows
    words = store.word_index()
    assert not words.top("newword", 5) and len(words.top("oldword", 2 * N)) == N
    store.close()


def test_an_upsert_whose_flush_fails_lands_after_a_restart_and_the_word_index_follows(tmp_path):
    """The documented case: the engine logged the rows, then could not flush them. The call is reported failed
    (its rows "stay changed"); the process dies; Milvus Lite replays its log on the next open, so the rows
    land, and the journal entry the failed call left makes that open rebuild the word index to match them."""
    path = tmp_path / "s.db"
    _filled(path).close()
    child = _run(f"""
        import os
        import numpy as np
        from milvus_lite.engine import flush
        from tracerag.stores.milvus_errors import StoreWriteFailed
        from tracerag.stores.milvus_store import MilvusStore
        store = MilvusStore.open({_uri(path)!r}, embedder_id="fault-test", dim={DIM})
        def full(*args, **kwargs):
            raise OSError(28, "No space left on device")
        flush.write_data_file = flush.write_delta_file = full
        ids = [f"r{{i:03d}}" for i in range({N})]
        texts = [{{"text": f"newword row{{i}}"}} for i in range({N})]
        try:
            store.upsert(ids, np.full(({N}, {DIM}), 0.5, dtype=np.float32), texts)
        except StoreWriteFailed as e:
            print(e.applied, e, flush=True)
        os._exit(0)  # dies without closing
    """)
    assert child.returncode == 0, child.stderr[-2000:]
    line = child.stdout.strip()
    assert line.startswith("rows ") and "disk full" in line and "the next open checks them" in line, line
    assert "Traceback" not in child.stderr, child.stderr[-2000:]
    store = _open(path)
    assert store.count() == N and store.get(["r001"])[0].metadata == {"text": "newword row1"}
    words = store.word_index()
    assert sorted(x for x, _ in words.top("newword", 2 * N)) == _ids() and not words.top("oldword", 5)
    store.close()


def _interrupted(self, rows, **kwargs):
    raise KeyboardInterrupt  # the writer stops between the row upsert and the word-index update


def test_a_store_opens_for_reading_when_its_repair_cannot_be_written(tmp_path, monkeypatch, caplog):
    """A journal entry says the word index lags, and the disk is full: the store opens, warns, and offers no
    stale word index (the hybrid retriever then indexes the rows in memory); a later open repairs it."""
    from tracerag.stores.milvus_words_bm25 import BM25Words

    path = tmp_path / "s.db"
    store = _filled(path)
    monkeypatch.setattr(BM25Words, "update", _interrupted)
    with pytest.raises(KeyboardInterrupt):
        store.upsert(_ids(), _vectors(N, 1), _texts("newword"))
    store.close()
    monkeypatch.undo()
    _disk_full(monkeypatch, "log")
    with caplog.at_level(logging.WARNING):
        store = _open(path)
    assert any("could not be rebuilt" in r.getMessage() for r in caplog.records)
    assert store.count() == N and store.get(["r005"])[0].metadata["text"].startswith("newword")
    assert store.word_index() is None
    store.close()
    monkeypatch.undo()
    store = _open(path)
    assert len(store.word_index().top("newword", 2 * N)) == N
    store.close()


# ---------------------------------------------------------------------------------------------
# The kill -9 campaign.

_WRITER = """
import sys, numpy as np
from tracerag.stores.milvus_store import MilvusStore
uri, round_ = sys.argv[1], int(sys.argv[2])
store = MilvusStore.open(uri, embedder_id="fault-test", dim=4, create=True)
store.word_index()
rng = np.random.default_rng(round_)
step = 0
print("ready", flush=True)
while True:
    step += 1
    ids = [f"r{i:03d}" for i in rng.choice(150, size=40, replace=False)]
    vectors = rng.standard_normal((40, 4)).astype(np.float32)
    store.upsert(ids, vectors, [{"text": f"w{round_}x{step} {x}"} for x in ids])
    if step % 5 == 0:
        store.delete(ids[:3])
"""


@pytest.mark.slow
def test_writers_killed_at_random_leave_stores_that_open_and_serve_each_id_once(tmp_path):
    rng = random.Random(7)
    outcomes = []
    for n in range(4):
        path = tmp_path / f"s{n}.db"
        uri = _uri(path)
        for round_ in range(3):
            writer = subprocess.Popen([sys.executable, "-c", _WRITER, uri, str(round_)], stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)},
                                      cwd=str(ROOT), text=True)
            assert writer.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0.2, 2.5))
            writer.send_signal(signal.SIGKILL)
            writer.wait()
            check = _run(f"""
                import json, numpy as np
                from tracerag.stores.milvus_store import MilvusStore
                from tracerag.stores.vector_store import StoreError
                try:
                    store = MilvusStore.open({uri!r}, embedder_id="fault-test", dim=4)
                except StoreError as e:
                    print(json.dumps({{"error": str(e)}}))
                    raise SystemExit
                ids = [x for b in store.scan(13) for x in b.ids]
                hits = store.search(np.eye(4, dtype=np.float32), k=50)
                by_step = {{}}
                for r in store.get(ids):
                    by_step.setdefault(r.metadata["text"].split()[0], []).append(r.id)
                words = store.word_index()
                stale = [x for step, xs in by_step.items() for x in xs if x not in words.scores(step, xs)]
                print(json.dumps({{"count": store.count(), "ids": len(ids), "distinct": len(set(ids)),
                                   "repeated_hits": sum(len(h) - len({{x.id for x in h}}) for h in hits),
                                   "stale_words": len(stale), "word_rows": words.count()}}))
                store.close()
            """)
            assert check.returncode == 0 and "Traceback" not in check.stderr, check.stderr[-3000:]
            outcome = json.loads(check.stdout.strip().splitlines()[-1])
            outcomes.append(outcome)
            if "error" in outcome:
                assert "\n" not in outcome["error"] and outcome["error"].startswith(str(path)), outcome
                break
            assert outcome["ids"] == outcome["distinct"] == outcome["count"] == outcome["word_rows"], outcome
            assert outcome["repeated_hits"] == 0 and outcome["stale_words"] == 0, outcome
    assert sum("error" not in o for o in outcomes) >= len(outcomes) - 2, outcomes
