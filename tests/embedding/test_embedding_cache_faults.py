"""A failing embedding cache costs speed, never answers.

Every fault below (a file that is not SQLite, a truncated one, a path that is a directory or a FIFO, a read-only
file, a full disk, a lock held past the wait, a damaged row, a table of another layout) must leave
``CachedEmbedder.embed`` returning exactly the wrapped embedder's vectors, with one warning naming the file,
the failure counted by cause (per cache and for ``/metrics``), and no exception.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tracerag.embedding import cache_failures, cache_file
from tracerag.embedding import embedding_cache as ec
from tracerag.embedding.cache_failures import cache_errors
from tracerag.embedding.cache_file import CacheFile
from tracerag.embedding.embedders import l2_normalize
from tracerag.embedding.embedding_cache import CachedEmbedder

ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False


class Inner:
    """Deterministic fake embedder that records every batch it is asked to embed."""

    def __init__(self, id="fake-v1", dim=16):
        self.id, self.dim = id, dim
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        rows = [np.frombuffer(hashlib.shake_256(self.id.encode() + t.encode()).digest(self.dim), dtype=np.uint8)
                for t in texts]
        return l2_normalize(np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim) - 127.5)


def expected(texts, dim=16):
    return Inner(dim=dim).embed(texts)


@pytest.fixture
def caplog_cache(caplog):
    caplog.set_level(logging.DEBUG, logger=cache_failures.logger.name)
    return caplog


def warnings_naming(caplog, path) -> list[str]:
    records = [r for r in caplog.records if r.name == cache_failures.logger.name and r.levelno >= logging.WARNING]
    assert all(r.exc_info is None for r in records)  # never a traceback
    return [r.getMessage() for r in records if str(path) in r.getMessage()]


def populated(path, texts=("a", "b", "c"), dim=16) -> None:
    cache = CachedEmbedder(Inner(dim=dim), path)
    cache.embed(list(texts))
    cache.close()


def test_healthy_cache_warns_and_counts_nothing(tmp_path, caplog_cache):
    before = cache_errors()
    cached = CachedEmbedder(Inner(), tmp_path / "c.sqlite")
    np.testing.assert_array_equal(cached.embed(["x", "y"]), cached.embed(["x", "y"]))
    assert not warnings_naming(caplog_cache, tmp_path) and not cached.errors and cache_errors() == before


def test_garbage_file_is_set_aside_and_a_fresh_cache_started(tmp_path, caplog_cache):
    path = tmp_path / "c.sqlite"
    path.write_bytes(os.urandom(5000))
    before = cache_errors()["corrupt"]
    inner = Inner()
    cached = CachedEmbedder(inner, path)
    texts = ["打开客厅的灯", "turn on the TV", "打开客厅的灯"]
    np.testing.assert_array_equal(cached.embed(texts), expected(texts))
    [message] = warnings_naming(caplog_cache, path)
    assert "not a readable cache file" in message and ".corrupt-" in message
    assert cached.errors["corrupt"] == 1 and cache_errors()["corrupt"] == before + 1
    [aside] = tmp_path.glob("c.sqlite.corrupt-*")
    assert len(aside.read_bytes()) == 5000  # the damaged file, kept beside the fresh one
    np.testing.assert_array_equal(cached.embed(texts), expected(texts))
    assert len(inner.calls) == 1  # the fresh cache answers the second call
    cached.close()
    assert len(warnings_naming(caplog_cache, path)) == 1


def test_truncated_sqlite_file(tmp_path, caplog_cache):
    path = tmp_path / "c.sqlite"
    texts = [f"text {i}" for i in range(1500)]
    populated(path, texts, dim=64)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    cached = CachedEmbedder(Inner(dim=64), path)
    np.testing.assert_array_equal(cached.embed(texts), expected(texts, dim=64))
    [message] = warnings_naming(caplog_cache, path)
    assert "malformed" in message
    assert cached.errors["corrupt"] == 1
    assert list(tmp_path.glob("c.sqlite.corrupt-*"))


def test_wrong_schema_is_set_aside(tmp_path, caplog_cache):
    path = tmp_path / "c.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE entries (key TEXT, value BLOB)")
    conn.close()
    cached = CachedEmbedder(Inner(), path)
    np.testing.assert_array_equal(cached.embed(["a"]), expected(["a"]))
    [message] = warnings_naming(caplog_cache, path)
    assert "layout" in message and cached.errors["schema"] == 1
    assert list(tmp_path.glob("c.sqlite.schema-*"))


def test_only_the_newest_set_aside_copy_is_kept(tmp_path, caplog_cache):
    path = tmp_path / "c.sqlite"
    for stamp in ("20200101T000000", "20210101T000000"):
        (tmp_path / f"c.sqlite.corrupt-{stamp}").write_bytes(b"old")
    path.write_bytes(b"not sqlite at all" * 200)
    CachedEmbedder(Inner(), path).embed(["a"])
    assert len(list(tmp_path.glob("c.sqlite.corrupt-*"))) == 1


def test_path_that_is_a_directory_is_bypassed_and_retried_later(tmp_path, caplog_cache, monkeypatch):
    path = tmp_path / "c.sqlite"
    path.mkdir()
    now = [1000.0]
    monkeypatch.setattr(cache_failures, "_clock", lambda: now[0])
    before = cache_errors()["not_a_file"]
    inner = Inner()
    cached = CachedEmbedder(inner, path)
    for texts in (["a", "b"], ["b", "c"]):
        np.testing.assert_array_equal(cached.embed(texts), expected(texts))
    assert cached.errors["not_a_file"] == 1  # the second call did not try again
    now[0] += cache_failures.RETRY_AFTER + 1
    np.testing.assert_array_equal(cached.embed(["d"]), expected(["d"]))
    assert cached.errors["not_a_file"] == 2 and cache_errors()["not_a_file"] == before + 2
    [message] = warnings_naming(caplog_cache, path)
    assert "directory" in message and "without the cache" in message
    assert path.is_dir() and not list(path.iterdir())  # not ours: left as it is
    cached.close()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_path_that_is_a_fifo_does_not_hang(tmp_path, caplog_cache):
    path = tmp_path / "c.sqlite"
    os.mkfifo(path)
    cached = CachedEmbedder(Inner(), path)
    np.testing.assert_array_equal(cached.embed(["a"]), expected(["a"]))
    [message] = warnings_naming(caplog_cache, path)
    assert "FIFO" in message and cached.errors["not_a_file"] == 1


def _read_only_checks(tmp_path, caplog_cache, path):
    inner = Inner()
    cached = CachedEmbedder(inner, path)
    np.testing.assert_array_equal(cached.embed(["a", "b", "new"]), expected(["a", "b", "new"]))
    assert inner.calls == [["new"]]  # lookups continue
    np.testing.assert_array_equal(cached.embed(["c", "other"]), expected(["c", "other"]))
    assert inner.calls[-1] == ["other"]
    assert cached.errors["read_only"] == 1  # writing is not tried on every call
    [message] = warnings_naming(caplog_cache, path)
    assert "cannot be written" in message and "lookups continue" in message
    cached.close()


@pytest.mark.skipif(ROOT, reason="root writes read-only files: see the simulated test")
def test_read_only_file_and_directory(tmp_path, caplog_cache):
    path = tmp_path / "ro" / "c.sqlite"
    populated(path)
    path.chmod(0o444)
    path.parent.chmod(0o555)
    try:
        _read_only_checks(tmp_path, caplog_cache, path)
    finally:
        path.parent.chmod(0o755)


def test_read_only_file_simulated(tmp_path, caplog_cache, monkeypatch):
    """What a read-only file does, as root too: SQLite opens every connection read-only (``mode=ro``)."""
    path = tmp_path / "c.sqlite"
    populated(path)
    connect = sqlite3.connect

    def read_only(database, *args, uri=False, **kwargs):
        if not uri:
            database, uri = f"{Path(database).resolve().as_uri()}?mode=ro", True
        return connect(database, *args, uri=uri, **kwargs)

    monkeypatch.setattr(cache_file.sqlite3, "connect", read_only)
    _read_only_checks(tmp_path, caplog_cache, path)


def test_disk_full_on_write_is_bypassed_then_retried(tmp_path, caplog_cache, monkeypatch):
    path = tmp_path / "c.sqlite"
    populated(path)
    now = [1000.0]
    monkeypatch.setattr(cache_failures, "_clock", lambda: now[0])
    attempts = []

    def full(self, conn, rows):
        attempts.append(len(rows))
        raise sqlite3.OperationalError("database or disk is full")

    stores = CacheFile.insert
    monkeypatch.setattr(CacheFile, "insert", full)
    before = cache_errors()["full"]
    inner = Inner()
    cached = CachedEmbedder(inner, path)
    for texts in (["a", "x"], ["b", "y"]):
        np.testing.assert_array_equal(cached.embed(texts), expected(texts))
    assert inner.calls == [["x"], ["y"]]  # lookups continue
    assert attempts == [1]  # one failed write, then writes wait
    assert cached.errors["full"] == 1 and cache_errors()["full"] == before + 1
    [message] = warnings_naming(caplog_cache, path)
    assert "disk full" in message and "not stored" in message
    monkeypatch.setattr(CacheFile, "insert", stores)  # space again, and the wait is over
    now[0] += cache_failures.RETRY_AFTER + 1  # the test's own clock: the machine's may not yet read 1030 s
    np.testing.assert_array_equal(cached.embed(["z"]), expected(["z"]))
    cached.embed(["z"])
    assert inner.calls[-1] == ["z"] and len(inner.calls) == 3  # stored again
    assert len(warnings_naming(caplog_cache, path)) == 1


def test_real_sqlite_full(tmp_path, caplog_cache):
    """SQLite's own SQLITE_FULL (a database at its page limit), classified by its error code."""
    path = tmp_path / "c.sqlite"
    cached = CachedEmbedder(Inner(dim=512), path)
    cached.embed(["first"])
    pages = cached.file.conn.execute("PRAGMA page_count").fetchone()[0]
    cached.file.conn.execute(f"PRAGMA max_page_count={pages}")
    texts = [f"t{i}" for i in range(300)]
    np.testing.assert_array_equal(cached.embed(texts), expected(texts, dim=512))
    assert cached.errors["full"] == 1
    [message] = warnings_naming(caplog_cache, path)
    assert "disk full" in message
    cached.close()


