"""Signature of TraceablePlanner: requirements + playbook bullets + reference templates -> a structured plan
that says, inline and in lists, which bullets and templates it drew on."""

from __future__ import annotations

import dspy

from ..signatures.planner import Plan


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
