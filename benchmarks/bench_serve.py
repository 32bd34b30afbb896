"""``tracerag serve`` under load: requests/s and latency percentiles of CommandRetrieval and SelfReflectiveRAG over
HTTP, against the same program called in-process, no LM.

    python benchmarks/bench_serve.py [--clients 16] [--duration 30] [--programs commands,rag] [--calls thread]

Starts the real service (``python -m optimize serve --program commands --program rag``, the default embedder,
127.0.0.1, a free port) and a bounded load generator in this process: ``--clients`` httpx async clients,
each sending the next query as soon as its previous answer arrived, for ``--duration`` seconds per program.
The queries are the bundled test splits (smart-home utterances with their home; PubMedQA questions),
cycled. The in-process baseline is the program built by the same code (``tracerag.registry``) and
called one query after another in this process for a third of the duration; "HTTP, 1 client" is the
same sequence over HTTP (the per-request cost of the service). Before the load, every
query is sent once and its answer compared with the in-process call (timings aside): "identical" counts
those that match. An error is any non-200 answer or a transport failure.

Prints a markdown table and a machine note.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "serving"))

import httpx  # noqa: E402
from serve_helpers import ServeProcess, stable  # noqa: E402

import tracerag  # noqa: E402


def queries(name: str) -> list[dict]:
    if name == "commands":
        from tracerag.datasets.smarthome import load_dataset

        return [{"query": q.query, "home": Path(home).name} for home, rows in load_dataset("smarthome", "test").items()
                for q in rows]
    from tracerag.datasets.pubmedqa import load_pubmedqa_questions

    return [{"question": q.question} for q in load_pubmedqa_questions("pubmedqa", "test")]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def in_process(served, requests: list[dict], duration: float) -> tuple[int, float, list[float]]:
    """(calls, seconds, latencies in ms): one query after another, cycling, for ``duration`` seconds."""
    latencies, started, i = [], time.perf_counter(), 0
    while time.perf_counter() - started < duration:
        request = served.endpoint.request.model_validate(requests[i % len(requests)])
        t = time.perf_counter()
        served.respond(request)
        latencies.append((time.perf_counter() - t) * 1000)
        i += 1
    return i, time.perf_counter() - started, latencies


async def load(url: str, path: str, requests: list[dict], clients: int, duration: float):
    """(answers, seconds, latencies in ms, errors) of ``clients`` concurrent clients for ``duration`` seconds."""
    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + duration
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)

    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        async def worker(offset: int) -> None:
            nonlocal errors
            i = offset
            while time.perf_counter() < deadline:
                t = time.perf_counter()
                try:
                    reply = await client.post(path, json=requests[i % len(requests)])
                    ok = reply.status_code == 200
                except httpx.HTTPError:
                    ok = False
                latencies.append((time.perf_counter() - t) * 1000)
                errors += not ok
                i += clients

        started = time.perf_counter()
        await asyncio.gather(*(worker(k) for k in range(clients)))
        return len(latencies), time.perf_counter() - started, latencies, errors


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--duration", type=float, default=30.0, help="seconds of load per program")
    p.add_argument("--programs", default="commands,rag")
    p.add_argument("--calls", choices=("thread", "async"), default="thread")
    p.add_argument("--concurrency", type=int, default=8)
    args = p.parse_args()
    names = [n.strip() for n in args.programs.split(",") if n.strip()]

    from tracerag.serving.programs import ENDPOINTS, load_programs

    tracerag.configure()
    local = load_programs(dict.fromkeys(names))
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")  # as the service does
    log = Path(os.environ.get("TMPDIR", "/tmp")) / "bench_serve.log"
    serve_flags = [x for n in names for x in ("--program", n)] + ["--calls", args.calls, "--concurrency",
                                                                   str(args.concurrency)]
    rows = []
    with ServeProcess(serve_flags, log=log) as server:
        for name in names:
            path, requests = ENDPOINTS[name].path, queries(name)
            identical = 0
            with httpx.Client(base_url=server.url, timeout=60) as client:
                for request in requests:
                    answer = client.post(path, json=request).json()
                    mine = local[name].respond(ENDPOINTS[name].request.model_validate(request))
                    identical += stable(answer) == stable(mine)
            n, seconds, lat = in_process(local[name], requests, args.duration / 3)
            rows.append((name, "in-process, sequential", 1, n, n / seconds, lat, 0, "-"))
            n, seconds, lat, errors = asyncio.run(load(server.url, path, requests, 1, args.duration / 3))
            rows.append((name, f"HTTP ({args.calls})", 1, n, n / seconds, lat, errors, "-"))
            n, seconds, lat, errors = asyncio.run(load(server.url, path, requests, args.clients, args.duration))
            rows.append((name, f"HTTP ({args.calls})", args.clients, n, n / seconds, lat, errors,
                         f"{identical}/{len(requests)}"))
    embedder = tracerag.get_embedder().id
    for served in local.values():
        served.close()
    print("| program | path | clients | requests | req/s | p50 ms | p95 ms | p99 ms | errors | identical |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, how, clients, n, rate, lat, errors, identical in rows:
        print(f"| {ENDPOINTS[name].program_class} | {how} | {clients} | {n} | {rate:.0f} | "
              f"{statistics.median(lat):.1f} | {percentile(lat, 95):.1f} | {percentile(lat, 99):.1f} | {errors} | "
              f"{identical} |")
    print(f"\n{os.cpu_count()} cores, {platform.processor() or platform.machine()}, Python "
          f"{platform.python_version()}; the service (--concurrency {args.concurrency}, --calls {args.calls}) and "
          f"the load generator share the machine; embedder {embedder}; no LM.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
