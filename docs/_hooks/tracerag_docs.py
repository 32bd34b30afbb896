"""MkDocs hook for the tracerag site: the command-line reference (cli.md) is generated at build time from
the argparse parser that ``tracerag`` itself runs, so it cannot drift from the flags.

Each command is a section: its description, a one-line synopsis (a ``text`` block), and its flags as tables
(flag, default, meaning). Flags that only some programs read are grouped apart: a flag belongs to the
programs whose builder or workflow takes it (the way the command line hands flags to them,
``tracerag.cli.configuring.options_for``); one that a single program reads goes to that program's table,
one that several (not all) read to a table naming them on each row. A named argparse group that is not a
program (``models``, ``prompt LM``) keeps its own table.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from pathlib import Path

MARKER = "<!-- cli-reference -->"
_SKIPPED = (argparse._HelpAction, argparse._SubParsersAction)
_PLAIN_GROUPS = ("positional arguments", "options", "optional arguments")


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
    """One section per command, and per sub-command of ``home`` and ``store``, each with its flag tables."""
    import optimize

    return "\n".join(_sections("tracerag", optimize.build_parser(), level=2, inner_level=2))


def _subcommands(parser: argparse.ArgumentParser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


def _summaries(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each sub-command's one-line help, as ``tracerag --help`` lists it."""
    return {choice.dest: choice.help or "" for action in parser._actions
            if isinstance(action, argparse._SubParsersAction) for choice in action._choices_actions}


def _sections(title: str, parser: argparse.ArgumentParser, level: int, inner_level: int | None = None) -> list[str]:
    """The section of this command (a heading of ``level``), then those of its sub-commands (``inner_level``,
    else one deeper)."""
    lines = [f"{'#' * level} `{title}`", ""]
    if parser.description:
        lines += [_cell(parser.description), ""]
    lines += ["```text", _synopsis(title, parser), "```", ""]
    inner = _summaries(parser)
    if inner:
        lines += ["| command | what it does |", "|---|---|"]
        lines += [f"| [`{name}`](#{_slug(f'{title} {name}')}) | {_cell(text)} |" for name, text in inner.items()]
        lines.append("")
    for heading, rows in _groups(title, parser):
        if heading:
            lines += [heading, ""]
        lines += ["| flag | default | meaning |", "|---|---|---|", *rows, ""]
    sections = ["\n".join(lines)]
    for name, sub in _subcommands(parser):
        sections += _sections(f"{title} {name}", sub, level=inner_level or min(level + 1, 4))
    return sections


def _synopsis(title: str, parser: argparse.ArgumentParser) -> str:
    """The command, its positionals and its required flags; ``[flags]`` when it has others."""
    words = [title]
    optional = False
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if isinstance(action, argparse._SubParsersAction):
            words.append("COMMAND")
        elif not action.option_strings:
            words.append(action.dest.upper())  # as its table row names it
        elif action.required:
            words.append(_flag(action, action.option_strings[0]))
        else:
            optional = True
    return " ".join(words + (["[flags]"] if optional else []))


def _groups(title: str, parser: argparse.ArgumentParser) -> list[tuple[str, list[str]]]:
    """(heading, table rows) per group of this command's arguments: the shared ones, one table per program
    for the flags only it reads, the flags several programs read, then the named groups (models …)."""
    programs = _programs(parser)
    takers = _takers(title.split()[1], programs) if programs else {}
    shared, several, named = [], [], {}
    only: dict[str, list[str]] = {}
    for group in parser._action_groups:
        is_named = group.title not in _PLAIN_GROUPS and group.title not in programs
        for action in group._group_actions:
            if isinstance(action, _SKIPPED):
                continue
            readers = [] if is_named else _readers(action, group.title, programs, takers)
            if is_named:
                named.setdefault(f"**{group.title}**", []).append(_row(action))
            elif len(readers) == 1:
                only.setdefault(readers[0], []).append(_row(action, strip=programs))
            elif readers:
                several.append(_row(action, strip=programs, readers=readers))
            else:
                shared.append(_row(action))
    out = [("", shared)] if shared else []
    out += [(f"**Only `{name}` reads these:**", only[name]) for name in programs if name in only]
    out += [("**Read by some of the programs**, named on each row:", several)] if several else []
    return out + list(named.items())


