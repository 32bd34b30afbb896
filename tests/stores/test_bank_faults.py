"""The numpy bank's answers to the faults a fault campaign found: a bank reached through a symlink, a
corrupt row outside the load-time sample (impossible scores, block checksums), errors that must name their
file (and a CLI that prints them as one line), and the temp copy a writer killed before its swap leaves."""

import errno
import json
import logging
import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from tracerag.data_files.processes import process_start
from tracerag.stores import bank_layout, bank_queries, bank_reading, bank_swap, bank_writing
from tracerag.stores import cosine_bank as cosine_bank_module
from tracerag.stores.bank_errors import BankError, BankWriteError
from tracerag.stores.bank_layout import BLOCK_CHECKSUMS, BLOCKS
from tracerag.stores.cosine_bank import CosineBank

ROOT = Path(__file__).resolve().parents[2]
DIM = 16
N = 400
PER_BLOCK = 8  # rows per checksummed block in the "large" banks below (BLOCK_BYTES = 8 rows of DIM float32)


def unit(rng, n, dim=DIM):
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def make_bank(path, n=N, seed=0):
    ids = [f"r{i}" for i in range(n)]
    return CosineBank.from_vectors(path, unit(np.random.default_rng(seed), n), ids, [{"i": i} for i in range(n)],
                                   embedder_id="raw")


@pytest.fixture
def large(monkeypatch):
    """Banks of N rows count as large: the load checks a sample of 8 rows and blocks are checksummed."""
    monkeypatch.setattr(bank_layout, "SAMPLE_ROWS", 8)
    monkeypatch.setattr(bank_layout, "FULL_CHECK_BYTES", 0)
    monkeypatch.setattr(bank_layout, "BLOCK_BYTES", PER_BLOCK * DIM * 4)


def unsampled_row(n=N):
    """A row the load does not check (outside the sample), in the middle of its block."""
    sample = set(bank_layout.check_rows(n, DIM).tolist())
    return next(r for r in range(n // 2, n) if r not in sample and r % PER_BLOCK == 3)


def poke(directory, row, col, value=None, flip_bit=None):
    """Change one float32 of embeddings.npy in place (the header stays valid)."""
    path = directory / "embeddings.npy"
    with open(path, "rb") as f:
        np.lib.format.read_magic(f)
        np.lib.format.read_array_header_1_0(f)
        offset = f.tell() + (row * DIM + col) * 4
    with open(path, "r+b") as f:
        f.seek(offset)
        raw = f.read(4)
        bits = int.from_bytes(raw, "little")
        new = np.float32(value).tobytes() if value is not None else (bits ^ (1 << flip_bit)).to_bytes(4, "little")
        f.seek(offset)
        f.write(new)


def queries(n=200, seed=5):
    return unit(np.random.default_rng(seed), n)


def warnings_of(caplog):
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


# -- 1. a bank reached through a symlink ------------------------------------------------------------


def test_a_bank_through_a_symlink_grows_in_its_real_directory_and_shares_its_lock(tmp_path, caplog):
    real, link = tmp_path / "real", tmp_path / "link"
    make_bank(real, n=20)
    link.symlink_to(real)
    with caplog.at_level(logging.INFO, logger="tracerag.stores.bank_layout"):
        bank = CosineBank.load(link)
        assert bank.append_vectors(["new"], unit(np.random.default_rng(1), 1)) == 1
    assert f"bank {link} is {real}" in caplog.text
    assert link.is_symlink() and os.readlink(link) == str(real)  # the link is still a link ...
    assert len(CosineBank.load(real)) == 21 and "new" in CosineBank.load(real)  # ... and the real bank has the row
    assert bank.delete(["r0"]) == 1 and len(CosineBank.load(real)) == 20 and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".real.lock", "link", "real"]  # one lock, no leftovers

    acquired = threading.Event()

    def other_writer():
        with bank_swap.writer_lock(real):
            acquired.set()

    with bank_swap.writer_lock(link):  # the lock of the link is the lock of the real directory
        thread = threading.Thread(target=other_writer)
        thread.start()
        assert not acquired.wait(0.3)
    assert acquired.wait(10)
    thread.join()


def test_a_bank_created_through_a_link_to_no_directory_yet_is_created_where_it_points(tmp_path):
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "data" / "bank")
    (tmp_path / "data").mkdir()
    bank = make_bank(link, n=5)
    assert link.is_symlink() and (tmp_path / "data" / "bank" / "manifest.json").is_file()
    assert len(bank) == 5 and bank.directory == link
    for path in (link, tmp_path / "data" / "bank"):  # one bank, whichever path names it
        with pytest.raises(BankError, match="a bank already exists"):
            make_bank(path, n=5)
    assert link.is_symlink()


