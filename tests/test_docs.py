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


def _cli_reference() -> str:
    sys.path.insert(0, str(DOCS / "_hooks"))
    try:
        import tracerag_docs
    finally:
        sys.path.remove(str(DOCS / "_hooks"))
    return tracerag_docs.cli_reference()


def _commands(parser, title="tracerag"):
    """(title, parser) for every command and sub-command, at every depth."""
    import argparse

    yield title, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, f"{title} {name}")


def _section(reference: str, title: str) -> str:
    """The part of the reference under ``title``'s heading, up to the next heading."""
    start = re.search(rf"^#+ `{re.escape(title)}`\n", reference, re.M).end()
    following = re.search(r"^#+ ", reference[start:], re.M)
    return reference[start:start + following.start()] if following else reference[start:]


def test_the_cli_reference_names_every_flag_of_every_command():
    """Walks the parser: every command at every depth has its section, and its section names each of its
    flags (every spelling) and positionals, so the page cannot drift from the parser."""
    import argparse

    import optimize

    reference = _cli_reference()
    commands = list(_commands(optimize.build_parser()))
    assert len(commands) > 12 and "tracerag home pull smartthings" in dict(commands)
    for title, parser in commands:
        section = _section(reference, title)
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            names = action.option_strings or [action.dest.upper()]
            for name in names:
                assert re.search(rf"`{re.escape(name)}[ `]", section), f"{title}: {name} is not in its section"
    assert "`--html FILE`" in _section(reference, "tracerag evaluate")


def test_the_cli_reference_groups_one_programs_flags_under_it_and_has_no_shell_blocks():
    reference = _cli_reference()
    evaluate = _section(reference, "tracerag evaluate")
    agent = evaluate.split("Only `agent` reads these:**")[1].split("\n\n", 2)[1]   # the table after the heading
    for flag in ("--tool SPEC", "--pubmed PUBMED", "--max-tool-calls", "--limit LIMIT", "--jsonl JSONL"):
        assert f"`{flag}" in agent, flag
    assert "`--ir IR`" in evaluate.split("Only `commands` reads these:**")[1].split("Only")[0]
    assert "| `--lm LM` |" in evaluate.split("**models**")[1]              # the LM flags: their own group
    shared = evaluate.split("Only")[0]
    assert "`--dataset DATASET` | required |" in shared and "`--tool" not in shared
    assert re.findall(r"^```(\w*)", reference, re.M) and set(re.findall(r"^```(\w+)", reference, re.M)) == {"text"}
    assert "usage:" not in reference                               # tables, not argparse's help text


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
