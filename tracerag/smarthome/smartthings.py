"""Pull a home from the SmartThings REST API into a home directory.

With a personal access token (env ``SMARTTHINGS_TOKEN``) and a location id:

- devices: ``GET /v1/devices?locationId=…``, following ``_links.next.href`` pages;
- rooms: ``GET /v1/locations/{id}/rooms``;
- every capability the devices' ``main`` components use: ``GET /v1/capabilities/{id}/{version}`` and its
  localized strings ``GET /v1/capabilities/{id}/{version}/i18n/{locale}`` (a capability without them
  keeps generated descriptions), turned into one spec.jsonl line per device profile with one
  ``main-<capability>-<command>`` entry per command.

devices.json and rooms.json are written in the GET response shapes (``{"items": [...]}``); a
hand-written spec.jsonl already in the output directory is merged (its descriptions win).

429 (Retry-After honoured) and 5xx are retried a bounded number of times within a per-request deadline;
a 401/403 is one line naming the endpoint and the token scope it needs.
"""

from __future__ import annotations

import logging
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

from ..errors import TraceragError
from .home_files import WriteSummary, write_home
from .rest import ApiError, RestClient

logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.smartthings.com"
TOKEN_ENV = "SMARTTHINGS_TOKEN"
MAX_PAGES = 1000  # of one paged listing; a loop in the server's links ends here
SKIPPED_CAPABILITIES = frozenset({"refresh", "healthCheck", "execute"})  # never a user's intent
SCOPES = {"devices": "r:devices:*", "locations": "r:locations:*", "commands": "x:devices:*"}
TOKENS_PAGE = "https://account.smartthings.com/tokens"


class SmartThingsError(TraceragError, RuntimeError):
    """A pull or a command that cannot go on; the message is one line."""


def scope_error(method: str, path: str, status: int, scope: str) -> SmartThingsError:
    what = "was rejected" if status == 401 else "lacks the scope"
    return SmartThingsError(f"SmartThings {method} {path} answered HTTP {status}: the token {what}"
                            f"{'' if status == 401 else ' ' + scope}; create a personal access token with "
                            f"{scope} at {TOKENS_PAGE} and set {TOKEN_ENV}")


class SmartThingsClient:
    """The read side of the SmartThings API a pull needs."""

    def __init__(self, token: str | None = None, base_url: str = DEFAULT_BASE_URL, **rest) -> None:
        token = token or os.environ.get(TOKEN_ENV)
        if not token:
            raise SmartThingsError(f"no SmartThings token: set {TOKEN_ENV} to a personal access token "
                                   f"({TOKENS_PAGE}) with scopes {SCOPES['devices']} {SCOPES['locations']}")
        self.rest = RestClient(base_url, token, **rest)

    def close(self) -> None:
        self.rest.close()

    def _get(self, path: str, scope: str | None, **kwargs):
        try:
            return self.rest.get(path, **kwargs)
        except ApiError as exc:
            if exc.status in (401, 403):
                raise scope_error("GET", path.split("?")[0], exc.status,
                                  scope or "(any scope)") from None
            raise SmartThingsError(f"SmartThings: {exc}") from None

    def paged(self, path: str, scope: str, params: dict | None = None) -> list[dict]:
        """Every item of a paged listing, following ``_links.next.href``."""
        items, seen = [], set()
        page = self._get(path, scope, params=params)
        for _ in range(MAX_PAGES):
            if not isinstance(page, dict) or not isinstance(page.get("items"), list):
                raise SmartThingsError(f"SmartThings GET {path}: expected {{\"items\": [...]}}, got "
                                       f"{type(page).__name__}")
            items.extend(page["items"])
            href = ((page.get("_links") or {}).get("next") or {}).get("href")
            if not href or href in seen:
                return items
            seen.add(href)
            page = self._get(href, scope)
        raise SmartThingsError(f"SmartThings GET {path}: more than {MAX_PAGES} pages")

    def devices(self, location_id: str) -> list[dict]:
        return self.paged("/v1/devices", SCOPES["devices"], {"locationId": location_id})

    def rooms(self, location_id: str) -> list[dict]:
        return self.paged(f"/v1/locations/{quote(location_id, safe='')}/rooms", SCOPES["locations"])

    def capability(self, capability_id: str, version: int) -> dict | None:
        """The capability definition, or None when the API does not know it (404)."""
        try:
            return self.rest.get(f"/v1/capabilities/{quote(capability_id, safe='')}/{int(version)}")
        except ApiError as exc:
            if exc.status == 404:
                return None
            if exc.status in (401, 403):
                raise scope_error("GET", f"/v1/capabilities/{capability_id}/{version}", exc.status,
                                  "(any scope)") from None
            raise SmartThingsError(f"SmartThings: {exc}") from None

    def capability_strings(self, capability_id: str, version: int, locale: str) -> dict | None:
        """The localized strings of a capability, or None when there are none for ``locale``."""
        try:
            return self.rest.get(f"/v1/capabilities/{quote(capability_id, safe='')}/{int(version)}/i18n/"
                                 f"{quote(locale, safe='')}")
        except ApiError as exc:
            if exc.status in (400, 403, 404):  # no strings for this capability or locale
                return None
            raise SmartThingsError(f"SmartThings: {exc}") from None


