"""Signatures of ExperienceRetrieval: rewrite the task into search queries, distil experience from the
retrieved traces, judge whether it is enough; and the evaluation's judge of usefulness."""

from __future__ import annotations

import re

import dspy

from ..lm.typed_decoding import Bound, bound


class RewriteQuery(dspy.Signature):
    """Turn a new agent task into search queries for a bank of previously solved tasks.

    The bank indexes each solved task as "Image description: ...", the question, "Task: <task type>"
    and the tools used. Write 1-3 short English queries that name the kind of task and the strategy
    or tools it likely needs (not the specific entities or numbers, which will differ), and describe
    what the images show in one sentence (empty when there are none). When search_context is given,
    earlier experience fell short: aim the queries at the gap it names.
    """

    question: str = dspy.InputField()
    images: list[dspy.Image] = dspy.InputField(desc="the task's input images; may be empty")
    known_caption: str = dspy.InputField(desc="a description of the images given with the task; may be empty")
    search_context: str = dspy.InputField(desc="experience and gap from the previous round; empty in round 1")
    text_queries: list[str] = dspy.OutputField(desc="1-3 search queries")
    image_caption: str = dspy.OutputField(desc="one-sentence description of the images, or empty")


class SummarizeExperience(dspy.Signature):
    """Distil actionable experience for a new task from how similar tasks were solved.

    Write 2-5 sentences an agent can act on: which tools to use in which order, which checks and
    pitfalls mattered. Generalise; do not copy the old tasks' answers, entities or numbers. Only use
    candidates that really are similar, and list the task_ids you drew on.
    """

    question: str = dspy.InputField()
    image_caption: str = dspy.InputField(desc="description of the task's images; may be empty")
    candidates: str = dspy.InputField(desc="similar solved tasks, each headed by [task_id], with tools and reasoning")
    experience: str = dspy.OutputField(desc="2-5 sentences of actionable experience, or empty if nothing fits")
    task_ids: list[str] = dspy.OutputField(desc="task_ids of the candidates the experience draws on")


class CheckSufficiency(dspy.Signature):
    """Decide whether the experience gives an agent enough strategy to solve the task.

    sufficient is true when it covers the tools and the key checks the task needs; otherwise name
    the missing piece in gap, as something one could search for.
    """

    question: str = dspy.InputField()
    experience: str = dspy.InputField()
    sufficient: bool = dspy.OutputField()
    gap: str = dspy.OutputField(desc="what is missing; empty when sufficient")


class JudgeExperience(dspy.Signature):
    """Rate how useful the experience would be to an agent about to solve the task, from 0 (irrelevant
    or misleading) to 1 (names the right strategy, tools and pitfalls), and say why in one sentence."""

    question: str = dspy.InputField()
    reference_strategy: str = dspy.InputField(desc="how a similar task was actually solved")
    experience: str = dspy.InputField()
    usefulness: float = dspy.OutputField(desc="a number from 0 to 1")
    reason: str = dspy.OutputField()


def candidate_ids(candidates: str | None) -> list[str] | None:
    """The task ids heading the candidates' blocks (``[task_id] question``): the only ids the summary may draw on
    (a small model otherwise writes ids of its own: SmolLM2-135M wrote "10000000000000000000000000000000")."""
    return re.findall(r"^\[([^\]\n]+)\]", candidates, flags=re.MULTILINE) if isinstance(candidates, str) else None


# What a model decoding against the schema may write (``lm.typed_decoding``): what each field's description asks
# for, within the reply's token cap (a free string is where a small model loops until the cap, and a reply cut
# there does not parse).
bound(RewriteQuery, text_queries=Bound(max_items=3, max_length=200), image_caption=Bound(max_length=300))
bound(SummarizeExperience, experience=Bound(max_length=1000),
      task_ids=Bound(max_items=5, max_length=80, choices=lambda inputs: candidate_ids(inputs.get("candidates"))))
bound(CheckSufficiency, gap=Bound(max_length=300))
bound(JudgeExperience, reason=Bound(max_length=300))
