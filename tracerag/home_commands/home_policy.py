"""A home's own safety policy: ``policy.json`` beside ``devices.json`` (optional).

The built-in table of sensitive commands (``sensitive_commands.SENSITIVE_KINDS``: unlocking, opening doors,
disarming, opening valves, turning on ovens) covers what is dangerous in every home; a home adds what is
dangerous in it:

```json
{
  "sensitive_commands": ["main-switch-on"],
  "sensitive_devices": ["<deviceId of the space heater's plug>"],
  "never": ["<deviceId of the baby monitor>"],
  "no_confirmation": ["<deviceId of the garage door>"]
}
```

- ``sensitive_commands``: command ids that are sensitive on every device that has them;
- ``sensitive_devices``: devices every command of which is sensitive;
- ``never``: devices never to act on: never a candidate, never in a plan, never sent;
- ``no_confirmation``: devices whose sensitive commands execute without an explicit confirmation (they
  are still chosen only when the utterance asks for them).

Every key is optional. A key this reader does not know, or a device id the home does not have, is a
warning (counted, with the file and line), never a silent no-op; a value of the wrong type is an error
naming the file, line and field.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..data_files.read_report import FileProblem, read_regular

POLICY_FILE = "policy.json"
MAX_POLICY_BYTES = 1024 * 1024
_KEYS = ("sensitive_commands", "sensitive_devices", "never", "no_confirmation")


@dataclass(frozen=True)
class HomePolicy:
    """What a home's policy.json adds to the built-in safety table (empty when there is none)."""

    sensitive_commands: frozenset[str] = frozenset()
    sensitive_devices: frozenset[str] = frozenset()
    never: frozenset[str] = frozenset()
    no_confirmation: frozenset[str] = frozenset()
    warnings: tuple[str, ...] = field(default=(), compare=False)

    def to_dict(self) -> dict:
        return {key: sorted(getattr(self, key)) for key in _KEYS}


def load_policy(directory: str | Path, device_ids: set[str], error: type[Exception] = ValueError) -> HomePolicy:
    """The policy in ``directory/policy.json``; an empty one when the file does not exist."""
    path = Path(directory) / POLICY_FILE
    if not os.path.lexists(path):
        return HomePolicy()
    try:
        text = read_regular(path, MAX_POLICY_BYTES)
    except FileProblem as exc:
        raise error(str(exc)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{path}:{exc.lineno}: invalid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(data, dict):
        raise error(f"{path}:1: expected an object with {', '.join(_KEYS)}")
    warnings = [f"{path}:{_line_of(text, key)}: unknown key {key!r} ignored (known: {', '.join(_KEYS)})"
                for key in data if key not in _KEYS]
    values = {}
    for key in _KEYS:
        raw = data.get(key)
        if raw is None:
            values[key] = frozenset()
            continue
        if not isinstance(raw, list) or not all(isinstance(v, str) and v.strip() for v in raw):
            raise error(f"{path}:{_line_of(text, key)}: field {key!r}: expected a list of "
                        f"{'command ids' if key == 'sensitive_commands' else 'device ids'} (strings)")
        values[key] = frozenset(v.strip() for v in raw)
        if key != "sensitive_commands":
            warnings += [f"{path}:{_line_of(text, key)}: field {key!r}: {v!r} is no device of this home"
                         for v in sorted(values[key] - device_ids)]
    return HomePolicy(**values, warnings=tuple(warnings))


def _line_of(text: str, key: str) -> int:
    """The line the key is written on (1 when it cannot be told)."""
    at = text.find(json.dumps(key))
    return text.count("\n", 0, at) + 1 if at >= 0 else 1
