"""Bulk plans: one command for every device an "all" / "except" utterance reaches, grouped and batched.

First the scope: the one category the utterance means (the LM's type_hint, else the home's own data: the
device word said, the labels and category names it says, the verb, the value), narrowed by the name hint and
the rooms the devices stand in. Then the command: with a known operation each device's command for it
(``command_choice``, the same decision ranking reads); otherwise the command the aggregated evidence of the
best rows chooses, a close second standing in on devices that lack it. Last the targets, grouped by argument
shape and split into batches. A command the evidence chooses that the safety screen holds back makes the plan
ask (``need_clarification``) rather than run the next best one.
"""

from __future__ import annotations

import re
from collections import defaultdict

import numpy as np

from ..device_operations import OTHER
from ..hints import Hint
from ..signatures.query_ir import QueryIR
from .category_words import categories_said, category_name_words
from .command_choice import choice_of
from .command_results import BulkGroup, BulkPlan, CapabilityOption
from .door_words import door_nouns, doors_among, says_door_locks
from .home_names import content
from .naming_scope import says_the_kind_itself
from .scoring import DEMOTED
from .text_match import contains, join_tokens, tokens

# a word for one kind that names devices of another where the home has them ("门": a lock)
_NAMED_AS = {"Door": ("Lock", "GarageDoor")}
# the verb of locking, which says no lock ("lock all the doors", "其他门都锁上": the doors' locks, not the safe's)
_LOCKING = re.compile(r"[解开]锁|锁(?=[上好住门]|起来)|上锁|反锁|"
                      r"\b(?:un)?lock(?=\s+(?:up\s+)?(?:the|all|every|my|our|both|it|them)\b)", re.IGNORECASE)
# Categories whose devices power something else ("排气扇" and "浴霸" are both Switches).
CARRIER_CATEGORIES = frozenset({"Switch", "SmartPlug"})
# The part of a device a capability sets, where a value in the same unit sets another part than a level does
_PART = {"windowShadeTiltLevel": "slats", "colorControl": "colour", "audioVolume": "volume",
         "fanSpeedPercent": "fan speed", "airConditionerFanMode": "fan speed"}


# ----- the scope ----------------------------------------------------------------------------------

def establish_category(index, ir: QueryIR, utterance: str, device_ok: np.ndarray) -> str | None:
    """The category bulk mode may expand over, or None when the home's data cannot tell.

    The LM's type_hint wins when the home has that category. Otherwise the evidence is the
    home's own data: first the devices carrying the device word the utterance says ("热水器",
    "风扇" of 小米风扇); failing that, labels it names in part ("所有的灯" matches 吸顶灯, 台灯 ...)
    and category names it mentions ("all lights"). One category must hold `category_share` of it.
    """
    table, names = index.table, index.names
    if ir.has_category and ir.type_hint in table.categories:
        return ir.type_hint
    device_ok = device_ok & table.commanded  # a thermometer named "温度" is never what a plan acts on
    acting = index.verbs.devices(utterance, ir.action)  # devices that can do what the verb says
    word = names.device_word(utterance, ir.name_hint)
    if word:  # a device word the user said ("热水器", "风扇") is the strongest evidence there is
        carriers = device_ok & names.carrying(word)
        # "lock all the doors": the word names a lock and a garage door, the verb only the lock
        found = _one_category(index, carriers) or \
            (_one_category(index, carriers & acting) if acting.any() else None)
        if found:
            return found
    # a word for one kind no name here holds ("关掉所有电扇" where the fans are 落地扇 and 小米风扇)
    kinds = [kind for kind in categories_said(utterance) if kind in table.categories]
    if len(kinds) == 1 and (device_ok & table.in_category(kinds[0])).any():
        return kinds[0]
    evidence: dict[str, float] = defaultdict(float)
    said = content(tokens(utterance))
    # a category named in full ("air conditioners") is not a name: its words do not make the Air
    # Purifier a candidate by name
    category_words = names.category_words_said(said)
    scores = names.name_scores(" ".join(t for t in said if t not in category_words) if category_words
                               else utterance, ir.name_hint)
    named = np.flatnonzero(device_ok & (scores > 0))
    # summed device by device, as a loop would: bincount adds its weights in input order
    sums = np.bincount(table.device_category_codes[named], weights=scores[named].astype(np.float64),
                       minlength=len(table.category_code))
    codes, first = np.unique(table.device_category_codes[named], return_index=True)
    for code in codes[np.argsort(first)]:  # in the order the named devices come, as ties fall
        if table.category_names[code]:
            evidence[table.category_names[code]] += float(sums[code])
    for category in table.categories:
        if category_name_words(category)[-1:] and category_name_words(category)[-1] in said:
            evidence[category] += float(table.category_size[table.category_code[category]])
    total = sum(evidence.values())
    best = max(evidence, key=evidence.get) if total else None
    if best is not None and evidence[best] / total >= index.params.category_share:
        return best
    # the verb settles it when one category can do what it says ("把所有门都锁上": only locks lock), else
    # the value when one category takes it in the unit said ("温度都调到26度": the setpoints)
    if acting.any():
        return _one_category(index, device_ok & acting)
    taking = device_ok & index.arguments.value_devices(utterance, ir.action)
    return _one_category(index, taking) if taking.any() else None


