"""The step policy of SearchAgent: one LM call per step, speaking the tag protocol of ``tools.reply_parsing``.

The docstring is the instruction an optimizer rewrites; the program sends the protocol's stop
sequences with every call, so a reply ends at its tool call and the runtime supplies the real output.
"""

from __future__ import annotations

import dspy

from ..lm.typed_decoding import Bound, bound


class AgentStep(dspy.Signature):
    """You answer research questions from the literature by calling search tools, one call at a time.

    Each reply: first your reasoning in <think>...</think>, then EITHER exactly one tool call, closed,
    and nothing after it:
    <call_tool name="pubmed_search" limit="5">3 to 6 keywords</call_tool>
    OR, once the evidence suffices or no calls are left, the final answer:
    <answer>... <cite id="PMID">a claim that snippet supports</cite> ...</answer>

    Rules: one call per reply; never write <tool_output> yourself, only the system provides it; cite
    only ids of snippets shown in a tool output (several ids: <cite ids="1,2">); use 3 to 6 search
    keywords, since longer queries find nothing; for a yes/no question start the answer with Yes, No
    or Maybe."""

    question: str = dspy.InputField()
    tools: str = dspy.InputField(desc="the tools you may call, with the calls you have left")
    trajectory: str = dspy.InputField(
        desc="your earlier replies and the tool outputs, oldest first; empty at the start")
    reply: str = dspy.OutputField(
        desc="<think>...</think> then one <call_tool ...>...</call_tool>, or the final <answer>...</answer>")


# What a model decoding against the schema may write (``lm.typed_decoding``): one step, within the reply's token
# cap (a free string is where a small model loops until the cap, and a reply cut there does not parse).
bound(AgentStep, reply=Bound(max_length=1000))
