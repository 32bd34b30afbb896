"""Concurrent program calls through ``await program.acall(...)`` against sequential sync calls.

    python benchmarks/bench_async.py [--n 1,4,16] [--repeats 3] [--latency 0.2]
    python benchmarks/bench_async.py --table remote [--n 1,4,16] [--repeats 3] [--latency 0.2]

``--table lm`` (the default): SelfReflectiveRAG questions of the bundled PubMedQA test split with an LM
endpoint that answers every call after 200 ms.

The endpoint is the tests' OpenAI-compatible stub server on 127.0.0.1 (tests/lm_server.py, mode
"slow" with a 0.2 s delay) answering from the tests' fake engine, reached through DSPy over HTTP
exactly like a user's server. For each N: the first N test questions one after the other with
``program(question=...)``, then all N at once with ``asyncio.gather(program.acall(...))``; the median
wall time of ``--repeats`` runs of each. "LM floor" is the longest chain of sequential LM calls among
the N questions times the latency: no schedule can answer them faster. The async predictions are
checked equal to the sync ones (timings aside).

``--table remote``: no LM; the embedder (and for ExperienceRetrieval the reranker) is a remote service
answering every request after 200 ms (the tests' 127.0.0.1 service, tests/remote_services.py: hashed
character n-gram vectors, lexical rerank scores; run in a child process, as a remote service would not
share this process's GIL). SelfReflectiveRAG searches the bundled PubMedQA
abstracts (one query embedding per call); ExperienceRetrieval a bank of 24 solved tasks (the queries'
embedding, then the rerank: two sequential remote calls per call). For each N: the N calls one after the
other (sync), then all N at once with ``asyncio.gather(program.acall(...))`` twice: "threads (before)"
with clients that offer no async method, so each call's retrieval step waits for the service in a
worker thread (the loop's default pool: min(32, cores + 4) threads), and "native (after)" with
``HttpEmbedder.aembed``/``HttpReranker.arerank`` awaited on the loop (the CPU-bound search alone runs in
a worker thread). "latency floor": the remote calls in a row per call times the latency; "own work":
the same N calls one after the other against an instant service (search, HTTP, JSON), which the calls
share 2 cores (and one GIL) for whichever way they wait.

Prints a markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import dspy  # noqa: E402
from conftest import FAMILIES, PLACES, FakeEngine, make_trace, write_traces  # noqa: E402
from lm_server import StubLMServer  # noqa: E402
from remote_services import DIM, RemoteService  # noqa: E402

from tracerag.datasets.pubmedqa import load_pubmedqa_questions, pubmedqa_abstracts_path  # noqa: E402
from tracerag.documents.corpus import ingest_documents  # noqa: E402
from tracerag.documents.hybrid import HybridRetriever  # noqa: E402
from tracerag.documents.rerankers import HttpReranker  # noqa: E402
from tracerag.embedding.embedders import LocalUSEEmbedder  # noqa: E402
from tracerag.embedding.http_embedder import HttpEmbedder  # noqa: E402
from tracerag.experience.experience_retrieval import ExperienceConfig, ExperienceRetrieval  # noqa: E402
from tracerag.lm.failures import reset_lm_guard  # noqa: E402
from tracerag.memory.experience_bank import build_experience_bank  # noqa: E402
from tracerag.rag.self_reflective_rag import SelfReflectiveRAG  # noqa: E402
from tracerag.stores.cosine_bank import CosineBank  # noqa: E402

TIMING = ("seconds", "ms")


def _comparable(pred: dspy.Prediction) -> dict:
    return {k: v for k, v in pred.items() if k not in TIMING}


class ThreadOnly:
    """A remote client with its async method hidden: ``aforward`` waits for it in a worker thread (before)."""

    def __init__(self, inner) -> None:
        self._inner = inner

    def __getattr__(self, name: str):
        if name in ("aembed", "arerank"):
            raise AttributeError(name)
        return getattr(self._inner, name)


class _SharedLatency(RemoteService):
    """The service with its latency read from a value the benchmark process sets."""

    shared = None

    @property
    def latency(self) -> float:
        return self.shared.value

    @latency.setter
    def latency(self, value: float) -> None:
        pass


def _serve(latency, address) -> None:
    """The remote service in its own process (its request threads do not share the benchmark's GIL)."""
    _SharedLatency.shared = latency
    with _SharedLatency() as service:
        address.put(service.base_url)
        threading.Event().wait()


@contextlib.contextmanager
def remote_service():
    """(base URL, shared latency in seconds) of the service running in a child process."""
    context = multiprocessing.get_context("spawn")
    latency, address = context.Value("d", 0.0), context.Queue()
    process = context.Process(target=_serve, args=(latency, address), daemon=True)
    process.start()
    try:
        yield address.get(timeout=60), latency
    finally:
        process.terminate()
        process.join(10)


def _timed(run) -> tuple[list, float]:
    started = time.perf_counter()
    result = run()
    return result, time.perf_counter() - started


def remote_table(args, sizes: list[int]) -> None:
    dspy.configure(lm=None)
    rag_questions = [q.question for q in load_pubmedqa_questions("pubmedqa", "test")][: max(sizes)]
    families = list(FAMILIES.values())  # (sub_task, tools, question templates, reasoning)
    tasks = [families[n % len(families)][2][n % 3].format(x=f"{PLACES[n % 4]} {n}") for n in range(max(sizes))]
    with tempfile.TemporaryDirectory() as tmp, remote_service() as (base_url, latency):
        tmp_path = Path(tmp)
        native = HttpEmbedder(base_url, "lexical-test", backoff=0.0, dim=DIM)
        ingest_documents(pubmedqa_abstracts_path(), tmp_path / "chunks", native)
        write_traces(tmp_path / "traces", [make_trace(f, n) for f in FAMILIES for n in range(1, 5)])
        build_experience_bank(tmp_path / "traces", tmp_path / "exp", native)
        programs = {}
        rerank = HttpReranker(base_url, "lexical-rerank", backoff=0.0)
        for mode, embedder, reranker in [("threads", ThreadOnly(native), ThreadOnly(rerank)),
                                         ("native", native, rerank)]:
            programs[mode] = {
                "SelfReflectiveRAG": (
                    SelfReflectiveRAG(HybridRetriever(CosineBank.load(tmp_path / "chunks", embedder))),
                    "question", rag_questions, 1),
                "ExperienceRetrieval": (ExperienceRetrieval(CosineBank.load(tmp_path / "exp", embedder),
                                                            ExperienceConfig(enable=True), reranker=reranker),
                                        "question", tasks, 2),
            }
        latency.value = args.latency

        print("| program | N concurrent | latency floor | own work (0 ms service) | sequential sync | "
              "async, threads (before) | async, native (after) | after vs before | after vs sequential | identical |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|:---:|")
        with asyncio.Runner() as runner:  # one event loop for every async run, as in a long-lived app
            for name in ("SelfReflectiveRAG", "ExperienceRetrieval"):
                for mode in ("threads", "native"):  # warm: the clients (one async client per loop), the BM25 index
                    program, field, inputs, _ = programs[mode][name]
                    program(**{field: inputs[0]})
                    runner.run(program.acall(**{field: inputs[0]}))
                for n in sizes:
                    times: dict[str, list[float]] = {"sync": [], "threads": [], "native": []}
                    identical = True
                    for _ in range(args.repeats):
                        program, field, inputs, steps = programs["native"][name]
                        batch = inputs[:n]
                        sync, seconds = _timed(lambda: [program(**{field: q}) for q in batch])  # noqa: B023
                        times["sync"].append(seconds)
                        for mode in ("threads", "native"):
                            program = programs[mode][name][0]

                            async def together(program=program, batch=batch, field=field):
                                return await asyncio.gather(*(program.acall(**{field: q}) for q in batch))

                            preds, seconds = _timed(lambda: runner.run(together()))  # noqa: B023
                            times[mode].append(seconds)
                            identical &= all(_comparable(a) == _comparable(b) for a, b in zip(preds, sync, strict=True))
                    seq, before, after = (statistics.median(times[k]) for k in ("sync", "threads", "native"))
                    latency.value = 0.0  # the same calls' own work (search, HTTP, parsing) with an instant service
                    program, field, inputs, steps = programs["native"][name]
                    cpu = statistics.median(_timed(lambda: [program(**{field: q}) for q in inputs[:n]])[1]  # noqa: B023
                                            for _ in range(args.repeats))
                    latency.value = args.latency
                    floor = steps * args.latency
                    print(f"| {name} | {n} | {floor:.2f} s | {cpu:.2f} s | {seq:.2f} s | {before:.2f} s | "
                          f"{after:.2f} s | {before / after:.1f}x | {seq / after:.1f}x | "
                          f"{'yes' if identical else 'NO'} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", choices=("lm", "remote"), default="lm",
                        help="lm: an LM endpoint with latency; remote: a remote embedder/reranker with latency")
    parser.add_argument("--n", default="1,4,16", help="concurrent questions per row, comma-separated")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the endpoint takes per call")
    args = parser.parse_args()
    sizes = [int(n) for n in args.n.split(",")]
    if args.table == "remote":
        remote_table(args, sizes)
        return
    questions = [q.question for q in load_pubmedqa_questions("pubmedqa", "test")][: max(sizes)]
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)  # every call reaches the endpoint
    with tempfile.TemporaryDirectory() as tmp, StubLMServer(FakeEngine(), mode="slow", delay=args.latency) as stub:
        embedder = LocalUSEEmbedder()
        ingest_documents(pubmedqa_abstracts_path(), Path(tmp) / "bank", embedder)
        retriever = HybridRetriever(CosineBank.load(Path(tmp) / "bank", embedder))
        dspy.configure(lm=stub.lm(timeout=30), adapter=dspy.ChatAdapter(use_json_adapter_fallback=False))
        reset_lm_guard()
        program = SelfReflectiveRAG(retriever)
        program(question=questions[0])  # warm: the embedder, the BM25 index, the HTTP client

        print("| N concurrent | LM calls (total) | LM floor | sequential sync | async concurrent | speed-up | "
              "async / floor | identical |")
        print("|---:|---:|---:|---:|---:|---:|---:|:---:|")
        for n in sizes:
            batch = questions[:n]
            sync_times, async_times = [], []
            for _ in range(args.repeats):
                started = time.perf_counter()
                sync_preds = [program(question=q) for q in batch]
                sync_times.append(time.perf_counter() - started)

                async def together(batch=batch):
                    return await asyncio.gather(*(program.acall(question=q) for q in batch))

                started = time.perf_counter()
                async_preds = asyncio.run(together())
                async_times.append(time.perf_counter() - started)
            identical = all(_comparable(a) == _comparable(s) for a, s in zip(async_preds, sync_preds, strict=True))
            calls = sum(p.lm_calls for p in sync_preds)
            floor = max(p.lm_calls for p in sync_preds) * args.latency
            seq, conc = statistics.median(sync_times), statistics.median(async_times)
            print(f"| {n} | {calls} | {floor:.2f} s | {seq:.2f} s | {conc:.2f} s | {seq / conc:.1f}x | "
                  f"{conc / floor:.2f} | {'yes' if identical else 'NO'} |")
    dspy.configure(lm=None)


if __name__ == "__main__":
    main()