def _one_category(index, devices: np.ndarray) -> str | None:
    """The category holding `category_share` of these devices, if one does."""
    table = index.table
    counts = np.bincount(table.device_category_codes[devices], minlength=len(table.category_names))  # by code
    top = counts.max(initial=0)
    if top and top >= index.params.category_share * counts.sum():
        return min(str(table.category_names[code]) for code in np.flatnonzero(counts == top))  # ties: by name
    return None


def bulk_scope(index, ir: QueryIR, utterance: str, operation: str | None = None) -> tuple[str | None, np.ndarray]:
    """(category, device mask) a bulk command may expand over; category None = unknown.

    In bulk mode the included rooms are where the devices physically are: acting on every
    light "in the living room" must not reach a lamp in the study that is merely named after it.
    A name hint ("所有筒灯") narrows the set to the devices carrying that name.
    """
    table, names, rooms = index.table, index.names, index.rooms
    device_ok = index.scoring.device_mask(ir)
    able = np.ones(len(device_ok), dtype=bool)
    if operation:  # only devices that can do what is asked are in scope ("lock all the doors": the locks)
        able = choice_of(index).devices_able(operation)  # read once per operation
    wanted = set(rooms.expand(ir.scope_include) or names.said_rooms(ir, utterance))
    wanted -= set(rooms.expand(ir.scope_exclude))
    doors = _every_door(index, ir, utterance, operation, device_ok & able)
    if doors is not None and wanted:  # "lock the heron cottage door": the doors there, not every one
        doors = doors & rooms.devices_in(wanted)
    if doors is not None and doors.any():  # one kind, or "Door" for several
        kinds = set(table.device_categories[doors].tolist())
        return (kinds.pop() if len(kinds) == 1 else "Door"), doors
    category = establish_category(index, ir, utterance, device_ok & able)
    if category is None:
        return None, device_ok & False
    of_kind = table.in_category(category)
    said = categories_said(_LOCKING.sub(" ", names.without_names(utterance)))
    if category == "Lock" and says_door_locks(said.get("Lock", ())):  # "其他门锁都打开": no safe
        of_kind &= doors_among(index, of_kind, door_nouns(utterance))
    if category not in said:  # a word for another kind naming this one ("all the doors": the locks of doors)
        words = [tokens(w) for kind, ws in said.items() if category in _NAMED_AS.get(kind, ()) for w in ws]
        if words:
            of_kind &= np.logical_or.reduce([names.carrying(w) for w in words])
    if not ir.has_category and not categories_said(utterance) and \
            index.arguments.sets_a_temperature((utterance, ir.action)):
        # "温度都调到26度", no kind said: every device that takes it, air conditioners and thermostats alike
        of_kind |= index.arguments.value_devices(utterance, ir.action)
    device_ok &= of_kind
    hint = names.name_key(ir.name_hint) if ir.name_hint else ()
    if hint and device_ok.any():  # (with none left, no name narrows anything)
        named = names.carrying(hint) & device_ok
        # Without a type_hint the name may be the word for the kind ("窗帘", "空调"). An LM's
        # name_hint is meant as a name, and in a category of carriers (switches, plugs) a name is
        # always what tells them apart.
        kind_word = not ir.has_category and category not in CARRIER_CATEGORIES and \
            _names_the_kind(index, hint, category, named.sum() / device_ok.sum(), utterance)
        if named.any() and not kind_word:
            device_ok = named
    if wanted:
        device_ok &= rooms.devices_in(wanted)
    return category, device_ok & able


