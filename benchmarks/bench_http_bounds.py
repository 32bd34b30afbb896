"""How long an HTTP call of each of the project's clients takes to end against a hostile server, next to its bound.

The tests (tests/test_http_bounds.py, tests/embedding/, tests/documents/test_rerankers.py) check what ended each
call from its error line (the deadline it names, the size cap), the requests the server saw and the waits the
client asked for, which no machine load changes; this script measures the seconds, which it does. Each case runs
``--repeat`` times against the tests' hostile servers on 127.0.0.1 (tests/json_service.py); the table gives the
median and the slowest run, and each against its bound.

    python benchmarks/bench_http_bounds.py [--repeat 5]

Cases, for the embedder, the rerank client and NCBI E-utilities: a body, then the headers themselves, trickled a
byte every 0.5 s (timeout 5 s, deadline 1.5 s: only the deadline ends it); a gzip body that expands to 500 MB (cap
1 MiB; its bound is the deadline, 10 s, which it must end far before); then the embedder against 503s whose
Retry-After says 1000 s (deadline 1 s: no wait is started), and an LM built by ``make_lm`` against the same
(timeout 1 s, 2 retries: each wait at most min(Retry-After, timeout)).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import dspy  # noqa: E402
from json_service import Hostile, ScriptedService, gzip_bomb, hostile, on_localhost, serving  # noqa: E402

from tracerag.documents.rerankers import HttpReranker  # noqa: E402
from tracerag.embedding.http_embedder import HttpEmbedder  # noqa: E402
from tracerag.lm.bounded_lm import make_lm  # noqa: E402
from tracerag.lm.failures import reset_lm_guard  # noqa: E402
from tracerag.programs.guarded_step import Stages  # noqa: E402
from tracerag.tools.eutils import PubMedEUtils  # noqa: E402

CAP = 2**20


def embed(base: str, **kw) -> object:
    return HttpEmbedder(base + "/v1", "m", backoff=0.0, **kw).embed(["x"])


def rerank(base: str, **kw) -> object:
    return HttpReranker(base + "/v1", "m", backoff=0.0, **kw).rerank("q", ["a", "b"])


def search(base: str, *, max_retries: int, **kw) -> object:
    with PubMedEUtils(base, retries=max_retries, backoff=0.0, min_interval=0, **kw) as client:
        return client.search("x", limit=1)


CLIENTS = {"embedder": embed, "reranker": rerank, "eutils": search}


def ended(run: Callable[[], object]) -> tuple[float, str]:
    """(seconds, the error line that ended the call, or what it returned)."""
    started = time.perf_counter()
    try:
        line = repr(run())[:70]
    except Exception as exc:  # what ended it is the point
        line = str(exc)
    return time.perf_counter() - started, line


def against(mode: str, call, **kw) -> Callable[[], object]:
    def run() -> object:
        with hostile(Hostile(mode, interval=0.5)) as server:
            return call(server.base_url, timeout=5, max_retries=2, max_bytes=CAP, **kw)
    return run


class Busy(ScriptedService):
    route = "/v1/embeddings"


def retry_after_of_1000_s() -> object:
    with serving(Busy()) as service:
        service.failures = [(503, {"Retry-After": "1000"}, "busy")] * 5
        return HttpEmbedder(service.base_url, "m", max_retries=3, deadline=1).embed(["x"])


class Overloaded(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"error": {"message": "overloaded", "type": "server_error"}}).encode()
        self.send_response(503)
        self.send_header("Retry-After", "1000")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def lm_retry_after_of_1000_s() -> str:
    reset_lm_guard()  # each run starts with a closed breaker, as a new process would
    with on_localhost(Overloaded) as address:
        lm = make_lm("openai/stub-model", address + "/v1", "k", timeout=1, retries=2, cache=False)
        stages = Stages()
        with dspy.context(lm=lm, adapter=dspy.ChatAdapter(use_json_adapter_fallback=False)):
            stages.call("answer", dspy.Predict("question -> answer"), question="hi")
    return stages.errors[0] if stages.errors else "answered"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each case (default 5)")
    args = parser.parse_args(argv)

    gzip_bomb()  # built (and cached) once, before measuring
    cases = [(f"{name}: {what}", 1.5, against(mode, call, deadline=1.5)) for name, call in CLIENTS.items()
             for mode, what in (("trickle", "body trickled"), ("trickle-headers", "headers trickled"))]
    cases += [(f"{name}: gzip bomb (500 MB, cap 1 MiB)", 10.0, against("bomb", call, deadline=10))
              for name, call in CLIENTS.items()]
    cases += [("embedder: 503, Retry-After 1000 s, deadline 1 s", 1.0, retry_after_of_1000_s),
              ("LM (make_lm): 503, Retry-After 1000 s, timeout 1 s, 2 retries (worst case)",
               make_lm("openai/m", "http://127.0.0.1:9/v1", "k", timeout=1, retries=2).worst_case(),
               lm_retry_after_of_1000_s)]
    print("| case | bound (s) | median (s) | slowest (s) | slowest ÷ bound | what ended it (first run) |")
    print("|---|---:|---:|---:|---:|---|")
    for name, bound, run in cases:
        runs = [ended(run) for _ in range(args.repeat)]
        seconds = [s for s, _ in runs]
        line = runs[0][1].split(": ", 1)[-1][:70].replace("|", "/")
        print(f"| {name} | {bound:g} | {statistics.median(seconds):.2f} | {max(seconds):.2f} | "
              f"{max(seconds) / bound:.2f} | {line} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
