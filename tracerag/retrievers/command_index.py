"""CommandIndex: find the (device, command) pairs an utterance asks for, in one home.

One document per (device, command), embedded once per distinct text. A query is scored on four
channels, each kept on the candidate so a ranking can be explained:

- vector: dense similarity of the intent phrase to the command document;
- lexical: char n-gram similarity of the same texts (exact wording, "关" vs "开");
- name: fuzzy match of the device label against the utterance (custom names such as "老伙计");
- room: the device's room was asked for (a bonus, never a filter).

With a category (QueryIR.type_hint) the candidates are gated to that category first; without one
the name channel weighs more (keyword-first), because a custom name is then the strongest signal.
Bulk mode ("all", "except") chooses the command first from aggregated evidence, then expands it
to every target of the category, grouped by argument shape and batched.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict

import numpy as np
from pydantic import BaseModel

from ..signatures.query_ir import QueryIR
from .command_docs import command_text
from .command_results import BulkGroup, BulkPlan, Candidate, CapabilityOption
from .embedders import Embedder, LexicalEmbedder
from .home import Home
from .text_match import contains, name_similarity, remove_phrases, tokens

logger = logging.getLogger(__name__)

# Function characters/words that carry no name information ("把客厅的灯打开" -> 客厅, 灯).
FILLER_TOKENS = frozenset("的 了 把 将 给 帮 我 请 一 下 都 吧 呢 啊 个 些 所 有 全 部 其 他 除 外 以".split()) | {
    "the", "a", "an", "please", "all", "every", "each", "my", "in", "of", "to", "and", "except", "but",
}


class IndexParams(BaseModel):
    """The retriever's own knobs; `optimize.py tune commands` searches them without an LM."""

    w_vector: float = 1.0
    w_lexical: float = 0.35
    w_name: float = 0.3  # with a category: the gate already did most of the work
    w_name_keyword_first: float = 0.8  # no category: custom names lead
    w_room: float = 0.35
    options_window: int = 80  # rows of evidence for bulk command choice (50-100)
    options_per_command: int = 3  # at most M hits per command, so big device groups do not win by count
    options_top_n: int = 5
    option_temperature: float = 0.03
    min_top1_ratio: float = 0.5
    min_margin: float = 0.15
    category_share: float = 0.75  # share of name evidence one category needs to be "established"
    max_targets: int = 100
    max_groups: int = 10
    batch_size: int = 20


