"""Send what CommandRetrieval decided to a real home: SmartThings commands or Home Assistant services.

``execute(prediction_or_plan, target, dry_run=True)`` walks the plan's batches (a bulk plan) or takes the
top candidate (a single command) and builds the calls:

- SmartThings: ``POST /v1/devices/{deviceId}/commands`` with ``{"commands": [{"component": "main",
  "capability", "command", "arguments"}]}``, one call per device;
- Home Assistant: ``POST /api/services/{domain}/{service}`` with ``{"entity_id": [...], <field>: value}``,
  one call per batch (the batch's devices share a command and its argument shape).

Dry-run is the default: the report lists exactly the calls that would be sent, and nothing is sent.
Nothing is sent either for a prediction that is not safe to run: hint ``no_intent`` or ``too_long``, a
bulk plan with ``need_clarification``, ``too_many_targets`` or ``no_target`` (``report.refused`` is the
one line why).

Arguments come only from what the user said: a command that takes a value gets the number the
utterance sets (``home_commands.values``: "50%", "to 26 degrees", "1e2%", "一半", "最亮"), checked against the
command's range and unit, or the listed value the utterance names ("cool", "HDMI 2"); a command that
needs a value the utterance does not give is skipped with the reason, never sent with a guess.

The report is per device: ``planned`` (dry run), ``accepted``, ``failed`` (with the reason: HTTP status,
the API's answer) or ``skipped`` (not sent, with the reason), so a partial failure is visible;
``retry(report)`` re-sends just the failed devices. Calls go out concurrently, at most
``target.concurrency`` at a time; 429 and 5xx are retried (bounded) only for commands that are safe to
repeat (set a value, on/off, open/close), never for steps such as "volume up" or "next track".
"""

from __future__ import annotations

import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from ..errors import TraceragError
from ..hints import Hint
from ..home_commands.command_results import BulkPlan
from ..home_commands.devices import CommandSpec
from ..home_commands.home import Home
from ..home_commands.sensitive_commands import execution_hold
from ..home_commands.value_ranges import check_value, command_range
from ..home_commands.values import Unreadable, read_value
from .home_files import read_source
from .rest import ApiError, RestClient

REFUSED_HINTS = (Hint.NEED_CLARIFICATION, Hint.TOO_MANY_TARGETS, Hint.NO_INTENT, Hint.TOO_LONG, Hint.NO_TARGET,
                 Hint.WITHHELD, Hint.UNKNOWN_SCOPE, Hint.NO_MATCH)
DEFAULT_CONCURRENCY = 8
_NOT_IDEMPOTENT = re.compile(r"step|next|previous|up$|down$|toggle|fastForward|rewind|volume_up|volume_down",
                             re.IGNORECASE)


class ExecutionError(TraceragError, RuntimeError):
    """A target that cannot be used (no token, no home to read commands from); one line."""


# ---------------------------------------------------------------------------------------------
# Targets

@dataclass
class SmartThingsTarget:
    """The SmartThings API (token from ``SMARTTHINGS_TOKEN`` unless given)."""

    token: str | None = None
    base_url: str = "https://api.smartthings.com"
    home_dir: str | Path | None = None  # where the home was pulled to (to read commands when no Home is given)
    concurrency: int = DEFAULT_CONCURRENCY
    retries: int = 2
    deadline: float = 30.0
    dry_run_only: str = ""  # why this target may only plan, never send ("": it may send)
    kind: str = field(default="smartthings", init=False)

    def client(self) -> RestClient:
        if self.dry_run_only:
            raise ExecutionError(self.dry_run_only)
        from .smartthings import TOKEN_ENV
        return _client(self.base_url, self.token, TOKEN_ENV, self.retries, self.deadline)


@dataclass
class HomeAssistantTarget:
    """A Home Assistant instance (token from ``HA_TOKEN`` unless given)."""

    url: str
    token: str | None = None
    home_dir: str | Path | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    retries: int = 2
    deadline: float = 30.0
    kind: str = field(default="homeassistant", init=False)

    def client(self) -> RestClient:
        from .homeassistant import TOKEN_ENV
        return _client(self.url, self.token, TOKEN_ENV, self.retries, self.deadline)


Target = SmartThingsTarget | HomeAssistantTarget


def _client(base_url: str, token: str | None, env: str, retries: int, deadline: float) -> RestClient:
    import os

    token = token or os.environ.get(env)
    if not token:
        raise ExecutionError(f"no token to send commands with: set {env}")
    return RestClient(base_url, token, retries=retries, deadline=deadline, timeout=min(20.0, deadline))


