"""What a bank load verifies (header vs size, finite unit rows, counts, checksums) and the one-run
recovery of a bank a writer killed between its two renames had moved aside."""

import json
import logging
import os
import re

import numpy as np
import pytest

from tracerag.documents.corpus import ingest_documents
from tracerag.embedding.embedders import LexicalEmbedder
from tracerag.stores import bank_layout, bank_reading
from tracerag.stores.cosine_bank import BankError, CosineBank

DIM = 16
N = 40


class ViewBank(CosineBank):
    views = {"task_ids.json": "id", "captions.json": "caption"}


def unit(rng, n, dim=DIM):
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture
def bank_dir(tmp_path):
    ids = [f"t-{i}" for i in range(N)]
    meta = [{"task_id": x, "caption": f"caption {i}"} for i, x in enumerate(ids)]
    ViewBank.from_vectors(tmp_path / "bank", unit(np.random.default_rng(0), N), ids, meta, embedder_id="raw")
    return tmp_path / "bank"


def data_offset(path):
    with open(path, "rb") as f:
        np.lib.format.read_magic(f)
        np.lib.format.read_array_header_1_0(f)
        return f.tell()


def set_rows(d, rows, value):
    """Overwrite rows of embeddings.npy in place (the header stays valid)."""
    path = d / "embeddings.npy"
    matrix = np.memmap(path, dtype="<f4", mode="r+", offset=data_offset(path), shape=(N, DIM))
    matrix[rows] = value(np.array(matrix[rows]))
    matrix.flush()
    del matrix


def rewrite_data(d, data: bytes):
    path = d / "embeddings.npy"
    raw = path.read_bytes()
    path.write_bytes(raw[: data_offset(path)] + data)


def rotate_json_list(path):
    values = json.loads(path.read_text())
    path.write_text(json.dumps(values[1:] + values[:1]) + "\n")


def edit_metadata_line(d, row, **changes):
    lines = (d / "metadata.jsonl").read_text().splitlines()
    item = json.loads(lines[row])
    item.update(changes)
    lines[row] = json.dumps(item, separators=(",", ":"))
    (d / "metadata.jsonl").write_text("\n".join(lines) + "\n")


def edit_manifest(d, **changes):
    path = d / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest.update(changes)
    for key in [k for k, v in changes.items() if v is None]:
        del manifest[key]
    path.write_text(json.dumps(manifest))


CHANGED = "the checksum in manifest.json (changed after it was written)"
NOT_UNIT = "not 1; bank rows are L2-normalised (scores would not be cosines)"


@pytest.mark.parametrize(
    "corrupt,file,message",
    [
        (lambda d: set_rows(d, 7, lambda v: v * np.nan), "embeddings.npy", "row 7 is not finite (NaN or infinity)"),
        (lambda d: set_rows(d, [3, 9], lambda v: v * np.inf), "embeddings.npy",
         "row 3 is not finite (NaN or infinity)"),
        (lambda d: set_rows(d, 12, lambda v: v * 0), "embeddings.npy",
         "row 12 is all zeros; bank rows are unit vectors"),
        (lambda d: set_rows(d, slice(None), lambda v: v * 100), "embeddings.npy", f"row 0 has norm 100, {NOT_UNIT}"),
        (lambda d: set_rows(d, 39, lambda v: v * 0.5), "embeddings.npy", f"row 39 has norm 0.5, {NOT_UNIT}"),
        # random bytes under a valid header: not unit rows (and, were they, not the recorded rows)
        (lambda d: rewrite_data(d, np.random.default_rng(1).bytes(N * DIM * 4)), "embeddings.npy",
         "row 2 is not finite (NaN or infinity)"),
        (lambda d: rewrite_data(d, unit(np.random.default_rng(2), N).tobytes()), "embeddings.npy",
         f"its header and checked rows do not match {CHANGED}"),
        (lambda d: rewrite_data(d, unit(np.random.default_rng(0), N).tobytes() + b"\0" * 8), "embeddings.npy",
         "file is 2696 bytes, header promises 2688 (truncated or padded)"),
        (lambda d: rotate_json_list(d / "ids.json"), "ids.json", f"its contents do not match {CHANGED}"),
        (lambda d: rotate_json_list(d / "task_ids.json"), "task_ids.json", f"its contents do not match {CHANGED}"),
        (lambda d: edit_metadata_line(d, 5, caption="edited"), "metadata.jsonl",
         f"its contents do not match {CHANGED}"),
        (lambda d: (d / "captions.json").write_text("{}\n"), "captions.json", f"its contents do not match {CHANGED}"),
        (lambda d: (d / "task_ids.json").unlink(), None, "missing task_ids.json (No such file or directory)"),
        (lambda d: (d / "ids.json").write_text(json.dumps([f"t-{i}" for i in range(41)])), "ids.json",
         "holds 41 ids but manifest.json says count=40"),
        (lambda d: edit_manifest(d, checksums=["x"]), "manifest.json", "'checksums' is not an object of strings"),
        (lambda d: edit_manifest(d, checksums={"../x": "sha256:0"}), "manifest.json",
         "'checksums' names '../x', not a file of the bank"),
    ],
)
def test_each_corruption_is_one_line_naming_the_file(bank_dir, corrupt, file, message):
    corrupt(bank_dir)
    where = bank_dir / file if file else bank_dir
    with pytest.raises(BankError) as info:
        CosineBank.load(bank_dir)
    assert str(info.value) == f"{where}: {message}"
    assert "\n" not in str(info.value)


