"""Measure reading data at scale and the command line's start-up, and print the BENCHMARKS.md tables.

    python benchmarks/bench_loading.py [--root .] [--runs 5] [--json out/loading.json]

``--root`` is the source tree measured (put first on ``sys.path``, and the working directory of the
start-up runs), so the same script measures an older checkout:
``git worktree add /tmp/before 60e97bc && python benchmarks/bench_loading.py --root /tmp/before``.

1. ``Home.load`` on homes of 20 to 20,000 devices (``synthetic_home.replicate_home`` of home_large)
   against ``json.loads`` of the same three files (devices.json, rooms.json and each spec.jsonl line):
   medians of ``--runs``; peak memory of one load (tracemalloc) next to that of json.loads of the files.
2. The JSONL readers (smart-home and experience queries) on a 20,000-line file against ``json.loads``
   of each line.
3. ``tracerag --help`` (``python optimize.py --help``) and ``python -c "import tracerag"`` wall time,
   medians of ``--runs`` fresh interpreters, next to ``python -c pass``.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent))  # synthetic_home

from synthetic_home import BUNDLED, replicate_home  # noqa: E402

DEVICES = (20, 200, 1_000, 5_000, 20_000)
QUERY_LINES = 20_000


def median_ms(read, runs: int) -> float:
    times = []
    for _ in range(runs):
        gc.collect()
        started = time.perf_counter()
        read()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def peak_mb(read) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        read()
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def json_loads_of(*paths: Path):
    """Parsing the files with nothing else: json.loads of each JSON file and of each JSONL line."""
    def parse():
        out = []
        for path in paths:
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".jsonl":
                out.append([json.loads(line) for line in text.split("\n") if line.strip()])
            else:
                out.append(json.loads(text))
        return out
    return parse


def home_table(work: Path, runs: int) -> list[dict]:
    from tracerag.home_commands.home import Home

    rows = []
    for n in DEVICES:
        home = replicate_home("home_large", work / f"home_{n}", n)
        files = [home / "devices.json", home / "rooms.json", home / "spec.jsonl"]
        load = functools.partial(Home.load, home, log_warnings=False)
        assert len(load().devices) == n
        reps = runs if n < 20_000 else max(3, runs // 2)
        load_ms, json_ms = median_ms(load, reps), median_ms(json_loads_of(*files), reps)
        rows.append({"devices": n, "MB": round(sum(f.stat().st_size for f in files) / 1e6, 2),
                     "load_ms": round(load_ms, 1), "json_loads_ms": round(json_ms, 1),
                     "ratio": round(load_ms / json_ms, 2), "peak_MB": round(peak_mb(load), 1),
                     "json_peak_MB": round(peak_mb(json_loads_of(*files)), 1)})
        print(rows[-1], file=sys.stderr)
    return rows


def jsonl_table(work: Path, runs: int) -> list[dict]:
    from tracerag.data_files.read_report import ReadReport
    from tracerag.datasets.experience import load_experience_queries
    from tracerag.datasets.smarthome import load_queries

    def write(name: str, source: Path) -> Path:
        base = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
        path = work / name / "queries.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps({**base[i % len(base)], "id": f"q-{i:06d}"}, ensure_ascii=False) + "\n"
                                for i in range(QUERY_LINES)), encoding="utf-8")
        return path

    smart = write("smarthome_queries", BUNDLED / "home_large" / "queries.jsonl")
    experience = write("experience_queries", BUNDLED.parent / "experience" / "queries.jsonl")
    readers = [("smart-home queries (load_queries)", smart,
                lambda: load_queries(smart, "home_large", ReadReport("queries"))),
               ("experience queries (load_experience_queries)", experience,
                lambda: load_experience_queries(experience.parent, report=ReadReport("queries")))]
    rows = []
    for name, path, read in readers:
        read_ms, json_ms = median_ms(read, runs), median_ms(json_loads_of(path), runs)
        rows.append({"reader": name, "lines": QUERY_LINES, "MB": round(path.stat().st_size / 1e6, 1),
                     "read_ms": round(read_ms, 1), "json_loads_ms": round(json_ms, 1),
                     "ratio": round(read_ms / json_ms, 2)})
        print(rows[-1], file=sys.stderr)
    return rows


def startup_table(root: Path, runs: int) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    env.pop("TRACERAG_LM", None)
    commands = [("python -c pass", [sys.executable, "-c", "pass"]),
                ("import tracerag", [sys.executable, "-c", "import tracerag"]),
                ("tracerag --help", [sys.executable, "optimize.py", "--help"]),
                ("tracerag evaluate --help", [sys.executable, "optimize.py", "evaluate", "--help"])]
    rows = []
    for name, argv in commands:
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run(argv, cwd=root, env=env, check=True, capture_output=True)
            times.append(time.perf_counter() - started)
        rows.append({"command": name, "wall_ms": round(statistics.median(times) * 1000, 1)})
        print(rows[-1], file=sys.stderr)
    return rows


def table(rows: list[dict]) -> str:
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(f"{r[k]:,}" if isinstance(r[k], int) else str(r[k]) for k in keys) + " |"
              for r in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=str(Path(__file__).resolve().parents[1]), help="source tree to measure")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    root = Path(args.root).resolve()
    sys.path.insert(0, str(root))
    import tracerag.home_commands.home as home_module

    assert Path(home_module.__file__).is_relative_to(root), f"measuring {home_module.__file__}, not {root}"
    print(f"tree: {root}  python {sys.version.split()[0]}  cpus {os.cpu_count()}", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        figures = {"home": home_table(Path(tmp), args.runs), "jsonl": jsonl_table(Path(tmp), args.runs),
                   "startup": startup_table(root, args.runs)}
    for title, key in (("Home.load", "home"), ("JSONL readers", "jsonl"), ("Start-up", "startup")):
        print(f"\n### {title}\n\n{table(figures[key])}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(figures, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
