"""A bank directory holding a FIFO, a directory or a device where a file should be: the load refuses it,
naming the file, and never blocks (a FIFO opened for reading waits for a writer forever)."""

import os
import threading

import numpy as np
import pytest

from tracerag.stores import bank_layout
from tracerag.stores.bank_reading import read_manifest
from tracerag.stores.cosine_bank import BankError, CosineBank


@pytest.fixture
def bank_dir(tmp_path):
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((8, 4)).astype(np.float32)
    CosineBank.from_vectors(tmp_path / "bank", vectors / np.linalg.norm(vectors, axis=1, keepdims=True),
                            [f"t-{i}" for i in range(8)], [{"i": i} for i in range(8)], embedder_id="raw")
    return tmp_path / "bank"


def _load_in_a_thread(path):
    """The load's outcome (an exception or the bank), or None when it did not finish in 10 s."""
    done = []

    def load():
        try:
            done.append(CosineBank.load(path))
        except Exception as exc:  # noqa: BLE001 - the outcome is what is checked
            done.append(exc)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(timeout=10)
    return done[0] if done else None


@pytest.mark.parametrize("name", [bank_layout.MANIFEST, bank_layout.EMBEDDINGS, bank_layout.IDS, bank_layout.METADATA])
def test_a_fifo_in_a_bank_is_refused_without_hanging(bank_dir, name):
    (bank_dir / name).unlink()
    os.mkfifo(bank_dir / name)
    outcome = _load_in_a_thread(bank_dir)
    assert isinstance(outcome, BankError), outcome
    assert str(outcome) == f"{bank_dir / name}: is a FIFO, not a regular file"
    assert read_manifest(bank_dir) is None or name != bank_layout.MANIFEST


def test_a_directory_in_place_of_a_file_is_refused(bank_dir):
    (bank_dir / bank_layout.EMBEDDINGS).unlink()
    (bank_dir / bank_layout.EMBEDDINGS).mkdir()
    with pytest.raises(BankError, match=f"{bank_layout.EMBEDDINGS}: is a directory, not a regular file"):
        CosineBank.load(bank_dir)


def test_a_good_bank_still_loads_and_a_missing_file_is_named(bank_dir):
    assert len(CosineBank.load(bank_dir)) == 8
    (bank_dir / bank_layout.METADATA).unlink()
    with pytest.raises(BankError, match=f"missing {bank_layout.METADATA}"):
        CosineBank.load(bank_dir)
