"""tracerag command line: build, run, evaluate, tune and compile retrieval programs.

    tracerag evaluate commands --dataset smarthome --ir none --split test
    tracerag run commands --dataset smarthome/home_small --query "打开客厅的灯"
    tracerag tune commands --dataset smarthome --out out/commands.json
    tracerag compile commands --dataset smarthome --lm openai/gpt-4o-mini --optimizer bootstrap --out out/c.json
    tracerag build-bank --traces runs/ --bank bank/ [--append]
    tracerag evaluate experience --dataset experience --k 5 --split test
    tracerag run experience --bank bank/ --query "What did this receipt cost with tax?"
    tracerag ingest --docs docs.jsonl --bank chunks/
    tracerag evaluate rag --dataset pubmedqa --split test
    tracerag run agent --question "Does aspirin prevent stroke?" --lm openai/gpt-4o-mini
    tracerag serve --program commands=out/commands.json --program rag --port 8700
    tracerag evaluate agent --dataset pubmedqa --split test --limit 50 --jsonl out/agent.jsonl --traces out/runs

LM flags fall back to TRACERAG_LM / TRACERAG_API_BASE / TRACERAG_API_KEY; without an LM every
program runs its documented no-LM path.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys

import tracerag  # cheap: its names load on first use, so --help never imports DSPy or the embedder
from tracerag.cli.banks import add_bank_commands, cmd_build_bank, cmd_ingest
from tracerag.cli.configuring import builder, options_for
from tracerag.cli.configuring import configure as _configure
from tracerag.cli.configuring import optimizer_options as _optimizer_options
from tracerag.cli.flags import (
    add_agent_flags,
    add_experience_flags,
    add_max_skipped,
    add_model_flags,
    add_threads_flag,
)
from tracerag.cli.program_commands import add_program_commands, cmd_program_command, program_commands, writes_at_end
from tracerag.cli.reports import finish_report
from tracerag.cli.serve import add_serve_command, cmd_serve

# its former name here, for callers of optimize._without_missing_images
from tracerag.experience.workflow import without_missing_images as _without_missing_images  # noqa: F401
from tracerag.registry import PROGRAMS as REGISTRY
from tracerag.smarthome.cli import add_execute_arguments, add_home_commands
from tracerag.store_cli import add_store_commands  # argparse only


class _Parser(argparse.ArgumentParser):
    """argparse, except that a mistyped command or program name is one line with the closest match
    instead of the whole usage."""

    def error(self, message: str):
        choice = re.match(r"argument (\S+): invalid choice: '(.*?)' \(choose from (.*)\)$", message)
        if choice is None:
            super().error(message)
        name, given, names = choice.group(1), choice.group(2), re.findall(r"'([^']*)'", choice.group(3))
        what = ("program" if name == "program" else f"{name} value" if name.startswith("-") else "command")
        close = difflib.get_close_matches(given, names, n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"choose from {', '.join(names)}"
        self.exit(2, f"{self.prog}: error: unknown {what} {given!r}; {hint}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tracerag", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {tracerag.__version__}")
    sub = parser.add_subparsers(dest="verb", required=True)
    programs = tuple(REGISTRY)  # the registry's names; run offers those with a run workflow
    runnable = tuple(name for name, entry in REGISTRY.items() if entry.run is not None)

    ev = sub.add_parser("evaluate", help="score a program on a labelled dataset",
                        description="Score a program on a labelled dataset. Every metric the report prints is "
                        "explained in docs/reports.md.")
    ev.add_argument("program", choices=programs)
    ev.add_argument("--dataset", required=True, help="dataset directory or bundled name (e.g. smarthome)")
    ev.add_argument("--ir", choices=("none", "gold", "lm"), help="how queries are parsed (default: lm with --lm, "
                    "else none)")
    ev.add_argument("--split", default="test", choices=("train", "dev", "test", "all"))
    ev.add_argument("--k", type=int, help="cut-off for the metrics (default: 10 for commands, 5 for experience)")
    ev.add_argument("--program-file", help="a compiled/tuned artifact to evaluate instead of the defaults")
    ev.add_argument("--out", help="write the JSON report here")
    ev.add_argument("--html", metavar="FILE", help="also write a self-contained HTML page: summary, breakdowns, "
                    "every row with misses first (the JSON goes beside it unless --out says where)")
    ev.add_argument("--limit", type=int, default=0, help="agent only: score only the first N questions (0 = all)")
    add_max_skipped(ev, 0.0)
    add_threads_flag(ev, "examples scored at once (rows stay in the dataset's order; default 1)")
    add_experience_flags(ev)
    add_agent_flags(ev)
    add_model_flags(ev)

    run = sub.add_parser("run", help="answer one query and print the result")
    run.add_argument("program", choices=runnable)
    run.add_argument("--dataset", help="commands: home directory or bundled name; experience: traces dataset "
                     "(used when --bank is not given)")
    run.add_argument("--query", "--question", dest="query", required=True,
                     help="the utterance (commands), the new task's question (experience), the question (rag, agent)")
    run.add_argument("--caption", help="experience: a description of the task's images")
    run.add_argument("--sub-task", help="experience: the task type, e.g. 'read a value from a bar chart'")
    run.add_argument("--image", action="append", default=[], help="experience: an image path or URL (repeatable)")
    run.add_argument("--home", help="home name when the dataset holds several")
    run.add_argument("--program-file", help="a compiled/tuned artifact to run instead of the defaults")
    run.add_argument("--arbitration", action="store_true", help="let the LM settle ambiguous bulk commands")
    add_experience_flags(run)
    add_agent_flags(run)
    add_model_flags(run)
    add_execute_arguments(run)

    add_store_commands(sub)
    add_home_commands(sub)
    add_bank_commands(sub)
    add_program_commands(sub, REGISTRY)  # the subcommands of one program's own (build, tune: commands)

    comp = sub.add_parser("compile", help="optimise the program's prompts with a DSPy optimizer")
    comp.add_argument("program", choices=programs)
    comp.add_argument("--dataset", required=True, help="dataset directory or bundled name (its train and dev "
                      "splits)")
    comp.add_argument("--optimizer", choices=("bootstrap", "mipro", "gepa"), default="bootstrap")
    comp.add_argument("--program-file", help="start from this artifact (e.g. the output of tune)")
    comp.add_argument("--max-train", type=int, default=0, help="use at most this many train examples (0 = all)")
    comp.add_argument("--max-metric-calls", type=int, help="gepa: rollout budget (default: its light preset; "
                      "at least 2 x dev examples + 6, one iteration)")
    add_threads_flag(comp, "examples the dev scoring, mipro and gepa run at once (default 1)")
    comp.add_argument("--out", required=True)
    g = comp.add_argument_group("prompt LM (mipro, gepa)")
    g.add_argument("--prompt-lm", help="the model that proposes mipro's instructions and gepa's reflections, "
                   "e.g. a stronger one than --lm, which still runs the program (default: --lm)")
    g.add_argument("--prompt-api-base", help="its endpoint (default: the --lm endpoint)")
    g.add_argument("--prompt-api-key", help="its key (default: --lm's key on the --lm endpoint, else the "
                   "provider's environment variable)")
    add_experience_flags(comp)
    add_agent_flags(comp)
    add_model_flags(comp)

    add_serve_command(sub, programs)
    return parser


def _run_workflow(args, hook, **supplied):
    """Call ``hook``, a workflow of the program ``args.program``, with the flags named as its parameters, and
    those of ``supplied`` (what no flag gives: whether an LM is set, the compile options) it takes."""
    import inspect

    params = inspect.signature(hook).parameters
    given = {key: value for key, value in supplied.items() if key in params}
    return hook(builder(args.program, args), **{**options_for(hook, args), **given})


def _show(outcome) -> int:
    """Print what a workflow left to print after its result (stdout), then its notes (stderr)."""
    for line in outcome.lines:
        print(line)
    for note in outcome.notes:
        print(note, file=sys.stderr)
    return outcome.code


def cmd_evaluate(args) -> int:
    if args.html:
        from tracerag.report_html import evaluate_to_html

        return evaluate_to_html(args, cmd_evaluate)
    import inspect

    entry = REGISTRY[args.program]
    if args.limit and "limit" not in inspect.signature(entry.evaluate).parameters:
        takers = " ".join(name for name, e in REGISTRY.items()
                          if "limit" in inspect.signature(e.evaluate).parameters)
        print(f"error: --limit applies to evaluate {takers} only; {args.program} scores the whole --split",
              file=sys.stderr)
        return 2
    settings = _configure(args)
    with _lm_answers() as answers:
        outcome = _run_workflow(args, entry.evaluate, lm=bool(settings.lm))
    outcome.shown["split"] = args.split
    outcome.shown["lm"] = str(settings.lm) if settings.lm else None  # the model string; None: no LM
    if answers.never_answered:
        outcome.shown["lm_never_answered"] = True  # the report is written, marked
    finish_report(outcome.shown, args.out, entry.report_columns)
    return _never_answered(args, answers) or _show(outcome)


def cmd_run(args) -> int:
    settings = _configure(args)
    with _lm_answers(watch=bool(settings.lm)) as answers:
        outcome = _run_workflow(args, REGISTRY[args.program].run)
    print(outcome.shown)
    return _never_answered(args, answers) or _show(outcome)


def _lm_answers(watch: bool = True):
    """Watch whether the LM answers during a run (``LMAnswers``; imported here: --help loads no DSPy). Without an
    LM (``watch=False``) there is nothing to watch, and a run without one need not import DSPy for it."""
    if not watch:
        from contextlib import nullcontext
        from types import SimpleNamespace

        return nullcontext(SimpleNamespace(never_answered=False, answered=0))
    from tracerag.lm.meter import LMAnswers

    return LMAnswers().watch()


def _never_answered(args, answers) -> int:
    """1 after one line when the run's LM never answered (without ``--allow-no-lm``), else 0."""
    if not answers.never_answered or args.allow_no_lm:
        return 0
    print(f"error: {answers.line()}", file=sys.stderr)
    return 1