def _programs(parser: argparse.ArgumentParser) -> tuple[str, ...]:
    """The programs a command may run: its ``program`` argument's choices; every program for a command with
    a group of one program's flags but no such argument (serve); none for a command that runs none."""
    from tracerag.registry import PROGRAMS

    for action in parser._actions:
        if action.dest == "program" and not action.option_strings and action.choices:
            return tuple(action.choices)
    if any(group.title in PROGRAMS for group in parser._action_groups):
        return tuple(PROGRAMS)
    return ()


def _takers(command: str, programs: tuple[str, ...]) -> dict[str, set[str]]:
    """Flag (its dest) -> the programs whose builder or ``command`` workflow take it, as the command line
    hands flags to them (a parameter of the flag's name, or of the name ``FLAG_OF`` maps it to)."""
    from tracerag.cli.configuring import FLAG_OF, NOT_FLAGS
    from tracerag.registry import PROGRAMS

    takers: dict[str, set[str]] = {}
    for name in programs:
        entry = PROGRAMS[name]
        for function in (entry.build, getattr(entry, command, None)):
            if function is None:
                continue
            for param in inspect.signature(function).parameters:
                if param not in NOT_FLAGS:
                    takers.setdefault(FLAG_OF.get(param, param), set()).add(name)
                    takers.setdefault(param, set()).add(name)
    return takers


def _readers(action: argparse.Action, group: str, programs: tuple[str, ...],
             takers: dict[str, set[str]]) -> list[str]:
    """The programs this flag belongs to, in the command's order; empty when every program of the command
    reads it (a required flag, or one the command itself reads). They are the programs whose builder or
    workflow takes it; for a flag none takes here, the programs its help starts with ("rag: …"), else the
    program its group is named after."""
    if action.required or not programs:
        return []
    found = takers.get(action.dest, set()) & set(programs)
    if not found:
        said = re.match(r"^((?:\w+(?:, | and )?)+?)(?: only)?: ", action.help or "")
        found = set(re.split(r", | and ", said.group(1))) & set(programs) if said else set()
        found = found or ({group} & set(programs))
    return [] if len(found) == len(programs) else [name for name in programs if name in found]


def _row(action: argparse.Action, strip: tuple[str, ...] = (), readers: list[str] | None = None) -> str:
    """One table row; ``strip``: drop a leading "rag:" / "agent only:" the heading (or ``readers``) says."""
    if action.option_strings:
        flags = ", ".join(f"`{_flag(action, option)}`" for option in action.option_strings)
    else:
        flags = f"`{action.dest.upper()}`"
    meaning = _meaning(action, strip)
    if readers:
        meaning = ", ".join(f"`{name}`" for name in readers) + ": " + meaning
    return f"| {flags} | {_default(action)} | {meaning} |"


def _flag(action: argparse.Action, option: str) -> str:
    if action.nargs == 0:
        return option
    metavar = action.metavar or action.dest.upper()
    return f"{option} {metavar}"


def _default(action: argparse.Action) -> str:
    if action.required or (not action.option_strings and action.nargs is None):
        return "required"
    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._StoreConstAction)):
        return "off"
    if action.default in (None, [], argparse.SUPPRESS):
        return "–"
    return f"`{action.default}`"


def _meaning(action: argparse.Action, strip: tuple[str, ...] = ()) -> str:
    text = ""
    if action.help and action.help != argparse.SUPPRESS:
        text = argparse.HelpFormatter("tracerag")._expand_help(action)
    if strip:  # "experience, rag: retrieval rounds …" -> "retrieval rounds …"
        names = "|".join(map(re.escape, strip))
        text = re.sub(rf"^(?:(?:{names})(?:, | and )?)+(?: only)?: ", "", text)
    text = _cell(text)
    if action.choices and not isinstance(action.choices, dict):
        choices = ", ".join(f"`{choice}`" for choice in action.choices)
        return f"{text} (one of {choices})" if text else f"one of {choices}"
    return text


# What a help text names that is typed as is: a flag (--lm) or an environment variable (TRACERAG_LM).
_TYPED = re.compile(r"(?<![\w`-])(--[a-z][\w-]*|[A-Z][A-Z0-9]*_[A-Z0-9_]+)(?![\w`])")


def _cell(text: str) -> str:
    """Text for a Markdown table cell: one line, pipes escaped, angle brackets as text, flags and variables as
    code (kept whole: a table never breaks an identifier)."""
    text = " ".join(text.split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")
    return _TYPED.sub(r"`\1`", text.replace("*", "\\*"))


def _slug(title: str) -> str:
    from markdown.extensions.toc import slugify

    return slugify(title, "-")
