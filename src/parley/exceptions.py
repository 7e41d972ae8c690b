"""AG2's public exception classes, so that ``except`` clauses written for AG2 catch parley's errors.

Each also derives from the built-in exception parley raised before it had them (``ValueError``,
``TypeError``), so code catching those keeps working. Model errors are in :mod:`parley.models`
(``ModelError`` and its kinds).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AgentNameConflictError",
    "InvalidCarryOverTypeError",
    "ModelToolNotSupportedError",
    "NoEligibleSpeakerError",
    "SenderRequiredError",
    "UndefinedNextAgentError",
]


class AgentNameConflictError(ValueError):
    """Two agents that must be told apart by name share one (in a group chat, or a chat of two)."""

    def __init__(self, msg: str = "agents that must be told apart share a name", *args: Any) -> None:
        super().__init__(msg, *args)


class NoEligibleSpeakerError(Exception):
    """No agent may speak next. parley ends the chat with ``StopKind.NO_NEXT_SPEAKER`` instead of raising
    it, which is what AG2's group chat does with it."""

    def __init__(self, message: str = "no agent may speak next") -> None:
        self.message = message
        super().__init__(message)


class SenderRequiredError(ValueError):
    """A sender is needed but none was given."""

    def __init__(self, message: str = "a sender is needed but none was given") -> None:
        self.message = message
        super().__init__(message)


class InvalidCarryOverTypeError(TypeError):
    """A chat's ``carryover`` is neither a string nor a list."""

    def __init__(self, message: str = "carryover must be a string or a list of strings") -> None:
        self.message = message
        super().__init__(message)


class UndefinedNextAgentError(ValueError):
    """The agents to pick the next one from are not agents of the group."""

    def __init__(self, message: str = "the agents to choose from are not agents of the group") -> None:
        self.message = message
        super().__init__(message)


class ModelToolNotSupportedError(Exception):
    """A model does not take tools. parley does not raise it (the provider's API says so if it refuses
    them); it is here for code that catches it."""

    def __init__(self, model: str) -> None:
        self.message = f"the model {model!r} does not take tools"
        super().__init__(self.message)
