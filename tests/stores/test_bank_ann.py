"""The approximate index beside the bank: it agrees with exact search, keeps ids, scores, filters and dedupe,
survives reopening, follows appends and deletes, and is chosen by a call, a bank option or the store URI."""

import json

import numpy as np
import pytest

pytest.importorskip("faiss")

from tracerag.stores import bank_queries  # noqa: E402
from tracerag.stores.bank_ann import ANN_FILE, ANN_INFO  # noqa: E402
from tracerag.stores.cosine_bank import BankError, CosineBank  # noqa: E402
from tracerag.stores.stores import open_store  # noqa: E402
from tracerag.stores.vector_store import StoreError  # noqa: E402

DIM = 32
ROWS = 1000


def unit(x):
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def rows_of(kind, n, seed):
    rng = np.random.default_rng(seed)
    noise = unit(rng.standard_normal((n, DIM)))
    if kind == "uniform":
        return noise
    centres = unit(np.random.default_rng(99).standard_normal((40, DIM)))
    return unit(centres[rng.integers(0, 40, n)] + 0.8 * noise)


def make_bank(path, kind="clustered", n=ROWS, ann=True):
    vectors = rows_of(kind, n, 1)
    meta = [{"doc": i // 4, "colour": ["red", "green", "blue"][i % 3]} for i in range(n)]
    bank = CosineBank.from_vectors(path, vectors, [f"r{i}" for i in range(n)], meta, embedder_id="test")
    return bank.build_ann(m=8, ef_construction=40) if ann else bank


@pytest.fixture(scope="module", params=["clustered", "uniform"])
def bank(request, tmp_path_factory):
    return make_bank(tmp_path_factory.mktemp("ann") / request.param, request.param)


def overlap(a, b):
    return np.mean([len({h.id for h in x} & {h.id for h in y}) / max(len(y), 1) for x, y in zip(a, b, strict=True)])


def test_ann_agrees_with_exact_search_and_scores_rows_alike(bank):
    queries = rows_of("clustered" if "clustered" in str(bank.directory) else "uniform", 40, 2)
    exact = bank.search(queries, k=10, min_score=None, exact=True)
    approx = bank.search(queries, k=10, min_score=None, exact=False)
    assert overlap(approx, exact) >= 0.97
    for a, e in zip(approx, exact, strict=True):
        scores = {h.id: h.score for h in e}
        assert [h.score for h in a] == sorted((h.score for h in a), reverse=True)
        for hit in a:  # rescored with the exact rows: the very same score for a row both found
            if hit.id in scores:
                assert hit.score == scores[hit.id]
            assert hit.metadata == bank.metadata(hit.row) and hit.id == f"r{hit.row}"


def test_ann_keeps_min_score_and_dedupe(bank):
    queries = rows_of("clustered", 20, 3)
    for hits in bank.search(queries, k=8, min_score=0.3, exact=False):
        assert all(h.score >= 0.3 for h in hits)
    exact = bank.search(queries, k=8, min_score=None, dedupe_by="doc", exact=True)
    approx = bank.search(queries, k=8, min_score=None, dedupe_by="doc", exact=False)
    for hits in approx:
        assert len(hits) == 8 and len({h.metadata["doc"] for h in hits}) == 8
    assert overlap(approx, exact) >= 0.95


def test_a_row_queried_by_its_own_vector_comes_first(bank):
    rows = [5, 777, 999]
    found = bank.search(np.asarray(bank.vectors[rows]), k=1, min_score=None, exact=False)
    assert [hits[0].id for hits in found] == [f"r{r}" for r in rows]


def test_the_index_is_persisted_with_the_bank_and_checksummed(bank):
    manifest = json.loads((bank.directory / "manifest.json").read_text())
    assert {ANN_FILE, ANN_INFO} <= set(manifest["checksums"])
    again = CosineBank.load(bank.directory, exact=False)
    assert again.has_ann and again.uses_ann
    query = np.asarray(bank.vectors[[42]])
    assert again.search(query, k=5, min_score=None)[0] == bank.search(query, k=5, min_score=None, exact=False)[0]


def test_append_extends_the_index_and_delete_rebuilds_it(tmp_path):
    bank = make_bank(tmp_path / "b", n=600)
    new = rows_of("uniform", 50, 7)
    assert bank.append_vectors([f"n{i}" for i in range(50)], new) == 50
    info = json.loads((tmp_path / "b" / ANN_INFO).read_text())
    assert bank.has_ann and info["count"] == 650
    reopened = CosineBank.load(tmp_path / "b")
    assert [h[0].id for h in reopened.search(new[:5], k=1, min_score=None, exact=False)] == [f"n{i}" for i in range(5)]
    assert reopened.delete(["n0", "r3"]) == 2
    assert json.loads((tmp_path / "b" / ANN_INFO).read_text())["count"] == 648
    hits = reopened.search(new[:2], k=3, min_score=None, exact=False)
    assert "n0" not in {h.id for h in hits[0]} and hits[1][0].id == "n1"
    moved = reopened.row_of("n1")
    assert hits[1][0].row == moved  # rows after a deleted one moved up, the graph's labels with them


def test_exact_stays_the_default_below_the_documented_size(tmp_path, monkeypatch):
    bank = make_bank(tmp_path / "b", n=600)
    assert bank.has_ann and not bank.uses_ann  # 600 rows < ANN_MIN_ROWS
    monkeypatch.setattr(bank_queries, "ANN_MIN_ROWS", 500)
    assert bank.uses_ann
    assert CosineBank.load(tmp_path / "b", exact=True).uses_ann is False


def test_asking_for_ann_without_an_index_is_a_clear_error(tmp_path):
    bank = make_bank(tmp_path / "b", n=300, ann=False)
    with pytest.raises(BankError, match="no approximate index.*build_ann"):
        bank.search(np.asarray(bank.vectors[:1]), k=3, exact=False)
    with pytest.raises(BankError, match="no approximate index"):
        CosineBank.load(tmp_path / "b", exact=False)
    assert len(bank.search(np.asarray(bank.vectors[:1]), k=3)[0]) == 3  # exact as ever


def test_store_uri_chooses_ann_and_builds_the_index_once(tmp_path):
    make_bank(tmp_path / "b", n=500, ann=False)
    store = open_store(f"{tmp_path / 'b'}?search=ann&ef=64", embedder_id="test", dim=DIM)
    info = store.describe()
    assert info.index == "HNSW" and info.uri == f"{tmp_path / 'b'}?search=ann&ef=64"
    assert (tmp_path / "b" / ANN_FILE).exists()
    exact = open_store(f"{tmp_path / 'b'}?search=exact")
    assert exact.describe().index == "exact"
    queries = rows_of("clustered", 10, 5)
    wanted = {"colour": "red"}
    a, e = store.search(queries, k=5, filter=wanted), exact.search(queries, k=5, filter=wanted)
    assert all(h.metadata["colour"] == "red" for hits in a for h in hits)
    assert np.mean([len({h.id for h in x} & {h.id for h in y}) / 5 for x, y in zip(a, e, strict=True)]) >= 0.95
    assert open_store(tmp_path / "b").describe().index == "exact"  # 500 rows: auto stays exact


@pytest.mark.parametrize("uri, message", [
    ("?search=fast", "search 'fast' must be one of auto, ann, exact"),
    ("?ef=0", "ef '0' must be one whole number"),
    ("?nprobe=3", "unknown parameter 'nprobe'"),
])
def test_bad_store_uri_options_name_the_option(tmp_path, uri, message):
    make_bank(tmp_path / "b", n=50, ann=False)
    with pytest.raises(StoreError, match=message):
        open_store(f"{tmp_path / 'b'}{uri}")


@pytest.mark.slow
def test_ann_recall_at_100k_clustered_rows(tmp_path):
    """With the default settings (M=16, efConstruction=128, ef=256) ANN finds >= 98% of the exact top 10 at
    100k clustered rows of dim 128, and a bank that size uses it by default."""
    rng = np.random.default_rng(1)
    centres = unit(rng.standard_normal((500, 128)))
    vectors = unit(centres[rng.integers(0, 500, 100_000)] + 0.8 * unit(rng.standard_normal((100_000, 128))))
    bank = CosineBank.from_vectors(tmp_path / "b", vectors, [f"r{i}" for i in range(100_000)], embedder_id="test")
    bank.build_ann()
    queries = unit(centres[rng.integers(0, 500, 100)] + 0.8 * unit(rng.standard_normal((100, 128))))
    assert bank.uses_ann
    exact = bank.search(queries, k=10, min_score=None, exact=True)
    assert overlap(bank.search(queries, k=10, min_score=None), exact) >= 0.98


def test_a_version_replaced_before_its_index_was_read_is_searched_exactly(tmp_path, caplog):
    make_bank(tmp_path / "b", n=400)
    reader = CosineBank.load(tmp_path / "b")  # its index is not read yet
    CosineBank.load(tmp_path / "b").append_vectors(["late"], rows_of("uniform", 1, 9))
    query = np.asarray(reader.vectors[[7]])
    with caplog.at_level("WARNING"):
        hits = reader.search(query, k=3, min_score=None, exact=False)
    assert hits == reader.search(query, k=3, min_score=None, exact=True) and len(reader) == 400
    assert "searching exactly" in caplog.text
    assert reader.refresh().search(query, k=1, min_score=None, exact=False)[0][0].id == "r7"


def test_the_graph_is_the_one_faiss_builds_from_the_same_rows_in_one_call(tmp_path):
    """Rows handed to faiss in chunks made a different, worse graph: the bank's is faiss' own build."""
    import faiss

    bank = make_bank(tmp_path / "b", n=3000)
    plain = faiss.IndexHNSWFlat(DIM, 8, faiss.METRIC_INNER_PRODUCT)
    plain.hnsw.efConstruction = 40
    faiss.omp_set_num_threads(1)  # as the bank builds a graph this small: one thread, so the graph is fixed
    plain.add(np.ascontiguousarray(bank.vectors))
    assert faiss.vector_to_array(plain.hnsw.neighbors).tolist() == \
        faiss.vector_to_array(bank._ann[1]._index.hnsw.neighbors).tolist()


def test_the_graph_reads_the_bank_rows_and_its_file_holds_no_vectors(tmp_path):
    bank = make_bank(tmp_path / "b", n=2000)
    vectors_bytes = (tmp_path / "b" / "embeddings.npy").stat().st_size
    assert (tmp_path / "b" / ANN_FILE).stat().st_size < vectors_bytes  # the graph only: with the vectors, more
    assert json.loads((tmp_path / "b" / ANN_INFO).read_text())["kind"] == "faiss-hnsw"
    for opened in (bank, CosineBank.load(tmp_path / "b", exact=False)):
        opened.search(np.asarray(opened.vectors[:1]), k=3, exact=False)
        ann = opened._ann[1]
        assert ann.shares_rows and ann._matrix.ctypes.data == opened.vectors.ctypes.data
    bank.append_vectors(["extra"], rows_of("uniform", 1, 4))
    assert bank._ann[1].shares_rows and bank._ann[1]._matrix.ctypes.data == bank.vectors.ctypes.data
    assert bank.search(np.asarray(bank.vectors[[2000]]), k=1, min_score=None, exact=False)[0][0].id == "extra"


def test_an_index_written_with_its_own_vectors_still_reads_and_answers_alike(tmp_path):
    """Indexes written before the graph read the bank's rows carry a copy of them (kind faiss-hnsw-flat)."""
    import faiss

    bank = make_bank(tmp_path / "b", n=1500)
    queries = rows_of("clustered", 20, 6)
    before = bank.search(queries, k=5, min_score=None, exact=False)
    index = faiss.read_index(str(tmp_path / "b" / ANN_FILE))
    index.storage = faiss.IndexFlatIP(DIM)
    index.storage.add(np.ascontiguousarray(bank.vectors))
    index.own_fields = False
    old = tmp_path / "old"
    old.mkdir()
    faiss.write_index(index, str(old / ANN_FILE))  # with the vectors
    (old / ANN_INFO).write_text(json.dumps({"kind": "faiss-hnsw-flat", "count": 1500, "m": 8, "ef_construction": 40}))
    from tracerag.stores.bank_ann import AnnIndex

    ann = AnnIndex.read(old, bank.vectors)
    assert ann.shares_rows
    assert ann.candidates(queries, 5, 64)[1].tolist() == bank._ann[1].candidates(queries, 5, 64)[1].tolist()
    assert before == bank.search(queries, k=5, min_score=None, exact=False)


def test_a_reopened_bank_answers_the_same_in_a_fresh_process(tmp_path):
    import subprocess
    import sys

    bank = make_bank(tmp_path / "b", n=2000)
    queries = rows_of("clustered", 30, 8)
    np.save(tmp_path / "q.npy", queries)
    here = [[(h.id, h.score) for h in hits] for hits in bank.search(queries, k=7, min_score=None, exact=False)]
    script = ("import json, sys, numpy as np\n"
              "from tracerag.stores.cosine_bank import CosineBank\n"
              "bank = CosineBank.load(sys.argv[1], exact=False)\n"
              "hits = bank.search(np.load(sys.argv[2]), k=7, min_score=None)\n"
              "print(json.dumps([[(h.id, h.score) for h in q] for q in hits]))\n")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "b"), str(tmp_path / "q.npy")],
                         capture_output=True, text=True, check=True).stdout
    assert [[tuple(pair) for pair in q] for q in json.loads(out)] == here


