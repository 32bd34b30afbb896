import copy
import hashlib
import io
import json
import os
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tracerag.data_files.processes import process_start
from tracerag.embedding.embedders import LexicalEmbedder
from tracerag.stores import bank_layout, bank_search, bank_swap, bank_writing
from tracerag.stores.cosine_bank import BankError, CosineBank, Hit

DIM = 16


class FakeEmbedder:
    """Deterministic per-text vectors; records every batch it is asked to embed."""

    def __init__(self, dim=DIM, id="fake-v1"):
        self.dim, self.id = dim, id
        self.calls: list[list[str]] = []

    def embed(self, texts):
        texts = list(texts)
        self.calls.append(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little")
            out[i] = np.random.default_rng(seed).standard_normal(self.dim)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    @property
    def embedded(self):
        return [t for call in self.calls for t in call]


def unit(rng, n, dim=DIM):
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def brute_force(matrix, q, k, min_score):
    scores = matrix.astype(np.float64) @ (q / np.linalg.norm(q)).astype(np.float64)
    order = [int(r) for r in np.argsort(-scores, kind="stable") if min_score is None or scores[r] >= min_score]
    return order[:k], scores


@pytest.fixture
def texts():
    return [f"document number {i} about topic {i % 7}" for i in range(40)]


@pytest.fixture
def bank(tmp_path, texts):
    ids = [f"id-{i}" for i in range(len(texts))]
    meta = [{"text": t, "doc_id": f"doc-{i % 5}"} for i, t in enumerate(texts)]
    return CosineBank.create(tmp_path / "bank", FakeEmbedder(), ids, texts, meta, batch_size=16)


def data_offset(npy: bytes) -> int:
    f = io.BytesIO(npy)
    np.lib.format.read_magic(f)
    np.lib.format.read_array_header_1_0(f)
    return f.tell()


def leftovers(tmp_path):
    return sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".") and not p.name.endswith(".lock"))


# -- round trip ----------------------------------------------------------------------------------


def test_create_load_round_trip(tmp_path):
    emb = LexicalEmbedder(dim=64)
    texts = ["turn on the living room light", "close the bedroom curtains", "打开客厅的灯"]
    calls = []
    bank = CosineBank.create(tmp_path / "b", emb, ["a", "b", "c"], texts, batch_size=2,
                             progress=lambda done, total: calls.append((done, total)))
    assert calls == [(2, 3), (3, 3)]
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == [
        "embeddings.npy", "ids.json", "ids.offsets.npy", "manifest.json", "metadata.jsonl", "metadata.offsets.npy"]
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["format_version"] == 1 and manifest["embedder"] == emb.id
    assert manifest["dim"] == 64 and manifest["count"] == 3 and manifest["created"] == manifest["updated"]
    assert json.loads((tmp_path / "b" / "ids.json").read_text()) == ["a", "b", "c"]
    lines = (tmp_path / "b" / "metadata.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [{"text": t} for t in texts]  # default metadata
    stored = np.load(tmp_path / "b" / "embeddings.npy")
    assert stored.dtype == np.float32 and stored.shape == (3, 64)
    np.testing.assert_allclose(stored, emb.embed(texts), atol=1e-6)

    loaded = CosineBank.load(tmp_path / "b", emb)
    assert len(loaded) == 3 and loaded.ids == ["a", "b", "c"] and "b" in loaded and "z" not in loaded
    assert loaded.dim == 64 and loaded.embedder_id == emb.id and loaded.row_of("c") == 2
    assert loaded.metadata(2) == {"text": "打开客厅的灯"}
    assert loaded.search_texts(["living room light"], k=1)[0][0].id == "a"
    hits = bank.search(emb.embed(["bedroom curtains"]), k=3, min_score=None)
    assert [h.id for h in hits[0]][0] == "b" and all(isinstance(h, Hit) for h in hits[0])
    assert copy.deepcopy(loaded) is loaded
    assert "count=3" in repr(loaded)
    assert leftovers(tmp_path) == []


def test_embeddings_are_memory_mapped_and_read_only(bank):
    loaded = CosineBank.load(bank.directory)
    base = loaded.vectors
    while base is not None and not isinstance(base, np.memmap):
        base = base.base
    assert isinstance(base, np.memmap)
    assert loaded.vectors.flags.c_contiguous and not loaded.vectors.flags.writeable
    assert loaded.vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(loaded.vectors, axis=1), 1.0, rtol=1e-5)