def _every_door(index, ir: QueryIR, utterance: str, operation: str | None, device_ok: np.ndarray) -> np.ndarray | None:
    """The devices "all the doors" reaches (``door_words.is_a_door``), of one kind or several ("open all the doors"
    over locks, doors and garage doors: each its own command for the operation), else None."""
    if operation not in _DOOR_OPERATIONS or (ir.has_category and ir.type_hint not in _DOOR_KINDS) or \
            "Door" not in categories_said(index.names.without_names(utterance)):
        return None
    doors = doors_among(index, device_ok & index.table.in_categories(_DOOR_KINDS), door_nouns(utterance), every=True)
    return doors if doors.any() else None


_DOOR_OPERATIONS = frozenset({"open", "close", "unlock", "lock"})
_DOOR_KINDS = frozenset({"Door", "GarageDoor", "Lock"})


def _names_the_kind(index, hint: tuple[str, ...], category: str, share: float, utterance: str) -> bool:
    """Whether a name hint is the word for the category's kind, so it narrows nothing.

    Either much of the category in scope carries it (`share`), the category's own name says it
    ("light" of Light), the category's own command descriptions use it (a spec that says "打开窗帘" makes
    窗帘 every blind, not the few labelled "…窗帘" next to 布帘, 纱帘 and 百叶帘), or it is the Chinese word for
    the kind as a whole, said on its own (``says_the_kind_itself``: "二楼的窗帘")."""
    return share >= index.params.kind_word_share or contains(category_name_words(category), hint) or \
        any(contains(words, hint) for words in index.table.category_descriptions.get(category, ())) or \
        says_the_kind_itself(index, join_tokens(hint), category, utterance)


# ----- the command --------------------------------------------------------------------------------

