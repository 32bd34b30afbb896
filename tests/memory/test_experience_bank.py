"""Building and growing the experience bank from a traces directory."""

import json

import numpy as np
import pytest
from conftest import make_trace, write_traces

from tracerag.data_files.read_report import DataSetShrunk
from tracerag.embedding.embedders import LexicalEmbedder
from tracerag.memory.experience_bank import build_experience_bank
from tracerag.stores.cosine_bank import BankError, CosineBank


class CountingEmbedder:
    """Wraps an embedder and records every text it embeds; can be told to fail after n texts."""

    def __init__(self, inner, fail_after: int | None = None):
        self.inner, self.fail_after, self.texts = inner, fail_after, []

    id = property(lambda self: self.inner.id)
    dim = property(lambda self: self.inner.dim)

    def embed(self, texts):
        if self.fail_after is not None and len(self.texts) + len(texts) > self.fail_after:
            raise RuntimeError("embedding service died")
        self.texts += list(texts)
        return self.inner.embed(texts)


def test_build_indexes_correct_traces_with_their_metadata(traces_dir, tmp_path, embedder):
    report = build_experience_bank(traces_dir, tmp_path / "bank", embedder)
    assert (report.added, report.incorrect_skipped, report.bank_size) == (12, 1, 12)
    bank = CosineBank.load(tmp_path / "bank", embedder)
    assert "receipt-0009" not in bank  # the incorrect trace
    meta = bank.metadata(bank.row_of("plant-0002"))
    assert meta["index_text"].endswith("Task: identify a plant and its pet toxicity\n"
                                       "Tools (in order): image_search, wikipedia")
    assert meta["reasoning"].startswith("Reverse image search") and meta["caption"] is None
    manifest = json.loads((tmp_path / "bank" / "manifest.json").read_text())
    assert manifest["embedder"] == embedder.id and manifest["count"] == 12 and manifest["dim"] == 512
    hits = bank.search_texts(["Is this fern poisonous to dogs?"], k=3)[0]
    assert all(h.id.startswith("plant-") for h in hits)


def test_existing_bank_needs_append_or_rebuild(traces_dir, tmp_path, embedder):
    build_experience_bank(traces_dir, tmp_path / "bank", embedder)
    with pytest.raises(BankError, match="--append"):
        build_experience_bank(traces_dir, tmp_path / "bank", embedder)
    assert len(CosineBank.load(tmp_path / "bank")) == 12
    assert build_experience_bank(traces_dir, tmp_path / "bank", embedder, rebuild=True).added == 12


def test_append_embeds_only_new_traces(traces_dir, tmp_path, embedder):
    build_experience_bank(traces_dir, tmp_path / "bank", embedder)
    reader = CosineBank.load(tmp_path / "bank", embedder)  # a reader holding the old version open
    write_traces(traces_dir, [make_trace("timezone", 7), make_trace("plant", 8)])
    counting = CountingEmbedder(embedder)
    report = build_experience_bank(traces_dir, tmp_path / "bank", counting, append=True)
    assert (report.added, report.already_in_bank, report.bank_size) == (2, 12, 14)
    assert sorted(t.split("\n")[1] for t in counting.texts) == ["Task: convert a clock time across zones",
                                                                "Task: identify a plant and its pet toxicity"]
    assert len(reader) == 12 and reader.search_texts(["receipt total"], k=1)[0]  # old version still readable
    assert len(reader.refresh()) == 14
    again = build_experience_bank(traces_dir, tmp_path / "bank", CountingEmbedder(embedder), append=True)
    assert again.added == 0 and again.already_in_bank == 14


def test_a_first_append_raced_by_another_appends_instead_of_failing(traces_dir, tmp_path, embedder, monkeypatch):
    """Two 'build-bank --append' on a missing bank: the later one finds the bank the first created and adds what
    it lacks, instead of failing with 'a bank already exists; pass --append' (which it had passed)."""
    from tracerag.stores.cosine_bank import ExperienceBank

    real_create = ExperienceBank.create.__func__

    def raced(cls, *args, **kwargs):
        monkeypatch.setattr(ExperienceBank, "create", classmethod(real_create))
        build_experience_bank(traces_dir, tmp_path / "bank", embedder, append=True)  # the other one, first
        return real_create(cls, *args, **kwargs)

    monkeypatch.setattr(ExperienceBank, "create", classmethod(raced))
    report = build_experience_bank(traces_dir, tmp_path / "bank", embedder, append=True)
    assert (report.added, report.already_in_bank, report.bank_size) == (0, 12, 12)
    assert len(set(CosineBank.load(tmp_path / "bank", embedder).ids)) == 12


def test_crash_during_build_leaves_the_old_bank(traces_dir, tmp_path, embedder):
    build_experience_bank(traces_dir, tmp_path / "bank", embedder)
    before = np.load(tmp_path / "bank" / "embeddings.npy").copy()
    write_traces(traces_dir, [make_trace("timezone", n) for n in range(10, 20)])
    with pytest.raises(RuntimeError, match="died"):
        build_experience_bank(traces_dir, tmp_path / "bank", CountingEmbedder(embedder, fail_after=3),
                              append=True, batch_size=2)
    with pytest.raises(RuntimeError, match="died"):
        build_experience_bank(traces_dir, tmp_path / "bank", CountingEmbedder(embedder, fail_after=3),
                              rebuild=True, batch_size=2)
    bank = CosineBank.load(tmp_path / "bank", embedder)
    assert len(bank) == 12 and np.array_equal(bank.vectors, before)
    assert not [p for p in tmp_path.iterdir() if p.is_dir() and p.name not in ("bank", "traces")]  # no leftovers


