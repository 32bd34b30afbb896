"""CommandRetrieval as one package: which device and which command an utterance asks for.

- ``command_retrieval``: the ``dspy.Module``; ``answering``: the pipeline it runs, and ``RuleCommandRetrieval``,
  which runs it on the rule parse without DSPy (a run without an LM); ``rule_parser``: its parse without an LM;
  ``signatures``: its LM stages; ``metrics``: recall, bulk precision and the parse-checked compile metric;
- ``building``, ``workflow`` (examples, evaluate, run, compile, index, tune), ``evaluation``, ``compiling``,
  ``tuning``, ``artifact`` (what a saved one records and its rebuild) and ``spec`` (its registry entry).

The home model and the readers it resolves an utterance with are ``tracerag.home_commands``, below.
"""

from ..lazy_exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    ".command_retrieval": ("CommandRetrieval", "build_indexes",),
    ".answering": ("RuleCommandRetrieval",),
    ".building": ("build_commands",),
    ".rule_parser": ("parse_without_lm",)
})
