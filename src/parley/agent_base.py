"""``Agent``: the base of everything that takes part in a chat."""

from __future__ import annotations


class Agent:
    """Anything that can take part in a chat: it has a ``name`` and a ``description``."""

    _is_handoff_target = True

    def __init__(self, name: str, description: str = "") -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"an agent's name must be a non-empty string, not {name!r}")
        self._name = name
        self._description = description

    @property
    def name(self) -> str:
        """The agent's name, unique within a chat."""
        return self._name

    @property
    def description(self) -> str:
        """What the agent does, as other agents (and group-chat managers) read it."""
        return self._description

    @description.setter
    def description(self, description: str) -> None:
        self._description = description

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self._name!r})"
