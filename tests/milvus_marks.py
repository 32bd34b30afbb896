"""Where Milvus tests run: Milvus Lite when its packages are installed, the real server only inside
``tests/milvus_standalone.py`` (the ``milvus_server`` step sets ``TRACERAG_MILVUS_STANDALONE`` there)."""

from __future__ import annotations

import importlib.util
import os

import pytest

HAVE_MILVUS = all(importlib.util.find_spec(m) is not None for m in ("pymilvus", "milvus_lite"))
needs_milvus = pytest.mark.skipif(not HAVE_MILVUS, reason='needs pip install -e ".[milvus]"')
STANDALONE = os.environ.get("TRACERAG_MILVUS_STANDALONE")
on_the_server = pytest.mark.skipif(not STANDALONE, reason="runs in the milvus_server step")
