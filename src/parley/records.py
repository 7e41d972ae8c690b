"""Dataclasses whose methods are written once, not generated each time a process imports them.

``@dataclass`` compiles the source of ``__init__``, ``__repr__`` and ``__eq__`` (and, when frozen,
``__setattr__``, ``__delattr__`` and ``__hash__``) with ``exec`` at import: about 0.2 ms a method, a
quarter of ``import parley``. The classes ``import parley`` loads are declared instead with
``@dataclass(slots=True, init=False, repr=False, eq=False)``, write their ``__init__``, and take the rest
from :class:`Record` or :class:`FrozenRecord`, which behave as the generated methods do. They are still
dataclasses: ``dataclasses.fields``, ``replace`` and ``asdict`` work on them.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError, fields
from typing import Any


class Record:
    """``__repr__`` and ``__eq__`` as ``@dataclass`` makes them: the fields, in order, of the same class."""

    __slots__ = ()

    def __repr__(self) -> str:
        return fields_repr(self)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return _compared(self) == _compared(other)


class FrozenRecord(Record):
    """A :class:`Record` whose fields cannot be assigned after ``__init__`` (which sets them with
    ``object.__setattr__``), hashed by its fields, as a frozen dataclass is."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __hash__(self) -> int:
        return hash(_compared(self))

    def __reduce__(self) -> tuple[Any, ...]:
        # pickle and copy would restore the fields through __setattr__, which refuses
        return (type(self), tuple(getattr(self, item.name) for item in fields(self)))  # type: ignore[arg-type]


def fields_repr(record: Any) -> str:
    """A dataclass's ``__repr__``: its class and its fields, in order."""
    shown = ", ".join(f"{item.name}={getattr(record, item.name)!r}" for item in fields(record) if item.repr)
    return f"{type(record).__qualname__}({shown})"


def _compared(record: Any) -> tuple[Any, ...]:
    return tuple(getattr(record, item.name) for item in fields(record) if item.compare)
