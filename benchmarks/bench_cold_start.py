"""Cold start: a fresh process's first ``tracerag run commands`` answer, what it spends it on, and how soon a cold
``tracerag serve`` answers its first request, for each source tree given (``--root``, repeatable), so a tree from
before a change is measured in the same run, interleaved:

    git worktree add /tmp/before <commit>
    nice -n -5 python benchmarks/bench_cold_start.py --root /tmp/before --root . --runs 5 --serve-runs 3

1. ``run commands`` (``python optimize.py run commands --dataset smarthome/home_small --query "<utterance> #n"``,
   no LM): wall and CPU time (user + system, from ``wait4``) of fresh interpreters, medians of ``--runs``, in
   two states: "warm" (the embedding cache holds the home's texts, and whatever else a first run leaves in the
   cache directory, from one untimed run; the utterance is new each run, so it is embedded) and "empty" (a new
   cache directory each run: the first run on a machine).
2. The steps of that first answer, each in a fresh interpreter run for the purpose (medians of ``--runs``):
   ``python -c pass``, importing numpy, pydantic, DSPy (only in a tree whose no-LM run builds the
   ``dspy.Module``; a tree with ``RuleCommandRetrieval`` answers without it) and tracerag's command modules,
   reading the home, building its index from the warm cache, reading the embedder's weights (as the tree reads
   them, with the warm cache directory), and the query on the program the tree's run answers with; plus
   ``python -X importtime``'s self time per top-level package of that script.
3. ``tracerag serve`` (all five programs on their bundled defaults, or ``--serve-program``) with an empty cache
   directory: seconds from the process start to its first line on the terminal, to ``GET /healthz`` answering,
   to the first 200 answer of ``POST /v1/commands`` (polled every 50 ms; with the CPU seconds the service had
   used by then, from ``/proc``), and to ``/healthz`` saying ready, medians of ``--serve-runs``; the log of the
   last run of each tree is printed with its timestamps.

The subprocesses write bytecode caches (``PYTHONDONTWRITEBYTECODE`` is removed from their environment, one
untimed run per tree first), as an installed package has them. CPU time is printed beside wall time because on a
shared machine wall time is mostly the other processes' load.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

UTTERANCE = "打开客厅的灯"
HOME = "smarthome/home_small"

STEPS = r'''
import importlib.util, json, os, sys, time
T, P = time.perf_counter, time.process_time
out = {}
def step(name, fn):
    t, p = T(), P()
    value = fn()
    out[name] = (T() - t, P() - p)
    return value
# a tree whose run answers without DSPy (RuleCommandRetrieval) imports none; an older one builds the dspy.Module
plain = importlib.util.find_spec("tracerag.commands.answering") is not None
step("import numpy", lambda: __import__("numpy"))
step("import pydantic", lambda: __import__("pydantic"))
step("import DSPy (the run's program is a dspy.Module)", lambda: None if plain else __import__("dspy"))
step("import tracerag's command modules (and optimize)", lambda: [__import__(m) for m in (
    "optimize", "tracerag.config", "tracerag.datasets.smarthome",
    "tracerag.commands.answering" if plain else "tracerag.commands.command_retrieval")])
import tracerag.config as config
from tracerag.datasets.smarthome import home_dirs, resolve_dataset
from tracerag.home_commands.home import Home
from tracerag.home_commands.home_index import CommandIndex
if plain:
    from tracerag.commands.answering import RuleCommandRetrieval as Program
    options = {}
else:
    from tracerag.commands.command_retrieval import CommandRetrieval as Program
    options = {"ir_source": "none"}
embedder = config.get_embedder()
home = step("read the home (Home.load)", lambda: Home.load(home_dirs(resolve_dataset(sys.argv[1]))[0]))
index = step("build its index (warm cache)", lambda: CommandIndex(home, embedder))
inner = getattr(embedder, "inner", embedder)
step("read the embedder's weights", lambda: inner._get_model()._model)  # the package reads them on first use
program = Program({home.name: index}, **options)
step("the query", lambda: program(query=sys.argv[2]))
print(json.dumps(out))
'''


def environment(root: Path, cache: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(root), "TRACERAG_CACHE_DIR": str(cache),
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    for key in ("PYTHONDONTWRITEBYTECODE", "TRACERAG_LM", "TRACERAG_EMBEDDER"):
        env.pop(key, None)
    return env


def timed(argv: list[str], root: Path, cache: Path) -> tuple[float, float, str]:
    """(wall s, CPU s of the child, its stdout) of one fresh interpreter."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, *argv], cwd=root, env=environment(root, cache),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stdout, stderr = proc.communicate()
    wall = time.perf_counter() - started
    # the child's rusage, read after it has been reaped by communicate(): RUSAGE_CHILDREN is cumulative
    if proc.returncode != 0:
        raise RuntimeError(f"{argv} failed in {root}:\n{stderr.decode()[-2000:]}")
    return wall, _child_cpu(), stdout.decode()


