"""Whether a command can take the value said, and what it is sent: ``check_value(said, spec)``.

The command's range comes from its spec, or ``DEFAULT_RANGES`` where the spec gives none or one bound. A
value is converted between scales of one family (°C/°F, A/mA, a percent to a few unitless steps), and
refused, with a one-line reason naming the range, whatever the command cannot take. It is never clamped,
truncated or rounded into range: 0.5 % rounded is 0, off, which nobody said.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .devices import CommandSpec
from .numerals import number_text
from .values import SaidValue

__all__ = ["DEFAULT_RANGES", "DEFAULT_RANGES_BY_CATEGORY", "CommandRange", "check_value", "command_range",
           "unit_family"]

DEFAULT_RANGES: dict[str, tuple[float, float, str | None]] = {
    # Where a spec gives no range (or one bound), these bound what is sent; a numeric command with neither is
    # refused. Conservative on purpose: the usual range of the capability, never the widest a device might take.
    "switchLevel": (0, 100, "%"),
    "windowShadeLevel": (0, 100, "%"),
    "windowShadeTiltLevel": (0, 100, "%"),
    "audioVolume": (0, 100, "%"),
    "fanSpeedPercent": (0, 100, "%"),
    "statelessSwitchLevelStep": (-100, 100, "%"),  # a step up or down
    "statelessAudioVolumeStep": (-100, 100, "%"),
    "statelessColorTemperatureStep.stepColorTemperatureByPercent": (-100, 100, "%"),
    "fanSpeed": (0, 10, None),  # unitless steps; SmartThings fans use 0..4
    "thermostatCoolingSetpoint": (5, 35, "C"),  # 41..95 °F on a command in °F
    "thermostatHeatingSetpoint": (5, 35, "C"),
    "thermostatSetpoint": (5, 35, "C"),
    "ovenSetpoint": (0, 300, "C"),  # 32..572 °F
    "colorTemperature": (1000, 10000, "K"),
    "colorControl.setHue": (0, 100, "%"),  # SmartThings hue is a percent of the wheel
    "colorControl.setSaturation": (0, 100, "%"),
    "tvChannel": (1, 9999, None),
    "evseChargingSession.setMaxCurrent": (6, 80, "A"),  # 6000..80000 on a command in mA
}

# A capability's usual range on one kind of device: a water heater's heating setpoint is no room's
DEFAULT_RANGES_BY_CATEGORY: dict[tuple[str, str], tuple[float, float, str | None]] = {
    ("WaterHeater", "thermostatHeatingSetpoint"): (35, 75, "C"),  # 95..167 °F
}

_SPEC_UNIT = {"%": "percent", "percent": "percent", "c": "celsius", "°c": "celsius", "℃": "celsius",
              "celsius": "celsius", "f": "fahrenheit", "°f": "fahrenheit", "℉": "fahrenheit",
              "fahrenheit": "fahrenheit", "k": "kelvin", "kelvin": "kelvin", "ma": "milliampere",
              "milliampere": "milliampere", "a": "ampere", "ampere": "ampere"}
_TEMPERATURE = ("celsius", "fahrenheit")
_SYMBOL = {"percent": "%", "celsius": "°C", "fahrenheit": "°F", "kelvin": "K", "milliampere": "mA", "ampere": "A",
           "degrees": "degrees"}


@dataclass(frozen=True)
class CommandRange:
    """The values a numeric command takes: low..high in one unit family (None: unitless), and where it comes
    from, for the messages that name it."""

    low: float
    high: float
    unit: str | None
    source: str

    def __str__(self) -> str:
        symbol = _SYMBOL.get(self.unit or "", self.unit)
        shown = f"{number_text(self.low)}..{number_text(self.high)}"
        return shown + ("" if not symbol else symbol if symbol == "%" else f" {symbol}")


def unit_family(unit: object) -> str | None:
    """The family of a spec's unit ("C" -> celsius, "mA" -> milliampere), or None for none or an unknown one."""
    if not isinstance(unit, str) or not unit.strip():
        return None
    return _SPEC_UNIT.get(unit.strip().lower(), unit.strip())


