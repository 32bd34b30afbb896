"""MkDocs hook for the tracerag site: the command-line reference (cli.md) is generated at build time from
the argparse parser that ``tracerag`` itself runs, so it cannot drift from the flags."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

MARKER = "<!-- cli-reference -->"


def on_config(config):
    root = Path(config.config_file_path).resolve().parent
    if str(root) not in sys.path:  # optimize.py, the command line, sits at the repository's root
        sys.path.insert(0, str(root))
    return config


def on_page_markdown(markdown, page, config, files):
    if page.file.src_uri != "cli.md" or MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, cli_reference())


def cli_reference() -> str:
    """One section per command (and per sub-command of ``home`` and ``store``): its ``--help`` text."""
    import optimize

    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal; the page has one width
    try:
        parser = optimize.build_parser()
        parts = [_section("tracerag", parser, level=2)]
        for name, sub in _subcommands(parser):
            parts.append(_section(f"tracerag {name}", sub, level=2))
            for inner_name, inner in _subcommands(sub):
                parts.append(_section(f"tracerag {name} {inner_name}", inner, level=3))
        return "\n".join(parts)
    finally:
        if before is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = before


def _subcommands(parser: argparse.ArgumentParser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


def _section(title: str, parser: argparse.ArgumentParser, level: int) -> str:
    return f"{'#' * level} `{title}`\n\n```text\n{parser.format_help().rstrip()}\n```\n"