_cpu_seen = [0.0]


def _child_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = usage.ru_utime + usage.ru_stime
    spent, _cpu_seen[0] = total - _cpu_seen[0], total
    return spent


def run_argv(n: int) -> list[str]:
    return ["optimize.py", "run", "commands", "--dataset", HOME, "--query", f"{UTTERANCE} #{n}"]


def measure_run(roots: list[Path], runs: int, scratch: Path) -> dict:
    times: dict = {(root, state): [] for root in roots for state in ("warm", "empty")}
    warm = {root: scratch / f"warm-{i}" for i, root in enumerate(roots)}
    _child_cpu()
    for root in roots:  # bytecode caches and the warm cache directory: one untimed run each
        timed(run_argv(0), root, warm[root])
        timed(run_argv(0), root, warm[root])
    for n in range(1, runs + 1):  # interleaved, so a busy spell of the machine falls on every tree alike
        for i, root in enumerate(roots):
            wall, cpu, _ = timed(run_argv(n), root, warm[root])
            times[root, "warm"].append((wall, cpu))
            empty = scratch / f"empty-{i}-{n}"
            wall, cpu, _ = timed(run_argv(n), root, empty)
            times[root, "empty"].append((wall, cpu))
            shutil.rmtree(empty, ignore_errors=True)
    return {"times": times, "warm": warm}


def measure_steps(roots: list[Path], runs: int, warm: dict[Path, Path]) -> dict:
    steps: dict = {root: {} for root in roots}
    passes: dict = {root: [] for root in roots}
    for n in range(runs):
        for root in roots:
            wall, cpu, _ = timed(["-c", "pass"], root, warm[root])
            passes[root].append((wall, cpu))
            _, _, out = timed(["-c", STEPS, HOME, f"{UTTERANCE} #steps{n}"], root, warm[root])
            for name, value in json.loads(out.strip().splitlines()[-1]).items():
                steps[root].setdefault(name, []).append(value)
    return {"steps": steps, "pass": passes}


def import_self_times(root: Path, warm: Path, runs: int) -> dict[str, float]:
    """Seconds of ``-X importtime`` self time per top-level package of the steps' script (what a run imports, in
    one thread: a real run's background weights load would share the clock), medians of ``runs``."""
    samples: dict[str, list[float]] = {}
    for n in range(runs):
        proc = subprocess.run([sys.executable, "-X", "importtime", "-c", STEPS, HOME, f"{UTTERANCE} #imports{n}"],
                              cwd=root, env=environment(root, warm), capture_output=True, text=True, check=True)
        totals: dict[str, float] = {}
        for line in proc.stderr.splitlines():
            match = re.match(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)", line)
            if match:
                top = match.group(2).split(".")[0]
                totals[top] = totals.get(top, 0.0) + int(match.group(1)) / 1e6
        for name, seconds in totals.items():
            samples.setdefault(name, []).append(seconds)
    return {name: statistics.median(values + [0.0] * (runs - len(values))) for name, values in samples.items()}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far, its threads included (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def serve_once(root: Path, programs: list[str], timeout: float) -> dict:
    """One cold ``tracerag serve`` (fresh cache directory): seconds to each event, and its log with timestamps."""
    import httpx

    cache = Path(tempfile.mkdtemp(prefix="cold-serve-cache-"))
    port = free_port()
    flags = [flag for name in programs for flag in ("--program", name)]
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "optimize.py", "serve", "--port", str(port), *flags], cwd=root,
                            env=environment(root, cache), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log: list[tuple[float, str]] = []
    events: dict[str, float] = {}

    def read() -> None:
        for line in proc.stdout:
            log.append((time.perf_counter() - started, line.rstrip()))
            events.setdefault("first line", log[-1][0])

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    url = f"http://127.0.0.1:{port}"
    request = {"query": UTTERANCE, "home": "home_small"}
    try:
        with httpx.Client(base_url=url, timeout=60) as client:
            while time.perf_counter() - started < timeout and proc.poll() is None:
                try:
                    health = client.get("/healthz")
                except httpx.HTTPError:
                    time.sleep(0.05)
                    continue
                now = time.perf_counter() - started
                events.setdefault("/healthz answers", now)
                if health.status_code == 200:
                    events.setdefault("/healthz ready", now)
                if "first /v1/commands answer" not in events:
                    reply = client.post("/v1/commands", json=request)
                    if reply.status_code == 200:
                        events["first /v1/commands answer"] = time.perf_counter() - started
                        events["CPU s of the service at its first answer"] = process_cpu(proc.pid)
                if "/healthz ready" in events and "first /v1/commands answer" in events:
                    break
                time.sleep(0.05)
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        reader.join(5)
        shutil.rmtree(cache, ignore_errors=True)
    return {"events": events, "log": log}


