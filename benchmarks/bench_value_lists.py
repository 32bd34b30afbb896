"""A command with a long value_list: the document join before and after, and the whole load + index build.

    python benchmarks/bench_value_lists.py [--join-sizes 1000,8000,32000] [--sizes 100,1000,32000,100000]
    python benchmarks/bench_value_lists.py --join-sizes "" --sizes 1000,8000,32000   # in a checkout before the cap

Join: ``command_docs._join_new_phrases`` over a command's description, synonyms and N value descriptions
("频道0" ... and "Channel 0 (HD)" ... for an English command), against the joining as it was (the text
re-joined for every phrase; copied here as the baseline), medians of 3 in the same run. Whole path:
writing a home whose one TV lists N channels, then ``Home.load`` + ``CommandIndex`` with a warm embedding
cache (median of 3); a list over ``MAX_VALUES_PER_COMMAND`` is read up to the cap, so the time stops
growing there.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tracerag.embedding.embedders import LocalUSEEmbedder  # noqa: E402
from tracerag.embedding.embedding_cache import CachedEmbedder  # noqa: E402
from tracerag.home_commands.command_docs import _join_new_phrases  # noqa: E402
from tracerag.home_commands.home import Home  # noqa: E402
from tracerag.home_commands.home_index import CommandIndex  # noqa: E402
from tracerag.home_commands.spec_file import MAX_VALUES_PER_COMMAND as CAP  # noqa: E402


def quadratic_join(parts: list[str], chinese: bool) -> str:
    """The joining before: ``" ".join(out)`` rebuilt for every phrase."""
    out: list[str] = []
    for part in parts:
        for phrase in part.split() if chinese else [p.strip() for p in part.split(",")]:
            if phrase and phrase not in " ".join(out):
                out.append(phrase)
    return " ".join(out)


def _median_ms(fn, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def join_parts(n: int, chinese: bool) -> list[str]:
    if chinese:
        return ["切换频道", "调到 调成 设为 设置 调节 改成", *(f"频道{i}" for i in range(n))]
    return ["Set the TV channel", "set to, adjust, change", *(f"Channel {i} (HD)" for i in range(n))]


def write_home(directory: Path, n: int) -> None:
    directory.mkdir(parents=True)
    values = [{"value": str(i), "description": f"频道{i}"} for i in range(n)]
    spec = {"profileId": "p-tv", "capabilities": [
        {"id": "main-switch-on", "description": "打开电视"},
        {"id": "main-tvChannel-setTvChannel", "description": "切换频道", "value_list": values}]}
    (directory / "spec.jsonl").write_text(json.dumps(spec, ensure_ascii=False) + "\n", encoding="utf-8")
    (directory / "rooms.json").write_text(json.dumps({"items": [{"roomId": "r1", "name": "客厅"}]}), encoding="utf-8")
    device = {"deviceId": "tv-1", "label": "客厅电视", "roomId": "r1", "profile": {"id": "p-tv"},
              "components": [{"id": "main", "categories": [{"name": "Television"}],
                              "capabilities": [{"id": "switch"}, {"id": "tvChannel"}]}]}
    (directory / "devices.json").write_text(json.dumps({"items": [device]}, ensure_ascii=False), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--join-sizes", default="1000,8000,32000")
    parser.add_argument("--sizes", default="100,1000,32000,100000")
    args = parser.parse_args()

    if args.join_sizes:
        print("| values | language | join before (ms) | join after (ms) | before / after |")
        print("|---:|---|---:|---:|---:|")
    for n in map(int, filter(None, args.join_sizes.split(","))):
        for chinese in (True, False):
            parts = join_parts(n, chinese)
            assert _join_new_phrases(parts, chinese) == quadratic_join(parts, chinese)
            before = _median_ms(lambda p=parts, c=chinese: quadratic_join(p, c))
            after = _median_ms(lambda p=parts, c=chinese: _join_new_phrases(p, c))
            print(f"| {n:,} | {'Chinese' if chinese else 'English'} | {before:,.1f} | {after:,.1f} | "
                  f"{before / after:,.0f}x |")

    print(f"\n| values listed | values read (cap {CAP or 'none'}) | load + index build (ms) |")
    print("|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        embedder = CachedEmbedder(LocalUSEEmbedder(), Path(tmp) / "embeddings.sqlite")
        for n in map(int, args.sizes.split(",")):
            home_dir = Path(tmp) / f"home-{n}"
            write_home(home_dir, n)
            CommandIndex(Home.load(home_dir, log_warnings=False), embedder)  # warms the embedding cache
            build = _median_ms(lambda d=home_dir: CommandIndex(Home.load(d, log_warnings=False), embedder))
            read = len(Home.load(home_dir, log_warnings=False).device("tv-1").command(
                "main-tvChannel-setTvChannel").value_list)
            print(f"| {n:,} | {read:,} | {build:,.0f} |")


if __name__ == "__main__":
    main()