def test_rows_left_out_or_below_min_score_are_filled_from_the_next_candidates(bank, monkeypatch):
    from tracerag.stores import bank_ann

    windows = []
    real = bank_ann._window_top_rows
    monkeypatch.setattr(bank_ann, "_window_top_rows", lambda *a: windows.append(len(a[2])) or real(*a))
    queries = rows_of("clustered", 12, 11)
    approx = bank.search(queries, k=6, min_score=None, exact=False, ef=64)  # ef 64: the graph, not the scan
    assert not windows  # every query filled from its few best candidates
    first = sorted({hits[0].row for hits in approx})
    bank._snap.guard._state.excluded = np.asarray(first)  # as if their block had failed its checksum
    try:
        again = bank.search(queries, k=6, min_score=None, exact=False, ef=64)
        one = bank.search(queries[0], k=6, min_score=None, exact=False, ef=64)
        exact = bank.search(queries, k=6, min_score=None, exact=True)
    finally:
        bank._snap.guard._state.excluded = None
    assert windows  # the queries whose best row was left out looked further
    for hits in again:
        assert len(hits) == 6 and not {h.row for h in hits} & set(first)
    assert one[0] == again[0]
    assert overlap(again, exact) >= 0.95
    floor = float(np.median([hits[3].score for hits in approx]))
    for hits, full in zip(bank.search(queries, k=6, min_score=floor, exact=False, ef=64), approx, strict=True):
        assert [h.row for h in hits] == [h.row for h in full if h.score >= floor]


def test_rows_tied_past_the_candidates_asked_for_come_lowest_row_first(tmp_path):
    vectors = rows_of("clustered", 2000, 12)
    vectors[100:160] = vectors[7]  # 61 identical rows: every one ties with the k-th best
    bank = CosineBank.from_vectors(tmp_path / "b", vectors, [f"r{i}" for i in range(2000)], embedder_id="test")
    bank.build_ann(m=8, ef_construction=40)
    query = vectors[[7]]
    approx = bank.search_rows(query, k=10, min_score=None, exact=False, ef=128)[0]
    exact = bank.search_rows(query, k=10, min_score=None, exact=True)[0]
    assert approx[0] == exact[0] == [7] + list(range(100, 109))