def test_a_good_bank_loads_and_records_its_checksums(bank_dir):
    bank = ViewBank.load(bank_dir)
    assert len(bank) == N and bank.metadata(5)["caption"] == "caption 5"
    checksums = bank.manifest["checksums"]
    assert sorted(checksums) == ["captions.json", "embeddings.npy", "ids.json", "ids.offsets.npy", "metadata.jsonl",
                                 "metadata.offsets.npy", "task_ids.json"]
    assert checksums["embeddings.npy"].startswith("sha256-rows:") and checksums["ids.json"].startswith("sha256:")
    assert bank.append_vectors(["new"], unit(np.random.default_rng(9), 1), [{"caption": "c"}]) == 1
    reloaded = CosineBank.load(bank_dir)  # the append recorded fresh checksums
    assert len(reloaded) == N + 1 and reloaded.manifest["checksums"] != checksums
    assert json.loads((bank_dir / "task_ids.json").read_text())[-1] == "new"


def test_a_bank_without_checksums_loads_with_a_note_and_gains_them_on_append(bank_dir, caplog):
    edit_manifest(bank_dir, checksums=None)  # as written before checksums were recorded
    rotate_json_list(bank_dir / "task_ids.json")  # undetectable without them
    bank_reading._noted_unverified.discard(str(bank_dir))
    with caplog.at_level(logging.WARNING, logger="tracerag.stores.bank_reading"):
        bank = ViewBank.load(bank_dir)
        CosineBank.load(bank_dir)
    notes = [r.getMessage() for r in caplog.records]
    assert notes == [f"{bank_dir / 'manifest.json'}: no checksums recorded (written by an older version); loaded "
                     "with counts and sampled rows checked only; the next append records them"]  # once per bank
    set_rows(bank_dir, 4, lambda v: v * 3)  # the row checks do not depend on checksums
    with pytest.raises(BankError, match=re.escape(f"row 4 has norm 3, {NOT_UNIT}")):
        CosineBank.load(bank_dir)
    set_rows(bank_dir, 4, lambda v: v / 3)
    assert bank.append_vectors(["new"], unit(np.random.default_rng(9), 1)) == 1
    assert "task_ids.json" in CosineBank.load(bank_dir).manifest["checksums"]


