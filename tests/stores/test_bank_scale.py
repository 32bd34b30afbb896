"""What users of a large CosineBank rely on: a batch finds what its queries find one by one on every
scoring path, a hybrid batch equals its queries run in turn, and a bank opens without reading its ids
and metadata whole (through the offset indexes), while banks without indexes still open and a damaged
index is reported."""

import json
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from tracerag.documents.hybrid import HybridRetriever
from tracerag.embedding.embedders import LexicalEmbedder
from tracerag.stores import bank_columns, bank_reading, bank_search
from tracerag.stores.cosine_bank import BankError, CosineBank

DIM = 16


def unit(rng, n, dim=DIM):
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def brute_force(bank, query, k, min_score, dedupe_by):
    """The documented result: best first, ties by row, >= min_score, best row per dedupe value."""
    scores = np.einsum("ij,j->i", bank.vectors, query / np.linalg.norm(query))  # equal rows score equal
    order = sorted(range(len(scores)), key=lambda r: (-scores[r], r))
    kept, seen = [], set()
    for r in order:
        if min_score is not None and scores[r] < min_score:
            break
        if dedupe_by:
            group = bank.metadata(r).get(dedupe_by, ("row", r))
            if group in seen:
                continue
            seen.add(group)
        kept.append(bank.ids[r])
        if len(kept) == k:
            break
    return kept


@pytest.fixture
def tied_bank(tmp_path):
    """300 rows of which every row also appears twice more later (exact ties), grouped by doc."""
    rng = np.random.default_rng(3)
    base = unit(rng, 100)
    vectors = np.concatenate([base, base, base])
    ids = [f"r{i}" for i in range(len(vectors))]
    meta = [{"doc": f"d{i % 37}"} if i % 11 else {} for i in range(len(vectors))]
    return CosineBank.from_vectors(tmp_path / "b", vectors, ids, meta, embedder_id="raw")


PATHS = {
    "small bank: sampled threshold": {},
    "small bank: sample of every 2nd score": {"_SAMPLE_STRIDE": 2},
    "block maxima": {"_SMALL_ROWS": 0},
    "threaded block maxima": {"_SMALL_ROWS": 0, "_PARALLEL_MAX_BYTES": 0, "_BLOCK_ROWS": 16},
    "one CPU": {"_SMALL_ROWS": 0, "_PARALLEL_MAX_BYTES": 0, "_BLOCK_ROWS": 8, "worker_count": lambda: 1},
    "blocks larger than the bank": {"_SMALL_ROWS": 0, "_PARALLEL_MAX_BYTES": 0, "_BLOCK_ROWS": 4096},
}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("k,min_score,dedupe_by", [(1, None, None), (7, None, None), (7, 0.2, None),
                                                   (5, None, "doc"), (40, 0.0, "doc"), (500, None, None)])
def test_batch_equals_single_queries_and_the_documented_order(tied_bank, monkeypatch, path, k, min_score, dedupe_by):
    for name, value in PATHS[path].items():
        monkeypatch.setattr(bank_search, name, value)
    rng = np.random.default_rng(5)
    queries = np.concatenate([tied_bank.vectors[:3] + 0.01, rng.standard_normal((9, DIM)).astype(np.float32)])
    batch = tied_bank.search(queries, k=k, min_score=min_score, dedupe_by=dedupe_by)
    for query, hits in zip(queries, batch, strict=True):
        (single,) = tied_bank.search(query, k=k, min_score=min_score, dedupe_by=dedupe_by)
        assert [h.id for h in hits] == [h.id for h in single] == brute_force(tied_bank, query, k, min_score, dedupe_by)
        np.testing.assert_allclose([h.score for h in hits], [h.score for h in single], atol=1e-5)
        assert all(h.metadata == tied_bank.metadata(h.row) for h in hits)


