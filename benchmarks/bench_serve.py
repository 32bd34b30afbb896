"""``tracerag serve`` under load: requests/s and latency percentiles of CommandRetrieval and SelfReflectiveRAG over
HTTP, against the same program called in-process, no LM; the per-request cost of the service; its memory over a
long unique-utterance run.

    python benchmarks/bench_serve.py [--clients 20] [--duration 30] [--programs commands,rag] [--calls thread]
                                     [--repeats 5] [--soak 30000] [--serve-flag=--metrics ...]

Starts the real service (``python -m optimize serve --program commands --program rag``, the default embedder,
127.0.0.1, a free port) and a bounded load generator in this process: ``--clients`` httpx async clients,
each sending the next query as soon as its previous answer arrived, for ``--duration`` seconds per program.
The queries are the bundled test splits (smart-home utterances with their home; PubMedQA questions),
cycled. The in-process baseline is the program built by the same code (``tracerag.registry``) and
called one query after another in this process for a third of the duration; "HTTP, 1 client" is the
same sequence over HTTP (the per-request cost of the service). Before the load, every
query is sent once and its answer compared with the in-process call (timings aside): "identical" counts
those that match. An error is any non-200 answer or a transport failure.

Per-request cost: ``--repeats`` rounds, each ``--round-requests`` queries in-process, then the same queries over
HTTP with one client, then as many ``GET /healthz`` (the HTTP round trip alone: the floor); interleaved, so all
three see the same machine load. Per round the median latency of each, then the median over rounds, the
ratio and difference of the first two.

Memory (``--soak N``): N requests from ``--clients`` clients, commands and rag in turn, the bundled queries
cycled (what a leak in the request path shows in: every cache is warm after the first round); with
``--soak-unique`` each utterance or question is made unique (``" #<n>"`` appended), so the bounded caches fill
(embeddings, parsed utterances, hashed n-gram features). The service's resident set (``VmRSS``) is read every
``--soak-step`` requests. The service and this script use a fresh cache directory (``TRACERAG_CACHE_DIR``), so
the embedding cache starts empty and its size at the end is printed too.

Prints markdown tables and a machine note.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import statistics
import sys
import tempfile
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


def rss_mb(pid: int) -> tuple[float, float, float]:
    """The resident set of a process in MB (Linux ``/proc``): (all, anonymous: the heap, file: mapped files
    such as the embedding cache, which the kernel can drop and read again)."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return tuple(int(fields[key].split()[0]) / 1024 for key in ("VmRSS", "RssAnon", "RssFile"))


def unique(request: dict, n: int) -> dict:
    """The request with its utterance or question made unique."""
    key = "query" if "query" in request else "question"
    return {**request, key: f"{request[key]} #{n}"}


def overhead(served, url: str, path: str, requests: list[dict], rounds: int, per_round: int):
    """(in-process, HTTP, ``GET /healthz``) median ms: medians over ``rounds`` of each round's median, one client.
    ``/healthz`` is the floor of any request here: the HTTP round trip with no body, no thread hop, no program."""
    local_medians, http_medians, floor_medians = [], [], []
    with httpx.Client(base_url=url, timeout=60) as client:
        for r in range(rounds):
            batch = [requests[(r * per_round + i) % len(requests)] for i in range(per_round)]
            times = []
            for request in batch:
                parsed = served.endpoint.request.model_validate(request)
                t = time.perf_counter()
                served.respond(parsed)
                times.append((time.perf_counter() - t) * 1000)
            local_medians.append(statistics.median(times))
            times = []
            for request in batch:
                t = time.perf_counter()
                reply = client.post(path, json=request)
                times.append((time.perf_counter() - t) * 1000)
                if reply.status_code != 200:
                    raise RuntimeError(f"{path} answered {reply.status_code}: {reply.text[:200]}")
            http_medians.append(statistics.median(times))
            times = []
            for _ in batch:
                t = time.perf_counter()
                client.get("/healthz")
                times.append((time.perf_counter() - t) * 1000)
            floor_medians.append(statistics.median(times))
    return statistics.median(local_medians), statistics.median(http_medians), statistics.median(floor_medians)


