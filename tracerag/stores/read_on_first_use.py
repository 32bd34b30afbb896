"""A record field decoded from a bank the first time it is read: search results' ``metadata``.

Why: a search that returns hits decodes no metadata a caller never reads (ranking by id and score,
counting hits); reading it costs what decoding at search time would have. Used by
:class:`~.bank_search.Hit` and :class:`~tracerag.documents.hybrid.ScoredChunk`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from types import MethodType
from typing import Any

_DEFERRED = (partial, MethodType)  # what a field holds until first read: a call that makes its value


class ReadOnFirstUse:
    """A slotted record's field holding a value, or a call (a ``functools.partial``, or a method from
    :func:`deferred_calls`) that makes it the first time the field is read, after which the value is kept.
    The record declares the slot ``"_" + name``. With ``reader`` (another slot's name), the field may also
    hold a row number (an ``int``) that the call in that slot decodes: one call shared by a batch's records,
    no object made per record."""

    def __init__(self, reader: str | None = None) -> None:
        self._reader = reader

    def __set_name__(self, owner: type, name: str) -> None:
        self._slot = "_" + name

    def __get__(self, record: Any, owner: type | None = None) -> Any:
        if record is None:
            raise AttributeError(f"{self._slot[1:]} has no default")  # the dataclass field stays required
        value = getattr(record, self._slot)
        if type(value) is int and self._reader is not None:
            read = getattr(record, self._reader, None)
            if read is None:  # an int given as the value itself
                return value
            value = read(value)
        elif type(value) in _DEFERRED:
            value = value()
        else:
            return value
        object.__setattr__(record, self._slot, value)
        return value

    def __set__(self, record: Any, value: Any) -> None:
        object.__setattr__(record, self._slot, value)


def deferred_calls(call: Callable[[Any], Any], arguments: Iterable[Any]) -> list[Callable[[], Any]]:
    """Per argument, ``call(argument)`` to be made when a :class:`ReadOnFirstUse` field holding it is first
    read: a function bound to the argument as a method (made in C by one ``map``, one small object each,
    where a ``partial`` takes three and a call of its class)."""

    def make(argument: Any) -> Any:
        return call(argument)

    return list(map(make.__get__, arguments))