# -- 2. an impossible score, a block that fails its checksum ---------------------------------------------


def drop_block_checksums(directory):
    """Make the bank look written before block checksums existed (an old bank)."""
    manifest = json.loads((directory / "manifest.json").read_text())
    del manifest[BLOCK_CHECKSUMS]
    for key in ("checksums", "sampled_checksums"):
        manifest[key].pop(BLOCKS)
    (directory / "manifest.json").write_text(json.dumps(manifest))
    (directory / BLOCKS).unlink()


@pytest.mark.parametrize("written", ["with block checksums", "before block checksums"])
def test_a_row_flipped_to_an_impossible_value_is_never_returned_and_warned_about_once(tmp_path, large, caplog,
                                                                                       written):
    d = tmp_path / "bank"
    make_bank(d)
    assert json.loads((d / "manifest.json").read_text())[BLOCK_CHECKSUMS]["rows_per_block"] == PER_BLOCK
    if written == "before block checksums":
        drop_block_checksums(d)
    row = unsampled_row()
    poke(d, row, 0, value=5.9e35)  # what one flipped exponent bit did in the fault campaign
    bank = CosineBank.load(d)  # the row is outside the sample: the load cannot see it
    q = queries()
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            hits = bank.search(q, k=10, min_score=None)
            assert all(h.row != row for per in hits for h in per)
            assert all(-1.001 <= h.score <= 1.001 for per in hits for h in per)
            assert all(len(per) == 10 for per in hits)
        every = bank.search(q[:4], k=N, min_score=None)  # even when asked for every row
        assert all(len(per) == N - len(bank.corrupt_rows) and row not in {h.row for h in per} for per in every)
    found = warnings_of(caplog)
    assert len(found) == 1, found  # one warning, for 200 queries searched three times
    assert str(d / "embeddings.npy") in found[0] and f"row {row} (id 'r{row}', norm 5.9e+35)" in found[0]
    assert "rebuild the bank" in found[0] and "\n" not in found[0]
    assert row in bank.corrupt_rows
    if written == "with block checksums":  # the block failed its checksum: all its rows are left out
        block = row // PER_BLOCK
        assert f"block {block} (rows {block * PER_BLOCK}-{block * PER_BLOCK + PER_BLOCK - 1})" in found[0]
        assert sorted(bank.corrupt_rows) == list(range(block * PER_BLOCK, (block + 1) * PER_BLOCK))
    else:  # no checksums: the impossible score names the row
        assert sorted(bank.corrupt_rows) == [row] and "impossible for a cosine" in found[0]