def test_manifest_mismatch_is_refused(traces_dir, tmp_path, embedder):
    build_experience_bank(traces_dir, tmp_path / "bank", embedder)
    with pytest.raises(BankError, match="embedder"):
        build_experience_bank(traces_dir, tmp_path / "bank", LexicalEmbedder(), append=True)
    manifest_path = tmp_path / "bank" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest_path.write_text(json.dumps({**manifest, "count": 13}))
    with pytest.raises(BankError, match="manifest.json"):
        CosineBank.load(tmp_path / "bank", embedder)


def test_captioner_only_for_traces_with_images_and_no_caption(tmp_path, embedder):
    traces = [make_trace("plant", 1, images=["images/a.jpg"]),
              make_trace("plant", 2, images=["images/b.jpg"], caption="A monstera leaf"),
              make_trace("receipt", 3)]
    write_traces(tmp_path / "traces", traces)
    asked = []

    def captioner(batch):
        asked.extend(t.task_id for t in batch)
        return {t.task_id: "A potted fern" for t in batch}

    report = build_experience_bank(tmp_path / "traces", tmp_path / "bank", embedder, captioner=captioner)
    assert asked == ["plant-0001"] and report.captioned == 1
    bank = CosineBank.load(tmp_path / "bank", embedder)
    assert bank.metadata(bank.row_of("plant-0001"))["index_text"].startswith("Image description: A potted fern\n")
    assert bank.metadata(bank.row_of("plant-0002"))["caption"] == "A monstera leaf"


def test_no_correct_traces_is_an_error(tmp_path, embedder):
    write_traces(tmp_path / "traces", [make_trace("plant", 1, is_correct=False)])
    with pytest.raises(BankError, match="no correct traces"):
        build_experience_bank(tmp_path / "traces", tmp_path / "bank", embedder)
    assert not (tmp_path / "bank").exists()


def test_task_ids_and_captions_views_follow_every_version(tmp_path, embedder):
    write_traces(tmp_path / "traces", [make_trace("plant", 1, images=["a.jpg"], caption="A fern"),
                                       make_trace("receipt", 2)])
    build_experience_bank(tmp_path / "traces", tmp_path / "bank", embedder)
    write_traces(tmp_path / "traces", [make_trace("plant", 3, images=["b.jpg"], caption="A cactus")])
    build_experience_bank(tmp_path / "traces", tmp_path / "bank", embedder, append=True)
    bank_dir = tmp_path / "bank"
    assert json.loads((bank_dir / "task_ids.json").read_text()) == CosineBank.load(bank_dir).ids == \
        ["plant-0001", "receipt-0002", "plant-0003"]
    assert json.loads((bank_dir / "captions.json").read_text()) == {"plant-0001": "A fern", "plant-0003": "A cactus"}


def test_a_lone_surrogate_skips_only_its_trace(traces_dir, tmp_path, embedder):
    """JSON can carry "\\ud800", which no UTF-8 file can hold: that trace is skipped, the build goes on."""
    bad = make_trace("plant", 30)
    bad["question"] = "Is this \ud800 plant toxic?"
    path = traces_dir / "tasks" / bad["task_id"] / "trace.json"
    path.parent.mkdir()
    path.write_text(json.dumps(bad), encoding="utf-8")  # ASCII-escaped, as JSON writers emit it
    many = [make_trace(f, n) for f in ("plant", "receipt", "timezone") for n in range(10, 17)]
    write_traces(traces_dir, many)
    report = build_experience_bank(traces_dir, tmp_path / "bank", embedder)
    assert report.added == 12 + len(many) and report.read["skipped"] == {"lone surrogate": 1}
    assert report.corrupt_skipped == [f"{path}: question: holds a character UTF-8 cannot store "
                                      "(U+D800, a lone surrogate)"]
    assert "plant-0030" not in CosineBank.load(tmp_path / "bank", embedder)


def test_too_many_unreadable_traces_stop_the_build_before_the_bank_is_touched(traces_dir, tmp_path, embedder):
    build_experience_bank(traces_dir, tmp_path / "bank", embedder)
    for n in range(2):
        (traces_dir / "tasks" / f"broken{n}").mkdir()
        (traces_dir / "tasks" / f"broken{n}" / "trace.json").write_text("{", encoding="utf-8")
    write_traces(traces_dir, [make_trace("plant", 40)])
    with pytest.raises(DataSetShrunk, match=r"traces: 2 of 16 traces skipped \(12%\), over the 5% allowed "
                                            r"\(--max-skipped\): .*broken0/trace.json: invalid JSON"):
        build_experience_bank(traces_dir, tmp_path / "bank", embedder, append=True)
    assert len(CosineBank.load(tmp_path / "bank", embedder)) == 12
    assert build_experience_bank(traces_dir, tmp_path / "bank", embedder, append=True, max_skipped=0.2).added == 1
    for path in (traces_dir / "tasks").glob("*/trace.json"):
        path.write_text("null", encoding="utf-8")
    with pytest.raises(DataSetShrunk, match="none of the 16 traces read is usable"):
        build_experience_bank(traces_dir, tmp_path / "bank", embedder, rebuild=True, max_skipped=1.0)
    assert len(CosineBank.load(tmp_path / "bank", embedder)) == 13