class CommandIndex:
    """Command-level index of one home. Cheap to query; shared, never copied, by DSPy optimizers."""

    def __init__(self, home: Home, embedder: Embedder, params: IndexParams | None = None,
                 lexical: LexicalEmbedder | None = None):
        self.home = home
        self.embedder = embedder
        self.lexical = lexical or LexicalEmbedder()
        self.params = params or IndexParams()
        self.rows: list[tuple[int, int]] = []  # (device position, command position)
        texts: dict[str, int] = {}
        row_doc = []
        for di, device in enumerate(home.devices):
            for ci, spec in enumerate(device.commands):
                text = command_text(spec)
                row_doc.append(texts.setdefault(text, len(texts)))
                self.rows.append((di, ci))
        self.doc_texts = list(texts)
        self.row_doc = np.asarray(row_doc, dtype=np.int64)
        self.row_device = np.asarray([r[0] for r in self.rows], dtype=np.int64)
        self.doc_vectors = embedder.embed(self.doc_texts) if self.doc_texts else np.zeros((0, embedder.dim))
        self.doc_lexical = self.lexical.embed(self.doc_texts) if self.doc_texts else np.zeros((0, 1))
        self._prepare_names()
        logger.info("indexed %s: %d devices, %d commands, %d distinct documents (%s)", home.name,
                    len(home.devices), len(self.rows), len(self.doc_texts), embedder.id)

    def __deepcopy__(self, memo):
        return self

    @property
    def manifest(self) -> dict:
        return {"home": self.home.name, "embedder": self.embedder.id, "dim": int(self.embedder.dim),
                "devices": len(self.home.devices), "rows": len(self.rows), "documents": len(self.doc_texts)}

    # ----- names and rooms -------------------------------------------------------------------

    def _prepare_names(self) -> None:
        self.room_tokens = {room: tokens(room) for room in self.home.rooms if room}
        rooms = list(self.room_tokens.values())
        self.device_rooms = np.asarray([d.room for d in self.home.devices], dtype=object)
        self.device_categories = np.asarray([d.category for d in self.home.devices], dtype=object)
        self.label_tokens = []
        for device in self.home.devices:
            full = _content(tokens(device.label))
            core = remove_phrases(full, rooms)
            self.label_tokens.append(core or full)

    def mentioned_rooms(self, utterance: str) -> list[str]:
        """Rooms named in the utterance, longest first; a room inside a longer one is not repeated."""
        toks = tokens(utterance)
        found = []
        for room, rtoks in sorted(self.room_tokens.items(), key=lambda kv: -len(kv[1])):
            if contains(toks, rtoks) and not any(contains(self.room_tokens[f], rtoks) for f in found):
                found.append(room)
        return found

    def name_scores(self, utterance: str, name_hint: str = "") -> np.ndarray:
        """Per device: how much of its label (room words removed) the utterance contains."""
        rooms = self.room_tokens.values()
        queries = [remove_phrases(_content(tokens(utterance)), rooms)]
        if name_hint:
            queries.append(_content(tokens(name_hint)))
        scores = np.zeros(len(self.home.devices), dtype=np.float32)
        memo: dict[tuple[str, ...], float] = {}
        for i, label in enumerate(self.label_tokens):
            if label not in memo:
                memo[label] = max(name_similarity(label, q) for q in queries)
            scores[i] = memo[label]
        return scores

    # ----- scoring ---------------------------------------------------------------------------

    def _device_mask(self, ir: QueryIR) -> np.ndarray:
        """Hard prefilter: devices in excluded rooms never appear."""
        mask = np.ones(len(self.home.devices), dtype=bool)
        if ir.scope_exclude:
            mask &= ~np.isin(self.device_rooms, [_room_key(r, self.room_tokens) for r in ir.scope_exclude])
        return mask

    def _room_hits(self, ir: QueryIR, utterance: str) -> np.ndarray:
        wanted = {_room_key(r, self.room_tokens) for r in ir.scope_include}
        wanted |= set(self.mentioned_rooms(utterance))
        wanted -= {_room_key(r, self.room_tokens) for r in ir.scope_exclude}
        return np.isin(self.device_rooms, list(wanted)).astype(np.float32) if wanted else \
            np.zeros(len(self.home.devices), dtype=np.float32)

    def _text_scores(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """(vector, lexical) similarity of `text` to every row."""
        if not self.rows:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.float32)
        q = self.embedder.embed([text])[0]
        lq = self.lexical.embed([text])[0]
        return (self.doc_vectors @ q)[self.row_doc], (self.doc_lexical @ lq)[self.row_doc]

    def score_rows(self, ir: QueryIR, utterance: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """Fused score per row (-inf where filtered out) and the channel arrays behind it."""
        p = self.params
        device_ok = self._device_mask(ir)
        if ir.has_category and ir.type_hint in self.home.categories:
            device_ok &= self.device_categories == ir.type_hint
            w_name = p.w_name
        else:
            w_name = p.w_name_keyword_first
        vector, lexical = self._text_scores(ir.search_text(utterance))
        name = self.name_scores(utterance, ir.name_hint)[self.row_device]
        room = self._room_hits(ir, utterance)[self.row_device]
        fused = p.w_vector * vector + p.w_lexical * lexical + w_name * name + p.w_room * room
        fused = np.where(device_ok[self.row_device], fused, -np.inf)
        return fused, {"vector": vector, "lexical": lexical, "name": name, "room": room}

    def search(self, ir: QueryIR, utterance: str, k: int = 10) -> list[Candidate]:
        """Top-k (device, command) candidates for a single-target query."""
        fused, channels = self.score_rows(ir, utterance)
        finite = np.flatnonzero(np.isfinite(fused))
        if finite.size == 0:
            return []
        top = finite[np.argsort(-fused[finite], kind="stable")[:k]]
        return [self._candidate(int(r), float(fused[r]), channels) for r in top]

    def _candidate(self, row: int, score: float, channels: dict[str, np.ndarray]) -> Candidate:
        di, ci = self.rows[row]
        device = self.home.devices[di]
        return Candidate(device_id=device.device_id, command_id=device.commands[ci].id, label=device.label,
                         room=device.room, category=device.category, score=round(score, 4),
                         channels={name: round(float(arr[row]), 4) for name, arr in channels.items()})

    # ----- bulk mode -------------------------------------------------------------------------

    def establish_category(self, ir: QueryIR, utterance: str, device_ok: np.ndarray) -> str | None:
        """The category bulk mode may expand over, or None when the home's data cannot tell.

        The LM's type_hint wins when the home has that category. Otherwise the evidence is the
        home's own data: labels the utterance names ("所有的灯" matches 吸顶灯, 台灯 ...) and category
        names it mentions ("all lights"). One category must hold `category_share` of it.
        """
        if ir.has_category and ir.type_hint in self.home.categories:
            return ir.type_hint
        evidence: dict[str, float] = defaultdict(float)
        names = self.name_scores(utterance, ir.name_hint)
        for i in np.flatnonzero(device_ok & (names > 0)):
            if self.device_categories[i]:
                evidence[self.device_categories[i]] += float(names[i])
        said = set(_content(tokens(utterance)))
        for category in self.home.categories:
            if set(_category_words(category)) <= said:
                evidence[category] += float(np.sum(self.device_categories == category))
        total = sum(evidence.values())
        if not total:
            return None
        best = max(evidence, key=evidence.get)
        return best if evidence[best] / total >= self.params.category_share else None

    def _in_scope(self, ir: QueryIR, utterance: str) -> np.ndarray:
        """Bulk targets limited to the included rooms, or to devices whose name contains the room."""
        include = [_room_key(r, self.room_tokens) for r in ir.scope_include] or self.mentioned_rooms(utterance)
        include = [r for r in include if r not in {_room_key(x, self.room_tokens) for x in ir.scope_exclude}]
        if not include:
            return np.ones(len(self.home.devices), dtype=bool)
        in_room = np.isin(self.device_rooms, include)
        named = np.asarray([any(contains(tokens(d.label), tokens(r)) for r in include)
                            for d in self.home.devices], dtype=bool)
        return in_room | named

    def bulk_scope(self, ir: QueryIR, utterance: str) -> tuple[str | None, np.ndarray]:
        """(category, device mask) a bulk command may expand over; category None = unknown."""
        device_ok = self._device_mask(ir)
        category = self.establish_category(ir, utterance, device_ok)
        if category is not None:
            device_ok &= (self.device_categories == category) & self._in_scope(ir, utterance)
        return category, device_ok

    def plan_bulk(self, ir: QueryIR, utterance: str) -> BulkPlan:
        """Choose the command from aggregated evidence, then expand it to every target."""
        p = self.params
        category, device_ok = self.bulk_scope(ir, utterance)
        if category is None:
            return BulkPlan(hint="need_clarification",
                            reason="the target category cannot be established from this home's devices")
        if not device_ok.any():
            return BulkPlan(category=category, hint="no_target", reason=f"no {category} device in scope")
        vector, lexical = self._text_scores(ir.search_text(utterance))
        fused = np.where(device_ok[self.row_device], p.w_vector * vector + p.w_lexical * lexical, -np.inf)
        options = self._options(fused, device_ok)
        if not options:
            return BulkPlan(category=category, hint="no_target", reason=f"no {category} device has commands")
        top1 = options[0].p
        margin = top1 - (options[1].p if len(options) > 1 else 0.0)
        plan = BulkPlan(category=category, options=options, top1_ratio=round(top1, 4), margin=round(margin, 4))
        if top1 < p.min_top1_ratio or margin < p.min_margin:
            return plan.model_copy(update={"hint": "need_clarification", "options": options[:3],
                                           "reason": "low confidence between the top commands"})
        return self._expand(plan, options[0].command_id, device_ok)

    def choose(self, plan: BulkPlan, command_id: str, ir: QueryIR, utterance: str) -> BulkPlan:
        """Expand a command picked outside the index (an arbiter or the user's answer)."""
        return self._expand(plan, command_id, self.bulk_scope(ir, utterance)[1])

    def _expand(self, plan: BulkPlan, command_id: str, device_ok: np.ndarray) -> BulkPlan:
        """Targets of `command_id`, grouped by argument shape, split into batches."""
        p = self.params
        pool = [self.home.devices[i] for i in np.flatnonzero(device_ok)]
        targets = [d for d in pool if d.command(command_id)]
        groups: dict[tuple, list[str]] = defaultdict(list)
        for d in targets:
            groups[d.command(command_id).compatibility].append(d.device_id)
        plan = plan.model_copy(update={
            "command_id": command_id, "hint": None, "reason": "",
            "coverage": round(len(targets) / len(pool), 4) if pool else 0.0,
            "groups": [BulkGroup(command_id=command_id, signature=_signature_text(sig), device_ids=ids)
                       for sig, ids in groups.items()],
            "batches": [ids[i:i + p.batch_size] for ids in groups.values()
                        for i in range(0, len(ids), p.batch_size)],
        })
        if not targets:
            plan.hint, plan.reason = "no_target", f"no device in scope supports {command_id}"
        elif len(targets) > p.max_targets or len(groups) > p.max_groups:
            plan.hint = "too_many_targets"
            plan.reason = (f"{len(targets)} targets in {len(groups)} groups exceed the limits "
                           f"({p.max_targets} targets, {p.max_groups} groups): narrow by room, category or name")
        return plan

    def _options(self, fused: np.ndarray, device_ok: np.ndarray) -> list[CapabilityOption]:
        p = self.params
        finite = np.flatnonzero(np.isfinite(fused))
        window = finite[np.argsort(-fused[finite], kind="stable")[:p.options_window]]
        hits: dict[str, list[float]] = defaultdict(list)
        for r in window:
            command_id = self._command_of(int(r)).id
            if len(hits[command_id]) < p.options_per_command:
                hits[command_id].append(float(fused[r]))
        ranked = sorted(hits.items(), key=lambda kv: -np.mean(kv[1]))[:p.options_top_n]
        if not ranked:
            return []
        means = np.asarray([np.mean(v) for _, v in ranked])
        weights = np.exp((means - means.max()) / max(p.option_temperature, 1e-6))
        probs = weights / weights.sum()
        pool = [self.home.devices[i] for i in np.flatnonzero(device_ok)]
        options = []
        for (command_id, _), prob in zip(ranked, probs, strict=True):
            supporting = [d for d in pool if d.command(command_id)]
            spec = supporting[0].command(command_id)
            options.append(CapabilityOption(
                command_id=command_id, description=spec.description, p=round(float(prob), 4),
                supported_devices=len(supporting), sample_devices=[d.label for d in supporting[:3]],
                sample_rooms=sorted({d.room for d in supporting if d.room})[:3]))
        return options

    def _command_of(self, row: int):
        di, ci = self.rows[row]
        return self.home.devices[di].commands[ci]


def _content(toks: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(t for t in toks if t not in FILLER_TOKENS)


def _room_key(name: str, rooms: dict[str, tuple[str, ...]]) -> str:
    """Map a room as written by a parser to the home's spelling (exact, else by tokens)."""
    if name in rooms:
        return name
    toks = tokens(name)
    for room, rtoks in rooms.items():
        if rtoks == toks:
            return room
    return name


def _category_words(category: str) -> tuple[str, ...]:
    """"AirConditioner" -> ("air", "conditioner"): category names as words a user may say."""
    return tokens(" ".join(re.findall(r"[A-Z][a-z]*|[a-z]+", category)))


def _signature_text(sig: tuple) -> str:
    command_id, kind, value_range, values = sig
    parts = [command_id, kind or "no-argument"]
    if value_range:
        parts.append(",".join(f"{k}={v}" for k, v in value_range))
    if values:
        parts.append("|".join(values))
    return ";".join(parts)