def target_for_home(directory: str | Path, *, token: str | None = None, base_url: str | None = None) -> Target:
    """The API a pulled home came from (its ``source.json``), with ``base_url`` overriding its URL.

    A home with no ``source.json`` (written by hand, or a bundled one) gets a SmartThings target for a dry
    run only: its files have SmartThings' shape, so the calls can be shown, but where to send them is not
    known; sending through it is one ExecutionError line saying which target to give."""
    source = read_source(directory)
    if source is None:
        return SmartThingsTarget(token, base_url or SmartThingsTarget.base_url, home_dir=directory,
                                 dry_run_only=f"{directory}: no source.json (written by `tracerag home pull`), so "
                                 "where to send is not known: give a target (SmartThingsTarget(), "
                                 "HomeAssistantTarget(url); on the command line --target) or dry-run only")
    if source.get("source") == "smartthings":
        return SmartThingsTarget(token, base_url or source.get("base_url") or SmartThingsTarget.base_url,
                                 home_dir=directory)
    if source.get("source") == "homeassistant":
        return HomeAssistantTarget(base_url or source["url"], token, home_dir=directory)
    raise ExecutionError(f"{directory}/source.json: unknown source {source.get('source')!r}")


# ---------------------------------------------------------------------------------------------
# Report

@dataclass
class Call:
    """One HTTP request: what dry-run prints and what execution sends."""

    method: str
    path: str
    body: dict
    device_ids: list[str]
    command_id: str
    idempotent: bool = True

    def to_dict(self) -> dict:
        return {"method": self.method, "path": self.path, "json": self.body}

    def line(self) -> str:
        return f"{self.method} {self.path} {json.dumps(self.body, ensure_ascii=False)}"


@dataclass
class DeviceResult:
    device_id: str
    label: str
    command_id: str
    status: str  # planned | accepted | failed | skipped | needs_confirmation
    arguments: list = field(default_factory=list)
    reason: str = ""
    call: Call | None = field(default=None, repr=False)

    def to_dict(self) -> dict:
        return {"device_id": self.device_id, "label": self.label, "command_id": self.command_id,
                "status": self.status, "arguments": self.arguments, "reason": self.reason}


@dataclass
class ExecutionReport:
    target: str
    dry_run: bool
    refused: str = ""
    calls: list[Call] = field(default_factory=list)
    results: list[DeviceResult] = field(default_factory=list)
    seconds: float = 0.0
    source: Target | None = field(default=None, repr=False)

    def _with(self, status: str) -> list[DeviceResult]:
        return [r for r in self.results if r.status == status]

    @property
    def accepted(self) -> list[DeviceResult]:
        return self._with("accepted")

    @property
    def failed(self) -> list[DeviceResult]:
        return self._with("failed")

    @property
    def skipped(self) -> list[DeviceResult]:
        return self._with("skipped")

    @property
    def planned(self) -> list[DeviceResult]:
        return self._with("planned")

    @property
    def needs_confirmation(self) -> list[DeviceResult]:
        return self._with("needs_confirmation")

    @property
    def sent(self) -> list[DeviceResult]:
        return [r for r in self.results if r.status in ("accepted", "failed")]

    @property
    def ok(self) -> bool:
        return not self.refused and not self.failed and not self.skipped and not self.needs_confirmation

    def summary(self) -> str:
        if self.refused:
            return f"refused: {self.refused}"
        held = f"; {len(self.needs_confirmation)} need confirmation" if self.needs_confirmation else ""
        if self.dry_run:
            return (f"dry run ({self.target}): would send {len(self.calls)} call(s) for {len(self.planned)} "
                    f"device(s); {len(self.skipped)} skipped{held}")
        return (f"{self.target}: {len(self.calls)} call(s) for {len(self.sent)} device(s) in {self.seconds:.2f} s: "
                f"{len(self.accepted)} accepted, {len(self.failed)} failed, {len(self.skipped)} skipped{held}")

    def lines(self) -> list[str]:
        """What a person reads: the summary, each call (dry run) and each device's outcome."""
        out = [self.summary()]
        if self.refused:
            return out
        if self.dry_run:
            out += [f"  {call.line()}" for call in self.calls]
        for r in self.results:
            args = f" {json.dumps(r.arguments, ensure_ascii=False)}" if r.arguments else ""
            reason = f": {r.reason}" if r.reason else ""
            out.append(f"  {r.status:8} {r.device_id} ({r.label}) {r.command_id}{args}{reason}")
        return out

    def to_dict(self) -> dict:
        return {"target": self.target, "dry_run": self.dry_run, "refused": self.refused,
                "seconds": round(self.seconds, 3), "sent": len(self.sent), "accepted": len(self.accepted),
                "failed": len(self.failed), "skipped": len(self.skipped),
                "needs_confirmation": len(self.needs_confirmation),
                "calls": [c.to_dict() for c in self.calls], "devices": [r.to_dict() for r in self.results]}