def test_from_vectors_normalises_and_empty_bank(tmp_path):
    rng = np.random.default_rng(0)
    raw = rng.standard_normal((5, DIM)).astype(np.float32) * 3
    bank = CosineBank.from_vectors(tmp_path / "v", raw, list("abcde"), embedder_id="raw")
    np.testing.assert_allclose(np.linalg.norm(bank.vectors, axis=1), 1.0, rtol=1e-5)
    assert bank.metadata(0) == {}
    empty = CosineBank.from_vectors(tmp_path / "e", np.zeros((0, DIM), np.float32), [], embedder_id="raw")
    assert len(CosineBank.load(tmp_path / "e")) == 0
    assert empty.search(raw[:2]) == [[], []]
    with pytest.raises(BankError, match="NaN"):
        CosineBank.from_vectors(tmp_path / "n", np.full((1, DIM), np.nan), ["x"], embedder_id="raw")
    assert not (tmp_path / "n").exists()


def test_create_refuses_to_clobber(tmp_path, bank, texts):
    with pytest.raises(BankError, match="already exists.*overwrite=True"):
        CosineBank.create(bank.directory, FakeEmbedder(), ["x"], ["y"])
    other = tmp_path / "notabank"
    other.mkdir()
    (other / "precious.txt").write_text("keep me")
    with pytest.raises(BankError, match="not empty"):
        CosineBank.create(other, FakeEmbedder(), ["x"], ["y"], overwrite=True)
    assert (other / "precious.txt").read_text() == "keep me"
    replaced = CosineBank.create(bank.directory, FakeEmbedder(), ["x"], ["y"], overwrite=True)
    assert replaced.ids == ["x"] and CosineBank.load(bank.directory).ids == ["x"]
    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    assert len(CosineBank.create(empty_dir, FakeEmbedder(), ["x"], ["y"])) == 1


def test_input_validation(tmp_path):
    emb = FakeEmbedder()
    with pytest.raises(ValueError, match="duplicate ids"):
        CosineBank.create(tmp_path / "x", emb, ["a", "a"], ["1", "2"])
    with pytest.raises(ValueError, match="2 ids but 1 texts"):
        CosineBank.create(tmp_path / "x", emb, ["a", "b"], ["1"])
    with pytest.raises(ValueError, match="metadata"):
        CosineBank.create(tmp_path / "x", emb, ["a"], ["1"], [{"f": object()}])
    wrong = FakeEmbedder()
    wrong.embed = lambda texts: np.ones((len(list(texts)), DIM + 1), np.float32)
    with pytest.raises(BankError, match=r"shape \(n, 16\)"):
        CosineBank.create(tmp_path / "x", wrong, ["a"], ["1"])
    assert not (tmp_path / "x").exists() and leftovers(tmp_path) == []


# -- search --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def random_bank(tmp_path_factory):
    rng = np.random.default_rng(42)
    vectors = unit(rng, 300)
    meta = [{"doc_id": f"doc-{i % 37}", "n": i} for i in range(300)]
    bank = CosineBank.from_vectors(tmp_path_factory.mktemp("rb") / "bank", vectors, [f"r{i}" for i in range(300)],
                                   meta, embedder_id="random")
    return bank, vectors


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 320), min_score=st.one_of(st.none(), st.floats(-1, 0.9)))
@example(seed=35, k=58, min_score=None)  # rows 236 and 256 differ by 2.5e-8: a float32 tie at the 58th place
def test_search_matches_brute_force(random_bank, seed, k, min_score):
    bank, vectors = random_bank
    q = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    (hits,) = bank.search(q, k=k, min_score=min_score)
    expected, scores = brute_force(vectors, q, k, min_score)
    rows = [h.row for h in hits]
    # the i-th hit is the i-th best row; rows whose float64 scores differ by less than float32 can
    # resolve (~1e-7 here) may come in either order
    assert len(rows) == len(expected) and len(set(rows)) == len(rows)
    np.testing.assert_allclose(scores[rows], scores[expected], atol=1e-6)
    assert [h.id for h in hits] == [f"r{r}" for r in rows]
    np.testing.assert_allclose([h.score for h in hits], scores[rows], atol=1e-5)
    assert all(h.metadata["n"] == h.row for h in hits)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 50), min_score=st.one_of(st.none(), st.floats(-1, 0.5)))