def cmd_compile(args) -> int:
    from tracerag.compiling import preflight

    # the flags first, before building anything; the GEPA budget is checked once the dev set is read
    preflight(args.optimizer, prompt_lm=args.prompt_lm)
    settings = _configure(args)
    if not settings.lm:
        print("error: compile needs an LM (--lm or TRACERAG_LM)", file=sys.stderr)
        return 2
    entry = REGISTRY[args.program]
    with _lm_answers() as answers:
        compiled = _run_workflow(args, entry.compile, options=_optimizer_options(args))
    if _never_answered(args, answers):
        print(f"nothing written to {args.out}: its demos would all come from the no-LM path", file=sys.stderr)
        return 1
    compiled.scores["lm_answered_calls"] = answers.answered  # the artifact records that the LM took part
    tracerag.save(compiled.program, args.out, dataset=str(args.dataset), metric=entry.metric, scores=compiled.scores)
    print(json.dumps(compiled.scores, indent=1))
    store = f" (store: {compiled.store_uri})" if compiled.store_uri else ""
    print(f"compiled program written to {args.out}{store}")
    return 0


def cmd_program_own(args) -> int:
    """A subcommand of one program's own (``tracerag tune commands``), as its entry declares it."""
    return cmd_program_command(args, REGISTRY)