def plan_bulk(index, ir: QueryIR, utterance: str, *, blocked: np.ndarray | None = None,
              skipped: np.ndarray | None = None, other_kind: np.ndarray | None = None) -> BulkPlan:
    """Choose the command from aggregated evidence, then expand it to every target.

    The safety rules' rows: ``skipped`` ones (devices never to act on) are left out of the plan;
    ``blocked`` ones are never targets, and when the command the evidence chooses is blocked on a device
    in scope (an unlock the utterance did not ask for, a level for "26度") the plan asks the user
    (``need_clarification``) instead of running the next best command. ``other_kind`` rows (commands
    that take no value of the kind said: a colour temperature for "green") count as evidence only where
    nothing else is, so the command the value names wins over one more devices support."""
    p, table = index.params, index.table
    operation = ir.operation if ir.operation != OTHER else None
    category, device_ok = bulk_scope(index, ir, utterance, operation)
    if category is None:
        return BulkPlan(hint=Hint.NEED_CLARIFICATION,
                        reason="the target category cannot be established from this home's devices")
    if skipped is not None:
        device_ok = device_ok & ~np.bincount(table.row_device[skipped], minlength=len(device_ok)).astype(bool)
    if not device_ok.any():
        return BulkPlan(category=category, hint=Hint.NO_TARGET, reason=f"no {category} device in scope")
    if operation:
        return _operation_plan(index, operation, ir, utterance, category, device_ok, blocked)
    text, _ = index.scoring.command_scores(ir, utterance)
    scores = text[table.row_slot] if other_kind is None else text[table.row_slot] - DEMOTED * other_kind
    options = _options(index, np.where(device_ok[table.row_device], scores, -np.inf), device_ok)
    if not options:
        return BulkPlan(category=category, hint=Hint.NO_TARGET, reason=f"no {category} device has commands")
    top1 = options[0].p
    margin = top1 - (options[1].p if len(options) > 1 else 0.0)
    plan = BulkPlan(category=category, options=options, top1_ratio=round(top1, 4), margin=round(margin, 4))
    allowed = None if blocked is None else ~blocked
    if allowed is not None:  # the options shown are those some device in scope may run
        plan.options = [o for o in options if allowed[_supporting(table, o.command_id, device_ok)].any()]
        if not allowed[_supporting(table, options[0].command_id, device_ok)].all():
            return plan.model_copy(update={"hint": Hint.NEED_CLARIFICATION, "options": plan.options[:3], "reason":
                                           f"{options[0].command_id} is what the words point to, and it is held "
                                           "back: the utterance does not ask for it"})
        options = plan.options
    if top1 < p.min_top1_ratio or margin < p.min_margin:
        return plan.model_copy(update={"hint": Hint.NEED_CLARIFICATION, "options": options[:3],
                                       "reason": "low confidence between the top commands"})
    return _expand(index, plan, options[0].command_id, device_ok, allowed,
                   _same_setting(index, options[0].command_id, (utterance, ir.action)))


def _operation_plan(index, operation: str, ir: QueryIR, utterance: str, category: str, device_ok: np.ndarray,
                    blocked: np.ndarray | None) -> BulkPlan:
    """The plan for a known operation: every device in scope with its command for it (``command_choice``),
    the same decision the ranked candidates read. A device in scope whose command for it is held back (an
    unlock the utterance does not ask for) makes the plan ask instead."""
    table = index.table
    choice = choice_of(index)
    _, channels = index.scoring.command_scores(ir, utterance)
    scores = choice.slot_scores(operation, channels["argument"], channels["subject"] + choice.qualified(utterance))
    if operation.startswith("set_"):
        # a device whose command cannot take the kind of value said is left out ("all fans to 59%": not the fan
        # that only knows low, medium, high); a number out of a command's range is refused when it is sent
        scores = np.where(index.arguments.takes_kind_said(utterance), scores, -np.inf)
    row_of = table.device_best_rows(scores, device_ok)  # per slot and per device: no pass over every row
    devices = np.flatnonzero(row_of >= 0)
    if not devices.size:
        return BulkPlan(category=category, hint=Hint.NO_TARGET,
                        reason=f"no {category} device in scope can do {operation}")
    codes = table.row_command[row_of[devices]]
    found, first, counts = np.unique(codes, return_index=True, return_counts=True)
    options = []
    for i in np.lexsort((first, -counts)).tolist():  # most devices first, ties to the first one found
        taking = devices[codes == found[i]]
        spec = table.spec(*table.rows[int(row_of[taking[0]])])
        options.append(CapabilityOption(
            command_id=spec.id, description=spec.description, p=round(int(counts[i]) / len(devices), 4),
            evidence=float(counts[i]), supported_devices=int(counts[i]),
            sample_devices=[index.home.devices[d].label for d in taking[:3].tolist()],
            sample_rooms=_rooms_of(index, taking)))
    plan = BulkPlan(category=category, options=options, top1_ratio=1.0, margin=1.0)
    held = devices[blocked[row_of[devices]]] if blocked is not None else devices[:0]
    if held.size:  # the options shown are those no device in scope holds back
        shown = [o for o in options if not blocked[_supporting(table, o.command_id, device_ok)].any()]
        return plan.model_copy(update={"hint": Hint.NEED_CLARIFICATION, "options": shown, "reason": (
            f"{table.spec(*table.rows[int(row_of[held[0]])]).id} on {index.home.devices[held[0]].label} is "
            "held back: the utterance does not ask for it")})
    return _with_targets(index, plan, options[0].command_id, row_of, int(device_ok.sum()))


