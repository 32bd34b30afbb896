"""The subcommands only some programs have (``tracerag build commands``, ``tracerag tune commands``): each
program's entry declares them (``ProgramEntry.cli_commands``), and the command line adds and runs them as a loop
over the entries, so it names no program here."""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import InvalidType
from ..program_entry import ProgramCommand, ProgramEntry
from .flags import add_model_flags


def program_commands(entries: Mapping[str, ProgramEntry]) -> dict[str, dict[str, ProgramCommand]]:
    """{subcommand: {program: its declaration}}, in the entries' order."""
    found: dict[str, dict[str, ProgramCommand]] = {}
    for name, entry in entries.items():
        for command in entry.cli_commands:
            found.setdefault(command.name, {})[name] = command
    return found


def add_program_commands(sub, entries: Mapping[str, ProgramEntry]) -> None:
    """Add each program's own subcommands to the top-level subparsers: the program (one of those offering it),
    its flags, then the model flags (each runs a program or embeds). Programs sharing a subcommand share its
    flags (one parser: a flag one of them requires would be required of all), so they must add them with the
    same function (``InvalidType`` otherwise)."""
    for verb, offered in program_commands(entries).items():
        adders = {command.arguments for command in offered.values()}
        if len(adders) > 1:
            raise InvalidType(f"{' and '.join(offered)} both offer `{verb}` with flags of their own; programs "
                              f"sharing a subcommand declare its flags with one function")
        first = next(iter(offered.values()))
        parser = sub.add_parser(verb, help=first.help)
        parser.add_argument("program", choices=tuple(offered))
        first.arguments(parser)
        add_model_flags(parser)


def cmd_program_command(args, entries: Mapping[str, ProgramEntry]) -> int:
    """Run ``tracerag VERB PROGRAM``: the LM and embedder set up from the flags, then the program's ``run`` with
    its build and the flags it takes by name."""
    from .configuring import builder, configure, options_for

    command = program_commands(entries)[args.verb][args.program]
    configure(args)
    return command.run(builder(args.program, args), **options_for(command.run, args))


def writes_at_end(entries: Mapping[str, ProgramEntry]) -> frozenset[str]:
    """The program subcommands whose files are written whole at their end (Ctrl-C: nothing was written)."""
    return frozenset(verb for verb, offered in program_commands(entries).items()
                     if all(command.writes_at_end for command in offered.values()))
