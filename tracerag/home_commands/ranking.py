"""Ranking: the top-k (device, command) candidates for a single-target query.

Without a known operation the rows are ranked by their fused score (``scoring``), after the safety screen's
masks: blocked rows never rank, demoted and unfit ones rank last, a switching row answers for its device.
With a known operation the operation decides (``command_choice``): each device offers its command for it,
devices ranked by how the utterance refers to them (name, room), and nothing else is offered. Either way a
device's second and later commands are pushed down, so ten slots hold ten devices' best commands before
anyone's second guess.
"""

from __future__ import annotations

import numpy as np

from ..device_operations import OTHER
from ..signatures.query_ir import QueryIR
from .command_choice import choice_of
from .command_results import Candidate
from .command_table import group_max
from .scoring import DEMOTED

TIE_BREAK = 0.05  # the weight of the command words in a known operation's device order
OTHER_PERFORMER = 0.3  # how far below a device's command for an operation its other commands for it rank
SWITCH_EDGE = 1e-3  # how far a device's switching row ranks above its best other one


def rank(index, ir: QueryIR, utterance: str, k: int = 10, *, blocked: np.ndarray | None = None,
         demoted: np.ndarray | None = None, unfit: np.ndarray | None = None, switching: np.ndarray | None = None,
         kind_named: np.ndarray | None = None) -> tuple[list[Candidate], list[int]]:
    """Top-k candidates of a ``CommandIndex``, and the ``blocked`` rows that would have ranked among them (best
    first).

    ``blocked`` rows (per row) are never candidates; ``demoted`` rows rank after every other row, and so do
    ``unfit`` ones unless their device is named in full (a fridge said to 50 degrees stays the fridge, whose
    command then refuses the value, rather than becoming the thermostat); a ``switching`` row answers for
    its device, first among its commands ("关风扇": the fan's off where its speed scored higher);
    ``kind_named`` devices (per device) may be named by a word for their kind (``Scoring.score_rows``). They
    come from the safety rules (``safety_screen.Screen``): the index itself knows no policy."""
    table = index.table
    terms = index.scoring.score_terms(ir, utterance, kind_named)
    channels = terms.channels
    operation = ir.operation if ir.operation != OTHER else None
    # with an operation the fused score only reports the rows shown; without one it is the order
    fused = _FusedAt(terms) if operation else terms.rows()
    order_key = _operation_order(index, operation, ir, utterance, terms) if operation else fused
    reachable = np.isfinite(order_key)  # what would be offered if nothing were held back
    if blocked is not None:
        order_key = np.where(blocked, -np.inf, order_key)
    if operation:  # the operation decides: the screen's polarity and value rules have nothing to add
        demoted = unfit = switching = None
    if demoted is not None:
        order_key = order_key - DEMOTED * demoted
    if unfit is not None:
        order_key = order_key - DEMOTED * (unfit & (channels["name"][table.row_device] < 1.0))
    if switching is not None and switching.any():
        # the device's switching rows move up together, their best just above the device's best row
        starts = table.device_row_starts
        sizes = np.diff(np.r_[starts, len(order_key)])
        with np.errstate(invalid="ignore"):  # a device with no switching row: -inf - -inf, lifts nothing
            lift = group_max(order_key, starts) - group_max(order_key, starts, switching)
        lift = np.where(np.isfinite(lift), lift, 0.0)
        order_key = np.where(switching, order_key + np.repeat(lift, sizes) + SWITCH_EDGE, order_key)
    top = _top_rows(table, order_key, k, index.params.repeat_penalty)
    candidates = [_candidate(index, int(r), float(fused[r]), channels) for r in top]
    passed_over: list[int] = []
    if blocked is not None and blocked.any():
        held = np.flatnonzero(blocked & reachable)
        if len(top) == k:
            held = held[fused[held] >= order_key[top[-1]]]
        passed_over = held[np.argsort(-fused[held], kind="stable")][:k].tolist()
    return candidates, passed_over


class _FusedAt:
    """The fused score of the rows asked for (``fused[rows]``), computed for those rows only."""

    def __init__(self, terms):
        self.terms = terms

    def __getitem__(self, rows):
        return self.terms.at(rows)