def measure_serve(roots: list[Path], runs: int, programs: list[str], timeout: float) -> dict:
    events: dict = {root: {} for root in roots}
    logs: dict = {}
    for _ in range(runs):
        for root in roots:
            once = serve_once(root, programs, timeout)
            for name, seconds in once["events"].items():
                events[root].setdefault(name, []).append(seconds)
            logs[root] = once["log"]
    return {"events": events, "logs": logs}


def median_pair(pairs: list[tuple[float, float]]) -> str:
    return f"{statistics.median(w for w, _ in pairs):.2f} / {statistics.median(c for _, c in pairs):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", action="append", type=Path, help="source tree (repeatable; default .)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--serve-runs", type=int, default=3, help="cold serves per tree (0: skip)")
    parser.add_argument("--serve-program", action="append", default=[], help="serve only these (repeatable; "
                        "default: all five)")
    parser.add_argument("--serve-timeout", type=float, default=180.0)
    args = parser.parse_args()
    roots = [r.resolve() for r in args.root or [Path(".")]]
    names = [r.name or str(r) for r in roots]
    scratch = Path(tempfile.mkdtemp(prefix="bench-cold-"))
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start")
    try:
        ran = measure_run(roots, args.runs, scratch)
        print(f"\n### run commands, first answer of a fresh process (s, wall / CPU, median of {args.runs})\n")
        print("| cache directory | " + " | ".join(names) + " |")
        print("|---|" + "---:|" * len(roots))
        for state, label in (("warm", "warm (the home's texts cached; a new utterance)"),
                             ("empty", "empty (first run on the machine)")):
            print(f"| {label} | " + " | ".join(median_pair(ran["times"][r, state]) for r in roots) + " |")

        steps = measure_steps(roots, args.runs, ran["warm"])
        print(f"\n### its steps, each in a fresh interpreter (s, wall / CPU, median of {args.runs})\n")
        print("| step | " + " | ".join(names) + " |")
        print("|---|" + "---:|" * len(roots))
        print("| python -c pass | " + " | ".join(median_pair(steps["pass"][r]) for r in roots) + " |")
        for name in steps["steps"][roots[0]]:
            print(f"| {name} | " + " | ".join(median_pair(steps["steps"][r][name]) for r in roots) + " |")

        print(f"\n### -X importtime self time by top-level package (s, median of {args.runs})\n")
        totals = {root: import_self_times(root, ran["warm"][root], args.runs) for root in roots}
        top = sorted(set().union(*totals.values()), key=lambda k: -max(t.get(k, 0.0) for t in totals.values()))[:12]
        print("| package | " + " | ".join(names) + " |")
        print("|---|" + "---:|" * len(roots))
        for name in top:
            print(f"| {name} | " + " | ".join(f"{totals[r].get(name, 0.0):.3f}" for r in roots) + " |")
        print("| every package (sum of the medians) | "
              + " | ".join(f"{sum(totals[r].values()):.3f}" for r in roots) + " |")

        if args.serve_runs:
            served = measure_serve(roots, args.serve_runs, args.serve_program, args.serve_timeout)
            what = ", ".join(args.serve_program) or "all five programs"
            print(f"\n### tracerag serve ({what}), empty cache directory: seconds from start "
                  f"(median of {args.serve_runs})\n")
            print("| event | " + " | ".join(names) + " |")
            print("|---|" + "---:|" * len(roots))
            for event in ("first line", "/healthz answers", "first /v1/commands answer",
                          "CPU s of the service at its first answer", "/healthz ready"):
                cells = [served["events"][r].get(event) for r in roots]
                print(f"| {event} | " + " | ".join(f"{statistics.median(c):.1f} ({len(c)}/{args.serve_runs})"
                                                   if c else "never" for c in cells) + " |")
            for root, name in zip(roots, names, strict=True):
                print(f"\nlog of the last serve of {name}:\n")
                for seconds, line in served["logs"][root]:
                    print(f"    {seconds:6.2f}  {line[:160]}")
        print(f"\nmachine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
