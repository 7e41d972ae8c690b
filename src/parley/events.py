"""Typed events a chat emits, and the console printer that shows them as AG2 users expect.

A chat emits events only to its listeners; with none (``silent=True`` and no tracing) emitting costs a
single ``if``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from parley.messages import Message, content_str
from parley.termination import StopReason

if TYPE_CHECKING:
    from rich.console import Console


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


RULE = "-" * 80


class ConsolePrinter:
    """Prints a chat to the terminal with rich, in AG2's layout."""

    def __init__(self, file: TextIO | None = None) -> None:
        from rich.console import Console

        self.console: Console = Console(file=file, highlight=False, soft_wrap=True)

    def __call__(self, event: Event) -> None:
        print_line = self.console.print
        if isinstance(event, MessageSent):
            self._print_message(event)
        elif isinstance(event, SpeakerSelected):
            print_line(f"\nNext speaker: {event.speaker}\n", style="green", markup=False)
        elif isinstance(event, Handoff):
            print_line(
                f"\n>>>>>>>> {event.via}: {event.source} -> {event.target}", style="magenta", markup=False
            )
        elif isinstance(event, ToolExecuting):
            print_line(f"\n>>>>>>>> EXECUTING FUNCTION {event.tool}...", style="magenta", markup=False)
            print_line(f"Call ID: {event.call_id}\nInput arguments: {event.arguments}", markup=False)
        elif isinstance(event, ContextUpdated):
            print_line(
                f"\n>>>>>>>> CONTEXT UPDATED by {event.agent}: {event.changes}", style="cyan", markup=False
            )
        elif isinstance(event, Notice):
            print_line(f"\n>>>>>>>> {event.text}", style="red", markup=False)
        elif isinstance(event, ChatStopped):
            print_line(f"\n>>>>>>>> CHAT STOPPED: {event.reason.detail}", style="red", markup=False)

    def _print_message(self, event: MessageSent) -> None:
        print_line = self.console.print
        message = event.message
        print_line(f"{event.sender} (to {event.recipient}):\n", style="yellow", markup=False)
        if message.get("role") == "tool":
            for response in message.get("tool_responses") or [message]:
                banner = f"***** Response from calling tool ({response.get('tool_call_id')}) *****"
                print_line(banner, style="green", markup=False)
                print_line(content_str(response.get("content")), markup=False)
                print_line("*" * len(banner), style="green", markup=False)
        else:
            content = message.get("content")
            if content is not None:
                print_line(content_str(content), markup=False)
            for call in message.get("tool_calls") or ():
                function = call.get("function", {})
                banner = f"***** Suggested tool call ({call.get('id')}): {function.get('name')} *****"
                print_line(banner, style="green", markup=False)
                print_line("Arguments: \n" + _pretty_arguments(function.get("arguments", "")), markup=False)
                print_line("*" * len(banner), style="green", markup=False)
        print_line("\n" + RULE, style="bright_black", markup=False)


def _pretty_arguments(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(arguments)
