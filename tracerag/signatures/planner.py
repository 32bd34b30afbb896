"""A plan as data: the shape TraceablePlanner writes and the planner dataset's gold plans are read into."""

from __future__ import annotations

from pydantic import BaseModel, Field, model_validator


class PlanStep(BaseModel):
    text: str = Field(min_length=1, description="one action, citing ids inline as [id]")
    cites: list[str] = Field(default_factory=list, description="ids of the bullets/templates this step follows")

    @model_validator(mode="before")
    @classmethod
    def _bare_text(cls, data):
        """Models often write a step as a bare string; that is a step without a cites list, not an error."""
        return {"text": data} if isinstance(data, str) else data


class Plan(BaseModel):
    objective: str
    materials: list[str] = Field(default_factory=list)
    steps: list[PlanStep] = Field(min_length=1)
    safety_notes: list[str] = Field(default_factory=list)
    expected_outcome: str = ""
