"""What ``pred.hint`` says: why a program's answer is empty, partial or not to be trusted as it stands, and what
the caller should do. Every program's prediction carries one (None: nothing to say), and a bulk plan of
CommandRetrieval carries its own (``BulkPlan.hint``: ``need_clarification``, ``too_many_targets``,
``no_target``). A ``Hint`` is a ``str``: it compares equal to its value and is written as it in JSON.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["MEANING", "Hint"]


class Hint(StrEnum):
    LM_FAILED = "lm_failed"
    EMPTY_INPUT = "empty_input"
    NO_LM = "no_lm"
    LM_OVERRULED = "lm_overruled"
    NO_INTENT = "no_intent"
    TOO_LONG = "too_long"
    UNKNOWN_SCOPE = "unknown_scope"
    WITHHELD = "withheld"
    NO_MATCH = "no_match"
    NEED_CLARIFICATION = "need_clarification"
    TOO_MANY_TARGETS = "too_many_targets"
    NO_TARGET = "no_target"
    NOTHING_RELEVANT = "nothing_relevant"
    NOT_GROUNDED = "not_grounded"
    REGENERATED = "regenerated"

    def __repr__(self) -> str:  # in a message, as the value the caller sees in JSON: 'too_long'
        return repr(self.value)


MEANING: dict[Hint, str] = {
    Hint.LM_FAILED: "an LM stage failed or its reply was unusable; that stage took its no-LM result "
                    "(``lm_fallbacks`` names the stages, ``lm_errors`` what went wrong)",
    Hint.EMPTY_INPUT: "the input says nothing (empty, blanks, punctuation): no LM call was made",
    Hint.NO_LM: "no LM is configured: the program's no-LM result (RAG: extractive; planner: no plan; agent: "
                "the tools' results without an answer)",
    Hint.LM_OVERRULED: "commands: the LM's parse disagreed with what the utterance supports and was overruled "
                       "(``lm_overruled`` names the checks, ``lm_parse`` keeps the LM's parse)",
    Hint.NO_INTENT: "commands: not a request to act now (a question, a statement, a negation, chit-chat): nothing "
                    "to execute",
    Hint.TOO_LONG: "commands: longer than an utterance can be; not searched",
    Hint.UNKNOWN_SCOPE: "commands: a place the home does not have (``unresolved`` names it): ask the user",
    Hint.WITHHELD: "commands: every command reached is held back (``withheld`` says why each: sensitive and not "
                   "asked for, one of several devices, a value of the wrong kind)",
    Hint.NO_MATCH: "commands: no device command fits the utterance",
    Hint.NEED_CLARIFICATION: "commands: several readings fit (the bulk plan's ``options``): ask the user which",
    Hint.TOO_MANY_TARGETS: "commands: the plan reaches more devices than a plan may; narrow it",
    Hint.NO_TARGET: "commands: no device in scope can do what was asked",
    Hint.NOTHING_RELEVANT: "rag: no passage was graded relevant; the answer says more context is needed",
    Hint.NOT_GROUNDED: "rag: the answer could not be verified against the passages, even regenerated",
    Hint.REGENERATED: "rag: the first answer was not grounded; this one, regenerated, is",
}
