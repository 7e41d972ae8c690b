"""``Agent``: the base of everything that takes part in a chat."""

from __future__ import annotations

from typing import Any


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
        name = getattr(self, "name", None)
        return f"{type(self).__name__}(name={name!r})"


def check_protocol_agent(agent: Any, what: str) -> None:
    """Fail, naming ``what``, unless ``agent`` implements AG2's ``Agent`` protocol (a name, ``receive``
    and ``generate_reply``).

    Raises:
        TypeError: it does not.
    """
    name = getattr(agent, "name", None)
    missing = [
        method for method in ("receive", "generate_reply") if not callable(getattr(agent, method, None))
    ]
    if not isinstance(name, str) or not name or missing:
        problem = "a string name" if not isinstance(name, str) or not name else ", ".join(missing)
        raise TypeError(
            f"{what} must be an agent: a ConversableAgent, or an object with AG2's Agent protocol "
            f"(name, description, send/receive, generate_reply); {type(agent).__name__} lacks {problem}"
        )
