"""The filter language, and ids, as Milvus boolean expressions in which every value is an escaped string
literal, so no id or filter value can end a literal early and inject an expression.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from ..errors import InvalidValue

__all__ = ["filter_expression", "ids_expression"]


_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NEEDS_ESCAPE = re.compile('[\\\\"\\x00-\\x1f\\x7f]')


def _string_literal(value: str) -> str:
    """A double-quoted Milvus string literal holding exactly ``value``.

    Only the escapes both Milvus Lite and the server parse are used (backslash, quote, \\n, \\r, \\t);
    other control characters have no escape both accept and are refused. Everything else, non-ASCII
    included, is written as is, so no value can end the literal early and inject an expression.
    """
    if not _NEEDS_ESCAPE.search(value):  # the common case, a plain value
        return '"' + value + '"'
    out = []
    for ch in value:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            raise InvalidValue(f"filter value {value!r} holds control character {ch!r}, which Milvus cannot match")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _expressible(value: str) -> bool:
    """Whether a string literal can hold the value (see :func:`_string_literal`)."""
    return not any((ord(ch) < 0x20 or ord(ch) == 0x7F) and ch not in _ESCAPES for ch in value)


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _string_literal(value)
    if isinstance(value, int):
        return str(value)
    return repr(float(value))  # finite (check_filter), e.g. "0.5", "1e-05"


def ids_expression(ids: Sequence[str]) -> str:
    """``id in [...]`` with each id a string literal that holds exactly it.

    Never pymilvus' ``ids=``: it quotes each id with ``'`` unescaped, so an id such as
    ``x'] or id not in ['`` became an expression matching every row (a delete emptied the collection).
    """
    return "id in [" + ", ".join(_string_literal(x) for x in ids) + "]"


def filter_expression(wanted: dict[str, tuple[Any, ...]] | None) -> str:
    """The checked filter (see :func:`~.vector_store.check_filter`) as a Milvus expression; "" = no filter.

    Keys are identifiers (checked), written as ``metadata["key"]``. A list becomes an OR of equalities
    rather than ``in [...]``, which Milvus Lite does not accept on JSON keys.
    """
    if not wanted:
        return ""
    clauses = []
    for key, values in wanted.items():
        field = f"metadata[{json.dumps(key)}]"
        terms = [f"{field} == {_literal(v)}" for v in values]
        clauses.append(terms[0] if len(terms) == 1 else "(" + " or ".join(terms) + ")")
    return " and ".join(clauses)
