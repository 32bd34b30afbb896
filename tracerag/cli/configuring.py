"""What a command sets up from its flags: logging, the LM and the embedder (``configure``), and the keyword
options a builder or a workflow takes (``options_for``: each parameter from the flag of its name)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from ..errors import InvalidValue

# Builder options read from flags of another name
FLAG_OF = {"artifact": "program_file", "homes": "dataset", "tool_embedder": "embedder"}
# Supplied by the command itself, never read from a flag: the embedder is configured (``configure``)
NOT_FLAGS = ("embedder", "build", "lm", "options")


def configure(args, programs: Sequence[str] | None = None):
    """Logging, the LM and the embedder as the flags (else the environment, else the defaults) say; the
    resolved :class:`tracerag.config.Settings`. An LM without its API key ends the command (see require_key).

    ``programs`` (default: the command's ``program``) that embed on the local embedder have its weights loading
    in the background from here on, while DSPy is imported and their data read (see ``load_embedder_early``).
    Without an LM, DSPy is not imported here: a command's LM comes from its flags or the environment only, so
    nothing the adapter does can matter, and a run without an LM may answer without DSPy at all."""
    import logging

    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    # a command names its whole setup: the embedder from its flag, else the environment, else the default
    from ..config import Settings, configure

    program = getattr(args, "program", None)
    load_embedder_early(args, programs if programs is not None else [program] if isinstance(program, str) else [])

    if getattr(args, "no_cache", False):
        import dspy

        dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    settings = configure(lm=args.lm, embedder=Settings.resolve(embedder=args.embedder).embedder,
                         api_base=args.api_base, api_key=args.api_key, embed_model=args.embed_model,
                         cache_dir=args.cache_dir, timeout=args.lm_timeout, retries=args.lm_retries,
                         fault_budget=getattr(args, "lm_fault_budget", None), import_dspy=False)
    return require_key(args, settings)


def load_embedder_early(args, programs: Sequence[str]):
    """Start loading the local embedder's weights in a background thread when one of ``programs`` embeds with it
    (``ProgramEntry.embeds``); the thread, or None. The embedder ``configure`` makes shares what it loads."""
    from ..config import Settings
    from ..registry import PROGRAMS

    settings = Settings.resolve(embedder=args.embedder, cache_dir=getattr(args, "cache_dir", None))
    if settings.embedder != "local" or not any(PROGRAMS[name].embeds for name in programs if name in PROGRAMS):
        return None
    from ..embedding.embedders import LocalUSEEmbedder

    return LocalUSEEmbedder(prepared=settings.cache_dir).load_in_background()


def require_key(args, settings):
    """An LM that needs an API key and has none ends the command with one line naming the variable to set
    (``ValueError``: exit 2), or with ``--allow-no-lm`` runs the no-LM path after one warning line."""
    import dataclasses

    if not settings.lm:
        return settings
    import dspy

    from ..config import missing_key

    names = missing_key(dspy.settings.lm)
    if not names:
        return settings
    line = f"the LM {settings.lm} has no API key: set {' or '.join(names)}, or pass --api-key"
    if not getattr(args, "allow_no_lm", False):
        raise InvalidValue(f"{line} (--allow-no-lm runs without the LM)")
    print(f"warning: {line}; running without the LM (--allow-no-lm)", file=sys.stderr)
    dspy.configure(lm=None)
    return dataclasses.replace(settings, lm=None)


def options_for(function: Callable, args) -> dict:
    """The keyword options ``function`` (a builder or a workflow) takes from these flags, by name; a flag not
    given keeps the function's default."""
    import inspect

    options = {}
    for param in inspect.signature(function).parameters:
        if param in NOT_FLAGS:
            continue
        value = getattr(args, param, None)
        if value is None and param in FLAG_OF:
            value = getattr(args, FLAG_OF[param], None)
        if value is not None:
            options[param] = value
    return options


def builder(name: str, args) -> Callable:
    """``build(**given)``: the registry's program ``name`` for these flags, then ``given``."""
    from ..registry import build, entry

    flags = options_for(entry(name).build, args)
    return lambda **given: build(name, **{**flags, **given})


def optimizer_options(args) -> dict:
    """What every compile takes from the flags: GEPA's budget, threads, and the prompt LM (built like --lm,
    with the same timeout and retries, on the --lm endpoint unless --prompt-api-base names another)."""
    prompt_lm = None
    if args.prompt_lm:
        from ..config import Settings
        from ..lm.bounded_lm import make_lm

        lm_settings = Settings.resolve(api_base=args.api_base, api_key=args.api_key)
        own_base = args.prompt_api_base is not None
        prompt_lm = make_lm(args.prompt_lm, args.prompt_api_base if own_base else lm_settings.api_base,
                            args.prompt_api_key or (None if own_base else lm_settings.api_key))
    return {"max_metric_calls": args.max_metric_calls, "num_threads": args.num_threads, "prompt_lm": prompt_lm}