def _bound(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _default(spec: CommandSpec, category: str | None = None) -> tuple[str, tuple[float, float, str | None]] | None:
    capability, command = spec.capability, spec.command
    keys = [f"{capability}.{command}", capability]
    if "." in capability:  # a namespaced capability, samsungce.ovenSetpoint
        base = capability.rsplit(".", 1)[1]
        keys += [f"{base}.{command}", base]
    by_kind = next(((f"{key} of a {category}", DEFAULT_RANGES_BY_CATEGORY[(category, key)]) for key in keys
                    if (category, key) in DEFAULT_RANGES_BY_CATEGORY), None)
    return by_kind or next(((k, DEFAULT_RANGES[k]) for k in keys if k in DEFAULT_RANGES), None)


def _scale_bound(value: float, source: str | None, target: str | None) -> float | None:
    """A default bound in the command's unit: 5 °C is 41 °F, 6 A is 6000 mA; None across families."""
    if source == target or target is None:
        return value
    if (source, target) == ("celsius", "fahrenheit"):
        return round(value * 9 / 5 + 32, 6)
    if (source, target) == ("fahrenheit", "celsius"):
        return round((value - 32) * 5 / 9, 6)
    if (source, target) == ("ampere", "milliampere"):
        return value * 1000
    if (source, target) == ("milliampere", "ampere"):
        return value / 1000
    return None


def command_range(spec: CommandSpec, scale: str | None = None, category: str | None = None) -> CommandRange | None:
    """The command's range: its spec's value_range, filled from ``DEFAULT_RANGES`` where the spec gives no
    range or one bound (a percent command without one is 0..100); None when nothing bounds it. ``scale``: the
    home's temperature scale (``Home.temperature_scale``), the unit of a temperature whose spec states none;
    ``category``: the device's, for a range usual on that kind (``DEFAULT_RANGES_BY_CATEGORY``)."""
    bounds = dict(spec.value_range or ())
    low, high, unit = _bound(bounds.get("min")), _bound(bounds.get("max")), unit_family(bounds.get("unit"))
    if low is not None and high is not None:
        return CommandRange(low, high, unit, "the command's range") if low <= high else None
    gives = "no range" if low is None and high is None else "one bound"
    default = _default(spec, category)
    if default is not None:
        key, (d_low, d_high, d_unit) = default
        d_family = unit_family(d_unit)
        unit = unit or (scale if d_family in _TEMPERATURE and scale in _TEMPERATURE else d_family)
        d_low, d_high = _scale_bound(float(d_low), d_family, unit), _scale_bound(float(d_high), d_family, unit)
        if d_low is not None and d_high is not None:
            low, high = (d_low if low is None else low), (d_high if high is None else high)
            return CommandRange(low, high, unit, f"the default for {key}: the spec gives {gives}") \
                if low <= high else None
    if unit == "percent":
        low, high = (0.0 if low is None else low), (100.0 if high is None else high)
        return CommandRange(low, high, unit, f"a percent's range: the spec gives {gives}") if low <= high else None
    return None


def _listed_numbers(spec: CommandSpec) -> list[float] | None:
    """The numbers a command lists, None when its list is not all numbers."""
    numbers = []
    for option in spec.value_list:
        try:
            number = float(option.value)
        except (TypeError, ValueError):
            return None
        if not math.isfinite(number):
            return None
        numbers.append(number)
    return numbers


def _converted(said: SaidValue, number: float, rng: CommandRange, whole: bool) -> float | str:
    """The number in the command's unit, or why it cannot be (another family, or a percent of steps that are
    too many to be shares). A change converts as a difference: 2 °C more is 3.6 °F more."""
    to, unit = rng.unit, said.unit
    change = said.relative != 0
    if unit is None or unit == to or unit == "degrees" and to in ("celsius", "fahrenheit"):
        return number
    if (unit, to) in (("celsius", "fahrenheit"), ("fahrenheit", "celsius")):
        offset = 0 if change else 32
        value = number / 5 * 9 + offset if to == "fahrenheit" else (number - offset) / 9 * 5
        if not math.isfinite(value):
            return f"takes values in {_SYMBOL[to]} ({rng}); {_with_unit(number, unit)} is too large to convert"
        return float(math.floor(value + 0.5)) if whole else round(value, 1)  # to the command's precision
    if (unit, to) == ("ampere", "milliampere"):
        return round(number * 1000, 6)  # an infinity here is refused as outside the range
    if (unit, to) == ("milliampere", "ampere"):
        return round(number / 1000, 9)
    if unit == "percent" and to is None:
        return _percent_to_steps(number, rng, change)
    said_as = f"{number_text(number)} {_SYMBOL.get(unit, unit)}".replace(" %", "%")
    takes = f"values in {_SYMBOL.get(to, to)}" if to else "unitless values"
    return f"takes {takes} ({rng}); the utterance says {said_as}"


def _percent_to_steps(percent: float, rng: CommandRange, change: bool) -> float | str:
    """A percent as one of a few unitless steps, as Home Assistant's ``percentage_to_ranged_value`` maps a fan's
    speed: steps first..high with first = max(low, 1) (0 is off), value = ceil(steps * percent / 100) + first - 1,
    so 84 % of 0..3 is ceil(2.52) = 3 and any percent above 0 is at least the first step. A unitless 0..100 is
    a percent already. A change of p % is ceil(p % of the width) steps."""
    low, high = rng.low, rng.high
    if low == 0 and high == 100:
        return percent
    if low < 0 or not (low.is_integer() and high.is_integer()) or high - low > 100:
        return (f"takes unitless values ({rng}) that are no shares of a whole; the utterance says "
                f"{number_text(percent)}%")
    if not 0 <= percent <= 100:
        return f"takes steps {rng}; {number_text(percent)}% is no share of them"
    if change:
        return float(math.ceil(round((high - low) * percent / 100, 9)))
    if percent == 0:
        return 0.0
    first = max(low, 1.0)
    return float(math.ceil(round((high - first + 1) * percent / 100, 9)) + first - 1)


def _with_unit(number: float, unit: str | None) -> str:
    """26 °C, 50%, 3."""
    symbol = _SYMBOL.get(unit or "", unit or "")
    return number_text(number) + ("" if not symbol else symbol if symbol == "%" else f" {symbol}")


def _sent(value: float, whole: bool) -> float | int:
    return int(value) if whole or value.is_integer() else value


def check_value(said: SaidValue, spec: CommandSpec, scale: str | None = None,
                category: str | None = None) -> tuple[float | int | None, str]:
    """(the number to send, "") when the command can take the value as said, else (None, one-line reason naming
    the command's range and unit). Never clamps, truncates or rounds a value into range. ``scale``, ``category``:
    as for ``command_range``."""
    numeric = spec.type in ("integer", "number") or spec.type is None and spec.value_range is not None
    listed = _listed_numbers(spec) if spec.value_list else None
    if not numeric and not listed:
        return None, f"{spec.id} takes {'a ' + spec.type if spec.type else 'no'} value, not a number"
    if spec.value_list and listed is None:
        options = ", ".join(o.value for o in spec.value_list[:8])
        return None, f"{spec.id} takes one of: {options}; not a number"
    rng = command_range(spec, scale, category)
    if rng is None and listed:
        rng = CommandRange(min(listed), max(listed), None, "the values it lists")
    if rng is None:
        return None, (f"{spec.id}: its spec bounds no range and {spec.capability} has no default one; no value is "
                      f"safe to send it unbounded")
    whole = spec.type == "integer"
    where = f"{rng} ({rng.source})"
    if said.extreme in ("max", "min"):
        value = rng.high if said.extreme == "max" else rng.low
        if whole and not value.is_integer():
            return None, f"{spec.id} takes whole numbers; its {said.extreme} {number_text(value)} is not one"
        return _sent(value, whole), ""
    number = said.number
    if not isinstance(number, int | float) or isinstance(number, bool) or not math.isfinite(number):
        return None, f"{spec.id}: {number!r} is not a finite number; it takes {where}"
    number = float(number)
    value = _converted(said, number, rng, whole)
    if isinstance(value, str):
        return None, f"{spec.id} {value}"
    shown = _with_unit(number, said.unit)
    if value != number or said.unit not in (None, "degrees", rng.unit):
        shown += f" ({_with_unit(value, rng.unit)})"
    if said.relative:
        if abs(value) > rng.high - rng.low:
            return None, f"{spec.id}: a change of {shown} is more than the whole of {where}"
        value = said.relative * value
    elif not rng.low <= value <= rng.high:
        return None, f"{spec.id}: {shown} is outside {where}"
    if whole and not value.is_integer():
        return None, (f"{spec.id} takes whole numbers ({rng}); the utterance sets {number_text(value)}, and rounding "
                      f"it would send a value nobody said")
    if listed and not said.relative and value not in listed:
        return None, f"{spec.id} takes one of {', '.join(number_text(v) for v in listed[:8])}; not {number_text(value)}"
    return _sent(value, whole), ""
