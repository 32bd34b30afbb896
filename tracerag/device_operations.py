"""The closed set of operations a smart-home utterance can ask for, shared by the parse and the command table.

``QueryIR.operation`` is one of these (a ``Literal``, so DSPy shows the LM the choices and validates its
answer, and compiled demos carry it); ``home_commands.operations`` maps each to the capability commands that
perform it. "other" is an operation outside the table (a vendor's command): the free-text action decides.
No imports: the signatures and the home model both stand on it.
"""

from __future__ import annotations

from typing import Literal

Operation = Literal[
    "on", "off", "toggle",
    "set_level", "level_up", "level_down",
    "set_color", "set_color_temperature", "warmer", "cooler",
    "open", "close", "stop", "set_position", "set_tilt",
    "lock", "unlock", "arm", "disarm",
    "play", "pause", "next", "previous",
    "set_volume", "volume_up", "volume_down", "mute", "unmute",
    "channel_up", "channel_down", "set_channel", "set_input",
    "set_temperature", "temperature_up", "temperature_down",
    "set_mode", "set_fan_speed", "fan_speed_up", "fan_speed_down", "set_current",
    "start", "return_home", "preset",
    "other",
]
OPERATIONS: tuple[str, ...] = Operation.__args__
OTHER = "other"
# Operations that change a value by an amount rather than set it ("调暗一点", "turn it up"), and the operation
# that sets the same value to a target: "turn the lights down to 30%" sets the level
RELATIVE_TO_SETTING = {"level_up": "set_level", "level_down": "set_level", "warmer": "set_color_temperature",
                       "cooler": "set_color_temperature", "volume_up": "set_volume", "volume_down": "set_volume",
                       "temperature_up": "set_temperature", "temperature_down": "set_temperature",
                       "fan_speed_up": "set_fan_speed", "fan_speed_down": "set_fan_speed"}
_ALIASES = {"turn_on": "on", "turn_off": "off", "switch_on": "on", "switch_off": "off", "dim": "level_down",
            "brighten": "level_up", "resume": "play", "unpause": "play", "next_track": "next",
            "previous_track": "previous", "set_brightness": "set_level", "set_colour": "set_color",
            "set_colour_temperature": "set_color_temperature", "set_temp": "set_temperature"}


def known_operation(value: object) -> str | None:
    """An operation of the closed set from what a parse wrote ("set level", "Set-Level", "ON", "turn_on"),
    else None (not given, or not one of them)."""
    if not isinstance(value, str):
        return None
    key = "_".join(value.strip().lower().replace("-", " ").split())
    key = _ALIASES.get(key, key)
    return key if key in OPERATIONS else None

# operations that undo each other: an LM's parse saying one where the words say the other is overruled
OPPOSITES = {frozenset(pair) for pair in (
    ("on", "off"), ("open", "close"), ("lock", "unlock"), ("arm", "disarm"), ("play", "pause"), ("mute", "unmute"),
    ("level_up", "level_down"), ("volume_up", "volume_down"), ("temperature_up", "temperature_down"),
    ("warmer", "cooler"), ("fan_speed_up", "fan_speed_down"), ("channel_up", "channel_down"), ("next", "previous"),
    ("start", "stop"), ("on", "close"), ("open", "off"), ("on", "lock"), ("unlock", "close"), ("unlock", "off"))}


def opposite(first: str | None, second: str | None) -> bool:
    """Whether two operations undo each other (turning on and off, locking and unlocking ...)."""
    return first is not None and second is not None and frozenset((first, second)) in OPPOSITES
