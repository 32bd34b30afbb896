"""Fresh-install cost: `pip install -e <repo>` into a new virtual environment.

Creates a venv in a temporary directory, upgrades pip quietly (not timed), then times
`pip install --no-cache-dir -e <repo>[extras]` and reads pip's output to count how many
distinct litellm versions pip fetched while resolving (one means no backtracking on it) and
the megabytes it downloaded from the index (as pip prints them; local wheel files not counted).

    python benchmarks/bench_install.py                 # this checkout, main dependencies
    python benchmarks/bench_install.py --extra dev     # with the test dependencies
    python benchmarks/bench_install.py --repo /path/to/other/checkout --log install.log
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# "Downloading litellm-1.106.2-cp310-abi3-...whl (36.8 MB)", "Processing /some/dir/litellm-1.106.2-...whl",
# "Using cached litellm-1.106.2-...whl". Wheel and sdist names both start "litellm-<version>".
_FETCH = re.compile(r"^\s*(?:Downloading|Processing|Using cached)\s+\S*?\blitellm-(\d[^-\s]*?)(?:-|\.tar\.gz|\.zip)")
_COLLECT = re.compile(r"^\s*Collecting litellm\b")
_INSTALLED = re.compile(r"^Successfully installed (.+)$", re.MULTILINE)
# "Downloading foo-1.0-py3-none-any.whl (36.8 MB)": fetched from an index (local "Processing" files are not).
_DOWNLOAD_SIZE = re.compile(r"^\s*Downloading\s+\S+\s+\(([\d.]+)\s*(bytes|kB|MB|GB)\)")
_UNIT = {"bytes": 1e-6, "kB": 1e-3, "MB": 1.0, "GB": 1e3}


def parse_log(text: str) -> dict:
    versions: list[str] = []
    collecting = 0
    downloaded_mb = 0.0
    for line in text.splitlines():
        size = _DOWNLOAD_SIZE.match(line)
        if size:
            downloaded_mb += float(size.group(1)) * _UNIT[size.group(2)]
        m = _FETCH.match(line)
        if m and m.group(1) not in versions:
            versions.append(m.group(1))
        if _COLLECT.match(line):
            collecting += 1
    installed = _INSTALLED.search(text)
    packages = installed.group(1).split() if installed else []
    litellm = [p.rsplit("-", 1)[1] for p in packages if p.lower().startswith("litellm-")]
    return {
        "litellm_versions": versions,
        "collecting_lines": collecting,
        "downloaded_mb": downloaded_mb,
        "packages": len(packages),
        "litellm_installed": litellm[0] if litellm else "-",
    }


def run(repo: Path, extra: str | None, log: Path | None) -> dict:
    target = f"{repo}[{extra}]" if extra else str(repo)
    with tempfile.TemporaryDirectory(prefix="bench-install-") as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        py = str(venv / "bin" / "python")
        subprocess.run([py, "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=True)
        cmd = [py, "-m", "pip", "install", "--no-cache-dir", "-e", target]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        seconds = time.perf_counter() - t0
    if log:
        log.write_text(proc.stdout)
    if proc.returncode != 0:
        sys.stdout.write(proc.stdout[-4000:])
        raise SystemExit(f"pip install failed with exit code {proc.returncode}")
    result = parse_log(proc.stdout)
    result.update(seconds=seconds, target=target)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", type=Path, default=REPO, help="checkout to install (default: this one)")
    ap.add_argument("--extra", default=None, help="optional-dependency group to add, e.g. dev")
    ap.add_argument("--log", type=Path, default=None, help="write pip's full output here")
    args = ap.parse_args()

    r = run(args.repo.resolve(), args.extra, args.log)
    fetched = ", ".join(r["litellm_versions"]) or "-"
    print(f"`pip install --no-cache-dir -e {r['target']}`\n")
    header = [
        "install time (s)",
        "downloaded (MB)",
        "litellm versions fetched",
        "litellm installed",
        "packages installed",
    ]
    row = [
        f"{r['seconds']:.1f}",
        f"{r['downloaded_mb']:.0f}",
        str(len(r["litellm_versions"])),
        r["litellm_installed"],
        str(r["packages"]),
    ]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    print("| " + " | ".join(row) + " |")
    print(f"\nlitellm versions fetched: {fetched}")
    print(f"'Collecting litellm' lines: {r['collecting_lines']}")


if __name__ == "__main__":
    main()
