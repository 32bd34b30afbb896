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
    if operation:  # the operation decides: the screen's polarity and value rules have nothing to add
        fused = _FusedAt(terms)  # reported for the rows shown only
        order = _OperationOrder(index, operation, ir, utterance, terms)
        top, held = order.top(blocked, k, index.params.repeat_penalty)
        last = order.at(top[-1:])
    else:
        fused = order_key = terms.rows()
        held = np.flatnonzero(blocked & np.isfinite(order_key)) if blocked is not None else np.zeros(0, np.int64)
        if blocked is not None:
            order_key = np.where(blocked, -np.inf, order_key)
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
        last = order_key[top[-1:]]
    candidates = [_candidate(index, int(r), float(fused[r]), channels) for r in top]
    passed_over: list[int] = []
    if held.size:  # the blocked rows that would be offered were nothing held back
        if len(top) == k:
            held = held[fused[held] >= last[0]]
        passed_over = held[np.argsort(-fused[held], kind="stable")][:k].tolist()
    return candidates, passed_over


class _FusedAt:
    """The fused score of the rows asked for (``fused[rows]``), computed for those rows only."""

    def __init__(self, terms):
        self.terms = terms

    def __getitem__(self, rows):
        return self.terms.at(rows)


class _OperationOrder:
    """Row order for a known operation: each device's command for it (``command_choice``), devices ranked by
    how the utterance refers to them (name, room), a device's other commands for the operation just after its
    choice. No other command is offered: "unlock the front door" is never answered with its lock, "open the
    safe" never with the blinds.

    Every term is per slot or per device (a row performs the operation as its slot does; a row's fused score
    is finite where its slot's term is and its device is not filtered out), so a row's place is read for the
    rows that may rank only: each device's best is its profile's, and the top k come from the devices whose
    best reaches the k-th best device's."""

    def __init__(self, index, operation: str, ir: QueryIR, utterance: str, terms):
        table = self.table = index.table
        choice = choice_of(index)
        p = index.params
        channels = terms.channels
        performing = choice.slot_scores(operation, channels["argument"],
                                        channels["subject"] + choice.qualified(utterance))
        performing = np.where(np.isfinite(terms.per_slot), performing, -np.inf)
        self.best_slots = table.group_best_slots(performing) if len(table.slots) else np.zeros(0, np.int64)
        self.chosen = chosen = table.device_rows_of(self.best_slots, terms.device_ok)
        devices = np.flatnonzero(chosen >= 0)
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
        self.referent = referent  # per device
        self.tie = TIE_BREAK * (words + 2 * fit - 0.2 * place)  # per slot
        # a command that does not do what is asked is never offered (-inf); a device's other commands for it rank
        # just after its choice
        self.other_device = np.where(terms.device_ok, referent - OTHER_PERFORMER, -np.inf)
        self.other_slot = np.where(np.isfinite(performing), self.tie, -np.inf)

    def at(self, rows: np.ndarray) -> np.ndarray:
        """The order of these rows."""
        device, slot = self.table.row_device[rows], self.table.row_slot[rows]
        values = self.other_device[device] + self.other_slot[slot]
        mine = self.chosen[device] == rows
        values[mine] = self.referent[device[mine]] + self.tie[slot[mine]]
        return values

    def device_best(self, blocked_slots: np.ndarray) -> np.ndarray:
        """Per commanded device (``device_row_starts``): its best row's order, the ``blocked_slots`` (every row
        of them held back) aside. A device's choice and its other commands' best are its profile's slots, read
        with its own term."""
        table = self.table
        devices, _, _, starts = table.device_layout
        chosen = self.chosen[devices]
        has = chosen >= 0
        has[has] = ~blocked_slots[table.row_slot[chosen[has]]]
        best = np.full(len(devices), -np.inf)
        best[has] = self.referent[devices[has]] + self.tie[table.row_slot[chosen[has]]]
        others = np.where(blocked_slots, -np.inf, self.other_slot)
        others[self.best_slots[self.best_slots >= 0]] = -np.inf  # the choice is not among the others
        other_best = np.maximum.reduceat(others, starts)[table.device_group]
        return np.maximum(best, self.other_device[devices] + other_best)  # adding to the best other is exact

    def top(self, blocked: np.ndarray | None, k: int, repeat_penalty: float) -> tuple[np.ndarray, np.ndarray]:
        """The k best rows (``_top_rows`` of the order with ``blocked`` rows at -inf), and the blocked rows that
        would be offered were nothing held back (in row order)."""
        table = self.table
        none = np.zeros(0, dtype=np.int64)
        if not len(table.rows):
            return none, none
        held = none
        blocked_slots = np.zeros(len(table.slots), dtype=bool)
        if blocked is not None and blocked.any():
            blocked_rows = np.flatnonzero(blocked)
            held = blocked_rows[np.isfinite(self.at(blocked_rows))]
            # a slot held back on every device is held back per slot ("26度": every level command); the other
            # rows held back are read device by device
            blocked_slots = np.bincount(table.row_slot[blocked_rows], minlength=len(table.slots)) == \
                table.slot_row_counts
        best = self.device_best(blocked_slots)
        apart = held[~blocked_slots[table.row_slot[held]]]  # (a row held back whose order is -inf changes nothing)
        if apart.size:  # a device with a row held back: its best is read from its rows
            groups = table.row_group[apart]  # in row order: each device's first is where it changes
            groups = groups[np.r_[True, groups[1:] != groups[:-1]]]
            rows = table.rows_of_groups(groups)
            values = np.where(blocked[rows], -np.inf, self.at(rows))
            counts = table.device_row_counts[groups]
            best[groups] = np.maximum.reduceat(values, np.r_[0, np.cumsum(counts)[:-1]])
        threshold = _kth_best(best, k) if 0 < k < len(best) else -np.inf
        reaching = np.flatnonzero(np.isfinite(best) & (best >= threshold))
        if len(reaching) > k > 0 and repeat_penalty >= 0:
            # devices tied at the k-th best ("all the lights but ...": thousands alike): a later one's best row ties
            # with an earlier one's and comes after it, and its other rows pay the repeat penalty, so only the first
            # k of them can be in the top k
            tied = best[reaching] == threshold
            reaching = reaching[~tied | (np.cumsum(tied) <= k)]
        rows = table.rows_of_groups(reaching)
        values = self.at(rows)
        if blocked is not None:
            values = np.where(blocked[rows], -np.inf, values)
        keep = np.isfinite(values) & (values >= threshold)
        return _penalised(table, rows[keep], values[keep], k, repeat_penalty), held


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
    return _penalised(table, finite, scores[finite], k, repeat_penalty)