def test_large_banks_check_a_fixed_sample_including_first_and_last_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(bank_layout, "SAMPLE_ROWS", 8)
    monkeypatch.setattr(bank_layout, "FULL_CHECK_BYTES", 0)
    n = 100
    sample = bank_layout.check_rows(n, DIM)
    assert sample is not None and len(sample) == 8 and sample[0] == 0 and sample[-1] == n - 1
    assert np.array_equal(sample, bank_layout.check_rows(n, DIM))  # a function of the shape only
    assert bank_layout.check_rows(8, DIM) is None  # a bank no larger than the sample: every row
    ids = [f"r{i}" for i in range(n)]
    rng = np.random.default_rng(4)
    for row, detected in ((n - 1, True), (int(sample[3]), True), (int(sample[3]) + 1, False)):
        d = tmp_path / f"b{row}"
        CosineBank.from_vectors(d, unit(rng, n), ids, embedder_id="raw")
        path = d / "embeddings.npy"
        matrix = np.memmap(path, dtype="<f4", mode="r+", offset=data_offset(path), shape=(n, DIM))
        matrix[row] = np.nan
        matrix.flush()
        del matrix
        if detected:
            with pytest.raises(BankError, match=re.escape(f"{path}: row {row} is not finite (NaN or infinity)")):
                CosineBank.load(d)
        else:  # the documented limit: rows outside the sample are not read on load
            assert len(CosineBank.load(d)) == n


def test_writers_refuse_all_zero_vectors(tmp_path):
    vectors = unit(np.random.default_rng(0), 3)
    vectors[1] = 0
    with pytest.raises(BankError, match=r"vector 1 of this batch is all zeros; a bank row must have a direction"):
        CosineBank.from_vectors(tmp_path / "b", vectors, ["a", "b", "c"], embedder_id="raw")
    assert not (tmp_path / "b").exists()


# -- a writer killed between its two renames -----------------------------------------------------


def killed_between_renames(bank_dir, new_version_rows):
    """The state a writer killed after ``rename(bank, .bank.old)``, before ``rename(tmp, bank)`` leaves:
    no bank at the path, the complete old version aside, its complete new version in a temp dir whose
    writer record it had already removed."""
    backup = bank_dir.parent / f".{bank_dir.name}.old"
    os.rename(bank_dir, backup)
    tmp = bank_dir.parent / f".{bank_dir.name}.tmp-killed"
    CosineBank.from_vectors(tmp, unit(np.random.default_rng(7), new_version_rows),
                            [f"n{i}" for i in range(new_version_rows)], embedder_id="raw")
    assert not (bank_dir / "manifest.json").exists()  # what callers test to choose create over append
    return backup


def test_create_after_a_kill_between_renames_restores_and_adds_in_one_run(bank_dir, caplog):
    backup = killed_between_renames(bank_dir, 2)
    vectors = unit(np.random.default_rng(8), 3)
    with caplog.at_level(logging.WARNING):
        bank = ViewBank.from_vectors(bank_dir, vectors, ["t-0", "x-1", "x-2"],
                                     [{"caption": "a"}, {"caption": "b"}, {"caption": "c"}], embedder_id="raw")
    assert len(bank) == N + 2 and bank.ids[-2:] == ["x-1", "x-2"] and not backup.exists()
    assert bank.metadata(0)["caption"] == "caption 0"  # the existing row is kept, not replaced
    assert f"{bank_dir}: restored the bank an interrupted write had moved aside ({N} rows) and added 2 new rows " \
           "to it (1 already present)" in caplog.text
    assert len(ViewBank.load(bank_dir)) == N + 2
    with pytest.raises(BankError, match=re.escape(f"{bank_dir}: a bank already exists; pass overwrite=True")):
        ViewBank.from_vectors(bank_dir, vectors, ["y", "z", "w"], embedder_id="raw")  # no crash now: refused


def test_ingest_after_a_kill_between_renames_succeeds_in_one_run(tmp_path):
    docs = tmp_path / "docs.jsonl"
    embedder = LexicalEmbedder(dim=64)
    docs.write_text("".join(json.dumps({"id": f"d{i}", "text": f"document {i} about topic {i % 3}"}) + "\n"
                            for i in range(5)))
    first = ingest_documents(docs, tmp_path / "bank", embedder)
    os.rename(tmp_path / "bank", tmp_path / ".bank.old")  # killed between its renames by the next ingest
    with docs.open("a") as f:
        f.write(json.dumps({"id": "d5", "text": "a new document about rivers"}) + "\n")
    report = ingest_documents(docs, tmp_path / "bank", embedder)  # used to restore, then refuse
    bank = CosineBank.load(tmp_path / "bank", embedder)
    assert report.bank_size == len(bank) == first.bank_size + 1 and "d5#0" in bank
    assert not (tmp_path / ".bank.old").exists()
