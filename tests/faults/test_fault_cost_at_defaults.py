"""What a failing endpoint costs `tracerag evaluate` at the default settings, for every program: at most
2 x the no-LM run + 60 s, at most 100 MB above its peak RSS, and (a whole endpoint failing) the no-LM
run's metrics; where one stage stalls while the others answer (ExperienceRetrieval's summary,
SelfReflectiveRAG's verification), the others keep calling the LM. The cells of
`benchmarks/bench_lm_faults.py --matrix`, each run in a fresh process against
the stub endpoint; the five programs of one fault run at once (they mostly wait). Slow: a stalled
endpoint takes the whole fault budget, about 50 s."""

from __future__ import annotations

import importlib.util
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_lm_faults.py"
PROGRAMS = ("commands", "experience", "rag", "planner", "agent")
STAGE_APART = {"experience": "summarize", "rag": "verify"}  # the stage that stalls alone, beside stages that answer


def _bench():
    spec = importlib.util.spec_from_file_location("bench_lm_faults", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _bench()


@pytest.fixture(scope="module")
def no_lm(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("no-lm")
    with ThreadPoolExecutor(len(PROGRAMS)) as pool:
        return dict(zip(PROGRAMS, pool.map(lambda p: bench.cell(p, None, None, None, tmp)[2], PROGRAMS),
                        strict=True))


@pytest.mark.parametrize(("label", "mode", "stage_mode"), bench.MATRIX, ids=[row[1] + (row[2] or "")
                                                                            for row in bench.MATRIX])
def test_a_failing_endpoint_costs_at_most_twice_the_no_lm_run_plus_a_minute(no_lm, tmp_path, label, mode,
                                                                            stage_mode):
    with ThreadPoolExecutor(len(PROGRAMS)) as pool:
        cells = list(pool.map(lambda p: bench.cell(p, label, mode, stage_mode, tmp_path), PROGRAMS))
    for program, _, result, requests in cells:
        base = no_lm[program]
        where = f"{program}, {label}: {result['seconds']:.1f} s, {result['peak_mb']:.0f} MB; no LM " \
                f"{base['seconds']:.1f} s, {base['peak_mb']:.0f} MB"
        assert result["seconds"] <= 2 * base["seconds"] + 60, where
        assert result["peak_mb"] <= base["peak_mb"] + bench.BOUND_MB, where
        assert sum(requests.values()) > 0, where  # the endpoint was called
        if stage_mode is None:  # the whole endpoint failed: the no-LM run, every row marked
            assert bench.quality(result["report"]) == bench.quality(base["report"]), where
            assert result["report"]["metrics"]["lm_fallback_rate"] == 1.0, where
        elif program in STAGE_APART:  # the stalled stage is shut after its share; the others answer every example
            stalled, n = bench.ONE_STAGE[program][0], result["report"]["n"]
            others = sum(count for name, count in requests.items() if name != stalled)
            assert requests[stalled] <= 3 and others >= n, f"{where}; {requests}"
            assert set(result["report"]["metrics"]["lm_fallbacks"]) == {STAGE_APART[program]}, where