# ---------------------------------------------------------------------------------------------
# Planning

def execute(plan_or_prediction, home_source: Target, *, dry_run: bool = True, home: Home | None = None,
            query: str | None = None, confirm_sensitive: bool = False) -> ExecutionReport:
    """Build the calls for a CommandRetrieval prediction (or a BulkPlan) and, unless ``dry_run``, send them.

    ``home`` is the Home the prediction was made on (for labels, each command's argument shape and the
    home's policy.json); by default the target's ``home_dir`` is read. ``query`` is the utterance (the
    source of argument values); by default the prediction's ``query``, else its parse's action phrase.
    A sensitive command (``sensitive_commands``: unlock, open a door, disarm, open a valve, an oven on, what
    policy.json marks) is sent only with ``confirm_sensitive=True``; without it the device is reported
    ``needs_confirmation`` and nothing is sent for it."""
    report = ExecutionReport(home_source.kind, dry_run, source=home_source)
    targets, refused = _targets(plan_or_prediction)
    if refused:
        report.refused = refused
        return report
    if home is None:
        if home_source.home_dir is None:
            raise ExecutionError("no home to read commands from: pass home= or a target with home_dir")
        home = Home.load(home_source.home_dir, log_warnings=False)
    text = query or getattr(plan_or_prediction, "query", None) or _action(plan_or_prediction)
    build = _smartthings_calls if home_source.kind == "smartthings" else _homeassistant_calls
    report.results, report.calls = build(targets, home, text, confirm_sensitive)
    if not report.calls and not report.results:
        report.refused = "nothing to run"
    if not dry_run and report.calls:
        _send(report, home_source, report.calls)
    return report


def retry(report: ExecutionReport, home_source: Target | None = None) -> ExecutionReport:
    """Re-send just the devices that failed; the new report keeps the others' outcomes as they were."""
    target = home_source or report.source
    if target is None:
        raise ExecutionError("retry needs the target the report was sent to")
    failed = report.failed
    results = [DeviceResult(r.device_id, r.label, r.command_id, r.status, r.arguments, r.reason, r.call)
               for r in report.results]
    new = ExecutionReport(report.target, False, results=results, source=target)
    calls: dict[tuple, Call] = {}
    for r in failed:
        call = r.call
        if call is None:
            continue
        if target.kind == "smartthings":
            calls[(call.path,)] = call
        else:  # one service call for the failed entities that shared a call
            key = (call.path, json.dumps({k: v for k, v in call.body.items() if k != "entity_id"}, sort_keys=True))
            if key not in calls:
                calls[key] = Call(call.method, call.path, {**call.body, "entity_id": []}, [], call.command_id,
                                  call.idempotent)
            calls[key].device_ids.append(r.device_id)
            calls[key].body["entity_id"].append(r.device_id)
    new.calls = list(calls.values())
    by_device = {r.device_id: r for r in new.results}
    for call in new.calls:
        for device_id in call.device_ids:
            by_device[device_id].call = call
    if new.calls:
        _send(new, target, new.calls)
    return new


def _targets(obj) -> tuple[list[tuple[str, str, int]], str]:
    """(device id, command id, batch number) in the order to send them, or the reason nothing may be sent."""
    if isinstance(obj, BulkPlan):
        return _plan_targets(obj)
    hint = getattr(obj, "hint", None)
    if hint in REFUSED_HINTS:
        return [], f"the prediction's hint is {hint!r}: nothing is sent"
    plan = getattr(obj, "bulk", None)
    if plan is not None:
        return _plan_targets(plan)
    candidates = getattr(obj, "candidates", None) or []
    if not candidates:
        return [], "no candidate to run"
    return [(candidates[0].device_id, candidates[0].command_id, 0)], ""


def _plan_targets(plan: BulkPlan) -> tuple[list[tuple[str, str, int]], str]:
    if plan.hint is not None:
        why = plan.question or plan.reason
        return [], f"the bulk plan's hint is {plan.hint!r}: nothing is sent" + (f" ({why})" if why else "")
    command_of = {d: g.command_id for g in plan.groups for d in g.device_ids}
    batch_of = {d: i for i, batch in reversed(list(enumerate(plan.batches))) for d in batch}
    ordered = [d for batch in plan.batches for d in batch] or list(command_of)
    return [(d, command_of[d], batch_of.get(d, 0)) for d in dict.fromkeys(ordered) if d in command_of], ""