def pull_smartthings(location_id: str, out: str | Path, *, token: str | None = None,
                     base_url: str = DEFAULT_BASE_URL, locale: str = "en", workers: int = 4,
                     **rest) -> WriteSummary:
    """Fetch one location's devices, rooms and capability definitions and write them as a home."""
    client = SmartThingsClient(token, base_url, **rest)
    try:
        devices = client.devices(location_id)
        rooms = client.rooms(location_id)
        used = used_capabilities(devices)
        with ThreadPoolExecutor(max(1, workers)) as pool:
            definitions = list(pool.map(lambda cv: client.capability(*cv), used))
            strings = list(pool.map(lambda cv: client.capability_strings(*cv, locale), used))
    finally:
        client.close()
    source = {"source": "smartthings", "base_url": base_url.rstrip("/"), "location_id": location_id,
              "locale": locale}
    answers = dict(zip(used, zip(definitions, strings, strict=True), strict=True))
    return write_smartthings_home(out, devices, rooms, answers, source)


def used_capabilities(devices: list[dict]) -> list[tuple[str, int]]:
    """(capability id, version) of every capability the devices' main components use, sorted."""
    return sorted({cap for device in devices for cap in _main_capabilities(device)})


def write_smartthings_home(out: str | Path, devices: list[dict], rooms: list[dict],
                           definitions: dict[tuple[str, int], tuple[dict | None, dict | None]],
                           source: dict) -> WriteSummary:
    """Write a home from SmartThings' answers: devices, rooms and, per used capability, its definition
    and localized strings (None where SmartThings has none)."""
    commands = {}
    for (capability_id, version), (definition, text) in definitions.items():
        if definition is None:
            logger.warning("SmartThings has no definition of capability %s/%s; its commands are left out",
                           capability_id, version)
            continue
        commands[(capability_id, version)] = capability_commands(capability_id, definition, text)
    return write_home(out, devices, rooms, _profiles(devices, commands), source)


def _main_capabilities(device: dict) -> list[tuple[str, int]]:
    for component in device.get("components") or []:
        if isinstance(component, dict) and component.get("id") == "main":
            return [(c["id"], int(c.get("version") or 1)) for c in component.get("capabilities") or []
                    if isinstance(c, dict) and isinstance(c.get("id"), str) and c["id"] not in SKIPPED_CAPABILITIES]
    return []


def _profiles(devices: list[dict], commands: dict[tuple[str, int], list[dict]]) -> list[dict]:
    """One spec line per profile: the commands of its main component's capabilities, in their order."""
    profiles: dict[str, list[dict]] = {}
    for device in devices:
        profile_id = (device.get("profile") or {}).get("id") if isinstance(device.get("profile"), dict) else None
        if not isinstance(profile_id, str) or profile_id in profiles:
            continue
        entries, seen = [], set()
        for capability in _main_capabilities(device):
            for entry in commands.get(capability, ()):
                if entry["id"] not in seen:
                    seen.add(entry["id"])
                    entries.append(entry)
        profiles[profile_id] = entries
    return [{"profileId": p, "capabilities": entries} for p, entries in profiles.items()]


# ---------------------------------------------------------------------------------------------
# Capability definition -> spec entries

