"""Typed results of the command index: ranked candidates and bulk plans.

Every score is explainable: a candidate carries the per-channel scores its fused score came from,
and a bulk plan carries the options, their normalised probabilities and the confidence figures that
decided between executing and asking the user.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

BulkHint = Literal["need_clarification", "too_many_targets", "no_target"]


class Candidate(BaseModel):
    device_id: str
    command_id: str
    label: str
    room: str
    category: str
    score: float
    channels: dict[str, float] = Field(
        description="vector, lexical, argument, subject, within_device, name, room: the fused score's parts")
    sensitive: bool = Field(False, description="a sensitive command (unlock, open a door, disarm, open a valve, "
                                               "heat): executing it needs an explicit confirmation")
    asked: bool | None = Field(None, description="for a sensitive command, whether the utterance asks for it on "
                                                 "this device (one not asked for is never offered: see withheld); "
                                                 "None for any other command")


class Withheld(BaseModel):
    """A (device, command) the search would have ranked but the safety rules held back, and why."""

    device_id: str
    command_id: str
    label: str
    reason: str


class CapabilityOption(BaseModel):
    """One command bulk mode could run, with the evidence an arbiter or a user needs."""

    command_id: str
    description: str
    p: float = Field(description="normalised share of the aggregated evidence")
    evidence: float = Field(0.0, description="aggregated score before normalisation")
    supported_devices: int
    sample_devices: list[str]
    sample_rooms: list[str]


class BulkGroup(BaseModel):
    """Targets that accept the same call (same command, same argument shape)."""

    command_id: str
    signature: str
    device_ids: list[str]


class BulkPlan(BaseModel):
    command_id: str | None = None
    category: str | None = None
    hint: BulkHint | None = None
    reason: str = ""
    question: str = Field("", description="the arbiter's clarifying question, when it asked one")
    options: list[CapabilityOption] = Field(default_factory=list)
    top1_ratio: float = 0.0
    margin: float = 0.0
    coverage: float = 0.0
    groups: list[BulkGroup] = Field(default_factory=list)
    batches: list[list[str]] = Field(default_factory=list)

    @property
    def targets(self) -> list[tuple[str, str]]:
        """(device_id, command_id) pairs to execute; empty unless the plan is executable."""
        if self.hint is not None:
            return []
        return [(d, g.command_id) for g in self.groups for d in g.device_ids]
