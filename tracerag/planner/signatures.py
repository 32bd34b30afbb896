"""Signature of TraceablePlanner: requirements + playbook bullets + reference templates -> a structured plan
that says, inline and in lists, which bullets and templates it drew on."""

from __future__ import annotations

import dspy

from ..lm.typed_decoding import Bound, bound
from ..signatures.planner import Plan, PlanStep


class GeneratePlan(dspy.Signature):
    """Write a concrete, ordered plan that meets the requirements, grounded in the playbook bullets and the
    reference templates.

    Every bullet and template is headed by its id in square brackets. Use the ones that apply to these
    requirements and ignore the rest (a bullet with many harmful votes has misled before). Cite an id
    inline as [id] right where the plan follows it (in a step, material or safety note) and list it in
    that step's cites. Cite only ids shown in the input; never invent one. List every bullet id you used
    in bullets_used and every template id you used in templates_used.
    """

    requirements: str = dspy.InputField()
    bullets: str = dspy.InputField(desc="playbook bullets, one a line: [id] helpful=N harmful=N :: text")
    templates: str = dspy.InputField(desc="reference templates, each headed by [id] and its title; may be empty")
    plan: Plan = dspy.OutputField()
    bullets_used: list[str] = dspy.OutputField(desc="ids of the bullets the plan follows")
    templates_used: list[str] = dspy.OutputField(desc="ids of the templates the plan follows")


# What a model decoding against the schema may write (``lm.typed_decoding``): a plan of a few short steps that
# fits the reply's token cap (a free string or list is where a small model loops until the cap, and a reply cut
# there does not parse); ids are short ("mat-00001").
_ID = 40
bound(Plan, objective=Bound(max_length=200), materials=Bound(max_items=8, max_length=80),
      steps=Bound(max_items=8), safety_notes=Bound(max_items=4, max_length=150),
      expected_outcome=Bound(max_length=200))
bound(PlanStep, text=Bound(max_length=200), cites=Bound(max_items=3, max_length=_ID))
bound(GeneratePlan, bullets_used=Bound(max_items=10, max_length=_ID), templates_used=Bound(max_items=4, max_length=_ID))