def test_dedupe_matches_brute_force(random_bank, seed, k, min_score):
    bank, vectors = random_bank
    q = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    (hits,) = bank.search(q, k=k, min_score=min_score, dedupe_by="doc_id")
    order, _ = brute_force(vectors, q, len(vectors), min_score)
    best: dict[str, int] = {}
    for r in order:  # best first: the first row seen per doc is its best
        best.setdefault(f"doc-{r % 37}", r)
    assert [h.row for h in hits] == list(best.values())[:k]
    assert len({h.metadata["doc_id"] for h in hits}) == len(hits)


def test_min_score_and_k(random_bank):
    bank, vectors = random_bank
    (hits,) = bank.search(vectors[7], k=5, min_score=0.999)
    assert [h.id for h in hits] == ["r7"] and hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert bank.search(vectors[7], k=0) == [[]]
    assert len(bank.search(vectors[7], k=1000, min_score=None)[0]) == 300
    assert bank.search(-vectors[7], k=3, min_score=1.0) == [[]]
    (default,) = bank.search(vectors[7])  # k=10, min_score=0.1
    assert len(default) == 10 and all(h.score >= 0.1 for h in default)
    with pytest.raises(ValueError, match="shape"):
        bank.search(np.ones(DIM + 1))
    with pytest.raises(ValueError, match="NaN"):
        bank.search(np.full(DIM, np.nan))


def test_dedupe_keeps_best_row_per_key(tmp_path):
    v = np.eye(4, dtype=np.float32)
    rows = np.stack([v[0], 0.9 * v[0] + 0.1 * v[1], 0.8 * v[0] + 0.2 * v[2], v[1], 0.5 * v[0] + 0.5 * v[3]])
    meta = [{"doc_id": "A"}, {"doc_id": "A"}, {"doc_id": "B"}, {"doc_id": "B"}, {}]
    bank = CosineBank.from_vectors(tmp_path / "d", rows, ["a0", "a1", "b0", "b1", "none"], meta, embedder_id="t")
    (plain,) = bank.search(v[0], k=5, min_score=None)
    assert [h.id for h in plain][:3] == ["a0", "a1", "b0"]
    (deduped,) = bank.search(v[0], k=5, min_score=None, dedupe_by="doc_id")
    assert [h.id for h in deduped] == ["a0", "b0", "none"]  # best of A, best of B, a row without the key
    (by_id,) = bank.search(v[0], k=5, min_score=None, dedupe_by="id")
    assert [h.id for h in by_id] == [h.id for h in plain]


def test_batch_search_equals_per_query(random_bank, monkeypatch):
    bank, _ = random_bank
    queries = np.random.default_rng(1).standard_normal((70, DIM)).astype(np.float32)
    single = [bank.search(q, k=7, min_score=0.0, dedupe_by="doc_id")[0] for q in queries]

    def same(batch):
        assert [[h.id for h in hs] for hs in batch] == [[h.id for h in hs] for hs in single[: len(batch)]]
        for b, s in zip(batch, single, strict=False):
            np.testing.assert_allclose([h.score for h in b], [h.score for h in s], atol=1e-5)

    same(bank.search(queries[:4], k=7, min_score=0.0, dedupe_by="doc_id"))  # per-query GEMV path
    same(bank.search(queries, k=7, min_score=0.0, dedupe_by="doc_id"))  # one GEMM (>= 64 queries)
    monkeypatch.setattr(bank_search, "_SMALL_ROWS", 0)  # force the threaded block-maximum pass
    monkeypatch.setattr(bank_search, "_PARALLEL_MAX_BYTES", 0)
    monkeypatch.setattr(bank_search, "_BLOCK_ROWS", 32)
    same(bank.search(queries[:4], k=7, min_score=0.0, dedupe_by="doc_id"))
    same([bank.search(q, k=7, min_score=0.0, dedupe_by="doc_id")[0] for q in queries[:3]])
    assert bank.search(np.zeros((0, DIM), np.float32)) == []


