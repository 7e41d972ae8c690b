"""Errors named as AG2 names them, for code that catches them by name.

They subclass ``ValueError`` or ``TypeError`` (what the input was wrong about), so code written for
parley's own errors catches them too.
"""

from __future__ import annotations


class AgentNameConflictError(ValueError):
    """Several agents of a group chat (with its nested group chats) have the name asked for."""


class InvalidCarryOverTypeError(TypeError):
    """A carryover is neither a string nor a list of strings."""