def _operation_order(index, operation: str, ir: QueryIR, utterance: str, terms) -> np.ndarray:
    """Row order for a known operation: each device's command for it (``command_choice``), devices ranked by
    how the utterance refers to them (name, room), a device's other commands for the operation just after its
    choice. No other command is offered: "unlock the front door" is never answered with its lock, "open the
    safe" never with the blinds.

    Every term is per slot or per device (a row performs the operation as its slot does; a row's fused score
    is finite where its slot's term is and its device is not filtered out), so the order is read per row once."""
    table = index.table
    choice = choice_of(index)
    p = index.params
    channels = terms.channels
    performing = choice.slot_scores(operation, channels["argument"],
                                    channels["subject"] + choice.qualified(utterance))
    performing = np.where(np.isfinite(terms.per_slot), performing, -np.inf)
    chosen = table.device_best_rows(performing, terms.device_ok)
    devices = np.flatnonzero(chosen >= 0)
    rows = chosen[devices]
    w_name = p.w_name if ir.has_category and ir.type_hint in table.categories else p.w_name_keyword_first
    name, room = channels["name"], channels["room"]
    referent = w_name * name + p.w_room * room
    if (room[devices] > 0).any() and ((room[devices] > 0) & (name[devices] > 0)).any():
        # rooms said, and the device asked for stands in one: a device elsewhere is not what is meant, however
        # much of its name is said ("书房窗帘": the study's blind, not the living room's 客厅窗帘)
        referent = referent - DEMOTED * (room <= 0)
    # Between devices referred to alike, what the command's own words share with the utterance ("stop
    # charging": the charger's stop), whether it takes the value said ("调到20度": an air conditioner, not the
    # fridge) and, last, how plainly it is the operation's ("暂停" alone: a player's pause, not a dryer's)
    words = channels["vector"] + p.w_lexical * channels["lexical"]
    fit = np.clip(channels["argument"], -1.0, 1.0)
    place = np.maximum(choice.standing(operation), 0)
    tie = TIE_BREAK * (words + 2 * fit - 0.2 * place)  # per slot
    # a command that does not do what is asked is never offered (-inf); a device's other commands for it rank
    # just after its choice
    order = np.where(terms.device_ok, referent - OTHER_PERFORMER, -np.inf)[table.row_device] + \
        np.where(np.isfinite(performing), tie, -np.inf)[table.row_slot]
    order[rows] = referent[devices] + tie[table.row_slot[rows]]
    return order


def _top_rows(table, scores: np.ndarray, k: int, repeat_penalty: float) -> np.ndarray:
    """The k best rows by score, a device's n-th command paying n * ``repeat_penalty``."""
    finite = np.flatnonzero(np.isfinite(scores))
    if finite.size == 0:
        return finite
    # Only rows at least as good as the k-th best device's best row can make the top k: that row and
    # k - 1 better ones keep their scores, and the penalty only lowers a score.
    device_best = group_max(scores, table.device_row_starts)
    if 0 < k < len(device_best):
        finite = np.flatnonzero(np.isfinite(scores) & (scores >= -np.partition(-device_best, k - 1)[k - 1]))
    order = finite[np.argsort(-scores[finite], kind="stable")]
    # a device's n-th command in this order pays n * repeat_penalty
    devices = table.row_device[order]
    by_device = np.argsort(devices, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(devices[by_device]) != 0])
    nth = np.empty(len(order), dtype=np.int64)
    nth[by_device] = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    adjusted = scores[order].astype(np.float64) - repeat_penalty * nth
    return order[np.argsort(-adjusted, kind="stable")[:k]]


def _candidate(index, row: int, score: float, channels: dict[str, np.ndarray]) -> Candidate:
    di, ci = index.table.rows[row]
    device = index.home.devices[di]
    return Candidate(device_id=device.device_id, command_id=device.commands[ci].id, label=device.label,
                     room=device.room, category=device.category, score=round(score, 4),
                     channels=index.scoring.row_channels(row, channels))
