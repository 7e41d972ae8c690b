"""Typed events a chat emits; the console that prints them is :class:`parley.console.ConsolePrinter`.

A chat emits events only to its listeners; with none (``silent=True`` and no tracing) emitting costs a
single ``if``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from parley.messages import Message
from parley.termination import StopReason

if TYPE_CHECKING:
    from parley.console import ConsolePrinter as ConsolePrinter


@dataclass(frozen=True, slots=True)
class MessageSent:
    """A message was appended to the chat: ``sender`` said it to ``recipient``."""

    sender: str
    recipient: str
    message: Message


@dataclass(frozen=True, slots=True)
class SpeakerSelected:
    """The chat's rule picked the next speaker."""

    speaker: str


@dataclass(frozen=True, slots=True)
class Handoff:
    """A swarm or pattern passed the conversation from one agent to another (or ended it)."""

    source: str
    target: str
    via: str


@dataclass(frozen=True, slots=True)
class ToolExecuting:
    """An agent is about to run a tool."""

    agent: str
    tool: str
    arguments: str
    call_id: str | None


@dataclass(frozen=True, slots=True)
class ContextUpdated:
    """A tool changed the chat's context variables."""

    agent: str
    changes: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Notice:
    """A line for the human watching: auto-reply in use, no human input received, and the like."""

    text: str


@dataclass(frozen=True, slots=True)
class ChatStopped:
    """The chat ended, and why."""

    reason: StopReason


Event = MessageSent | SpeakerSelected | Handoff | ToolExecuting | ContextUpdated | Notice | ChatStopped
Listener = Callable[[Event], None]

subscribers: list[Listener] = []
"""Listeners that get the events of every chat (tracing, UIs); see :func:`subscribe`."""


def subscribe(listener: Listener) -> Callable[[], None]:
    """Send the events of every chat started from now on to ``listener``; call the result to stop."""
    subscribers.append(listener)

    def unsubscribe() -> None:
        if listener in subscribers:
            subscribers.remove(listener)

    return unsubscribe


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Within the block, send the events of every chat started to ``listener``."""
    unsubscribe = subscribe(listener)
    try:
        yield
    finally:
        unsubscribe()


def __getattr__(name: str) -> Any:
    # The console printer lives in parley.console, which imports the event types above.
    if name == "ConsolePrinter":
        from parley.console import ConsolePrinter as ConsolePrinter

        return ConsolePrinter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
