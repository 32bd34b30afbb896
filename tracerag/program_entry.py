"""What a program package hands the registry: one ``ProgramEntry``, everything a front end needs to build,
evaluate, compile, run, save and load that program, so none of them holds a branch per program.

It lives below the program packages (each makes its own entry) and the registry lists them; it imports
nothing, so listing the programs loads none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["ProgramCommand", "ProgramEntry"]


@dataclass(frozen=True)
class ProgramCommand:
    """A subcommand of the command line that only some programs have (``tracerag tune commands``).

    The command line adds it as ``tracerag NAME PROGRAM`` followed by the flags ``arguments`` adds and the model
    flags, sets the LM and embedder up from them, and calls ``run`` as it calls a workflow: the program's
    ``build`` first, then each keyword option from the flag of its name. ``run`` prints what it has to say and
    returns the exit code. Programs offering the same NAME share one subcommand: its help is the first's, and
    they add its flags with the same ``arguments``."""

    name: str
    help: str
    arguments: Callable[[Any], None]  # (argparse parser) -> adds its flags, after the program argument
    run: Callable[..., int]  # (build, **options named after the flags) -> exit code
    writes_at_end: bool = True  # its files are written whole once its work is done: Ctrl-C leaves none half-written


@dataclass(frozen=True)
class ProgramEntry:
    name: str  # what the command line, the service's --program and tracerag.build call it
    program_class: str  # the dspy.Module it builds (the artifact's "program")
    summary: str  # one line: what it answers (the MCP tool's description, /v1/programs)
    build: Callable[..., Any]  # keyword options only: its package's builder
    dataset: str  # the bundled dataset its evaluation and compile read by default
    metric: str  # what its compile optimises (recorded in the artifact)
    report_columns: tuple[str, ...]  # the metrics its evaluation report shows beside recall
    # the workflows: keyword options named after the command line's flags
    examples: Callable[..., list]  # (dataset, split) -> its labelled dspy Examples
    evaluate: Callable[..., Any]  # (build, dataset=, split=, ...) -> Outcome holding the report
    compile: Callable[..., Any]  # (build, dataset=, optimizer=, options=, ...) -> Compiled
    # its artifact (None: it cannot be saved): what beyond the prompts rebuilds it, and the rebuild
    describe: Callable[..., dict] | None = None  # (program, where) -> the sidecar's fields, "program" and "config"
    rebuild: Callable[..., Any] | None = None  # (path, meta, *, embedder, home, store, tools) -> prompts not set
    run: Callable[..., Any] | None = None  # (build, query=, ...) -> Outcome holding printable text; None: no run
    # how the service offers it (None: not served): a ``service_models.ProgramService``, imported when asked for
    service: Callable[[], Any] | None = None
    # how its --store is filled when empty (None: it runs on no store): a ``store_cli.StoreFill``
    store_fill: Any | None = None
    # subcommands of its own beyond evaluate, run and compile (``tracerag build commands``)
    cli_commands: tuple[ProgramCommand, ...] = ()
    # built on its defaults, it embeds texts: the front ends start loading the local embedder's weights first,
    # in the background, while they import the rest
    embeds: bool = False
