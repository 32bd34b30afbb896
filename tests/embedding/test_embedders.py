import copy
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tracerag.embedding.embedder_choice import make_embedder
from tracerag.embedding.embedders import Embedder, LexicalEmbedder, LocalUSEEmbedder, small_product

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def use():
    return LocalUSEEmbedder()


def cos(a, b):
    return float(a @ b)


def test_use_shapes_and_normalisation(use):
    vecs = use.embed(["打开客厅的灯", "turn on the living room light", ""])
    assert vecs.shape == (3, 512) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert use.embed([]).shape == (0, 512)
    assert use.id == "use-multilingual-v3" and use.dim == 512


def test_use_crosslingual_pair_beats_unrelated(use):
    zh, en, other = use.embed(["打开客厅的灯", "turn on the living room light", "洗衣机开始洗涤"])
    assert cos(zh, en) > cos(zh, other) + 0.1


def test_every_instance_shares_the_loaded_weights(use):
    """~120 MB of weights, held once per process: a service of several programs, or a program whose stages
    each make an embedder, does not load them again."""
    use.embed(["warm"])
    other = LocalUSEEmbedder()
    assert other._get_model() is use._get_model()
    assert LocalUSEEmbedder(threads=2)._model is None  # another thread count loads on its first embed
    np.testing.assert_array_equal(other.embed(["打开客厅的灯"]), use.embed(["打开客厅的灯"]))


def test_protocol_deepcopy_repr(use):
    for emb in (use, LexicalEmbedder(64)):
        assert isinstance(emb, Embedder)
        assert copy.deepcopy(emb) is emb
        assert len(repr(emb)) < 80


def test_lexical_shared_wording_scores_higher():
    lex = LexicalEmbedder()
    a, b, c, d, e = lex.embed(
        ["客厅主灯", "打开客厅主灯", "洗衣机", "Living room lights", "living-room light"]
    )
    assert cos(a, b) > cos(a, c) and cos(a, c) == pytest.approx(0.0, abs=1e-6)
    assert cos(d, e) > 0.5 > cos(d, c)
    np.testing.assert_allclose(np.linalg.norm(lex.embed(["客厅主灯", "TV"]), axis=1), 1.0, atol=1e-5)


def test_lexical_empty_and_dim():
    lex = LexicalEmbedder(dim=256)
    vecs = lex.embed(["", "  ,.!", "ＴＶ"])  # full-width Latin is NFKC-folded to "tv"
    assert vecs.shape == (3, 256) and vecs.dtype == np.float32
    assert not vecs[:2].any()
    np.testing.assert_allclose(vecs[2], lex.embed(["tv"])[0])
    assert lex.id == "lexical-char-ngram-v1-d256"
    assert lex.embed([]).shape == (0, 256)


def test_lexical_stable_across_processes():
    text = "打开卧室的空调 to 26 degrees"
    code = (
        "import json, numpy as np\n"
        "from tracerag.embedding.embedders import LexicalEmbedder\n"
        f"v = LexicalEmbedder(512).embed([{text!r}])[0]\n"
        "print(json.dumps({int(i): float(v[i]) for i in np.flatnonzero(v)}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    theirs = {int(k): v for k, v in json.loads(out).items()}
    mine = LexicalEmbedder(512).embed([text])[0]
    assert theirs and set(theirs) == set(np.flatnonzero(mine).tolist())
    for i, v in theirs.items():
        assert mine[i] == pytest.approx(v, rel=1e-6)


@pytest.mark.slow  # a wall-clock figure: benchmarks/bench_lexical_embedder.py measures it
def test_lexical_speed():
    import time

    texts = [f"卧室 {i} 号灯 bedroom lamp {i}" for i in range(2000)]
    lex = LexicalEmbedder()
    start = time.perf_counter()
    lex.embed(texts)
    assert time.perf_counter() - start < 1.0


def test_make_embedder(tmp_path):
    from tracerag.embedding.embedding_cache import CachedEmbedder
    from tracerag.embedding.http_embedder import HttpEmbedder

    assert isinstance(make_embedder(), LocalUSEEmbedder)
    assert isinstance(make_embedder("lexical"), LexicalEmbedder)
    http = make_embedder("http://127.0.0.1:9/v1/", model="m", api_key="secret")
    assert isinstance(http, HttpEmbedder) and http.id == "http:m@http://127.0.0.1:9/v1"
    assert "secret" not in repr(http)
    assert make_embedder("https://x/v1").id == "http:default@https://x/v1"
    cached = make_embedder("lexical", cache_dir=tmp_path / "c")
    assert isinstance(cached, CachedEmbedder) and cached.id == LexicalEmbedder().id
    assert cached.path == tmp_path / "c" / "embeddings.sqlite"
    with pytest.raises(ValueError, match="local.*lexical.*http"):
        make_embedder("openai")


@pytest.mark.parametrize("rows", [3, 127, 600])  # below and above the size where BLAS takes over
def test_a_query_product_equals_the_matrix_product_on_both_sides_of_the_blas_switch(rows):
    rng = np.random.default_rng(rows)
    docs, texts = rng.standard_normal((rows, 4096), dtype=np.float32), rng.standard_normal((2, 4096), dtype=np.float32)
    product = small_product(docs, texts)
    assert product.shape == (rows, 2) and product.dtype == np.float32
    np.testing.assert_allclose(product, docs @ texts.T, rtol=1e-4, atol=1e-3)