@pytest.mark.parametrize("written", ["with block checksums", "before block checksums"])
def test_approximate_search_never_returns_a_corrupt_row_either(tmp_path, large, caplog, written):
    pytest.importorskip("faiss")
    d = tmp_path / "bank"
    make_bank(d).build_ann(m=8, ef_construction=40)  # the graph holds the row as it was
    if written == "before block checksums":
        drop_block_checksums(d)
        manifest = json.loads((d / "manifest.json").read_text())
    row = unsampled_row()
    target = np.array(CosineBank.load(d).vectors[row])
    poke(d, row, 0, value=-5.9e35 if target[0] < 0 else 5.9e35)
    bank = CosineBank.load(d, exact=False)
    with caplog.at_level(logging.WARNING):
        for _ in range(2):
            hits = bank.search(target, k=5, min_score=None)  # one query (its own shorter path) touches it first
            hits += bank.search(np.vstack([target, queries(50)]), k=5, min_score=None)
            assert all(row not in {h.row for h in per} and len(per) == 5 for per in hits)
            assert all(-1.001 <= h.score <= 1.001 for per in hits for h in per)
    found = warnings_of(caplog)
    assert len(found) == 1 and f"row {row} (id 'r{row}', norm 5.9e+35)" in found[0]
    if written == "before block checksums":
        assert manifest.get(BLOCK_CHECKSUMS) is None and "impossible for a cosine" in found[0]


def test_a_row_damaged_after_the_load_of_a_small_bank_is_caught_by_its_score(tmp_path, caplog):
    bank = make_bank(tmp_path / "bank", n=40)  # small: every row checked at load, no block checksums
    poke(tmp_path / "bank", 7, 3, value=float("nan"))  # the memory map sees the change
    with caplog.at_level(logging.WARNING):
        hits = bank.search(queries(50), k=40, min_score=None)
        bank.search(queries(50), k=3)
    assert all(7 not in {h.row for h in per} and len(per) == 39 for per in hits)
    found = warnings_of(caplog)
    assert len(found) == 1 and "row 7 (id 'r7', norm nan) scored nan" in found[0]


def test_a_block_checksum_mismatch_is_found_on_first_touch_and_kept_out(tmp_path, large, caplog):
    d = tmp_path / "bank"
    make_bank(d)
    row = unsampled_row()
    block = row // PER_BLOCK
    poke(d, row, 2, flip_bit=3)  # a low mantissa bit: still a unit row, scores still plausible
    bank = CosineBank.load(d)
    assert bank.corrupt_rows == {}  # not read at load ...
    target = np.array(bank.vectors[row])
    with caplog.at_level(logging.WARNING):
        hits = bank.search(target, k=5, min_score=None)[0]  # ... but on the first search
        again = CosineBank.load(d).search(target, k=N, min_score=None)[0]  # verdict kept for this process
    assert row not in {h.row for h in hits} and len(hits) == 5
    assert not {h.row for h in again} & set(range(block * PER_BLOCK, (block + 1) * PER_BLOCK))
    found = warnings_of(caplog)
    assert len(found) == 1, found
    assert found[0].startswith(f"{d / 'embeddings.npy'}: block {block} (rows {block * PER_BLOCK}-")
    assert f"does not match {BLOCKS} recorded when it was written" in found[0]

    # an append copies the rows unchanged and carries their checksums: the damage stays detectable
    assert bank.append_vectors(["new"], unit(np.random.default_rng(3), 1)) == 1
    with caplog.at_level(logging.WARNING):
        fresh = CosineBank.load(d)
        fresh.search(target, k=3)
    assert sorted(fresh.corrupt_rows) == list(range(block * PER_BLOCK, (block + 1) * PER_BLOCK))
    # a change that moves rows would give them fresh checksums: refused
    with pytest.raises(BankError, match=re.escape(f"{d / 'embeddings.npy'}: block {block} of its rows failed")):
        fresh.delete(["r0"])


