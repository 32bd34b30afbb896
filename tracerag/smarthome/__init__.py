"""Real homes: pull a home from SmartThings or Home Assistant, and execute CommandRetrieval's plans.

- ``smartthings.pull_smartthings`` / ``homeassistant.pull_homeassistant`` write a home directory
  (devices.json, rooms.json, spec.jsonl, source.json) that ``Home.load`` reads;
- ``execute.execute`` sends a prediction's calls (dry-run by default) and reports per device;
  ``execute.retry`` re-sends the failed ones;
- ``cli`` adds ``tracerag home pull …`` and ``tracerag run commands --execute``.

Names are imported on first use, so importing the package (or its CLI module) costs nothing.
"""

import importlib

_SOURCES = {
    ".smartthings": ("pull_smartthings", "SmartThingsError"),
    ".homeassistant": ("pull_homeassistant", "HomeAssistantError"),
    ".execute": ("execute", "retry", "ExecutionReport", "ExecutionError", "SmartThingsTarget",
                 "HomeAssistantTarget", "target_for_home"),
}
_MODULE_OF = {name: module for module, names in _SOURCES.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULE_OF[name], __name__), name)
    globals()[name] = value
    return value