def test_concurrent_threaded_searches_agree_and_leave_blas_threads_alone(random_bank, monkeypatch):
    from threadpoolctl import threadpool_info

    def blas_threads():
        return [m["num_threads"] for m in threadpool_info() if m["user_api"] == "blas"]

    bank, vectors = random_bank
    before = blas_threads()
    monkeypatch.setattr(bank_search, "_SMALL_ROWS", 0)
    monkeypatch.setattr(bank_search, "_PARALLEL_MAX_BYTES", 0)
    monkeypatch.setattr(bank_search, "_BLOCK_ROWS", 16)
    def ids(results):
        return [[h.id for h in hits] for hits in results]

    expected = ids(bank.search(vectors[:3], k=5, min_score=None))
    errors = []

    def work():
        try:
            for _ in range(20):
                assert ids(bank.search(vectors[:3], k=5, min_score=None)) == expected
                assert ids(bank.search(vectors[0], k=5, min_score=None)) == expected[:1]
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and blas_threads() == before


def test_search_texts_embeds_once(bank, texts):
    emb = bank.embedder
    emb.calls.clear()
    results = bank.search_texts(texts[:3], k=2)
    assert len(emb.calls) == 1 and [r[0].id for r in results] == ["id-0", "id-1", "id-2"]
    assert results[0][0].score == pytest.approx(1.0, abs=1e-5)
    assert results[0][0].metadata == {"text": texts[0], "doc_id": "doc-0"}
    with pytest.raises(BankError, match="without an embedder"):
        CosineBank.load(bank.directory).search_texts(["x"])


# -- append --------------------------------------------------------------------------------------


def test_append_embeds_only_new_ids(bank, texts):
    emb = bank.embedder
    old_bytes = (bank.directory / "embeddings.npy").read_bytes()
    old_vectors = np.array(bank.vectors)
    created = bank.manifest["created"]
    emb.calls.clear()
    added = bank.append(["id-0", "new-1", "id-5", "new-2"], ["changed text", "brand new", "also changed", "another"],
                        [{"text": "x"}, {"text": "brand new", "doc_id": "d"}, {}, {"text": "another"}])
    assert added == 2
    assert emb.embedded == ["brand new", "another"]
    assert len(bank) == len(texts) + 2 and bank.ids[-2:] == ["new-1", "new-2"]
    np.testing.assert_array_equal(bank.vectors[: len(texts)], old_vectors)
    new_bytes = (bank.directory / "embeddings.npy").read_bytes()
    old_data, new_data = old_bytes[data_offset(old_bytes):], new_bytes[data_offset(new_bytes):]
    assert new_data[: len(old_data)] == old_data  # old rows copied verbatim
    np.testing.assert_allclose(bank.vectors[-2:], emb.embed(["brand new", "another"]), atol=1e-6)
    assert bank.metadata(len(texts)) == {"text": "brand new", "doc_id": "d"}
    assert bank.metadata(0) == {"text": texts[0], "doc_id": "doc-0"}  # existing rows are not updated
    manifest = json.loads((bank.directory / "manifest.json").read_text())
    assert manifest["count"] == len(texts) + 2 and manifest["created"] == created
    assert manifest["updated"] > created
    reloaded = CosineBank.load(bank.directory, emb)
    assert reloaded.ids == bank.ids and reloaded.search_texts(["another"], k=1)[0][0].id == "new-2"

    emb.calls.clear()
    before = (bank.directory / "manifest.json").read_text()
    assert bank.append(["id-1", "new-1"], ["a", "b"]) == 0
    assert emb.calls == [] and (bank.directory / "manifest.json").read_text() == before  # nothing written
    assert leftovers(bank.directory.parent) == []


def test_append_vectors_and_stale_instance_builds_on_newer_version(tmp_path):
    rng = np.random.default_rng(3)
    first = CosineBank.from_vectors(tmp_path / "b", unit(rng, 3), ["a", "b", "c"], embedder_id="raw")
    second = CosineBank.load(tmp_path / "b")
    assert second.append_vectors(["d"], unit(rng, 1)) == 1
    assert first.append_vectors(["d", "e"], unit(rng, 2), [{"k": 1}, {"k": 2}]) == 1  # sees d from `second`
    final = CosineBank.load(tmp_path / "b")
    assert final.ids == ["a", "b", "c", "d", "e"] and final.metadata(4) == {"k": 2}
    with pytest.raises(ValueError, match="shape"):
        final.append_vectors(["z"], np.ones((1, DIM + 1)))


