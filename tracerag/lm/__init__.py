"""Everything that bounds an LM call, in one place, below the programs and the settings.

- ``policy``: the process's LM call policy (timeout, retries, breaker, fault budget), set by ``configure``;
- ``transport`` and ``bounded_lm``: the wire under every LM tracerag builds (a deadline per attempt, a cap on
  the reply's bytes, capped retry waits) and ``make_lm``, which builds one;
- ``calls``: one call's settings and account (which LM, the timeout it is given, its async path, its charge);
- ``breaker``: stop calling an endpoint that keeps failing, and probe it again;
- ``fault_budget``: what failing calls may cost one run (an evaluation, a compile, a served request);
- ``failures``: a failure said in one line, chosen by its type, and one warning per kind;
- ``reply_limits``: the caps a reply's fields are held to;
- ``meter``: what a stretch of a program cost (calls, models, tokens, time);
- ``local_model``: a GGUF model run in-process by llama.cpp (``llamacpp/...``), bounded like a remote one;
- ``typed_decoding``: a signature's typed outputs as the JSON schema a reply is decoded against;
- ``optimizer_calls``: the optimizers' own LM calls during compile, bounded and counted.

The programs' guarded stages (``programs.guarded_step.Stages``) apply all of it to each LM stage.
"""

from ..lazy_exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    ".policy": ("LMPolicy", "policy", "set_policy"),
    ".bounded_lm": ("BoundedLM", "make_lm"),
    ".breaker": ("BREAKER",),
    ".failures": ("failure_line", "reset_lm_guard", "warning_summary"),
    ".fault_budget": ("FaultBudget", "lm_fault_budget"),
    ".reply_limits": ("ReplyRejected",),
    ".meter": ("LMMeter",),
    ".local_model": ("LocalLM",),
    ".typed_decoding": ("TypedJSONAdapter",),
})
