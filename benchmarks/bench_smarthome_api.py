"""Smart-home APIs: pulling a 200-device home and executing a 60-device bulk plan, against local stand-ins.

    python benchmarks/bench_smarthome_api.py [--runs 5] [--latency 0.05] [--out /tmp/bench_sections/smarthome_api.md]

The stand-ins are tests/smarthome/smarthome_fakes.py (stdlib http.server on 127.0.0.1, the HA one with
a stdlib WebSocket endpoint), serving the bundled home_large (200 devices, 20 rooms) in SmartThings
shapes and as Home Assistant registries and states. Each figure is the median of ``--runs`` runs, with
no added latency and with ``--latency`` seconds added to every HTTP answer (a real API's round trip).

- pull: wall time of ``pull_smartthings`` (devices paged 50 a page, rooms, every capability definition
  and its localized strings, 4 requests at a time) and of ``pull_homeassistant`` (4 registry lists over
  one WebSocket session, ``GET /api/states``), files written included;
- execute: a 60-light "switch off" plan in batches of 20; SmartThings needs one call per device, Home
  Assistant one service call per batch. Calls made and wall time, sequential (concurrency 1) against
  the default bound of 8 calls in flight.
"""

from __future__ import annotations

import argparse
import logging
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "smarthome"))

from smarthome_fakes import TOKEN, FakeHomeAssistant, FakeSmartThings  # noqa: E402

from tracerag.home_commands.command_results import BulkGroup, BulkPlan  # noqa: E402
from tracerag.home_commands.home import Home  # noqa: E402
from tracerag.smarthome.execute import HomeAssistantTarget, SmartThingsTarget, execute  # noqa: E402
from tracerag.smarthome.homeassistant import pull_homeassistant  # noqa: E402
from tracerag.smarthome.smartthings import pull_smartthings  # noqa: E402

HOME = "home_large"


def _median(fn, runs: int) -> tuple[float, object]:
    times, last = [], None
    for _ in range(runs):
        started = time.perf_counter()
        last = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), last


def _plan(home: Home, n: int = 60) -> BulkPlan:
    lights = [d.device_id for d in home.devices if d.category == "Light" and
              any(c.id.endswith("-off") or c.id.endswith("turn_off") for c in d.commands)][:n]
    command = next(c.id for c in home.find(lights[0]).commands if c.id.endswith("off"))
    return BulkPlan(command_id=command, groups=[BulkGroup(command_id=command, signature=command, device_ids=lights)],
                    batches=[lights[i:i + 20] for i in range(0, len(lights), 20)])


def bench(runs: int, latency: float) -> list[tuple]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for delay in (0.0, latency):
            with FakeSmartThings(HOME, page_size=50, flaky=False) as st:
                st.latency = delay
                seconds, summary = _median(lambda st=st: pull_smartthings(
                    st.location_id, f"{tmp}/st", token=TOKEN, base_url=st.url, locale="zh-CN"), runs)
                requests = len(st.requests) // runs
                rows.append(("pull", "SmartThings", delay, f"{summary.devices} devices, {summary.profiles} profiles",
                             requests, seconds))
            with FakeHomeAssistant(HOME) as ha:
                ha.latency = delay
                seconds, summary = _median(lambda ha=ha: pull_homeassistant(ha.url, f"{tmp}/ha", token=TOKEN), runs)
                rows.append(("pull", "Home Assistant", delay, f"{summary.devices} entities, {summary.rooms} areas",
                             "1 WS + 1", seconds))
        st_home, ha_home = Home.load(f"{tmp}/st", log_warnings=False), Home.load(f"{tmp}/ha", log_warnings=False)
        st_plan, ha_plan = _plan(st_home), _plan(ha_home)
        for concurrency in (1, 8):
            with FakeSmartThings(HOME, flaky=False) as st:
                st.latency = latency
                target = SmartThingsTarget(TOKEN, st.url, concurrency=concurrency)
                seconds, report = _median(lambda t=target: execute(st_plan, t, dry_run=False, home=st_home), runs)
                assert len(report.accepted) == 60, report.summary()
                rows.append(("execute 60", "SmartThings", latency, f"concurrency {concurrency}",
                             len(report.calls), seconds))
            with FakeHomeAssistant(HOME) as ha:
                ha.latency = latency
                target = HomeAssistantTarget(ha.url, TOKEN, concurrency=concurrency)
                seconds, report = _median(lambda t=target: execute(ha_plan, t, dry_run=False, home=ha_home), runs)
                assert len(report.accepted) == len(ha_plan.groups[0].device_ids), report.summary()
                rows.append(("execute 60", "Home Assistant", latency, f"concurrency {concurrency}",
                             len(report.calls), seconds))
    return rows


def markdown(rows: list[tuple], runs: int, latency: float) -> str:
    out = ["## Smart-home APIs: pull and execute", "",
           f"Against the local stand-ins of tests/smarthome (the bundled `{HOME}`: 200 devices, 20 rooms), median "
           f"of {runs} runs; \"latency\" is added to every HTTP answer to stand for a real API's round trip (not to "
           "WebSocket messages: the HA pull's registries come without it).", "",
           "| what | API | latency | detail | HTTP calls | wall time |", "|---|---|---|---|---|---|"]
    for what, api, delay, detail, calls, seconds in rows:
        out.append(f"| {what} | {api} | {delay * 1000:.0f} ms | {detail} | {calls} | {seconds * 1000:.0f} ms |")
    out += ["", "Reproduce: `python benchmarks/bench_smarthome_api.py --runs "
            f"{runs} --latency {latency:g}`. Machine: {platform.machine()}, "
            f"{_cores()} cores, Python {platform.python_version()}; stand-ins and client share the machine.", ""]
    return "\n".join(out)


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--out", help="also write the markdown section here")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    text = markdown(bench(args.runs, args.latency), args.runs, args.latency)
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