def test_open_reader_survives_append_swap(bank, texts):
    reader = CosineBank.load(bank.directory)
    q = bank.embedder.embed([texts[3]])
    before = reader.search(q, k=3)
    old_inode = os.stat(bank.directory / "embeddings.npy").st_ino
    bank.append(["new"], ["something else entirely"])
    assert os.stat(bank.directory / "embeddings.npy").st_ino != old_inode  # a new version was swapped in
    after = reader.search(q, k=3)  # still answering from the old (now unlinked) mapping
    assert [(h.id, h.score) for h in after[0]] == [(h.id, h.score) for h in before[0]]
    assert len(reader) == len(texts) and reader.metadata(3)["text"] == texts[3]
    assert len(reader.refresh()) == len(texts) + 1


def test_concurrent_appends_lose_nothing(tmp_path):
    CosineBank.from_vectors(tmp_path / "b", unit(np.random.default_rng(0), 1), ["seed"], embedder_id="raw")
    banks = [CosineBank.load(tmp_path / "b") for _ in range(4)]

    def work(i):
        rng = np.random.default_rng(i)
        for j in range(5):
            banks[i].append_vectors([f"w{i}-{j}"], unit(rng, 1))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(CosineBank.load(tmp_path / "b")) == 21


def test_loads_racing_a_writer_always_see_one_complete_version(tmp_path):
    rng = np.random.default_rng(5)
    writer = CosineBank.from_vectors(tmp_path / "b", unit(rng, 2), ["a", "b"], embedder_id="raw")
    done = threading.Event()
    seen, errors = set(), []

    def read():
        while not done.is_set():
            try:
                bank = CosineBank.load(tmp_path / "b")
                assert len(bank.vectors) == len(bank) == bank.manifest["count"]
                assert bank.search(bank.vectors[-1], k=1)[0][0].id == bank.ids[-1]
                seen.add(len(bank))
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)
                return

    reader = threading.Thread(target=read)
    reader.start()
    for i in range(30):
        writer.append_vectors([f"n{i}"], unit(rng, 1))
    done.set()
    reader.join()
    assert errors == [] and len(seen) > 1


# -- validation errors ----------------------------------------------------------------------------


def test_embedder_mismatch_errors(bank):
    with pytest.raises(BankError, match=r"manifest\.json.*built with embedder 'fake-v1', got 'other'"):
        CosineBank.load(bank.directory, FakeEmbedder(id="other"))
    with pytest.raises(BankError, match=r"manifest\.json.*dim 16.*dim 8"):
        CosineBank.load(bank.directory, FakeEmbedder(dim=8))


def drop_checksums(directory):
    path = directory / "manifest.json"
    manifest = json.loads(path.read_text())
    del manifest["checksums"]
    path.write_text(json.dumps(manifest))


def edit_manifest(directory, **changes):
    path = directory / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest.update(changes)
    path.write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    "corrupt,message",
    [
        (lambda d: edit_manifest(d, count=41), r"embeddings\.npy: holds 40 rows but manifest\.json says count=41"),
        (lambda d: edit_manifest(d, dim=32), r"embeddings\.npy: rows have dim 16 but manifest\.json says dim=32"),
        (lambda d: edit_manifest(d, format_version=2), r"manifest\.json: format_version is 2"),
        (lambda d: edit_manifest(d, embedder=None), r"manifest\.json: 'embedder' missing"),
        (lambda d: (d / "manifest.json").write_text("{"), r"manifest\.json: not valid JSON"),
        (lambda d: (d / "manifest.json").unlink(), r"missing manifest\.json"),
        (lambda d: (d / "embeddings.npy").unlink(), r"missing embeddings\.npy"),
        (lambda d: (d / "ids.json").unlink(), r"missing ids\.json"),
        (lambda d: (d / "metadata.jsonl").unlink(), r"missing metadata\.jsonl"),
        (lambda d: np.save(d / "embeddings.npy", np.zeros((40, 16), np.float64)),
         r"embeddings\.npy: expected .*float32"),
        (lambda d: (d / "embeddings.npy").write_bytes((d / "embeddings.npy").read_bytes()[:-10]),
         r"embeddings\.npy: file is \d+ bytes, header promises"),
        (lambda d: (d / "embeddings.npy").write_bytes(b"garbage"), r"embeddings\.npy: not a readable \.npy"),
        (lambda d: (d / "ids.json").write_text(json.dumps([f"id-{i}" for i in range(39)])),
         r"ids\.json: holds 39 ids but manifest\.json says count=40"),
        (lambda d: (d / "ids.json").write_text(json.dumps(["same"] * 40)), r"ids\.json: ids are not unique"),
        (lambda d: (d / "ids.json").write_text('{"a": 1}'), r"ids\.json: expected a JSON list of strings"),
        (lambda d: (d / "metadata.jsonl").write_bytes((d / "metadata.jsonl").read_bytes()[:-20]),
         r"metadata\.jsonl: truncated .* 39 complete lines, manifest\.json says count=40"),
        (lambda d: (d / "metadata.jsonl").write_text("{}\n" * 39), r"metadata\.jsonl: holds 39 lines but"),
    ],
)
def test_corruption_is_reported_with_the_file(bank, corrupt, message):
    corrupt(bank.directory)
    with pytest.raises(BankError, match=message):
        CosineBank.load(bank.directory)


