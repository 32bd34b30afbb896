"""Building CommandRetrieval: over the bundled homes or the user's, or from a compiled artifact."""

from __future__ import annotations

from pathlib import Path

from ..building import embedder_or_default


def build_commands(*, artifact: str | Path | None = None, homes: str | Path | None = None,
                   ir_source: str | None = None, arbitration: bool = False, embedder=None, plain: bool = False):
    """CommandRetrieval over ``homes`` (a bundled name such as ``smarthome``, a directory of homes or one
    home; default: the bundled ones), or from ``artifact`` (on the homes it was compiled on, or on ``homes``).
    ``ir_source`` defaults to the LM's parse when an LM is configured, else the rule parser's.

    Args:
        artifact: a compiled program (``tracerag compile commands``).
        homes: a bundled dataset name, a directory of homes, or one home directory.
        ir_source: how an utterance is parsed: ``lm``, ``none`` (the rule parser) or ``gold`` (the caller's).
        arbitration: ask the LM to choose among close capabilities of one device.
        embedder: the embedder (default: the configured one).
        plain: where no LM takes part (none configured, no ``artifact``, the rule parse), the program in plain
            Python: ``RuleCommandRetrieval``, the same answers as a ``CommandsResult``, without loading DSPy
            (what a command-line run without an LM answers with); otherwise ignored.

    Returns:
        The program, ready to call: ``program(query=..., home=...)``.
    """
    from ..config import configured_lm
    from ..datasets.smarthome import home_dirs, resolve_dataset

    ir_source = ir_source or ("lm" if configured_lm() is not None else "none")
    if plain and not artifact and ir_source == "none":
        from .answering import RuleCommandRetrieval, build_indexes

        return RuleCommandRetrieval(build_indexes(home_dirs(resolve_dataset(homes or "smarthome")),
                                                  embedder_or_default(embedder)))
    from ..artifacts import load_program
    from .artifact import rebuild
    from .command_retrieval import CommandRetrieval, build_indexes

    if artifact:
        program = load_program(artifact, "CommandRetrieval", rebuild, embedder=embedder,
                               home=resolve_dataset(homes) if homes else None)
        program.ir_source = ir_source
        return program
    homes_read = home_dirs(resolve_dataset(homes or "smarthome"))
    return CommandRetrieval(build_indexes(homes_read, embedder_or_default(embedder)), ir_source=ir_source,
                            arbitration=arbitration)