def test_blocks_are_verified_once_and_only_where_touched(tmp_path, large):
    d = tmp_path / "bank"
    make_bank(d)
    poke(d, unsampled_row(), 2, flip_bit=3)
    guard = CosineBank.load(d)._snap.guard
    guard.touch(np.array([0, 1, 9]))  # an approximate search's candidates: blocks 0 and 1
    assert guard._state.pending == N // PER_BLOCK - 2 and guard.failed_blocks == []
    guard.verify_all()
    assert guard._state.pending == 0 and guard.failed_blocks == [unsampled_row() // PER_BLOCK]


def test_old_banks_without_block_checksums_still_load_and_gain_them_on_append(tmp_path, large):
    d = tmp_path / "bank"
    make_bank(d)
    drop_block_checksums(d)
    bank = CosineBank.load(d)
    assert len(bank.search(queries(3), k=3)[0]) == 3
    assert bank.append_vectors(["new"], unit(np.random.default_rng(3), 1)) == 1
    manifest = json.loads((d / "manifest.json").read_text())
    assert manifest[BLOCK_CHECKSUMS] == {"file": BLOCKS, "rows_per_block": PER_BLOCK, "algorithm": "crc32"}
    assert np.load(d / BLOCKS).shape == (-(-(N + 1) // PER_BLOCK),)


def test_a_damaged_block_checksum_file_is_refused_at_load(tmp_path, large):
    d = tmp_path / "bank"
    make_bank(d)
    (d / BLOCKS).write_bytes((d / BLOCKS).read_bytes()[:-4] + b"\0\0\0\0")
    with pytest.raises(BankError, match=re.escape(f"{d / BLOCKS}: its contents do not match the checksum")):
        CosineBank.load(d)


# -- 3. errors that name their file ------------------------------------------------------------------


def garble(path, how):
    raw = path.read_bytes()
    path.write_bytes({"truncated": raw[:20], "garbled": raw[:10] + b"{'descr': <f4', 'fortran" + raw[34:],
                      "unbalanced": raw[:10] + b"(" * 60 + raw[70:], "bad magic": b"XXXXXX" + raw[6:]}[how])


@pytest.mark.parametrize("how", ["truncated", "garbled", "unbalanced", "bad magic"])
@pytest.mark.parametrize("name", ["embeddings.npy", "ids.offsets.npy", BLOCKS])
def test_a_bad_npy_header_is_one_line_naming_the_file(tmp_path, large, monkeypatch, name, how):
    monkeypatch.setattr(bank_reading, "WHOLE_READ_BYTES", 0)  # read ids and metadata through their indexes
    d = tmp_path / "bank"
    make_bank(d)
    garble(d / name, how)
    with pytest.raises(BankError) as info:
        CosineBank.load(d)
    message = str(info.value)
    assert message.startswith(f"{d / name}: ") and "\n" not in message and "rebuild" in message


def test_a_header_damaged_after_the_load_is_named_by_the_next_write(tmp_path):
    d = tmp_path / "bank"
    bank = make_bank(d, n=20)
    garble(d / "embeddings.npy", "garbled")
    with pytest.raises(BankError, match=re.escape(f"{d / 'embeddings.npy'}: not a readable .npy file")):
        bank.append_vectors(["new"], unit(np.random.default_rng(3), 1))


def fail_fsync_of(monkeypatch, name, code=errno.ENOSPC):
    """fsync of files named ``name`` fails with ``code`` (as a full disk reports a delayed write)."""
    real = os.fsync

    def fsync(fd):
        if os.readlink(f"/proc/self/fd/{fd}").endswith("/" + name):
            raise OSError(code, os.strerror(code))
        return real(fd)

    monkeypatch.setattr(bank_writing.os, "fsync", fsync)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
@pytest.mark.parametrize("name", ["embeddings.npy", "metadata.jsonl", "ids.offsets.npy", "manifest.json", BLOCKS])
def test_a_full_disk_during_a_write_is_one_line_naming_the_file(tmp_path, large, monkeypatch, name):
    d = tmp_path / "bank"
    bank = make_bank(d)
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    fail_fsync_of(monkeypatch, name)
    with pytest.raises(BankWriteError) as info:
        bank.append_vectors(["new"], unit(np.random.default_rng(3), 1))
    assert str(info.value) == (f"{d / name}: not written (disk full); the bank at {d} is unchanged; "
                               "free disk space and run again")
    assert isinstance(info.value, OSError) and info.value.errno == errno.ENOSPC
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".bank.lock", "bank"]  # no temp copy left
    with pytest.raises(BankWriteError, match=re.escape(f"{tmp_path / 'other' / name}: not written (disk full)")):
        make_bank(tmp_path / "other")
    assert not (tmp_path / "other").exists()


def test_an_unreadable_approximate_index_is_named(tmp_path, monkeypatch, caplog):
    pytest.importorskip("faiss")
    d = tmp_path / "bank"
    make_bank(d, n=300).build_ann(m=4, ef_construction=16)
    garbage = b"garbage!" * 64
    (d / "ann.faiss").write_bytes(garbage)
    manifest = json.loads((d / "manifest.json").read_text())
    manifest["checksums"]["ann.faiss"] = bank_layout._sha256(garbage)  # as if written so: the load accepts it
    manifest["sampled_checksums"].pop("ann.faiss", None)
    (d / "manifest.json").write_text(json.dumps(manifest))
    bank = CosineBank.load(d)
    q = queries(2)
    with pytest.raises(BankError) as info:
        bank.search(q, exact=False)
    assert str(info.value).startswith(f"{d / 'ann.faiss'}: not a readable faiss index (")
    assert str(info.value).endswith("; rebuild it with CosineBank.build_ann()") and "\n" not in str(info.value)
    monkeypatch.setattr(bank_queries, "ANN_MIN_ROWS", 10)  # chosen by size: exact answers, one warning
    auto = CosineBank.load(d)
    with caplog.at_level(logging.WARNING):
        assert [h.id for h in auto.search(q)[0]] == [h.id for h in auto.search(q, exact=True)[0]]
        auto.search(q)
    assert len(warnings_of(caplog)) == 1 and "searching exactly meanwhile" in caplog.text


def test_a_full_disk_while_the_approximate_index_is_written_is_named(tmp_path, monkeypatch):
    faiss = pytest.importorskip("faiss")
    from tracerag.stores import bank_ann

    bank = make_bank(tmp_path / "bank", n=50)

    def write_index(index, path, flags=0):
        raise RuntimeError("Error in void faiss::write_HNSW(...) at index_write.cpp:362: Error: 'ret == (size)' "
                           "failed: write error in x: 656 != 960 (No space left on device)")

    monkeypatch.setattr(faiss, "write_index", write_index)
    monkeypatch.setattr(bank_ann, "_free_bytes", lambda directory: 0)
    with pytest.raises(BankWriteError, match=re.escape(f"{tmp_path / 'bank' / 'ann.faiss'}: not written (disk full)")):
        bank.build_ann(m=4, ef_construction=16)
    assert not bank.has_ann and not CosineBank.load(tmp_path / "bank").has_ann


def run_cli(*args, cwd):
    env = {**os.environ, "TRACERAG_CACHE_DIR": str(cwd / "cache")}
    env.pop("TRACERAG_LM", None)
    return subprocess.run([sys.executable, str(ROOT / "optimize.py"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_cli_on_a_damaged_bank_prints_one_line_and_no_traceback(tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "1", "text": "Statins lower LDL cholesterol in adults."}\n', encoding="utf-8")
    built = run_cli("ingest", "--docs", str(docs), "--bank", "bank", "--embedder", "lexical", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    garble(tmp_path / "bank" / "embeddings.npy", "unbalanced")
    with docs.open("a", encoding="utf-8") as f:
        f.write('{"id": "2", "text": "Aspirin thins the blood."}\n')
    for args in (("ingest", "--docs", str(docs), "--bank", "bank", "--embedder", "lexical"),
                 ("store", "copy", "--from", "bank", "--to", "copy")):
        result = run_cli(*args, cwd=tmp_path)
        assert result.returncode != 0
        assert "Traceback" not in result.stderr + result.stdout
        lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith(f"error: {Path('bank') / 'embeddings.npy'}: not a readable .npy file (")
        assert lines[0].endswith("); rebuild the bank or restore it from a backup")


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_the_cli_reports_a_full_disk_as_one_line(tmp_path, monkeypatch, capsys):
    import optimize

    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "1", "text": "Statins lower LDL cholesterol in adults."}\n', encoding="utf-8")
    monkeypatch.setenv("TRACERAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRACERAG_LM", raising=False)
    fail_fsync_of(monkeypatch, "metadata.jsonl")
    bank = tmp_path / "bank"
    assert optimize.main(["ingest", "--docs", str(docs), "--bank", str(bank), "--embedder", "lexical"]) == 2
    err = capsys.readouterr().err
    assert f"error: {bank / 'metadata.jsonl'}: not written (disk full); the bank at {bank} is unchanged; free disk " \
           "space and run again" in err.splitlines()


# -- 4. the temp copy of a writer killed before its swap ---------------------------------------------


def dead_pid():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def killed_before_swap(directory, pid, record=False):
    """A full temp copy as a writer killed after writing its version, before swapping it in, leaves it: its
    record already removed (``record``: still there), its name saying which process wrote it."""
    start = process_start(pid) or "x"
    tmp = directory.parent / f".{directory.name}.tmp-{pid}.{start}.{bank_swap._host_tag()}-abcd1234"
    os.rename(make_bank(directory.parent / "scratch" / str(pid), n=20, seed=9).directory, tmp)
    if record:
        (tmp / bank_layout.WRITER).write_text(json.dumps({"pid": pid, "host": socket.gethostname(), "start": start}))
    return tmp


def test_a_temp_copy_whose_writer_is_dead_is_removed_on_load_and_by_the_next_writer(tmp_path, caplog):
    d = tmp_path / "bank"
    bank = make_bank(d, n=20)
    first, second = killed_before_swap(d, dead_pid()), killed_before_swap(d, dead_pid(), record=True)
    with caplog.at_level(logging.INFO, logger="tracerag.stores.bank_swap"):
        assert len(CosineBank.load(d)) == 20  # the load removes them (the writer lock is free) ...
    assert not first.exists() and not second.exists()
    assert f"removing {first} left by an interrupted write (its writer, pid" in caplog.text
    with bank_swap.writer_lock(d):  # ... but not while a writer holds the lock: that writer does it
        third = killed_before_swap(d, dead_pid())
        CosineBank.load(d)
        assert third.exists()
    assert bank.append_vectors(["x"], unit(np.random.default_rng(2), 1)) == 1
    assert not third.exists() and sorted(p.name for p in tmp_path.iterdir()) == [".bank.lock", "bank", "scratch"]


def test_a_live_writers_temp_copy_is_never_removed(tmp_path):
    d = tmp_path / "bank"
    bank = make_bank(d, n=20)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        theirs = killed_before_swap(d, live.pid)  # by its name only: the record is already gone
        other_host = d.parent / f".bank.tmp-{dead_pid()}.x.{bank_swap._host_tag('elsewhere')}-abcd1234"
        other_host.mkdir()
        CosineBank.load(d)
        assert bank.append_vectors(["x"], unit(np.random.default_rng(2), 1)) == 1
        assert theirs.exists() and other_host.exists()
    finally:
        live.kill()
        live.wait()
    CosineBank.load(d)
    assert not theirs.exists() and other_host.exists()  # another host's writer: only age tells


def test_a_writer_in_flight_names_itself(tmp_path, monkeypatch):
    """The name of a writer's temp directory says who writes it from the instant it exists."""
    seen = []
    real_rows = bank_writing.write_rows

    def spy(f, *args, **kwargs):
        seen.append(Path(f.name).parent.name)
        return real_rows(f, *args, **kwargs)

    monkeypatch.setattr(bank_writing, "write_rows", spy)
    monkeypatch.setattr(cosine_bank_module, "write_rows", spy)
    make_bank(tmp_path / "bank", n=3)
    pid = os.getpid()
    assert re.fullmatch(rf"\.bank\.tmp-{pid}\.(\d+|x)\.{bank_swap._host_tag()}-.+", seen[0])