def _rooms_of(index, devices: np.ndarray) -> list[str]:
    """The first three names, in order, of the rooms these devices stand in (read by room code: a plan may
    hold thousands of devices in a few rooms)."""
    rooms = index.rooms
    present = np.flatnonzero(np.bincount(rooms.device_codes[devices], minlength=len(rooms.names_by_code)))
    return rooms.first_by_name(present, 3)


def _same_setting(index, command_id: str, texts) -> set[str]:
    """The commands that set what the chosen one sets to the value said, in its unit: a floor heating's
    heating setpoint where the air conditioners' cooling one is chosen for "26度", a blind's level where
    the others' shade level is for "37%"; never another part of a device (slats' angle, colour, volume)."""
    table = index.table
    taking = {(spec.id, spec.capability) for spec in
              (table.spec(*table.slots[i]) for i in np.flatnonzero(index.arguments.value_slots(texts)))}
    part = next((_PART.get(capability) for id_, capability in taking if id_ == command_id), "none")
    return {id_ for id_, capability in taking if _PART.get(capability) == part}


def choose(index, plan: BulkPlan, command_id: str, ir: QueryIR, utterance: str, *,
           blocked: np.ndarray | None = None) -> BulkPlan:
    """Expand a command picked outside the index (an arbiter or the user's answer)."""
    return _expand(index, plan, command_id, bulk_scope(index, ir, utterance)[1],
                   None if blocked is None else ~blocked)


def _options(index, scores: np.ndarray, device_ok: np.ndarray) -> list[CapabilityOption]:
    """Top commands by aggregated evidence: best M hits each, plus a bonus for coverage."""
    p, table = index.params, index.table
    finite = np.flatnonzero(np.isfinite(scores))
    if 0 < p.options_window < len(finite):  # only rows as good as the window's last can be in it
        last = -np.partition(-scores[finite], p.options_window - 1)[p.options_window - 1]
        finite = finite[scores[finite] >= last]
    window = finite[np.argsort(-scores[finite], kind="stable")[:p.options_window]]
    hits: dict[str, list[float]] = defaultdict(list)
    for r in window:
        command_id = table.spec(*table.rows[r]).id
        if len(hits[command_id]) < p.options_per_command:
            hits[command_id].append(float(scores[r]))
    pool = int(device_ok.sum())
    supporting = {c: _supporting(table, c, device_ok) for c in hits}
    evidence = {c: float(np.mean(v)) + p.w_coverage * len(supporting[c]) / pool for c, v in hits.items()}
    ranked = sorted(evidence, key=evidence.get, reverse=True)[:p.options_top_n]
    if not ranked:
        return []
    values = np.asarray([evidence[c] for c in ranked])
    weights = np.exp((values - values.max()) / max(p.option_temperature, 1e-6))
    probs = weights / weights.sum()
    return [CapabilityOption(
        command_id=c, description=table.spec(*table.rows[supporting[c][0]]).description,
        p=round(float(prob), 4),
        evidence=round(evidence[c], 4), supported_devices=len(supporting[c]),
        sample_devices=[index.home.devices[table.rows[r][0]].label for r in supporting[c][:3].tolist()],
        sample_rooms=_rooms_of(index, table.row_device[supporting[c]]))
        for c, prob in zip(ranked, probs, strict=True)]