async def soak(url: str, paths: list[str], requests: dict[str, list[dict]], total: int, step: int, clients: int,
               pid: int, distinct: bool) -> tuple[list[tuple[int, tuple[float, float, float]]], int, float]:
    """([(requests sent, service RSS MB: all, anonymous, file)], errors, seconds): ``total`` requests, paths in
    turn, each made unique when ``distinct``."""
    samples = [(0, rss_mb(pid))]
    errors, sent = 0, 0
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    started = time.perf_counter()
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        while sent < total:
            end = min(total, sent + step)
            counter = iter(range(sent, end))

            async def worker(counter) -> None:
                nonlocal errors
                for n in counter:
                    path = paths[n % len(paths)]
                    pool = requests[path]
                    request = pool[(n // len(paths)) % len(pool)]
                    try:
                        reply = await client.post(path, json=unique(request, n) if distinct else request)
                        if reply.status_code != 200:
                            errors += 1
                            print(f"soak: {path} answered {reply.status_code}: {reply.text[:200]}", file=sys.stderr)
                    except httpx.HTTPError as exc:
                        errors += 1
                        print(f"soak: {path} failed: {exc!r}", file=sys.stderr)

            await asyncio.gather(*(worker(counter) for _ in range(clients)))
            sent = end
            samples.append((sent, rss_mb(pid)))
    return samples, errors, time.perf_counter() - started


def tree_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


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
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--duration", type=float, default=30.0, help="seconds of load per program")
    p.add_argument("--programs", default="commands,rag")
    p.add_argument("--calls", choices=("thread", "async"), default="thread")
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--repeats", type=int, default=5, help="rounds of the per-request cost comparison")
    p.add_argument("--round-requests", type=int, default=200, help="queries per round of the per-request cost")
    p.add_argument("--soak", type=int, default=0, metavar="N", help="then N requests, the service's RSS sampled")
    p.add_argument("--soak-unique", action="store_true", help="make every soak request's text unique")
    p.add_argument("--soak-step", type=int, default=3000, metavar="N", help="requests between two RSS samples")
    p.add_argument("--serve-flag", action="append", default=[], help="a further tracerag serve flag (repeatable)")
    args = p.parse_args()
    names = [n.strip() for n in args.programs.split(",") if n.strip()]
    cache = Path(tempfile.mkdtemp(prefix="bench-serve-cache-"))
    os.environ["TRACERAG_CACHE_DIR"] = str(cache)  # both this process and the service: an empty cache
    try:
        return run(args, names, cache)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def run(args, names: list[str], cache: Path) -> int:
    from tracerag.serving.programs import ENDPOINTS, load_programs

    tracerag.configure()
    local = load_programs(dict.fromkeys(names))
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")  # as the service does
    log = Path(os.environ.get("TMPDIR", "/tmp")) / "bench_serve.log"
    serve_flags = [x for n in names for x in ("--program", n)] + ["--calls", args.calls, "--concurrency",
                                                                   str(args.concurrency), *args.serve_flag]
    rows, costs, soaked = [], [], None
    with ServeProcess(serve_flags, log=log) as server:
        pool = {ENDPOINTS[name].path: queries(name) for name in names}
        for name in names:
            path, requests = ENDPOINTS[name].path, pool[ENDPOINTS[name].path]
            identical = 0
            with httpx.Client(base_url=server.url, timeout=60) as client:
                for request in requests:
                    answer = client.post(path, json=request).json()
                    mine = local[name].respond(ENDPOINTS[name].request.model_validate(request))
                    identical += stable(answer) == stable(mine)
            costs.append((name, *overhead(local[name], server.url, path, requests, args.repeats,
                                          args.round_requests)))
            n, seconds, lat = in_process(local[name], requests, args.duration / 3)
            rows.append((name, "in-process, sequential", 1, n, n / seconds, lat, 0, "-"))
            n, seconds, lat, errors = asyncio.run(load(server.url, path, requests, 1, args.duration / 3))
            rows.append((name, f"HTTP ({args.calls})", 1, n, n / seconds, lat, errors, "-"))
            n, seconds, lat, errors = asyncio.run(load(server.url, path, requests, args.clients, args.duration))
            rows.append((name, f"HTTP ({args.calls})", args.clients, n, n / seconds, lat, errors,
                         f"{identical}/{len(requests)}"))
        if args.soak:
            soaked = asyncio.run(soak(server.url, list(pool), pool, args.soak, args.soak_step, args.clients,
                                      server.proc.pid, args.soak_unique))
    embedder = tracerag.get_embedder().id
    for served in local.values():
        served.close()
    print("| program | path | clients | requests | req/s | p50 ms | p95 ms | p99 ms | errors | identical |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, how, clients, n, rate, lat, errors, identical in rows:
        print(f"| {ENDPOINTS[name].program_class} | {how} | {clients} | {n} | {rate:.0f} | "
              f"{statistics.median(lat):.1f} | {percentile(lat, 95):.1f} | {percentile(lat, 99):.1f} | {errors} | "
              f"{identical} |")
    print(f"\nPer request, one client, median of {args.repeats} rounds of {args.round_requests} queries "
          "(each round's median):\n")
    print("| program | in-process ms | HTTP ms | HTTP ÷ in-process | service's own ms | GET /healthz ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, local_ms, http_ms, floor_ms in costs:
        print(f"| {ENDPOINTS[name].program_class} | {local_ms:.2f} | {http_ms:.2f} | {http_ms / local_ms:.2f}x | "
              f"{http_ms - local_ms:.2f} | {floor_ms:.2f} |")
    if soaked:
        samples, errors, seconds = soaked
        sent = samples[-1][0]
        kind = "unique" if args.soak_unique else "cycled"
        print(f"\nService memory over {sent} {kind} requests ({', '.join(pool)} in turn, {args.clients} clients, "
              f"{sent / seconds:.0f} req/s, {errors} errors):\n")
        print("| requests | RSS MB | anonymous MB | file-backed MB |")
        print("|---:|---:|---:|---:|")
        for count, (total, anon, mapped) in samples:
            print(f"| {count} | {total:.1f} | {anon:.1f} | {mapped:.1f} |")
        first = samples[1] if len(samples) > 2 else samples[0]
        later = [total for _, (total, _, _) in samples[1:]]
        print(f"\nFrom the first sample after start ({first[0]} requests) to the end: RSS "
              f"{samples[-1][1][0] - first[1][0]:+.1f} MB (anonymous {samples[-1][1][1] - first[1][1]:+.1f}, "
              f"file-backed {samples[-1][1][2] - first[1][2]:+.1f}); range after it {min(later):.1f}–"
              f"{max(later):.1f} MB; cache directory at the end {tree_mb(cache):.1f} MB.")
    print(f"\n{os.cpu_count()} cores, {platform.processor() or platform.machine()}, Python "
          f"{platform.python_version()}; the service (--concurrency {args.concurrency}, --calls {args.calls}"
          f"{''.join(' ' + f for f in args.serve_flag)}) and the load generator share the machine; embedder "
          f"{embedder}; no LM.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
