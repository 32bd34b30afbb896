"""Measure one LM call against each hostile stub endpoint: wall time and peak RSS growth.

    .venv-test/bin/python tests/lm/lm_bounds_probe.py [--timeout 3] [--retries 1] [--limit-s 30]
        [--limit-mb 1500] [mode ...]

Each mode runs in its own child process, which the parent kills when it runs past ``--limit-s`` seconds
or its resident memory passes ``--limit-mb`` (an unbounded client would otherwise take the machine);
a killed run is reported as "killed" with the figure it had reached. The child makes one guarded LM
stage call through ``make_lm`` (the way tracerag builds a user's LM) and reports whether the stage fell
back.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _rss_mb(pid: int, field: str = "VmRSS") -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def child(mode: str, timeout: float, retries: int) -> None:
    sys.path.insert(0, str(TESTS))
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import dspy
    from conftest import FakeEngine
    from json_service import gzip_bomb
    from lm_server import StubLMServer

    from tracerag.lm.bounded_lm import make_lm
    from tracerag.programs.guarded_step import Stages

    gzip_bomb()  # built before measuring
    adapter = dspy.ChatAdapter(use_json_adapter_fallback=False)
    with StubLMServer(FakeEngine()) as good:  # a first call loads what every call needs
        lm = make_lm("openai/stub-model", good.url, "test-key", timeout=timeout, retries=retries, cache=False)
        with dspy.context(lm=lm, adapter=adapter):
            Stages().call("warm", dspy.Predict("question -> answer"), question="hi")
    with StubLMServer(FakeEngine(), mode) as stub:
        lm = make_lm("openai/stub-model", stub.url, "test-key", timeout=timeout, retries=retries, cache=False)
        with dspy.context(lm=lm, adapter=adapter):
            before = _rss_mb(os.getpid(), "VmHWM")
            stages = Stages()
            start = time.monotonic()
            stages.call("answer", dspy.Predict("question -> answer"), question="hi")
            elapsed = time.monotonic() - start
        peak = _rss_mb(os.getpid(), "VmHWM")
    print(json.dumps({"mode": mode, "seconds": round(elapsed, 2), "rss_growth_mb": round(peak - before, 1),
                      "fell_back": stages.fallbacks == ["answer"], "error": (stages.errors or [""])[0][:160]}))


def parent(modes: list[str], timeout: float, retries: int, limit_s: float, limit_mb: float) -> None:
    for mode in modes:
        proc = subprocess.Popen([sys.executable, __file__, "--child", mode, "--timeout", str(timeout),
                                 "--retries", str(retries)], stdout=subprocess.PIPE, text=True)
        start, peak, killed = time.monotonic(), 0.0, None
        while proc.poll() is None:
            peak = max(peak, _rss_mb(proc.pid))
            if time.monotonic() - start > limit_s:
                killed = f"still running after {limit_s:g} s"
            elif peak > limit_mb:
                killed = f"RSS past {limit_mb:g} MB after {time.monotonic() - start:.1f} s"
            if killed:
                proc.kill()
                break
            time.sleep(0.05)
        out = proc.communicate()[0].strip()
        print(out if not killed else json.dumps({"mode": mode, "killed": killed, "rss_mb": round(peak)}), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("modes", nargs="*", default=["endless", "drip", "huge_length", "gzip_bomb", "good"])
    parser.add_argument("--timeout", type=float, default=3.0)
    parser.add_argument("--retries", type=int, default=1)
    parser.add_argument("--limit-s", type=float, default=30.0)
    parser.add_argument("--limit-mb", type=float, default=1500.0)
    parser.add_argument("--child")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.timeout, args.retries)
    else:
        parent(args.modes, args.timeout, args.retries, args.limit_s, args.limit_mb)
