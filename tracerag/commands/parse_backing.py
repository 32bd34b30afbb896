"""Whether the utterance backs what an LM's parse narrows or decides, where the rules read it themselves.

Why: the safety screen's checks (``home_commands.safety_screen.check_parse``) hold each field of an LM's parse to
what is *possible* (a room of this home, a category it has, words the utterance says for a name) and to the
polarity the words say. A real small model (SmolLM2-135M, decoding against the schema) writes parses that pass
them and still lose the command: every room of the home as the scope, ``all`` for one device, ``on`` for "调到
26度". These checks hold the fields that decide the search to what the utterance says, where the rule parse reads
the same thing from the words:

- ``scope_include``: a room the LM limits to must be one the utterance limits to (a room, a short form, a kind of
  room, outside an except clause: what the rule parse reads); else the rooms the rules read;
- ``quantifier``: all/except, where the rules' quantifier words say otherwise, is the rules' (the words say
  "all" or they do not; one device for "所有灯" is as wrong as every light for "床头灯"); ``scope_exclude`` only
  where the words say "except", and only what they except (a room the rules read there, or a name said);
- ``operation``: where the words name an operation (the rules read one) and the LM names another, the words';
  where they set a target ("换到13台") an operation that sets nothing (``on``) is none, and its action the rules';
- ``name_hint``: words no device here is named by (the whole utterance, "turn the Living Room Lamp off") are no
  name;
- ``type_hint``: a kind none of whose devices here can do the operation asked is not the kind meant.

Fields the rules leave open (an operation they cannot read, a category, ``any``) stay the LM's: that is what an
LM adds. Each failed check is named in ``lm_overruled`` like the screen's own.
"""

from __future__ import annotations

import numpy as np

from ..device_operations import OPERATIONS, OTHER
from ..home_commands.command_choice import choice_of
from ..home_commands.home_index import CommandIndex
from ..home_commands.text_match import tokens
from ..signatures.query_ir import QueryIR

__all__ = ["backed_by_words"]

SETTING = tuple(op for op in OPERATIONS if op.startswith("set_")) + ("preset",)  # operations that set a value


def backed_by_words(parsed: QueryIR, rules: QueryIR, text: str, index: CommandIndex,
                    asked_rows: np.ndarray | None = None) -> tuple[QueryIR, list[str]]:
    """``parsed`` (the LM's, as the screen left it) with each field the utterance does not back replaced by the
    rule parse's, and the names of the checks that failed. ``asked_rows``: the sensitive rows the words ask for
    (the screen's); an LM operation that performs one of them is what the words ask, whatever the rules read
    ("let him into the boiler room": unlock, where the rules read on)."""
    update: dict[str, object] = {}
    rooms = index.rooms
    # the rooms the words limit to (a room said in an except clause is excluded, not a limit)
    if parsed.scope_include and not set(rooms.expand(parsed.scope_include)) <= set(rooms.expand(rules.scope_include)):
        update["scope_include"] = rules.scope_include
    if (parsed.is_bulk or rules.is_bulk) and parsed.quantifier != rules.quantifier:
        update["quantifier"] = rules.quantifier
    if parsed.scope_exclude and not (rules.quantifier == "except" and all(
            _excepted_said(name, rules, text, index) for name in parsed.scope_exclude)):
        update["scope_exclude"] = rules.scope_exclude
    if rules.operation is not None and parsed.operation is not None and parsed.operation != rules.operation \
            and not _performs_the_ask(index, parsed.operation, asked_rows):
        update["operation"] = rules.operation
    elif rules.operation is None and parsed.operation not in (None, *SETTING) and QueryIR.sets_target(text):
        update["operation"], update["action"] = None, rules.action  # "换到13台": switching on reaches no target
    if parsed.name_hint and parsed.name_hint != rules.name_hint and not _a_name_here(parsed.name_hint, index):
        update["name_hint"] = rules.name_hint
    operation = update.get("operation", parsed.operation) or rules.operation
    if parsed.has_category and operation not in (None, OTHER) and not _able(index, parsed.type_hint, operation):
        update["type_hint"] = rules.type_hint
    checks = [key for key in ("scope_include", "scope_exclude", "quantifier", "operation", "type_hint", "name_hint")
              if key in update]
    return (parsed.model_copy(update=update) if update else parsed), checks


def _performs_the_ask(index: CommandIndex, operation: str, asked_rows: np.ndarray | None) -> bool:
    """Whether the operation performs a sensitive command the words ask for."""
    return asked_rows is not None and bool(asked_rows.size) and \
        bool(choice_of(index).performing(operation)[asked_rows].any())


def _able(index: CommandIndex, category: str, operation: str) -> bool:
    """Whether some device of ``category`` in this home has a command performing ``operation``."""
    return bool((choice_of(index).devices_able(operation) & (index.table.device_categories == category)).any())


def _excepted_said(name: str, rules: QueryIR, text: str, index: CommandIndex) -> bool:
    """Whether an excepted entry is one the words except: a room the rule parse excepts, or a name (of a device)
    whose words the utterance says."""
    rooms = index.rooms
    if rooms.names_a_room(name):
        return set(rooms.expand([name])) <= set(rooms.expand(rules.scope_exclude))
    key = index.names.name_key(name)
    return bool(key) and set(key) <= set(tokens(text))


def _a_name_here(name: str, index: CommandIndex) -> bool:
    """Whether some device of this home is named by the words of ``name`` (each of them in its label)."""
    key = index.names.name_key(name)
    return bool(key) and bool(index.names.carrying(key).any())
