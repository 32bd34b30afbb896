"""Typed DSPy signatures and their pydantic models. Declarations only: no logic beyond validation."""

from .command import ArbitrateCapability, ArbitrationDecision, CommandOption, ParseCommand
from .query_ir import DEVICE_CATEGORIES, UNKNOWN_CATEGORY, QueryIR

__all__ = ["ArbitrateCapability", "ArbitrationDecision", "CommandOption", "ParseCommand", "QueryIR",
           "DEVICE_CATEGORIES", "UNKNOWN_CATEGORY"]