def capability_commands(capability_id: str, definition: dict, strings: dict | None = None) -> list[dict]:
    """The ``main-<capability>-<command>`` spec entries of one capability definition.

    Accepts the API's shape (``commands``/``attributes`` as objects keyed by name, argument schemas
    under ``schema``) and the list shape (``[{"name", "arguments"}]``, ``value_schema``). The first
    required argument gives ``type``, ``value_range`` (min, max, and the unit of the attribute the
    command sets) and ``value_list`` (its enum, with localized labels when there are any)."""
    strings = strings if isinstance(strings, dict) else {}
    name = strings.get("label") or definition.get("name") or _words(capability_id.split(".")[-1]).title()
    attributes = _named(definition.get("attributes"))
    command_strings = strings.get("commands") if isinstance(strings.get("commands"), dict) else {}
    attribute_strings = strings.get("attributes") if isinstance(strings.get("attributes"), dict) else {}
    entries = []
    for command_name, command in _named(definition.get("commands")).items():
        if command_name in ("refresh", "ping"):
            continue
        text = command_strings.get(command_name) if isinstance(command_strings.get(command_name), dict) else {}
        entry = {"id": f"main-{capability_id}-{command_name}",
                 "description": _description(name, command_name, text), "type": None, "value_range": None}
        arguments = [a for a in command.get("arguments") or [] if isinstance(a, dict) and not a.get("optional")]
        if arguments:
            argument = arguments[0]
            schema = argument.get("schema") or argument.get("value_schema") or {}
            entry["type"] = schema.get("type") if isinstance(schema.get("type"), str) else None
            setter = next((a for a in attributes.values() if a.get("setter") == command_name), None)
            bounds = {k: schema[key] for k, key in (("min", "minimum"), ("max", "maximum"))
                      if isinstance(schema.get(key), int | float)}
            unit = _unit(setter)
            if bounds:
                entry["value_range"] = {**bounds, **({"unit": unit} if unit else {})}
            if isinstance(schema.get("enum"), list):
                labels = _value_labels(text.get("arguments", {}).get(argument.get("name")) if isinstance(
                    text.get("arguments"), dict) else None)
                if setter is not None:
                    labels = {**_value_labels(attribute_strings.get(setter.get("name"))), **labels}
                entry["value_list"] = [{"value": str(v), "description": labels.get(str(v)) or _words(str(v))}
                                       for v in schema["enum"]]
        entries.append(entry)
    return entries


def _named(value) -> dict[str, dict]:
    """Commands or attributes as {name: definition}, from an object keyed by name or a list."""
    if isinstance(value, dict):
        return {k: {"name": k, **v} for k, v in value.items() if isinstance(v, dict)}
    if isinstance(value, list):
        return {v["name"]: v for v in value if isinstance(v, dict) and isinstance(v.get("name"), str)}
    return {}


def _unit(attribute: dict | None) -> str | None:
    if not attribute:
        return None
    units = attribute.get("units")
    if isinstance(units, list) and units and isinstance(units[0], str):
        return units[0]
    unit = ((attribute.get("schema") or {}).get("properties") or {}).get("unit") or {}
    if isinstance(unit.get("default"), str):
        return unit["default"]
    enum = unit.get("enum")
    return enum[0] if isinstance(enum, list) and enum and isinstance(enum[0], str) else None


def _value_labels(text) -> dict[str, str]:
    """{value: label} from an i18n entry's ``i18n.value.<value>.label``."""
    values = ((text or {}).get("i18n") or {}).get("value") if isinstance(text, dict) else None
    if not isinstance(values, dict):
        return {}
    return {k: v["label"] for k, v in values.items() if isinstance(v, dict) and isinstance(v.get("label"), str)}


def _description(capability_name: str, command: str, text: dict) -> str:
    """The localized description or label; else words made from the names ("set cooling setpoint",
    "window shade: open"). A one-word label says too little, so the capability's name goes with it."""
    label = text.get("description") or text.get("label")
    if isinstance(label, str) and label.strip():
        label = label.strip()
        return f"{capability_name}: {label.lower()}" if label.isascii() and " " not in label else label
    words = _words(command)
    if words.startswith("set ") or words in capability_name.lower():
        return words if " " in words else capability_name.lower()
    return f"{capability_name.lower()}: {words}"


def _words(name: str) -> str:
    """"setCoolingSetpoint" -> "set cooling setpoint"; "HDMI1" stays one word."""
    return " ".join(w.lower() for w in re.findall(r"[A-Z]{2,}[0-9]*(?![a-z])|[A-Z]?[a-z]+|[0-9]+", name)) or name
