"""The documentation site: every page is in the navigation, every internal link and anchor resolves, and
the site builds with ``mkdocs build --strict`` (which fails on a broken link; CI runs it as its own step)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if "_hooks" not in p.parts)


def nav_files(nav) -> list[str]:
    found = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        found += nav_files(value) if isinstance(value, list) else [value]
    return found


def anchors(page: Path) -> set[str]:
    from markdown.extensions.toc import slugify

    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {slugify(re.sub(r"[`*]", "", heading), "-") for heading in re.findall(r"^#+\s+(.+?)\s*$", text, re.M)}


def test_every_page_is_in_the_navigation_and_every_nav_entry_is_a_page():
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    listed = set(nav_files(config["nav"]))
    on_disk = {p.relative_to(DOCS).as_posix() for p in pages()}
    assert listed <= on_disk, f"in the nav but missing: {sorted(listed - on_disk)}"
    assert on_disk <= listed, f"pages not in the nav: {sorted(on_disk - listed)}"


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(DOCS).as_posix())
def test_every_internal_link_and_anchor_resolves(page):
    pytest.importorskip("markdown")
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):        # https:, mailto: (not checked offline)
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.is_file(), f"{page.name}: link to {target}: no such page"
        assert linked.is_relative_to(DOCS), f"{page.name}: link to {target} leaves docs/ (the site cannot serve it)"
        if anchor:
            assert anchor in anchors(linked), f"{page.name}: link to {target}: no such heading"


def test_the_cli_reference_lists_every_command():
    sys.path.insert(0, str(DOCS / "_hooks"))
    try:
        import tracerag_docs
    finally:
        sys.path.remove(str(DOCS / "_hooks"))
    reference = tracerag_docs.cli_reference()
    for command in ("evaluate", "run", "build-bank", "ingest", "build", "tune", "compile", "serve", "home pull",
                    "store copy"):
        assert f"`tracerag {command}`" in reference
    assert "--html FILE" in reference


@pytest.mark.slow
def test_the_site_builds_strict(tmp_path):
    pytest.importorskip("mkdocs")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert run.returncode == 0, run.stderr[-3000:]
    page = (tmp_path / "site" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "tracerag evaluate" in page


def test_the_hints_page_lists_every_hint_with_its_one_meaning():
    from tracerag.hints import MEANING, Hint

    page = (DOCS / "reference" / "hints.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `([a-z_]+)` \| (.+) \|$", page, re.M)
    assert [name for name, _ in listed] == [h.value for h in Hint]
    assert all(meaning == MEANING[Hint(name)].replace("``", "`") for name, meaning in listed)
