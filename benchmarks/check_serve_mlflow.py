"""Check that ``tracerag serve --trace mlflow`` logs one MLflow trace per request, holding the program's spans.

Run it in an environment that has the ``mlflow`` extra (not a dependency of tracerag, nor of the tests):

    python3 -m venv /tmp/mlflow-venv && /tmp/mlflow-venv/bin/pip install -e '.[mlflow]' pytest
    /tmp/mlflow-venv/bin/python benchmarks/check_serve_mlflow.py

Starts the real service (``--program rag --program commands --trace mlflow``, the lexical embedder, 127.0.0.1,
a free port) with ``MLFLOW_TRACKING_URI`` pointing at a local file store in a temporary directory, sends three
PubMedQA questions at once to ``/v1/rag`` and one utterance to ``/v1/commands``, stops the service, then reads
the traces back from the store: each request must be one trace whose root is the program's module span and
which holds its own retrieval span (``Tool.corpus.search`` with its question; ``Tool.command_index.search``).
Prints one line per trace and exits non-zero when one is missing or mixed up.
"""

from __future__ import annotations

import concurrent.futures
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "serving"))

import httpx  # noqa: E402
from serve_helpers import ServeProcess  # noqa: E402

QUESTIONS = ["Do statins lower LDL cholesterol in diabetes?", "Does aspirin raise bleeding risk?",
             "Does telephone counselling increase mammography screening?"]
UTTERANCE = {"query": "turn off all the lights", "home": "home_en"}


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        uri = f"file://{tmp}/mlruns"
        env = {"MLFLOW_TRACKING_URI": uri, "MLFLOW_ALLOW_FILE_STORE": "true", "TRACERAG_EMBEDDER": "lexical",
               "TRACERAG_CACHE_DIR": f"{tmp}/cache", "MLFLOW_ENABLE_ASYNC_TRACE_LOGGING": "false"}
        flags = ["--program", "rag", "--program", "commands", "--trace", "mlflow"]
        with ServeProcess(flags, env=env, log=Path(tmp) / "serve.log") as server, \
                concurrent.futures.ThreadPoolExecutor(len(QUESTIONS)) as pool:
            replies = list(pool.map(lambda q: httpx.post(f"{server.url}/v1/rag", json={"question": q}, timeout=60),
                                    QUESTIONS))
            replies.append(httpx.post(f"{server.url}/v1/commands", json=UTTERANCE, timeout=60))
        if any(r.status_code != 200 for r in replies):
            print(f"FAILED: answers {[r.status_code for r in replies]}")
            return 1
        os.environ.update(env)
        import mlflow

        mlflow.set_tracking_uri(uri)
        traces = mlflow.search_traces(return_type="list", max_results=20)
        found, ok = [], len(traces) == len(replies)
        for trace in traces:
            spans = trace.data.spans
            root = next(s for s in spans if s.parent_id is None)
            tools = [s for s in spans if s.name.startswith("Tool.")]
            question = (root.inputs or {}).get("question") or (root.inputs or {}).get("query")
            own = [t for t in tools if (t.inputs or {}).get("query") == question]
            good = bool(own) and all(t.parent_id is not None for t in tools)
            ok &= good
            found.append(question)
            print(f"{'ok ' if good else 'MISSING'} trace {trace.info.trace_id}: root {root.name!r} "
                  f"({question!r}), {len(spans)} spans, tools {[t.name for t in tools]}")
        ok &= sorted(found) == sorted([*QUESTIONS, UTTERANCE["query"]])
        print(f"mlflow {mlflow.__version__}: {len(traces)} traces for {len(replies)} requests, "
              f"{'each with its own spans' if ok else 'NOT one per request with its own spans'}")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