def test_missing_bank_and_bad_metadata_line(tmp_path, bank):
    with pytest.raises(BankError, match="no bank"):
        CosineBank.load(tmp_path / "nowhere")
    lines = (bank.directory / "metadata.jsonl").read_text().splitlines()
    lines[2] = "not json"
    (bank.directory / "metadata.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(BankError, match=r"metadata\.jsonl: its contents do not match the checksum"):
        CosineBank.load(bank.directory)
    drop_checksums(bank.directory)  # a bank written before checksums were recorded
    loaded = CosineBank.load(bank.directory)  # lines are decoded lazily, per hit
    with pytest.raises(BankError, match=r"metadata\.jsonl: line 3 is not valid JSON"):
        loaded.metadata(2)


# -- crashes -------------------------------------------------------------------------------------


def snapshot_files(directory):
    return {p.name: p.read_bytes() for p in directory.iterdir()}


def test_crash_while_writing_leaves_previous_bank(bank, monkeypatch):
    before = snapshot_files(bank.directory)

    def boom(*args, **kwargs):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(bank_writing, "_write_metadata", boom)
    with pytest.raises(OSError, match="simulated"):
        CosineBank.create(bank.directory, FakeEmbedder(), ["x"], ["y"], overwrite=True)
    with pytest.raises(OSError, match="simulated"):
        bank.append(["x"], ["y"])
    assert snapshot_files(bank.directory) == before
    assert leftovers(bank.directory.parent) == []
    assert len(CosineBank.load(bank.directory, bank.embedder)) == 40 and len(bank) == 40


def test_failed_second_rename_restores_old_bank(bank, monkeypatch):
    before = snapshot_files(bank.directory)
    real_rename = os.rename
    calls = []

    def flaky(src, dst):
        calls.append((src, dst))
        if len(calls) == 2:  # target -> backup succeeded; tmp -> target fails
            raise OSError("rename failed (simulated)")
        return real_rename(src, dst)

    monkeypatch.setattr(bank_swap.os, "rename", flaky)
    with pytest.raises(OSError, match="simulated"):
        bank.append(["x"], ["y"])
    monkeypatch.setattr(bank_swap.os, "rename", real_rename)
    assert snapshot_files(bank.directory) == before and leftovers(bank.directory.parent) == []


def test_killed_between_renames_is_recovered(bank, tmp_path):
    before = snapshot_files(bank.directory)
    backup = tmp_path / ".bank.old"
    os.rename(bank.directory, backup)  # the state a writer killed between its two renames leaves
    dead_writers_leftover(tmp_path / ".bank.tmp-dead")  # and a half-written temp dir from another crash
    loaded = CosineBank.load(bank.directory, bank.embedder)  # readers fall back to the complete backup
    assert len(loaded) == 40
    assert loaded.append(["x"], ["y"]) == 1  # the next writer restores, then appends
    assert not backup.exists() and leftovers(tmp_path) == []
    after = snapshot_files(bank.directory)
    assert after["metadata.jsonl"].startswith(before["metadata.jsonl"])
    assert len(CosineBank.load(bank.directory)) == 41


def dead_writers_leftover(path):
    """A temp dir as a writer killed mid-write leaves it: its record names a process that has exited."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    path.mkdir()
    (path / "embeddings.npy").write_bytes(b"half")
    (path / bank_layout.WRITER).write_text(json.dumps({"pid": child.pid, "host": socket.gethostname(),
                                                       "start": process_start(child.pid)}))
    return path


def test_leftover_temp_dirs_are_removed_only_when_their_writer_is_gone(bank, tmp_path):
    dead = dead_writers_leftover(tmp_path / ".bank.tmp-dead")
    live_writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = tmp_path / ".bank.tmp-live"
        live.mkdir()
        (live / bank_layout.WRITER).write_text(json.dumps({
            "pid": live_writer.pid, "host": socket.gethostname(), "start": process_start(live_writer.pid)}))
        elsewhere = tmp_path / ".bank.tmp-other-host"  # a writer on another machine sharing the directory
        elsewhere.mkdir()
        (elsewhere / bank_layout.WRITER).write_text(json.dumps({"pid": 1, "host": "not-" + socket.gethostname()}))
        fresh, old = tmp_path / ".bank.tmp-fresh", tmp_path / ".bank.tmp-old"  # no record: by age only
        fresh.mkdir()
        old.mkdir()
        long_ago = time.time() - bank_swap.UNRECORDED_GRACE_SECONDS - 60
        os.utime(old, (long_ago, long_ago))
        ancient = tmp_path / ".bank.tmp-ancient"  # a record whose pid may be reused, but untouched for days
        ancient.mkdir()
        (ancient / bank_layout.WRITER).write_text(json.dumps({"pid": live_writer.pid, "host": socket.gethostname()}))
        days_ago = time.time() - bank_swap.STALE_TMP_SECONDS - 60
        os.utime(ancient, (days_ago, days_ago))
        not_a_dir = tmp_path / ".bank.tmp-file"
        not_a_dir.write_text("not ours")

        assert bank.append(["x"], ["y"]) == 1
        assert not dead.exists() and not old.exists() and not ancient.exists()
        assert live.exists() and elsewhere.exists() and fresh.exists() and not_a_dir.exists()
        assert len(CosineBank.load(bank.directory)) == 41
        assert not (bank.directory / bank_layout.WRITER).exists()  # the record is not part of the version
    finally:
        live_writer.kill()
        live_writer.wait()
    assert bank.append(["z"], ["w"]) == 1  # the writer is gone now: its directory goes
    assert not live.exists() and elsewhere.exists()


def test_a_reused_pid_is_not_the_writer(bank, tmp_path):
    leftover = tmp_path / ".bank.tmp-reused"
    leftover.mkdir()
    # that pid runs (our parent), but a different process start time means the writer was another, exited one
    (leftover / bank_layout.WRITER).write_text(json.dumps({"pid": os.getppid(), "host": socket.gethostname(),
                                                           "start": "1"}))
    assert bank.append(["x"], ["y"]) == 1
    assert not leftover.exists() or process_start(os.getppid()) is None


def test_killed_after_swap_is_cleaned_up(bank, tmp_path):
    stale = tmp_path / ".bank.old"
    stale.mkdir()
    (stale / "manifest.json").write_text("{}")
    assert bank.append(["x"], ["y"]) == 1
    assert not stale.exists() and len(CosineBank.load(bank.directory)) == 41


# -- realism -------------------------------------------------------------------------------------


def test_real_embedder_finds_paraphrases(tmp_path, embedder):
    texts = ["打开客厅的灯", "关闭主卧窗帘", "把空调调到制冷模式", "Play some jazz music in the kitchen",
             "Set an alarm for seven tomorrow morning"]
    ids = ["light", "curtain", "ac", "music", "alarm"]
    meta = [{"text": t, "caption": f"trace {i}"} for i, t in zip(ids, texts, strict=True)]
    bank = CosineBank.create(tmp_path / "use", embedder, ids, texts, meta)
    assert bank.embedder_id == "use-multilingual-v3" and bank.dim == 512
    results = bank.search_texts(["turn on the living room lights", "wake me up at 7 am", "播放爵士乐"], k=2)
    assert [r[0].id for r in results] == ["light", "alarm", "music"]
    assert results[0][0].metadata["caption"] == "trace light"
