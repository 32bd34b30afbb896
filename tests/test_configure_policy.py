"""configure() changes only what it is given: the LM timeout and retries set once stay set."""

from __future__ import annotations

import tracerag
from tracerag.lm.bounded_lm import BoundedLM
from tracerag.lm.policy import policy


def test_configuring_the_embedder_keeps_an_earlier_timeout_and_retries(embedder, lm_timeout):
    tracerag.configure(timeout=5, retries=1)
    tracerag.configure(embedder=embedder)
    assert (policy().timeout, policy().retries) == (5, 1)
    settings = tracerag.configure(lm="openai/stub-model", api_base="http://127.0.0.1:9/v1")
    assert (settings.lm_timeout, settings.lm_retries) == (5, 1)
    import dspy

    lm = dspy.settings.lm
    assert isinstance(lm, BoundedLM) and lm.kwargs["timeout"] == 5 and lm.num_retries == 1
    tracerag.configure(retries=0)
    assert (policy().timeout, policy().retries) == (5, 0)
    assert dspy.settings.lm is not lm and dspy.settings.lm.num_retries == 0  # rebuilt with the new bound
    dspy.configure(lm=None)