def test_searches_at_once_in_threads_each_get_their_own_results(tied_bank, monkeypatch):
    """Score buffers are reused between searches: concurrent searches of every batch size must still
    each see only their own scores, and the spares kept stay within their bound."""
    monkeypatch.setattr(bank_search, "_spare_buffers", [])
    monkeypatch.setattr(bank_search, "_SPARE_BUFFERS", 2)
    monkeypatch.setattr(bank_search, "_SPARE_MIN_BYTES", 0)  # this bank's buffers are all small
    monkeypatch.setattr(bank_search, "_SPARE_MAX_BYTES", 12 * len(tied_bank) * 4)  # batches of 13+ not kept
    rng = np.random.default_rng(9)
    batches = [rng.standard_normal((n, DIM)).astype(np.float32) for n in (1, 3, 12, 20, 5, 1, 16, 2)]
    expected = [[[h.id for h in hits] for hits in tied_bank.search(b, k=6, min_score=None)] for b in batches]

    def run(offset):
        for i in range(40):
            j = (i + offset) % len(batches)
            got = [[h.id for h in hits] for hits in tied_bank.search(batches[j], k=6, min_score=None)]
            assert got == expected[j], f"batch {j} got another search's results"

    with ThreadPoolExecutor(max_workers=4) as pool:
        for future in [pool.submit(run, offset) for offset in range(4)]:
            future.result()
    spares = bank_search._spare_buffers
    assert 1 <= len(spares) <= 2
    assert all(b.nbytes <= 12 * len(tied_bank) * 4 for b in spares)


def test_hybrid_batch_equals_queries_one_by_one(tmp_path):
    embedder = LexicalEmbedder(dim=64)
    words = ["river", "bank", "loan", "fish", "water", "money", "stream", "credit", "boat", "account"]
    rng = np.random.default_rng(1)
    texts = [" ".join(rng.choice(words, 6)) for _ in range(400)]
    meta = [{"text": t, "doc_id": f"doc{i % 9}"} for i, t in enumerate(texts)]  # dedupe leaves < k: widening
    bank = CosineBank.create(tmp_path / "b", embedder, [f"c{i}" for i in range(400)], texts, meta)
    queries = ["river fish", "money loan credit", "boat on the water", "account", "stream bank river"]
    for fusion in ("normalized", "rrf"):
        retriever = HybridRetriever(bank, fusion=fusion, window=10)
        for dedupe_by in (None, "doc_id"):
            batch = retriever.search(queries, k=12, dedupe_by=dedupe_by)
            alone = [retriever.search([q], k=12, dedupe_by=dedupe_by)[0] for q in queries]
            assert batch == alone
            assert [len(r) for r in batch] == ([9] * 5 if dedupe_by else [12] * 5)


# -- opening through the offset indexes ----------------------------------------------------------


@pytest.fixture
def lazy(monkeypatch):
    """Treat every bank as large: ids and metadata are opened through their indexes."""
    monkeypatch.setattr(bank_reading, "WHOLE_READ_BYTES", 0)
    monkeypatch.setattr(bank_columns, "LINE_SAMPLE_ROWS", 4)


AWKWARD_IDS = ['plain', 'quote"d', "back\\slash\\", "comma, space", "]bracket[", "日本語", "new\nline", "", "\\\"", "x"]


def make_bank(directory, n=40, text=""):
    ids = [AWKWARD_IDS[i] if i < len(AWKWARD_IDS) else f"id-{i}" for i in range(n)]
    meta = [{"n": i, "text": f"{text} row {i} \"quoted\"\n{{braces}}, ütf"} for i in range(n)]
    CosineBank.from_vectors(directory, unit(np.random.default_rng(0), n), ids, meta, embedder_id="raw")
    return ids, meta


