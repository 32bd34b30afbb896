"""Signatures of CommandRetrieval: parse an utterance, and arbitrate a low-confidence bulk command."""

from __future__ import annotations

import dspy
from pydantic import BaseModel, Field

from ..lm.typed_decoding import Bound, bound
from ..signatures.query_ir import QueryIR


class ParseCommand(dspy.Signature):
    """Read a smart-home utterance and fill the QueryIR.

    - operation: what is to be done, chosen only from the allowed values: on, off, set_level (brightness or a
      percentage), level_up / level_down (brighter, dimmer), set_color, set_color_temperature, warmer / cooler,
      open, close, stop, set_position, set_tilt, lock, unlock, arm, disarm, play, pause, next, previous,
      set_volume, volume_up / volume_down, mute, unmute, set_temperature, temperature_up / temperature_down,
      set_mode, set_fan_speed, start (a cleaner, a washer, charging), return_home ...; other for a command none
      of these is; null when the utterance asks for nothing. "turn the lights down" is level_down, "unlock the
      front door" unlock, "打开窗帘" open, "set the AC to cool" set_mode.
    - action: the user's intent as a short Chinese phrase with no Latin letters (打开, 关闭, 调到制冷模式,
      调高音量), even when the utterance is English; empty when there is no intent.
    - type_hint: the device category the user means, chosen only from the allowed values; Unknown when
      the user names a device by a custom name or the kind of device is not clear.
    - name_hint: the device name words the user said, else empty.
    - scope_include / scope_exclude: room names, spelled as in `rooms`, the user limited to or excluded.
      A single device the user excepts goes to scope_exclude by its name as said ("except the desk lamp":
      desk lamp; "书房台灯除外": 书房台灯).
    - quantifier: all for every device of a kind (所有/全部/都/all/every), except when some are excluded
      (除了…/except), any when any one device will do, else one.
    """

    utterance: str = dspy.InputField()
    rooms: list[str] = dspy.InputField(desc="room names of this home")
    ir: QueryIR = dspy.OutputField()


class CommandOption(BaseModel):
    """A command bulk mode could run, as shown to the arbiter."""

    index: int
    command_id: str
    description: str
    supported_devices: int
    sample_devices: list[str]
    sample_rooms: list[str]


class ArbitrationDecision(BaseModel):
    choice_index: int | None = Field(None, description="0-based index of the option the user means")
    question: str | None = Field(None, description="a short clarifying question when no option fits")


class ArbitrateCapability(dspy.Signature):
    """Pick the one command the user wants run on every target device, from a closed list of options.

    Answer with choice_index (0-based) when one option clearly fits the utterance; otherwise ask one
    short, open clarifying question in the user's language. Never invent a command.
    """

    utterance: str = dspy.InputField()
    options: list[CommandOption] = dspy.InputField()
    decision: ArbitrationDecision = dspy.OutputField()


# What a model decoding against the schema may write (``lm.typed_decoding``): short phrases (the bundled labels'
# longest action has 9 characters, name 16, room 14), a few rooms, and only this home's rooms to limit to; an
# option that exists, or a question of a sentence or two.
_PHRASE = 40
bound(QueryIR, action=Bound(max_length=_PHRASE), name_hint=Bound(max_length=_PHRASE),
      scope_include=Bound(max_items=6, max_length=_PHRASE, choices=lambda inputs: inputs.get("rooms")),
      scope_exclude=Bound(max_items=6, max_length=_PHRASE))
bound(ArbitrationDecision, question=Bound(max_length=300),
      choice_index=Bound(choices=lambda inputs: list(range(len(inputs.get("options") or [])))))