def _kth_best(values: np.ndarray, k: int) -> float:
    """The k-th largest of ``values`` (-inf where fewer than k are finite), selected among the finite ones:
    a partition over a home's devices, most of them -inf or tied, is slow."""
    finite = values[np.isfinite(values)]
    return -np.partition(-finite, k - 1)[k - 1] if len(finite) >= k else -np.inf


def _penalised(table, rows: np.ndarray, scores: np.ndarray, k: int, repeat_penalty: float) -> np.ndarray:
    """The k best of these rows (in row order, with their scores), a device's n-th command paying n *
    ``repeat_penalty``."""
    if not rows.size:
        return rows
    by_score = np.argsort(-scores, kind="stable")
    order = rows[by_score]
    # a device's n-th command in this order pays n * repeat_penalty
    devices = table.row_device[order]
    by_device = np.argsort(devices, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(devices[by_device]) != 0])
    nth = np.empty(len(order), dtype=np.int64)
    nth[by_device] = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    adjusted = scores[by_score].astype(np.float64) - repeat_penalty * nth
    return order[np.argsort(-adjusted, kind="stable")[:k]]


def _candidate(index, row: int, score: float, channels: dict[str, np.ndarray]) -> Candidate:
    di, ci = index.table.rows[row]
    device = index.home.devices[di]
    return Candidate(device_id=device.device_id, command_id=device.commands[ci].id, label=device.label,
                     room=device.room, category=device.category, score=round(score, 4),
                     channels=index.scoring.row_channels(row, channels))