def test_indexed_bank_decodes_every_row_and_grows(tmp_path, lazy):
    ids, meta = make_bank(tmp_path / "b")
    bank = CosineBank.load(tmp_path / "b")
    assert bank.ids == ids and [bank.metadata(r) for r in range(len(ids))] == meta
    assert all(bank.row_of(x) == r for r, x in enumerate(ids)) and "missing" not in bank and "new\nline" in bank
    assert json.loads((tmp_path / "b" / "ids.json").read_text()) == ids  # still plain JSON for users
    (hits,) = bank.search(bank.vectors[3], k=2, min_score=None)
    assert hits[0].id == ids[3] and hits[0].metadata == meta[3]
    assert bank.append_vectors(["later", "plain"], unit(np.random.default_rng(1), 2), [{"n": 99}, {}]) == 1
    grown = CosineBank.load(tmp_path / "b")
    assert grown.ids == [*ids, "later"] and grown.metadata(len(ids)) == {"n": 99} and grown.metadata(5) == meta[5]


def test_open_reads_neither_ids_nor_metadata_whole(tmp_path):
    n = 400
    make_bank(tmp_path / "b", n, text="word " * 2500)  # ~12.5 KB a line: a 5 MB metadata file
    size = (tmp_path / "b" / "metadata.jsonl").stat().st_size
    assert size > 4 * bank_reading.WHOLE_READ_BYTES
    tracemalloc.start()
    try:
        bank = CosineBank.load(tmp_path / "b")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < size / 8  # neither file was read into memory
    assert bank.metadata(n - 1)["n"] == n - 1 and len(bank) == n


def test_metadata_lines_are_decoded_only_when_returned(tmp_path, lazy):
    make_bank(tmp_path / "b", 40)
    path = tmp_path / "b" / "metadata.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[21] = b"x" * len(lines[21])  # same length: the index still matches; not JSON
    path.write_bytes(b"\n".join(lines))
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    del manifest["checksums"], manifest["sampled_checksums"]  # so only decoding can notice
    (tmp_path / "b" / "manifest.json").write_text(json.dumps(manifest))
    bank = CosineBank.load(tmp_path / "b")
    assert bank.metadata(20)["n"] == 20
    with pytest.raises(BankError, match=r"metadata\.jsonl: line 22 is not valid JSON"):
        bank.metadata(21)
    hits = bank.search(bank.vectors[[20, 20]], k=1, min_score=None)  # a batch's hits decoded in one parse
    assert [h[0].metadata["n"] for h in hits] == [20, 20] and hits[0][0].metadata is not hits[1][0].metadata
    hits = bank.search(bank.vectors[[20, 21]], k=1, min_score=None)  # metadata is decoded when first read
    assert [h[0].row for h in hits] == [20, 21] and hits[0][0].metadata["n"] == 20
    with pytest.raises(BankError, match=r"metadata\.jsonl: line 22 is not valid JSON"):
        hits[1][0].metadata.get("n")  # the broken line is named when read


def write_as_previous_version(directory):
    """Remove what this version adds (the indexes, the sampled checksums), as an older writer left it."""
    for name in ("ids.offsets.npy", "metadata.offsets.npy"):
        (directory / name).unlink()
    manifest = json.loads((directory / "manifest.json").read_text())
    del manifest["sampled_checksums"], manifest["checksums"]["ids.offsets.npy"]
    del manifest["checksums"]["metadata.offsets.npy"]
    (directory / "manifest.json").write_text(json.dumps(manifest))


def test_a_bank_without_indexes_opens_whole_and_gains_them_on_append(tmp_path, lazy):
    ids, meta = make_bank(tmp_path / "b")
    write_as_previous_version(tmp_path / "b")
    bank = CosineBank.load(tmp_path / "b")
    assert bank.ids == ids and bank.metadata(7) == meta[7] and bank.row_of(ids[9]) == 9
    assert bank.search(bank.vectors[4], k=1)[0][0].id == ids[4]
    assert bank.append_vectors(["more"], unit(np.random.default_rng(2), 1)) == 1
    assert (tmp_path / "b" / "ids.offsets.npy").exists()
    assert CosineBank.load(tmp_path / "b").ids == [*ids, "more"]