def _supporting(table, command_id: str, device_ok: np.ndarray, allowed: np.ndarray | None = None) -> np.ndarray:
    """The rows of ``command_id`` on the devices in ``device_ok`` (and among the ``allowed`` rows), one per
    device (its first), in device order."""
    wanted = (table.row_command == table.command_code.get(command_id, -1)) & device_ok[table.row_device]
    rows = np.flatnonzero(wanted if allowed is None else wanted & allowed)
    return rows[np.unique(table.row_device[rows], return_index=True)[1]]


# ----- the targets --------------------------------------------------------------------------------

def _expand(index, plan: BulkPlan, command_id: str, device_ok: np.ndarray,
            allowed: np.ndarray | None = None, equivalent: set[str] = frozenset()) -> BulkPlan:
    """Targets of `command_id`, grouped by argument shape, split into batches.

    A device in scope that lacks the chosen command takes the best other option it supports
    when that option's evidence is within `fallback_margin` of the chosen one ("调暗一点": the
    step command where there is one, setLevel elsewhere), so no device is dropped silently for
    want of an equivalent command, and none gets a command the utterance did not ask for. An
    ``equivalent`` option (one that takes the value said as the chosen one does) is a fallback too.
    """
    p, table = index.params, index.table
    pool = int(device_ok.sum())
    chosen = next((o for o in plan.options if o.command_id == command_id), None)
    fallbacks = [o.command_id for o in plan.options if o.command_id != command_id and chosen is not None
                 and (chosen.evidence - o.evidence <= p.fallback_margin or o.command_id in equivalent)]
    row_of = np.full(len(index.home.devices), -1, dtype=np.int64)  # per device: the command it gets
    for command in reversed((command_id, *fallbacks)):  # the first one a device has wins
        rows = _supporting(table, command, device_ok, allowed)
        row_of[table.row_device[rows]] = rows
    return _with_targets(index, plan, command_id, row_of, pool)


def _with_targets(index, plan: BulkPlan, command_id: str, row_of: np.ndarray, pool: int) -> BulkPlan:
    """``plan`` carrying its targets: each device with ``row_of`` >= 0 and that row's command, grouped by
    argument shape and split into batches; ``command_id`` is the plan's command (its coverage: the share of
    the ``pool`` devices in scope that take it)."""
    p, table = index.params, index.table
    devices = np.flatnonzero(row_of >= 0)
    shapes = table.slot_compatibility_code[table.row_slot[row_of[devices]]]
    found, first = np.unique(shapes, return_index=True)
    groups = {table.compatibilities[shape]: table.device_ids[devices[shapes == shape]].tolist()
              for shape in found[np.argsort(first)]}  # in the order of each group's first device
    taking = int((table.row_command[row_of[devices]] == table.command_code.get(command_id, -1)).sum())
    plan = plan.model_copy(update={
        "command_id": command_id, "hint": None, "reason": "",
        "coverage": round(taking / pool, 4) if pool else 0.0,
        # built from the table's own strings: validating thousands of ids one by one would check what is known
        "groups": [BulkGroup.model_construct(command_id=sig[0], signature=_signature_text(sig), device_ids=ids)
                   for sig, ids in groups.items()],
        "batches": [ids[i:i + p.batch_size] for ids in groups.values()
                    for i in range(0, len(ids), p.batch_size)],
    })
    if not devices.size:
        plan.hint, plan.reason = Hint.NO_TARGET, f"no device in scope supports {command_id}"
    elif devices.size > p.max_targets or len(groups) > p.max_groups:
        plan.hint = Hint.TOO_MANY_TARGETS
        plan.reason = (f"{devices.size} targets in {len(groups)} groups exceed the limits ({p.max_targets} "
                       f"targets, {p.max_groups} groups): narrow by room, category or name, or confirm")
    return plan


def _signature_text(sig: tuple) -> str:
    command_id, kind, value_range, values = sig
    parts = [command_id, kind or "no-argument"]
    if value_range:
        parts.append(",".join(f"{k}={v}" for k, v in value_range))
    if values:
        parts.append("|".join(values))
    return ";".join(parts)
