"""Screenshots for docs/screenshots/: the HTML evaluation report (its top, and its rows with the misses'
blocks open) and three pages of the documentation site (the command-line reference, a page with a wide
table, a page with long code lines), taken in headless Chromium.

    python benchmarks/screenshots.py                     # writes docs/screenshots/*.png
    python benchmarks/screenshots.py --out /tmp/shots --open-misses 3 --keep /tmp/shots-work

It builds the site (``mkdocs build --strict``) and runs one small evaluation on the bundled data with no LM
(``tracerag evaluate commands --dataset smarthome --split all --html``), then draws the report again with the
first ``--open-misses`` misses open. Needs Chromium (Debian: ``apt-get install chromium``) and a CJK font for
the Chinese utterances (``fonts-wqy-microhei``); ``pngquant``, when installed, shrinks the PNGs (palette,
quality 70-90). Not part of the test run: CI installs no browser.

Headless Chromium draws a page at its top whatever its ``#fragment`` says, so a shot of a part further
down loads the page in a full-window frame of a one-line page, which scrolls to the fragment.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDTH = 1280

# name -> (page, fragment, window height): the site's pages relative to the built site's root
DOCS_SHOTS = {
    "docs-cli.png": ("cli/index.html", "tracerag-evaluate", 2000),
    "docs-wide-table.png": ("reference/models/index.html", "", 1100),
    "docs-long-code.png": ("reference/serving/index.html", "", 1100),
}
# shots that keep the scrollbars, which show that the long code lines scroll inside their block
SCROLLBARS = ("docs-long-code.png",)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"), help="where the PNGs go")
    parser.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser")
                        or "chromium", help="the browser binary (default: chromium on PATH)")
    parser.add_argument("--open-misses", type=int, default=3, help="misses whose block is open (default 3)")
    parser.add_argument("--keep", help="keep the built site and the report here (default: a temporary directory)")
    args = parser.parse_args(argv)
    if shutil.which(args.chromium) is None:
        sys.exit(f"error: no browser {args.chromium!r}: install Chromium (apt-get install chromium) or pass --chromium")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="tracerag-shots-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        site, report = build_site(work), evaluation_report(work, args.open_misses)
        shots = {"report-top.png": (report.as_uri(), "", 1500),
                 "report-misses.png": (report.as_uri(), "rows", 1600)}
        shots |= {name: ((site / page).as_uri(), fragment, height)
                  for name, (page, fragment, height) in DOCS_SHOTS.items()}
        for name, (url, fragment, height) in shots.items():
            screenshot(args.chromium, url, fragment, out / name, height, work, scrollbars=name in SCROLLBARS)
        shrink(sorted(out / name for name in shots))
        for name in shots:
            print(f"{out / name}: {(out / name).stat().st_size // 1024} KB")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def _env() -> dict[str, str]:
    """This tree first on the path, no LM (whatever the shell sets), no network for LiteLLM's price list."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("TRACERAG_LM", "TRACERAG_API_BASE", "TRACERAG_API_KEY")}
    return {**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True", "NO_MKDOCS_2_WARNING": "1"}


def build_site(work: Path) -> Path:
    site = work / "site"
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(site)],
                   cwd=ROOT, env=_env(), check=True)
    return site


def evaluation_report(work: Path, open_misses: int) -> Path:
    """The bundled smart-home queries scored with no LM, drawn with the first ``open_misses`` misses open."""
    page = work / "report.html"
    run = subprocess.run([sys.executable, str(ROOT / "optimize.py"), "evaluate", "commands", "--dataset", "smarthome",
                          "--split", "all", "--html", str(page)], cwd=work, env=_env(), capture_output=True, text=True)
    if run.returncode:
        sys.exit(f"error: the evaluation failed ({run.returncode}):\n{run.stderr[-2000:]}")
    sys.path.insert(0, str(ROOT))
    from tracerag.report_html import write_html_report

    report = json.loads(page.with_suffix(".json").read_text(encoding="utf-8"))
    return write_html_report(report, page, open_misses=open_misses)


def screenshot(chromium: str, url: str, fragment: str, png: Path, height: int, work: Path, *,
               scrollbars: bool = False) -> None:
    if fragment:  # headless Chromium shoots a page at its top: a frame scrolls to the fragment instead
        frame = work / f"frame-{png.stem}.html"
        frame.write_text(f'<!DOCTYPE html><html><body style="margin:0"><iframe src="{url}#{fragment}" '
                         'style="border:0;width:100%;height:100vh"></iframe></body></html>', encoding="utf-8")
        url = frame.as_uri()
    png.unlink(missing_ok=True)
    flags = [] if scrollbars else ["--hide-scrollbars"]
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", *flags, "--virtual-time-budget=8000",
                    f"--window-size={WIDTH},{height}", f"--screenshot={png}", url],
                   check=True, capture_output=True, timeout=120)
    if not png.is_file():
        sys.exit(f"error: {chromium} wrote no screenshot of {url}")


def shrink(pngs: list[Path]) -> None:
    """Palette PNGs with pngquant when it is installed (a screenshot's few colours lose nothing visible)."""
    if shutil.which("pngquant") is None:
        print("pngquant not found: the PNGs are as Chromium wrote them", file=sys.stderr)
        return
    subprocess.run(["pngquant", "--force", "--skip-if-larger", "--quality", "70-90", "--strip", "--ext", ".png",
                    *map(str, pngs)], check=False)


if __name__ == "__main__":
    sys.exit(main())
