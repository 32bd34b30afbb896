"""The prepared copy of the USE weights (``embedding.use_model``): the same vectors as the package's own files,
and a copy that is damaged or from another package version is never used."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from tracerag.embedding.use_model import load_use, prepared_dir, write_prepared

TEXTS = ["打开客厅的灯", "turn on the kitchen light", "", "   ", "把主卧空调调到26度", "Ünïcödé ﬁ ½ ＡＢＣ",
         "混合 mixed 文本 123", "x" * 400, "Set the thermostat to 21.5 °C, please!"]


@pytest.fixture(scope="module")
def package_model():
    model, read_package = load_use(1, None)
    assert read_package
    return model


@pytest.fixture(scope="module")
def prepared(package_model, tmp_path_factory):
    root = tmp_path_factory.mktemp("cache")
    assert write_prepared(package_model, root) == prepared_dir(root)
    return root


def test_the_prepared_copy_gives_the_packages_tokens_and_vectors(package_model, prepared):
    model, read_package = load_use(1, prepared)
    assert not read_package
    assert model._sp.encode(TEXTS) == package_model._sp.encode(TEXTS)
    assert np.array_equal(model.encode(TEXTS), package_model.encode(TEXTS))
    assert write_prepared(package_model, prepared) is None  # there already: kept as it is


def test_a_damaged_copy_is_removed_and_the_package_read(package_model, prepared, tmp_path, caplog):
    import shutil

    root = tmp_path / "cache"
    shutil.copytree(prepared, root)
    table = prepared_dir(root) / "table.npy"
    data = bytearray(table.read_bytes())
    data[-1000] ^= 0xFF  # one byte of one row
    table.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING, logger="tracerag.embedding.use_model"):
        model, read_package = load_use(1, root)
    assert read_package and "checksums differ: ['table.npy']" in caplog.text
    assert not prepared_dir(root).exists()
    assert np.array_equal(model.encode(TEXTS[:2]), package_model.encode(TEXTS[:2]))


def test_a_copy_another_package_version_made_is_not_used(prepared, tmp_path, caplog):
    import shutil

    root = tmp_path / "cache"
    shutil.copytree(prepared, root)
    manifest = prepared_dir(root) / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "version": "0.0.1"}))
    with caplog.at_level(logging.WARNING, logger="tracerag.embedding.use_model"):
        _, read_package = load_use(1, root)
    assert read_package and "made from '0.0.1'" in caplog.text


def test_the_default_embedder_prepares_its_weights_in_the_cache_directory(tmp_path):
    from tracerag.embedding.embedder_choice import make_embedder

    embedder = make_embedder("local", cache_dir=tmp_path)
    assert embedder.inner.prepared == tmp_path
    assert make_embedder("local").prepared is None  # no cache directory: the package's files every time


def test_many_texts_swap_the_sorted_prefix_lookups_for_a_dict_with_the_same_tokens(package_model, prepared):
    from tracerag.embedding.use_model import SortedPrefixes, for_many_texts

    model, _ = load_use(1, prepared)
    assert isinstance(model._sp._prefixes, SortedPrefixes)  # a first query builds no 250,000-entry dict
    before = model._sp.encode(TEXTS)
    for_many_texts(model)
    assert model._sp._prefixes == package_model._sp._prefixes
    assert model._sp.encode(TEXTS) == before == package_model._sp.encode(TEXTS)


def test_a_cache_directory_that_cannot_be_written_costs_a_warning_not_an_error(package_model, tmp_path, caplog):
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")  # the cache directory is a file: nothing can be made under it
    with caplog.at_level(logging.WARNING, logger="tracerag.embedding.use_model"):
        assert write_prepared(package_model, blocked) is None
    assert "could not be prepared" in caplog.text
