"""Every bad-input variant of every format gets its expected outcome: accepted (normalised), skipped
with a reason, or rejected with one clear line; never a traceback, never a hang."""

import importlib
import pkgutil
from pathlib import Path

import pytest

from .harness import outcome

MODULES = [importlib.import_module(f"{__package__}.{m.name}")
           for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if m.name not in ("harness", "test_campaign")]
CASES = [(m.FORMAT, v) for m in MODULES for v in m.VARIANTS]


@pytest.mark.parametrize("fmt,variant", CASES, ids=[f"{f}:{v.name}" for f, v in CASES])
def test_variant(fmt, variant, tmp_path, embedder, monkeypatch):
    import tracerag.config

    monkeypatch.setattr(tracerag.config, "make_embedder", lambda *a, **k: embedder)
    result = outcome(variant, tmp_path)
    assert result.kind == variant.expect, result.detail