def _action(obj) -> str:
    ir = getattr(obj, "ir", None)
    return getattr(ir, "action", "") or ""


def _resolved(home: Home, device_id: str, command_id: str, text: str, cache: dict, confirmed: bool):
    """(device, spec, arguments, status, reason): arguments is None when the command is not sent, and the
    status (``skipped``, ``needs_confirmation``) and reason say why."""
    device = home.find(device_id)
    if device is None:
        return None, None, None, "skipped", "not a device of this home"
    spec = device.command(command_id)
    if spec is None:
        return device, None, None, "skipped", f"{command_id} is not a command of this device"
    hold = execution_hold(device, spec, home.policy, confirmed)
    if hold is not None:
        return device, spec, None, *hold
    key = (spec.compatibility, device.category, text)
    if key not in cache:
        cache[key] = resolve_arguments(spec, text, name_spans(home, text), home.temperature_scale, device.category)
    arguments, reason = cache[key]
    return device, spec, arguments, "skipped", reason


def _smartthings_calls(targets, home: Home, text: str, confirmed: bool) -> tuple[list[DeviceResult], list[Call]]:
    results, calls, cache = [], [], {}
    for device_id, command_id, _ in targets:
        device, spec, arguments, status, reason = _resolved(home, device_id, command_id, text, cache, confirmed)
        label = device.label if device else ""
        if arguments is None:
            results.append(DeviceResult(device_id, label, command_id, status, reason=reason))
            continue
        body = {"commands": [{"component": "main", "capability": spec.capability, "command": spec.command,
                              "arguments": arguments}]}
        call = Call("POST", f"/v1/devices/{quote(device_id, safe='')}/commands", body, [device_id], command_id,
                    not _NOT_IDEMPOTENT.search(spec.command))
        calls.append(call)
        results.append(DeviceResult(device_id, label, command_id, "planned", arguments, call=call))
    return results, calls


def _homeassistant_calls(targets, home: Home, text: str, confirmed: bool) -> tuple[list[DeviceResult], list[Call]]:
    from .homeassistant import COMMAND_BY_ID

    results, calls, cache = [], {}, {}
    for device_id, command_id, batch in targets:
        device, spec, arguments, status, reason = _resolved(home, device_id, command_id, text, cache, confirmed)
        label = device.label if device else ""
        command = COMMAND_BY_ID.get(command_id)
        if arguments is not None and command is None:
            arguments, reason = None, f"{command_id} is not a Home Assistant command this library maps"
        if arguments is None:
            results.append(DeviceResult(device_id, label, command_id, status, reason=reason))
            continue
        data = {}
        if command.field and arguments:
            value = arguments[0]
            if command.scale != 1 and isinstance(value, int | float) and not isinstance(value, bool):
                value = round(value * command.scale, 4)
            data[command.field] = value
        path = f"/api/services/{command.domain}/{command.service}"
        key = (batch, path, json.dumps(data, sort_keys=True))
        if key not in calls:  # devices of one batch share a command and argument: one call
            calls[key] = Call("POST", path, {"entity_id": [], **data}, [], command_id,
                              not _NOT_IDEMPOTENT.search(command.name))
        call = calls[key]
        call.device_ids.append(device_id)
        call.body["entity_id"].append(device_id)
        results.append(DeviceResult(device_id, label, command_id, "planned", arguments, call=call))
    return results, list(calls.values())


# ---------------------------------------------------------------------------------------------
# Arguments

_NEGATIVE = re.compile(r"\b(off|stop|disable|no|un\w+)\b|关|停|取消", re.IGNORECASE)

def needs_argument(spec: CommandSpec) -> bool:
    return spec.type is not None or bool(spec.value_list) or spec.value_range is not None


