"""``ContextVariables``: the shared state of a swarm or group chat."""

from __future__ import annotations

from typing import Any


class ContextVariables(dict[str, Any]):
    """A dict of context variables shared by every agent and tool of a chat.

    It is a plain ``dict`` (so AG2 code that treats the swarm's context as a dict keeps working) with the
    accessors of AG2's ``ContextVariables``: ``get``, ``set``, ``remove``, ``update``, ``to_dict``...
    """

    def __init__(self, data: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(data or {}, **kwargs)

    def copy(self) -> ContextVariables:
        """A shallow copy (a chat starts from a copy of its initiator's context)."""
        copied = dict.__new__(type(self))
        dict.update(copied, self)
        return copied

    @classmethod
    def empty(cls) -> ContextVariables:
        """New, empty context variables (without running ``__init__``: agents make one each)."""
        return dict.__new__(cls)

    @property
    def data(self) -> dict[str, Any]:
        """The variables themselves (this object)."""
        return self

    def set(self, key: str, value: Any) -> None:
        """Set one variable."""
        self[key] = value

    def remove(self, key: str) -> bool:
        """Delete one variable; whether it existed."""
        return self.pop(key, _MISSING) is not _MISSING

    def contains(self, key: str) -> bool:
        """Whether a variable is set."""
        return key in self

    def to_dict(self) -> dict[str, Any]:
        """A plain-dict copy."""
        return dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ContextVariables:
        """Context variables holding a copy of ``data``."""
        return cls(dict(data))

    def __copy__(self) -> ContextVariables:
        return self.copy()

    def __repr__(self) -> str:
        return f"ContextVariables({dict.__repr__(self)})"


_MISSING = object()


def context_problem(value: object) -> str | None:
    """What makes ``value`` unfit to be a chat's context variables (a dict, or ``ContextVariables``,
    with string keys), or ``None``."""
    if not isinstance(value, dict):
        return f"context_variables must be a dict or ContextVariables, not {type(value).__name__}"
    for key in value:
        if type(key) is not str:
            return f"context_variables keys must be strings, not {key!r} ({type(key).__name__})"
    return None