# the commands whose files (report, artifact, bank) are written whole once their work is done: an interrupted
# one leaves what was there before
_WRITES_AT_END = frozenset({"evaluate", "run", "compile", "build-bank", "ingest"}) | writes_at_end(REGISTRY)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler = {"evaluate": cmd_evaluate, "run": cmd_run, "compile": cmd_compile, "build-bank": cmd_build_bank,
               "ingest": cmd_ingest, "serve": cmd_serve, "home": _run_home, "store": _run_store,
               **dict.fromkeys(program_commands(REGISTRY), cmd_program_own)}[args.verb]
    try:
        return handler(args)
    except KeyboardInterrupt:  # one line, not a traceback; what a command writes, it writes whole at its end
        written = "nothing was written" if args.verb in _WRITES_AT_END else "stopped where it was"
        print(f"interrupted (Ctrl-C) during {args.verb}: {written}", file=sys.stderr)
        return 130
    except Exception as exc:
        if not isinstance(exc, _user_errors()):
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        failures = sys.modules.get("tracerag.lm.failures")  # no LM step failed if it was never imported
        for line in failures.warning_summary() if failures is not None else ():
            print(f"WARNING {line}", file=sys.stderr)


def _run_home(args) -> int:
    from tracerag.smarthome.cli import run_home_command

    return run_home_command(args)


def _run_store(args) -> int:
    from tracerag.store_cli import cmd_store

    return cmd_store(args)


def _user_errors() -> tuple[type[Exception], ...]:
    """The errors that end a command with one ``error:`` line (exit 2) instead of a traceback: tracerag's own
    (``TraceragError``: data it cannot read, a store or service that failed) and bad values or paths."""
    from tracerag.errors import TraceragError

    return FileNotFoundError, ValueError, KeyError, TraceragError


if __name__ == "__main__":
    sys.exit(main())