def resolve_arguments(spec: CommandSpec, text: str, names: list[tuple[int, int]] = (),
                      scale: str | None = None, category: str | None = None) -> tuple[list | None, str]:
    """(arguments, "") when the utterance justifies them, else (None, why not). ``names``: spans of the text that
    name a device or a room (``name_spans``), never a value; ``scale``: the home's temperature scale, the unit of
    a temperature command whose spec states none (``Home.temperature_scale``); ``category``: the device's (a water
    heater's setpoint is no room's)."""
    if not needs_argument(spec):
        return [], ""
    if spec.value_list:
        said = _squash(text)
        named = [(len(s), o.value) for o in spec.value_list for s in {_squash(o.value), _squash(o.description)}
                 if len(s) >= 2 and s in said]
        if named:
            return [max(named)[1]], ""
        listed = ", ".join(o.value for o in spec.value_list[:8])
        return None, f"{spec.id} needs one of: {listed}; the utterance names none"
    if spec.type == "boolean":
        return [not _NEGATIVE.search(text or "")], ""
    if spec.type not in ("integer", "number") and command_range(spec) is None:
        return None, f"{spec.id} takes a {spec.type or 'free'} value the utterance cannot be read for"
    said = read_value(text or "", names)
    if said is None:
        rng = command_range(spec, scale, category)
        return None, f"{spec.id} needs a value{f' ({rng})' if rng else ''}: the utterance sets none"
    if isinstance(said, Unreadable):
        return None, f"{spec.id}: {said.text!r} {said.reason}"
    if bool(said.relative) != _changes_by_amount(spec):  # "up 10%" is no level, "to 50%" no step
        return None, (f"{spec.id} changes a value by an amount; the utterance sets a target" if said.relative == 0
                      else f"{spec.id} sets a value; the utterance changes it by an amount")
    number, reason = check_value(said, spec, scale, category)
    return (None, reason) if number is None else ([number], "")


def _changes_by_amount(spec: CommandSpec) -> bool:
    """A command whose range runs as far below zero as above it (a step of -100..100 %) takes a change."""
    rng = command_range(spec)
    return rng is not None and rng.low < 0 < rng.high and abs(rng.low + rng.high) <= 0.1 * (rng.high - rng.low)


def name_spans(home: Home, text: str) -> list[tuple[int, int]]:
    """Where the text says a device label or a room name holding a digit ("Pendant 2", 筒灯3, "Bedroom 2"): never a
    value."""
    lowered = (text or "").lower()
    names = {n.lower() for d in home.devices for n in (d.label, d.room) if n and any(ch.isdigit() for ch in n)}
    return [(m.start(), m.end()) for name in names if name in lowered
            for m in re.finditer(re.escape(name), lowered)]


def _squash(text: str) -> str:
    return re.sub(r"[\s_\-]+", "", (text or "").lower())


# ---------------------------------------------------------------------------------------------
# Sending

def _send(report: ExecutionReport, target: Target, calls: list[Call]) -> None:
    report.dry_run = False
    by_device = {r.device_id: r for r in report.results}
    started = time.perf_counter()
    client = target.client()
    try:
        with ThreadPoolExecutor(max(1, min(target.concurrency, len(calls)))) as pool:
            outcomes = list(pool.map(lambda call: (call, _send_one(client, target, call)), calls))
    finally:
        client.close()
    for call, outcome in outcomes:
        for device_id in call.device_ids:
            status, reason = outcome.get(device_id, ("failed", "no answer"))
            by_device[device_id].status, by_device[device_id].reason = status, reason
    report.seconds = time.perf_counter() - started


def _send_one(client: RestClient, target: Target, call: Call) -> dict[str, tuple[str, str]]:
    """device id -> (status, reason) for one call (HA: a 400 on a batch is split per entity to find which)."""
    retries = target.retries if call.idempotent else 0
    try:
        answer = client.post(call.path, call.body, retries=retries)
    except ApiError as exc:
        status = exc.status
        if target.kind == "homeassistant" and status == 400 and len(call.device_ids) > 1:
            out = {}
            for device_id in call.device_ids:
                single = Call(call.method, call.path, {**call.body, "entity_id": [device_id]}, [device_id],
                              call.command_id, call.idempotent)
                out.update(_send_one(client, target, single))
            return out
        return dict.fromkeys(call.device_ids, ("failed", _reason(exc, target)))
    if target.kind == "smartthings":
        failed = [r for r in (answer or {}).get("results") or [] if isinstance(r, dict)
                  and str(r.get("status", "")).upper() == "FAILED"]
        if failed:
            return dict.fromkeys(call.device_ids, ("failed", f"the device reported FAILED: "
                                                             f"{json.dumps(failed[0], ensure_ascii=False)[:200]}"))
    return dict.fromkeys(call.device_ids, ("accepted", ""))


def _reason(exc: ApiError, target: Target) -> str:
    status = exc.status
    if status in (401, 403):
        scope = "x:devices:*" if target.kind == "smartthings" else "a valid long-lived access token"
        return f"HTTP {status}: the token lacks {scope}"
    if status == 404:
        return "HTTP 404: the device (or service) is not there any more; pull the home again"
    return str(exc)
