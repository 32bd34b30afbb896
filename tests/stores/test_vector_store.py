"""The vector-store protocol, run against every backend: the numpy bank, Milvus Lite in a local file, and a
Milvus server reached as ``milvus://127.0.0.1:PORT``.

The same assertions hold for all; Milvus is skipped when pymilvus / milvus-lite are not installed
(``pip install -e ".[milvus]"``). Milvus Lite stores live in one ``store.db`` per test, one collection
per store, so a test pays one engine start. The server is the Milvus Lite engine run as its own process
on a free port for the whole session (``tests/milvus_server.py``), refusing calls without its token:
each test uses its own collections there and sends the token through ``TRACERAG_MILVUS_TOKEN``.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import threading
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from overlap import HANG_S

from tracerag.stores.cosine_bank import CosineBank
from tracerag.stores.milvus_expressions import filter_expression
from tracerag.stores.milvus_store import MilvusStore
from tracerag.stores.numpy_store import NumpyStore
from tracerag.stores.stores import open_store
from tracerag.stores.vector_store import (
    TOKEN_ENV,
    StoreError,
    UpsertReport,
    VectorStore,
    check_filter,
    parse_store_uri,
)

DIM = 16
HAVE_MILVUS = all(importlib.util.find_spec(m) is not None for m in ("pymilvus", "milvus_lite"))
milvus = pytest.mark.skipif(not HAVE_MILVUS, reason='needs pip install -e ".[milvus]"')

# a real Milvus server: only inside tests/milvus_standalone.py, which the slow step runs (test_milvus_standalone.py)
STANDALONE = os.environ.get("TRACERAG_MILVUS_STANDALONE")
standalone = pytest.mark.skipif(not (HAVE_MILVUS and STANDALONE), reason="a real Milvus server runs in the slow step")
BACKENDS = ["numpy", pytest.param("milvus", marks=milvus), pytest.param("milvus-server", marks=milvus),
            pytest.param("milvus-standalone", marks=standalone)]
_SERVER_TESTS = itertools.count()


def unit_rows(n: int, seed: int = 0, dim: int = DIM) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def ids_of(n: int, prefix: str = "r") -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


@pytest.fixture
def uri_for(backend, tmp_path, request, monkeypatch):
    """name -> the URI of a store of that name for this backend (all Milvus Lite ones in one file; on the
    server, collections named for this test, so tests sharing the session's server never meet)."""
    if backend == "milvus-server":
        server = request.getfixturevalue("milvus_server")
        monkeypatch.setenv(TOKEN_ENV, server.token or "")
    if backend in ("milvus-server", "milvus-standalone"):
        prefix = f"t{next(_SERVER_TESTS)}_"

    def uri(name: str = "s") -> str:
        if backend == "numpy":
            return str(tmp_path / name)
        if backend == "milvus-server":
            return server.uri(prefix + name)
        if backend == "milvus-standalone":
            return f"{STANDALONE}?collection={prefix}{name}"
        return f"milvus:{tmp_path / 'store.db'}?collection={name}"

    return uri


@pytest.fixture
def make(uri_for):
    """Open (creating) stores; every one is closed at teardown."""
    opened: list[VectorStore] = []

    def make(name: str = "s", embedder_id: str = "emb-a", dim: int = DIM, create: bool = True) -> VectorStore:
        store = open_store(uri_for(name), embedder_id=embedder_id, dim=dim, create=create)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def filled(make):
    """A store of 40 rows with metadata (i, group, even, label) and their vectors."""
    store = make()
    vectors = unit_rows(40)
    meta = [{"i": i, "group": "g" + str(i % 4), "even": i % 2 == 0, "label": 'say "hi"' if i % 5 == 0 else "plain"}
            for i in range(40)]
    assert store.upsert(ids_of(40), vectors, meta) == UpsertReport(40, 0)
    return store, vectors, meta


def exact_scores(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    q = query / np.linalg.norm(query)
    return vectors @ q


# ---------------------------------------------------------------------------------------------
# The protocol on every backend.


def test_satisfies_the_protocol(make):
    assert isinstance(make(), VectorStore)


def test_upsert_then_search_returns_ids_scores_and_metadata(filled):
    store, vectors, meta = filled
    hits = store.search(vectors[[3, 7]], k=5)
    assert len(hits) == 2
    for row, found in zip([3, 7], hits, strict=True):
        assert [h.id for h in found][0] == f"r{row}"
        assert found[0].score == pytest.approx(1.0, abs=1e-5)
        assert found[0].metadata == meta[row]
        scores = [h.score for h in found]
        assert scores == sorted(scores, reverse=True)
    one = store.search(vectors[3], k=1)  # a 1-D query is one query
    assert [[h.id for h in q] for q in one] == [["r3"]]


def test_scores_equal_exact_cosine(filled):
    store, vectors, _ = filled
    queries = unit_rows(5, seed=1) * 3.0  # not unit: the store normalises
    for query, hits in zip(queries, store.search(queries, k=10), strict=True):
        exact = exact_scores(vectors, query)
        best = np.argsort(-exact)[:10]
        assert [h.id for h in hits] == [f"r{i}" for i in best]
        np.testing.assert_allclose([h.score for h in hits], exact[best], atol=1e-4)


def test_upsert_of_an_existing_id_replaces_it(filled):
    store, vectors, _ = filled
    report = store.upsert(["r1", "new"], vectors[[9, 10]], [{"replaced": True}, {"fresh": 1}])
    assert report == UpsertReport(2, 0)
    assert store.count() == 41
    row = store.get(["r1"])[0]
    assert row.metadata == {"replaced": True}
    np.testing.assert_allclose(row.vector, vectors[9], atol=1e-6)
    top = store.search(vectors[9], k=2)[0]
    assert {h.id for h in top} == {"r1", "r9"}


def test_reupserting_the_same_rows_writes_nothing(filled):
    store, vectors, meta = filled
    assert store.upsert(ids_of(40), vectors, meta) == UpsertReport(0, 40)
    changed = [dict(m) for m in meta]
    changed[5]["label"] = "edited"
    assert store.upsert(ids_of(40), vectors, changed) == UpsertReport(1, 39)
    assert store.get(["r5"])[0].metadata["label"] == "edited"
    assert store.count() == 40


def test_delete(filled):
    store, vectors, _ = filled
    assert store.delete(["r2", "r3", "unknown"]) == 2
    assert store.count() == 38
    assert store.get(["r2", "r3"]) == []
    assert "r2" not in {h.id for h in store.search(vectors[2], k=40)[0]}
    assert store.delete(["r2"]) == 0


def test_get_keeps_the_order_asked_and_skips_unknown_ids(filled):
    store, vectors, meta = filled
    rows = store.get(["r7", "nope", "r0"])
    assert [r.id for r in rows] == ["r7", "r0"]
    np.testing.assert_allclose(rows[0].vector, vectors[7], atol=1e-6)
    assert rows[1].metadata == meta[0]


def test_count_and_empty_store(make):
    store = make()
    assert store.count() == 0
    assert store.search(unit_rows(2), k=3) == [[], []]
    assert store.get(["x"]) == []
    assert store.delete(["x"]) == 0


def test_k_larger_than_count_returns_every_row(filled):
    store, vectors, _ = filled
    hits = store.search(vectors[0], k=1000)[0]
    assert len(hits) == 40 and len({h.id for h in hits}) == 40
    assert store.search(vectors[0], k=0) == [[]]


def test_min_score_drops_weak_rows(filled):
    store, vectors, _ = filled
    exact = exact_scores(vectors, vectors[0])
    hits = store.search(vectors[0], k=40, min_score=0.2)[0]
    assert {h.id for h in hits} == {f"r{i}" for i in np.flatnonzero(exact >= 0.2)}


def test_filter_by_value_by_list_and_by_several_keys(filled):
    store, vectors, meta = filled
    [hits] = store.search(vectors[0], k=40, filter={"group": "g1"})
    assert {h.id for h in hits} == {f"r{i}" for i in range(40) if i % 4 == 1}
    [hits] = store.search(vectors[0], k=40, filter={"group": ["g1", "g2"], "even": True})
    assert {h.id for h in hits} == {f"r{i}" for i in range(40) if i % 4 == 2}
    [hits] = store.search(vectors[0], k=40, filter={"i": [3, 4.0], "group": ["g0", "g3"]})
    assert {h.id for h in hits} == {"r3", "r4"}
    [hits] = store.search(vectors[0], k=3, filter={"group": "g3"})
    exact = exact_scores(vectors, vectors[0])
    best = sorted((i for i in range(40) if i % 4 == 3), key=lambda i: -exact[i])[:3]
    assert [h.id for h in hits] == [f"r{i}" for i in best]
    assert store.search(vectors[0], k=5, filter={"missing_key": "x"}) == [[]]


def test_filter_strings_with_quotes_match_exactly_and_cannot_inject(filled):
    store, vectors, _ = filled
    [hits] = store.search(vectors[0], k=40, filter={"label": 'say "hi"'})
    assert {h.id for h in hits} == {f"r{i}" for i in range(0, 40, 5)}
    for hostile in ['plain" or metadata["label"] != "', "plain' or 1 == 1 or '", '\\" or true or \\"',
                    'x"] or true or metadata["', "plain\\", "line\nbreak"]:
        assert store.search(vectors[0], k=40, filter={"label": hostile}) == [[]], hostile
    with pytest.raises(ValueError, match="control character"):
        filter_expression(check_filter({"label": "nul\x00"}))
    with pytest.raises(ValueError, match="identifier"):
        store.search(vectors[0], k=3, filter={'label"] or true or metadata["x': "plain"})
    with pytest.raises(ValueError, match="str, int, float or bool"):
        store.search(vectors[0], k=3, filter={"label": None})


HOSTILE_IDS = ["o'brien-2021", "x'] or id not in ['", 'x"] or id not in ["', "zz', 'r5", 'zz", "r6',
               "back\\slash", "line\nbreak", "tab\tand\rreturn", "引号'与\"混合"]


def test_ids_are_data_a_crafted_id_never_reaches_other_rows(filled):
    """An id with quotes, backslashes or line breaks is stored, found and deleted as itself; deleting one
    (or one that is not stored) never removes another row."""
    store, vectors, _ = filled
    for crafted in HOSTILE_IDS:  # none stored yet: nothing is found, nothing is deleted
        assert store.get([crafted]) == [] and store.delete([crafted]) == 0, crafted
    assert store.count() == 40
    extra = unit_rows(len(HOSTILE_IDS), seed=9)
    assert store.upsert(HOSTILE_IDS, extra, [{"n": i} for i in range(len(HOSTILE_IDS))]).written == len(HOSTILE_IDS)
    assert [r.id for r in store.get(HOSTILE_IDS)] == HOSTILE_IDS
    assert store.upsert(HOSTILE_IDS, extra, [{"n": i} for i in range(len(HOSTILE_IDS))]).written == 0  # unchanged
    for i, crafted in enumerate(HOSTILE_IDS):
        assert store.search(extra[i], k=1)[0][0].id == crafted
        assert store.delete([crafted]) == 1, crafted
        assert store.count() == 40 + len(HOSTILE_IDS) - i - 1
    assert sorted(r.id for r in store.get(ids_of(40))) == sorted(ids_of(40))


def test_scan_pages_through_every_row_once_whatever_the_ids_hold(make):
    store = make()
    ids = [f"r{i:04d}" for i in range(2_300)] + HOSTILE_IDS
    store.upsert(ids, unit_rows(len(ids), seed=3))
    seen = [x for batch in store.scan(batch_size=500) for x in batch.ids]
    assert sorted(seen) == sorted(ids) and len(seen) == len(ids)


def test_an_id_no_expression_could_find_again_is_refused_at_write(make, backend):
    store = make()
    if backend == "numpy":
        assert store.upsert(["nul\x00id"], unit_rows(1)).written == 1  # the numpy bank keeps any string
        return
    with pytest.raises(ValueError, match="control character"):
        store.upsert(["nul\x00id"], unit_rows(1))
    assert store.count() == 0 and store.get(["nul\x00id"]) == [] and store.delete(["nul\x00id"]) == 0


def test_filter_that_matches_few_rows_still_finds_k(make):
    store = make()
    vectors = unit_rows(600, seed=3)
    meta = [{"kind": "rare" if i % 150 == 7 else "common"} for i in range(600)]
    store.upsert(ids_of(600), vectors, meta)
    [hits] = store.search(vectors[0], k=4, filter={"kind": "rare"})
    assert {h.id for h in hits} == {"r7", "r157", "r307", "r457"}


def test_open_with_another_dimension_is_one_clear_line(make):
    make(dim=DIM)
    with pytest.raises(StoreError) as err:
        make(dim=DIM + 1)
    message = str(err.value)
    assert "\n" not in message and f"dim {DIM}" in message and f"dim {DIM + 1}" in message


def test_open_with_another_embedder_is_one_clear_line(make):
    make(embedder_id="emb-a")
    with pytest.raises(StoreError) as err:
        make(embedder_id="emb-b")
    message = str(err.value)
    assert "\n" not in message and "'emb-a'" in message and "'emb-b'" in message


def test_opening_a_missing_store_without_create_says_so(uri_for):
    with pytest.raises(StoreError, match="create=True"):
        open_store(uri_for("absent"), embedder_id="emb-a", dim=DIM)


def test_rows_are_checked(make):
    store = make()
    with pytest.raises(ValueError, match="shape"):
        store.upsert(["a"], unit_rows(1, dim=DIM + 1))
    with pytest.raises(ValueError, match="all zeros"):
        store.upsert(["a"], np.zeros((1, DIM)))
    with pytest.raises(ValueError, match="duplicate"):
        store.upsert(["a", "a"], unit_rows(2))
    with pytest.raises(ValueError, match="JSON-safe"):
        store.upsert(["a"], unit_rows(1), [{"x": float("nan")}])
    assert store.count() == 0


def test_readers_keep_working_while_a_writer_upserts(make):
    writer = make("shared")
    reader = make("shared", create=False)
    vectors = unit_rows(300, seed=5)
    writer.upsert(ids_of(20), vectors[:20])
    errors: list[BaseException] = []

    def write() -> None:
        try:
            for start in range(20, 300, 40):
                writer.upsert(ids_of(300)[start : start + 40], vectors[start : start + 40])
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    thread = threading.Thread(target=write)
    thread.start()
    searches = 0
    while thread.is_alive() or searches < 3:
        hits = reader.search(vectors[:4], k=5)
        assert [h[0].id for h in hits] == ["r0", "r1", "r2", "r3"]
        searches += 1
    thread.join()
    assert not errors
    assert reader.count() == 300
    assert reader.search(vectors[299], k=1)[0][0].id == "r299"


def test_describe_names_backend_embedder_and_dim(make, backend):
    info = make().describe()
    assert (info.embedder_id, info.dim) == ("emb-a", DIM)
    assert info.backend == {"numpy": "numpy", "milvus": "milvus-lite", "milvus-server": "milvus",
                            "milvus-standalone": "milvus"}[backend]
    assert str(parse_store_uri(info.uri)) == info.uri  # describe's URI reopens the store


# ---------------------------------------------------------------------------------------------
# URIs.


@pytest.mark.parametrize("uri, backend, location, collection", [
    ("./banks/traces", "numpy", "./banks/traces", None),
    ("milvus://db.example:19530", "milvus", "http://db.example:19530", "tracerag"),
    ("milvus://db.example", "milvus", "http://db.example:19530", "tracerag"),
    ("milvus+https://db.example?collection=rag_chunks", "milvus", "https://db.example", "rag_chunks"),
    ("milvus+http://10.0.0.5:8080", "milvus", "http://10.0.0.5:8080", "tracerag"),
])
def test_store_uris(uri, backend, location, collection):
    target = parse_store_uri(uri)
    assert (target.backend, target.location, target.collection) == (backend, location, collection)
    assert parse_store_uri(target.uri) == target


def test_lite_uris_are_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    target = parse_store_uri("milvus:./sub/traces.db?collection=t")
    assert target.backend == "milvus-lite" and target.location == str(tmp_path / "sub" / "traces.db")
    assert target.uri == f"milvus:{tmp_path / 'sub' / 'traces.db'}?collection=t"


def test_read_consistency_is_session_unless_the_uri_says_otherwise():
    assert parse_store_uri("milvus://db.example").consistency == "session"
    target = parse_store_uri("milvus://db.example?collection=c&consistency=Strong")
    assert (target.collection, target.consistency) == ("c", "strong")
    assert target.uri == "milvus://db.example:19530?collection=c&consistency=strong"
    assert parse_store_uri(target.uri) == target  # the URI shown reopens the same store
    tuned = parse_store_uri("milvus://db.example?ef=512")
    assert tuned.ef == 512 and tuned.uri == "milvus://db.example:19530?ef=512"
    assert parse_store_uri("milvus://db.example").ef is None


@pytest.mark.parametrize("uri, why", [
    ("", "empty"),
    ("redis://host", "unknown scheme"),
    ("milvus:", "file path"),
    ("milvus:./store.sqlite", "must end in .db"),
    ("milvus+https:host", "needs //host"),
    ("milvus://", "needs a host"),
    ("milvus://host:99999", "Port"),
    ("milvus://host/some/path", "unexpected path"),
    ("milvus:./s.db?collection=bad-name", "collection"),
    ("milvus:./s.db?collection=a&collection=b", "collection"),
    ("milvus:./s.db?index=hnsw", "unknown parameter"),
    ("milvus:./s.db?consistency=eventual", "consistency"),
    ("milvus:./s.db?ef=0", "ef"),
    ("milvus:./s.db?ef=many", "ef"),
    ("milvus://host?consistency=strong&consistency=session", "consistency"),
    ("./bank?collection=x", "only to milvus"),
])
def test_a_bad_uri_is_one_line_naming_it(uri, why):
    with pytest.raises(StoreError) as err:
        open_store(uri, embedder_id="e", dim=4)
    message = str(err.value)
    assert "\n" not in message and why in message and repr(uri) in message and "expected" in message


def test_credentials_in_a_uri_are_refused_without_echoing_them():
    with pytest.raises(StoreError) as err:
        parse_store_uri("milvus+https://root:hunter2@db.example")
    assert "hunter2" not in str(err.value) and TOKEN_ENV in str(err.value)


class _FakeClient:
    def describe_index(self, collection, field):
        return {"index_type": "HNSW"}

    def close(self):
        pass


def test_the_token_never_shows_in_describe_or_repr(monkeypatch):
    monkeypatch.setenv(TOKEN_ENV, "s3cret-token")
    target = parse_store_uri("milvus+https://db.example:443?collection=c")
    store = MilvusStore(_FakeClient(), target, "emb-a", DIM)
    for text in (repr(store), str(store.describe()), repr(target), str(target)):
        assert "s3cret" not in text
    assert store.describe().uri == "milvus+https://db.example:443?collection=c"


@milvus
def test_the_token_goes_to_the_server_and_not_into_errors(monkeypatch):
    import pymilvus

    seen = {}

    def refuse(uri, token):
        seen.update(uri=uri, token=token)
        raise ConnectionError(f"cannot reach {uri}")

    monkeypatch.setenv(TOKEN_ENV, "s3cret-token")
    monkeypatch.setattr(pymilvus, "MilvusClient", refuse)
    with pytest.raises(StoreError) as err:
        open_store("milvus+https://db.example", embedder_id="e", dim=4)
    assert seen == {"uri": "https://db.example", "token": "s3cret-token"}
    assert "s3cret" not in str(err.value) and "\n" not in str(err.value)


@milvus
def test_the_token_reaches_a_real_server_and_a_wrong_one_is_one_line(milvus_server, monkeypatch):
    from milvus_server import checks_tokens

    monkeypatch.setenv(TOKEN_ENV, milvus_server.token or "")
    uri = milvus_server.uri("token_check")
    store = open_store(uri, embedder_id="e", dim=4, create=True)  # the right token: every call goes through
    try:
        assert store.upsert(["a"], np.ones((1, 4))) == UpsertReport(1, 0) and store.count() == 1
    finally:
        store.close()
    if not checks_tokens():
        pytest.skip("this Milvus Lite engine serves without checking tokens")
    for wrong in ("not-the-token", ""):
        monkeypatch.setenv(TOKEN_ENV, wrong)
        with pytest.raises(StoreError) as err:
            open_store(uri, embedder_id="e", dim=4)
        message = str(err.value)
        assert "\n" not in message and message.startswith(uri) and TOKEN_ENV in message
        assert (wrong or milvus_server.token) not in message


@milvus
def test_a_host_where_no_milvus_listens_is_one_line_soon(monkeypatch):
    import socket

    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv(TOKEN_ENV, "s3cret-token")
    started = time.monotonic()
    with pytest.raises(StoreError) as err:
        open_store(f"milvus://127.0.0.1:{port}?collection=c", embedder_id="e", dim=4)
    assert time.monotonic() - started < HANG_S  # a hang guard: pymilvus gives up connecting after 10 s at most
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"milvus://127.0.0.1:{port}?collection=c: cannot connect")
    assert "s3cret" not in message


def test_filter_expression_escapes_every_string():
    expression = filter_expression(check_filter({"label": 'a"b\\c\nd', "n": [1, 2.5], "ok": True}))
    assert expression == ('metadata["label"] == "a\\"b\\\\c\\nd" and (metadata["n"] == 1 or metadata["n"] == 2.5)'
                          ' and metadata["ok"] == true')
    assert filter_expression(None) == "" and check_filter({}) is None


# ---------------------------------------------------------------------------------------------
# Backend-specific behaviour.


def test_numpy_store_opens_an_existing_bank_and_recognises_its_rows(tmp_path):
    vectors = unit_rows(10, seed=8)
    CosineBank.from_vectors(tmp_path / "bank", vectors, ids_of(10), [{"i": i} for i in range(10)], embedder_id="emb")
    store = NumpyStore.open(tmp_path / "bank", embedder_id="emb", dim=DIM)
    assert store.count() == 10 and store.describe().index == "exact"
    assert store.upsert(ids_of(10), vectors, [{"i": i} for i in range(10)]) == UpsertReport(0, 10)
    assert CosineBank.load(tmp_path / "bank").search(vectors[4], k=1)[0][0].id == "r4"


def test_numpy_store_keeps_an_experience_banks_views_through_rewrites(tmp_path):
    import json

    from tracerag.memory.experience_bank import ExperienceBank

    vectors = unit_rows(4, seed=10)
    ExperienceBank.from_vectors(tmp_path / "exp", vectors[:2], ["t0", "t1"], [{"caption": "a"}, {"caption": "b"}],
                                embedder_id="emb")
    store = open_store(tmp_path / "exp", embedder_id="emb", dim=DIM)
    store.upsert(["t2"], vectors[2:3], [{"caption": "c"}])  # append path
    store.upsert(["t0"], vectors[3:4], [{"caption": "a2"}])  # rewrite path
    assert store.delete(["t1"]) == 1
    assert json.loads((tmp_path / "exp" / "task_ids.json").read_text()) == ["t0", "t2"]
    assert json.loads((tmp_path / "exp" / "captions.json").read_text()) == {"t0": "a2", "t2": "c"}


@milvus
def test_milvus_refuses_a_collection_tracerag_did_not_write(tmp_path):
    from pymilvus import MilvusClient

    path = tmp_path / "store.db"
    client = MilvusClient(str(path))
    client.create_collection("foreign", dimension=DIM)
    client.close()
    with pytest.raises(StoreError, match="not written by tracerag") as err:
        open_store(f"milvus:{path}?collection=foreign")
    assert "\n" not in str(err.value)


@milvus
def test_milvus_switches_to_hnsw_past_the_threshold(tmp_path):
    store = MilvusStore.open(f"milvus:{tmp_path / 'store.db'}", embedder_id="emb", dim=DIM, create=True,
                             hnsw_threshold=100)
    try:
        vectors = unit_rows(150, seed=9)
        store.upsert(ids_of(60), vectors[:60])
        assert store.describe().index == "FLAT"
        store.upsert(ids_of(150)[60:], vectors[60:])
        assert store.describe().index in ("HNSW", "AUTOINDEX")
        assert store.search(vectors[120], k=1)[0][0].id == "r120"
    finally:
        store.close()


@milvus
def test_an_index_build_the_server_already_finished_is_read_back_not_taken_for_a_failure(tmp_path):
    """A re-sent create_index (its first call outlived the connection) is refused as "already exists":
    the HNSW index in place is reported, not a fall back to FLAT."""
    from tracerag.stores.milvus_index import create_best_index

    store = MilvusStore.open(f"milvus:{tmp_path / 'store.db'}", embedder_id="emb", dim=DIM, create=True,
                             hnsw_threshold=100)
    try:
        store.upsert(ids_of(150), unit_rows(150, seed=9))
        assert store.describe().index in ("HNSW", "AUTOINDEX")
        assert create_best_index(store._client, store._collection, "test") == store.describe().index
    finally:
        store.close()


# ---------------------------------------------------------------------------------------------
# Scan, get with vectors, and the numpy bank's own upsert/delete.


def test_scan_returns_every_row_in_batches_with_vectors_on_request(filled):
    store, vectors, _ = filled
    batches = list(store.scan(batch_size=16))
    assert [len(b) for b in batches] == [16, 16, 8]
    assert all(b.vectors is None for b in batches)
    seen = {x: m for b in batches for x, m in zip(b.ids, b.metadata, strict=True)}
    assert sorted(seen) == sorted(ids_of(40)) and seen["r7"]["i"] == 7
    ids, metadata = batches[0]  # unpacks as (ids, metadata)
    assert len(ids) == len(metadata) == 16
    with_vectors = {x: v for b in store.scan(batch_size=7, with_vectors=True) for x, v in zip(b.ids, b.vectors,
                                                                                             strict=True)}
    assert np.allclose(np.stack([with_vectors[x] for x in ids_of(40)]), vectors, atol=1e-6)


def test_scan_of_an_empty_store_yields_nothing(make):
    assert list(make().scan(10)) == []
    with pytest.raises(ValueError, match="batch_size"):
        list(make("other").scan(0))


def test_get_returns_the_stored_unit_vectors(filled):
    store, vectors, _ = filled
    rows = store.get(["r3", "r39"])
    cosines = [float(r.vector @ vectors[i]) for r, i in zip(rows, (3, 39), strict=True)]
    assert min(cosines) >= 0.9999 and rows[0].metadata["i"] == 3


def _big_bank(tmp_path, n=600, pad=2_000):
    """A bank whose ids + metadata exceed 1 MB, so it opens through the offset indexes."""
    vectors = unit_rows(n, seed=21)
    meta = [{"i": i, "pad": "x" * pad} for i in range(n)]
    CosineBank.from_vectors(tmp_path / "big", vectors, ids_of(n), meta, embedder_id="emb")
    return vectors, meta


@pytest.mark.parametrize("big", [False, True])
def test_numpy_upsert_and_delete_happen_inside_the_bank_without_decoding_rows(tmp_path, monkeypatch, big):
    if big:
        vectors, _ = _big_bank(tmp_path)
        n = 600
    else:
        n = 30
        vectors = unit_rows(n, seed=22)
        CosineBank.from_vectors(tmp_path / "big", vectors, ids_of(n), [{"i": i} for i in range(n)],
                                embedder_id="emb")
    store = open_store(tmp_path / "big", embedder_id="emb", dim=DIM)
    before = store.bank.manifest["created"]

    def no_decoding(self, row):  # the kept rows are copied as bytes, never decoded through Python
        raise AssertionError("a row was decoded during a splice")

    new = unit_rows(3, seed=23)
    store.count()  # settle the store's view of the bank
    monkeypatch.setattr(CosineBank, "metadata", no_decoding)
    bank = store.bank
    assert bank.upsert_vectors(["r5", "r6", "new"], new, [{"i": -5}, {"i": -6}, {"i": 999}]) == (1, 2, 0)
    assert bank.delete(["r0", f"r{n - 1}", "unknown"]) == 2
    monkeypatch.undo()
    reopened = CosineBank.load(tmp_path / "big")  # checksums and indexes verified at open
    assert len(reopened) == n - 2 + 1
    assert reopened.ids[:5] == ["r1", "r2", "r3", "r4", "r5"] and reopened.ids[-1] == "new"
    assert reopened.metadata(reopened.row_of("r5"))["i"] == -5 and reopened.metadata(reopened.row_of("r7"))["i"] == 7
    assert reopened.search(new[1], k=1)[0][0].id == "r6"
    assert reopened.search(vectors[7], k=1)[0][0].id == "r7"
    assert reopened.manifest["created"] == before
    assert {b for batch in reopened.iter_rows(64) for b in batch.ids} == set(reopened.ids)
    assert store.count() == n - 1 and store.get(["r0"]) == []


def test_numpy_store_upsert_replaces_in_place_and_skips_unchanged(tmp_path):
    store = open_store(tmp_path / "s", embedder_id="emb", dim=DIM, create=True)
    vectors = unit_rows(10, seed=24)
    store.upsert(ids_of(10), vectors, [{"i": i} for i in range(10)])
    report = store.upsert(["r2", "r3", "r10"], vectors[[5, 3, 0]], [{"i": 2}, {"i": 3}, {"i": 10}])
    assert report == UpsertReport(2, 1)  # r3 unchanged
    bank = CosineBank.load(tmp_path / "s")
    assert bank.ids == [*ids_of(10), "r10"] and float(bank.vectors[2] @ vectors[5]) > 0.9999


def test_numpy_readers_keep_their_version_while_rows_are_replaced_and_deleted(tmp_path):
    vectors = unit_rows(200, seed=25)
    writer = open_store(tmp_path / "s", embedder_id="emb", dim=DIM, create=True)
    writer.upsert(ids_of(200), vectors, [{"i": i} for i in range(200)])
    pinned = CosineBank.load(tmp_path / "s")  # an open reader that never refreshes
    reader = open_store(tmp_path / "s", embedder_id="emb", dim=DIM)
    errors: list[BaseException] = []

    def write() -> None:
        try:
            for i in range(100, 160, 6):
                writer.upsert([f"r{i}"], vectors[i : i + 1], [{"i": -i}])
                writer.delete([f"r{i + 1}"])
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    thread = threading.Thread(target=write)
    thread.start()
    while thread.is_alive():
        for hits in reader.search(vectors[:3], k=1):
            assert hits[0].metadata["i"] in (0, 1, 2)
        hit = pinned.search(vectors[150], k=1)[0][0]
        assert (hit.id, hit.metadata["i"]) == ("r150", 150)
    thread.join()
    assert not errors
    assert reader.count() == 190 and reader.get(["r101"]) == [] and reader.get(["r100"])[0].metadata["i"] == -100


_CRASHING_WRITER = """
import sys
import numpy as np
from tracerag.stores.stores import open_store

store = open_store(sys.argv[1], embedder_id="emb", dim=64)
rng = np.random.default_rng(0)
for batch in range(1000):
    ids = [f"b{batch}-{i}" for i in range(200)]
    vectors = rng.standard_normal((200, 64)).astype(np.float32)
    store.upsert(ids, vectors, [{"batch": batch, "pad": "y" * 200} for _ in ids])
    store.delete([f"b{batch - 1}-0"]) if batch else None  # a splice too
    print(batch, flush=True)
"""


def test_a_writer_killed_mid_write_loses_nothing_committed(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    store = open_store(tmp_path / "s", embedder_id="emb", dim=64, create=True)
    proc = subprocess.Popen([sys.executable, "-c", _CRASHING_WRITER, str(tmp_path / "s")], stdout=subprocess.PIPE,
                            text=True)
    committed = -1
    try:
        while committed < 4:
            line = proc.stdout.readline()
            assert line, "the writer ended early"
            committed = int(line)
        time.sleep(0.05)  # somewhere inside the next write
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    bank = CosineBank.load(tmp_path / "s")  # recovers whatever the kill left
    ids = set(bank.ids)
    for batch in range(committed + 1):
        wanted = {f"b{batch}-{i}" for i in range(1, 200)}
        assert wanted <= ids, f"batch {batch} was committed but is missing"
    assert f"b{committed}-0" in ids or committed + 1 in {bank.metadata(r)["batch"] for r in range(len(bank))}
    store.upsert(["after"], unit_rows(1, seed=1, dim=64))  # the next writer finishes the leftovers and writes
    assert "after" in set(CosineBank.load(tmp_path / "s").ids)


_ID_ALPHABET = st.sampled_from(list("abz019'\"\\[](),= \n\t\ryes-_%*") + ["引", "号", "é", "🙂", "\u2028"])


@milvus
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=st.lists(st.text(_ID_ALPHABET, min_size=1, max_size=12), min_size=2, max_size=8, unique=True),
       data=st.data())
def test_any_id_round_trips_on_milvus_lite_and_touches_only_its_row(tmp_path_factory, ids, data):
    """Random ids of quotes, backslashes, brackets, line breaks and CJK: upsert, get and delete reach exactly
    the rows named, and a scan returns them all."""
    path = tmp_path_factory.mktemp("ids") / "s.db"
    with open_store(f"milvus:{path}", embedder_id="e", dim=DIM, create=True) as store:
        assert store.upsert(ids, unit_rows(len(ids), seed=1)).written == len(ids)
        assert [r.id for r in store.get(ids)] == ids
        assert sorted(x for b in store.scan(batch_size=3) for x in b.ids) == sorted(ids)
        gone = data.draw(st.lists(st.sampled_from(ids), unique=True, max_size=len(ids) - 1))
        assert store.delete([*gone, "x'] or id not in ['"]) == len(gone)
        assert sorted(r.id for r in store.get(ids)) == sorted(set(ids) - set(gone))
        assert store.count() == len(ids) - len(gone)


@milvus
def test_a_server_that_dies_mid_run_is_one_line_naming_the_store(tmp_path, monkeypatch):
    from milvus_server import milvus_server as serve

    with serve(tmp_path / "data") as server:
        monkeypatch.setenv(TOKEN_ENV, server.token or "")
        store = open_store(server.uri("dies"), embedder_id="e", dim=DIM, create=True)
        store.upsert(ids_of(3), unit_rows(3))
    for call in (lambda: store.search(unit_rows(1), k=1), lambda: store.count(), lambda: store.get(["r1"]),
                 lambda: store.upsert(["r9"], unit_rows(1)), lambda: store.delete(["r1"])):
        with pytest.raises(StoreError) as err:
            call()
        message = str(err.value)
        assert message.startswith(server.uri("dies")) and "\n" not in message and "failed" in message
