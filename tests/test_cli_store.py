"""--store on the command line: evaluate and run on a store named by URI (filled when empty), and
`tracerag store copy` between backends."""

import importlib.util
import json

import pytest

import optimize
import tracerag

HAVE_MILVUS = all(importlib.util.find_spec(m) is not None for m in ("pymilvus", "milvus_lite"))
milvus = pytest.mark.skipif(not HAVE_MILVUS, reason='needs pip install -e ".[milvus]"')


@pytest.fixture(autouse=True)
def session_embedder(embedder, monkeypatch):
    monkeypatch.setattr(tracerag.config, "make_embedder", lambda *a, **k: embedder)


def _metrics(path):
    return json.loads(path.read_text(encoding="utf-8"))["metrics"]


def _evaluate_experience(tmp_path, name, *extra):
    out = tmp_path / f"{name}.json"
    assert optimize.main(["evaluate", "experience", "--dataset", "experience", "--split", "test", "--out", str(out),
                          *extra]) == 0
    return _metrics(out)


@pytest.mark.parametrize("backend", ["numpy", pytest.param("milvus", marks=milvus)])
def test_evaluate_experience_on_a_store_scores_what_the_default_bank_scores(backend, tmp_path, capsys):
    uri = str(tmp_path / "bank") if backend == "numpy" else f"milvus:{tmp_path / 'store.db'}"
    default = _evaluate_experience(tmp_path, "default")
    on_store = _evaluate_experience(tmp_path, "store", "--store", uri)  # empty: filled from the traces first
    for key in ("hit@5", "recall@5", "mrr"):
        assert on_store[key] == default[key], key
    again = _evaluate_experience(tmp_path, "again", "--store", uri)  # now full: used as it is
    assert again["hit@5"] == default["hit@5"]
    capsys.readouterr()
    assert optimize.main(["run", "experience", "--store", uri, "--query", "What did this receipt cost with tax?"]) == 0
    assert json.loads(capsys.readouterr().out.split("\n\n")[0])["task_ids"]


@milvus
def test_store_copy_between_backends(tmp_path, capsys):
    bank, lite = str(tmp_path / "bank"), f"milvus:{tmp_path / 'copy.db'}"
    _evaluate_experience(tmp_path, "fill", "--store", bank)
    assert optimize.main(["store", "copy", "--from", bank, "--to", lite]) == 0
    first = capsys.readouterr().out
    assert optimize.main(["store", "copy", "--from", bank, "--to", lite, "--json"]) == 0
    rerun = json.loads(capsys.readouterr().out)
    assert rerun["written"] == 0 and rerun["ok"], first  # resumable: nothing left to write
    assert optimize.main(["store", "copy", "--from", str(tmp_path / "missing"), "--to", lite]) == 2
    assert capsys.readouterr().err.startswith("error: ")


@milvus
def test_build_bank_and_ingest_into_a_milvus_store(traces_dir, tmp_path, capsys):
    lite = f"milvus:{tmp_path / 'traces.db'}"
    assert optimize.main(["build-bank", "--traces", str(traces_dir), "--store", lite]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["added"] == first["store"]["written"] == first["store"]["target_count"] > 0
    assert optimize.main(["build-bank", "--traces", str(traces_dir), "--store", lite]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["store"]["written"] == 0 and again["store"]["skipped"] == first["store"]["written"]

    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": f"d{i}", "text": f"Document {i} is about topic {i % 3}."}) + "\n"
                            for i in range(20)), encoding="utf-8")
    assert optimize.main(["ingest", "--docs", str(docs), "--store", f"milvus:{tmp_path / 'chunks.db'}"]) == 0
    assert json.loads(capsys.readouterr().out)["store"]["target_count"] == 20
    with pytest.raises(SystemExit):  # --bank or --store is required
        optimize.main(["ingest", "--docs", str(docs)])