def test_lock_held_past_the_wait(tmp_path, caplog_cache, monkeypatch):
    path = tmp_path / "c.sqlite"
    populated(path)
    monkeypatch.setattr(cache_file, "BUSY_TIMEOUT", 0.05)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process writing, for longer than the wait
    try:
        inner = Inner()
        cached = CachedEmbedder(inner, path)
        np.testing.assert_array_equal(cached.embed(["a", "new"]), expected(["a", "new"]))
        assert inner.calls == [["new"]]
        assert cached.errors["locked"] == 1
        [message] = warnings_naming(caplog_cache, path)
        assert "locked" in message
        cached.close()
    finally:
        holder.rollback()
        holder.close()


def test_damaged_rows_are_misses_and_rewritten(tmp_path, caplog_cache):
    path = tmp_path / "c.sqlite"
    populated(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE entries SET vec = ? WHERE hash = ?", (b"\0" * 8, ec._key("a")))  # wrong length
        conn.execute("UPDATE entries SET vec = ? WHERE hash = ?",
                     (np.full(16, np.nan, dtype=np.float32).tobytes(), ec._key("b")))
    conn.close()
    before = cache_errors()["bad_row"]
    inner = Inner()
    cached = CachedEmbedder(inner, path)
    out = cached.embed(["a", "b", "c"])
    np.testing.assert_array_equal(out, expected(["a", "b", "c"]))
    assert np.isfinite(out).all() and inner.calls == [["a", "b"]]
    assert cached.errors["bad_row"] == 2 and cache_errors()["bad_row"] == before + 2
    [message] = warnings_naming(caplog_cache, path)
    assert "damaged" in message
    cached.close()
    again = Inner()
    np.testing.assert_array_equal(CachedEmbedder(again, path).embed(["a", "b", "c"]), expected(["a", "b", "c"]))
    assert again.calls == []  # rewritten


def test_rows_of_another_width_when_the_width_is_learned(tmp_path, caplog_cache):
    """An embedder that learns its width from its first answer (an HTTP one): a cached row of another
    width is found out once the embedder has answered, and embedded again."""

    class Learning(Inner):
        def __init__(self):
            super().__init__(dim=32)
            self._dim = None

        def embed(self, texts):
            self._dim = 32
            return super().embed(texts)

    path = tmp_path / "c.sqlite"
    populated(path, ["a"], dim=16)  # same id, another width
    inner = Learning()
    cached = CachedEmbedder(inner, path)
    np.testing.assert_array_equal(cached.embed(["a", "new"]), expected(["a", "new"], dim=32))
    assert cached.errors["bad_row"] == 1


def test_async_path_degrades_too(tmp_path, caplog_cache):
    class Remote(Inner):
        async def aembed(self, texts):
            return self.embed(texts)

    path = tmp_path / "c.sqlite"
    path.write_bytes(b"\x13" * 4096)
    cached = CachedEmbedder(Remote(), path)
    out = asyncio.run(cached.aembed(["a", "b"]))
    np.testing.assert_array_equal(out, expected(["a", "b"]))
    assert len(warnings_naming(caplog_cache, path)) == 1 and cached.errors["corrupt"] == 1


def test_metrics_expose_the_counts(tmp_path, caplog_cache):
    from tracerag.serving.metrics import ServiceMetrics

    (tmp_path / "c.sqlite").write_bytes(os.urandom(2048))
    CachedEmbedder(Inner(), tmp_path / "c.sqlite").embed(["a"])
    text = ServiceMetrics().render()
    counts = cache_errors()
    assert counts["corrupt"] >= 1
    for cause, count in counts.items():
        assert f'tracerag_embedding_cache_errors_total{{cause="{cause}"}} {count}\n' in text
    parser = pytest.importorskip("prometheus_client.parser")
    names = {family.name for family in parser.text_string_to_metric_families(text)}
    assert "tracerag_embedding_cache_errors" in names


def test_cli_ingest_with_a_garbage_cache_file(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "embeddings.sqlite").write_bytes(os.urandom(5000))
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "1", "text": "Statins lower LDL cholesterol in adults."}\n', encoding="utf-8")
    env = {**os.environ, "TRACERAG_CACHE_DIR": str(cache)}
    env.pop("TRACERAG_LM", None)
    result = subprocess.run([sys.executable, "optimize.py", "ingest", "--docs", str(docs), "--bank",
                             str(tmp_path / "bank"), "--embedder", "lexical"], cwd=Path(__file__).parents[2],
                            env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert str(cache / "embeddings.sqlite") in result.stderr and "Traceback" not in result.stderr + result.stdout
    assert '"added": 1' in result.stdout


_WRITER = """
import sys, itertools
from tracerag.embedding.embedders import LexicalEmbedder
from tracerag.embedding.embedding_cache import CachedEmbedder
cache = CachedEmbedder(LexicalEmbedder(), sys.argv[1])
for n in itertools.count():
    cache.embed([f"text {n} {k}" for k in range(50)])
    if n == 0:
        print("writing", flush=True)
"""


@pytest.mark.slow
def test_a_cache_killed_while_it_writes_opens_and_answers_right(tmp_path):
    """kill -9 of a process writing the cache, five times: every reopening finds the cache usable (nothing set
    aside), and what it returns is what the embedder computes."""
    import random
    import signal
    import time

    from tracerag.embedding.embedders import LexicalEmbedder

    path = tmp_path / "embeddings.sqlite"
    for _ in range(5):
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "writing"
        time.sleep(random.uniform(0.05, 0.5))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        plain = LexicalEmbedder()
        cache = CachedEmbedder(plain, path)
        texts = [f"text {n} {k}" for n in range(3) for k in range(50)]
        assert np.allclose(cache.embed(texts), plain.embed(texts))
        assert not cache.errors and not list(tmp_path.glob("embeddings.sqlite.*-2*"))
        cache.close()