def damage_index(directory, name, change):
    path = directory / name
    starts = np.load(path)
    np.save(path, change(starts))
    manifest = json.loads((directory / "manifest.json").read_text())
    del manifest["checksums"], manifest["sampled_checksums"]  # so the index checks, not checksums, are tested
    (directory / "manifest.json").write_text(json.dumps(manifest))


def swap(i, j):
    def change(starts):
        starts = starts.copy()
        starts[[i, j]] = starts[[j, i]]
        return starts
    return change


@pytest.mark.parametrize("name,change,at_open,message", [
    ("metadata.offsets.npy", lambda s: s[:-1], True, r"metadata\.offsets\.npy: expected 41 uint64 offsets"),
    ("ids.offsets.npy", lambda s: s.astype(np.int32), True, r"ids\.offsets\.npy: expected 41 uint64 offsets"),
    ("metadata.offsets.npy", lambda s: s + 1, True, r"metadata\.offsets\.npy: does not span metadata\.jsonl"),
    ("ids.offsets.npy", lambda s: s - 1, True, r"ids\.offsets\.npy: does not span ids\.json"),
    ("metadata.offsets.npy", swap(20, 21), False,
     r"metadata\.offsets\.npy: entry 20 does not point at line 21 of metadata\.jsonl \(index and file differ\)"),
    ("ids.offsets.npy", lambda s: np.where(np.arange(len(s)) == 20, s + 2, s), False,
     r"ids\.offsets\.npy: entry 20 does not point at an id in ids\.json \(index and file differ\)"),
])
def test_a_damaged_index_is_reported_naming_it(tmp_path, lazy, name, change, at_open, message):
    make_bank(tmp_path / "b", 40)
    damage_index(tmp_path / "b", name, change)
    if at_open:
        with pytest.raises(BankError, match=message):
            CosineBank.load(tmp_path / "b")
        return
    bank = CosineBank.load(tmp_path / "b")  # row 20 is outside the sample checked at open
    with pytest.raises(BankError, match=message):
        [h.metadata for h in bank.search(bank.vectors[20], k=1)[0]]  # decodes row 20's id and metadata line


def test_a_changed_large_file_fails_its_sampled_checksum(tmp_path, lazy):
    make_bank(tmp_path / "b", 40)
    path = tmp_path / "b" / "metadata.jsonl"
    raw = bytearray(path.read_bytes())
    raw[7:9] = b"99"  # {"n":0,... -> {"n":99..., same length: only the checksum can tell
    path.write_bytes(bytes(raw))
    with pytest.raises(BankError, match=r"metadata\.jsonl: its contents do not match the checksum in manifest\.json"):
        CosineBank.load(tmp_path / "b")


def test_from_vectors_keeps_unit_rows_and_writes_metadata_as_per_row_json(tmp_path):
    vectors = unit(np.random.default_rng(4), 6)
    vectors[2] *= 3  # only this row is renormalised
    meta = [{"a": [1, "\x00tracerag row break", 2]}, {"t": "ü\n\"x\""}, {}, {"nested": {"k": [None, 1.5]}},
            {"a": 1}, {"b": True}]
    bank = CosineBank.from_vectors(tmp_path / "b", vectors, list("abcdef"), meta, embedder_id="raw")
    keep = [0, 1, 3, 4, 5]
    assert bank.vectors[keep].tobytes() == vectors[keep].tobytes()
    np.testing.assert_allclose(bank.vectors[2], vectors[2] / 3, rtol=1e-6)
    expected = "".join(json.dumps(m, ensure_ascii=False, separators=(",", ":")) + "\n" for m in meta)
    assert (tmp_path / "b" / "metadata.jsonl").read_text(encoding="utf-8") == expected
    assert [bank.metadata(r) for r in range(6)] == meta
    with pytest.raises(ValueError, match="metadata for row 1 is not JSON-serialisable"):
        CosineBank.from_vectors(tmp_path / "c", vectors[:2], ["a", "b"], [{}, {"x": object()}], embedder_id="raw")
