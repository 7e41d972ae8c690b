"""The console: a chat's events as text, in AG2's layout.

To a file or a pipe the console writes plain text, one write per event, and needs nothing beyond the
standard library. At a terminal it writes the same text in colour, unless colour is off there, as rich
decides it (``NO_COLOR`` set, or ``TERM`` ``dumb`` or ``unknown``). Its styles are ANSI's named colours,
whose escape codes rich renders the same at every colour depth, so they are known without loading rich
(tens of milliseconds at a process's first printed chat); on Windows, whose consoles differ, rich
works them out. Either way they are worked out once per process, so a coloured line costs what a plain
one does.

Each event kind is shown by one small method, registered with :func:`shows`, that returns the event's
text; events of kinds the console does not show are ignored.

A chat that prints holds its events' text (``ConsolePrinter(hold=True)``) and writes it with
:func:`release` when it is about to wait (for a model, a tool or a human), before it runs code of yours
that might print (reply functions, hooks, a speaker-selection function, an after-work function), and
when it stops. A swarm's handoff (the tool call, its execution, its result and the handoff) is thus one
write, not four: at a terminal, whose output is line-buffered, each write is a system call that costs
more than the text it writes. The text is held in one place for every chat of the process, so what
nested and concurrent chats print keeps the order of their events.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO, TypeVar

from parley.events import (
    ChatStopped,
    ContextUpdated,
    Event,
    Handoff,
    MessageSent,
    Notice,
    SpeakerSelected,
    ToolExecuting,
)
from parley.messages import content_str
from parley.models.streaming import StreamedText
from parley.records import FrozenRecord

RULE = "-" * 80
"""The line that closes every message, as in AG2."""


@dataclass(slots=True, init=False, repr=False, eq=False)
class Colours(FrozenRecord):
    """The escape codes that start each style of the console's text, and the one that ends a style.

    :data:`PLAIN` has none; :func:`terminal_colours` has those of the terminal the process runs in.
    """

    sender: str = ""
    speaker: str = ""
    banner: str = ""
    action: str = ""
    context: str = ""
    alert: str = ""
    rule: str = ""
    reset: str = ""

    def __init__(
        self,
        sender: str = "",
        speaker: str = "",
        banner: str = "",
        action: str = "",
        context: str = "",
        alert: str = "",
        rule: str = "",
        reset: str = "",
    ) -> None:
        object.__setattr__(self, "sender", sender)
        object.__setattr__(self, "speaker", speaker)
        object.__setattr__(self, "banner", banner)
        object.__setattr__(self, "action", action)
        object.__setattr__(self, "context", context)
        object.__setattr__(self, "alert", alert)
        object.__setattr__(self, "rule", rule)
        object.__setattr__(self, "reset", reset)


PLAIN = Colours()

#: The colour of each style at a terminal (rich's colour names; the codes of :data:`ANSI`).
TERMINAL_COLOURS = {
    "sender": "yellow",
    "speaker": "green",
    "banner": "green",
    "action": "magenta",
    "context": "cyan",
    "alert": "red",
    "rule": "bright_black",
}

ANSI = Colours(
    sender="\x1b[33m",
    speaker="\x1b[32m",
    banner="\x1b[32m",
    action="\x1b[35m",
    context="\x1b[36m",
    alert="\x1b[31m",
    rule="\x1b[90m",
    reset="\x1b[0m",
)
"""The escape codes of :data:`TERMINAL_COLOURS`, as rich renders them at any colour depth."""

_terminal_colours: list[Colours] = []

_held: list[str] = []
"""Text shown by holding consoles and not yet written, all of it for :data:`_held_to`."""
_held_to: list[TextIO] = []
"""The output the held text goes to (at most one)."""
_held_lock = threading.Lock()


def release() -> None:
    """Write the text that holding consoles keep, in one write, and flush it."""
    if _held:
        with _held_lock:
            _write_held()


def _write_held() -> None:
    """Write the held text to its output and flush it (with :data:`_held_lock` taken)."""
    if _held:
        text = "".join(_held)
        _held.clear()
        out = _held_to.pop()
        out.write(text)
        out.flush()


E = TypeVar("E")
ShowMethod = Callable[["ConsolePrinter", E], str]
Flush = bool | Callable[[E], bool]
_shown: dict[type, tuple[ShowMethod[Any], Flush[Any]]] = {}


def shows(kind: type[E], *, flush: Flush[E] = True) -> Callable[[ShowMethod[E]], ShowMethod[E]]:
    """Register the decorated :class:`ConsolePrinter` method as the way events of ``kind`` are shown.

    ``flush`` says whether the chat may wait after such an event (for a model, a tool or a human), so
    that what was printed must be seen now: ``True``, ``False``, or a function of the event. Events
    after which the chat goes straight on are left in the output's buffer, saving a system call.
    """

    def register(method: ShowMethod[E]) -> ShowMethod[E]:
        _shown[kind] = (method, flush)
        return method

    return register


def terminal_colours() -> Colours:
    """The colours of the terminal the process runs in, as rich sees it (worked out once)."""
    if not _terminal_colours:
        _terminal_colours.append(_rich_colours() if os.name == "nt" else _ansi_colours())
    return _terminal_colours[0]


def _ansi_colours() -> Colours:
    """:data:`ANSI`, or none where rich turns colour off at a terminal."""
    if os.environ.get("NO_COLOR", "") != "" or os.environ.get("TERM", "").lower() in ("dumb", "unknown"):
        return PLAIN
    return ANSI


def _rich_colours() -> Colours:
    from rich.console import COLOR_SYSTEMS, Console
    from rich.style import Style

    console = Console(force_terminal=True)
    if console.color_system is None or console.no_color or console.legacy_windows:
        return PLAIN
    color_system = COLOR_SYSTEMS[console.color_system]
    codes = {}
    for style, colour in TERMINAL_COLOURS.items():
        codes[style], _, codes["reset"] = (
            Style.parse(colour).render("\0", color_system=color_system).partition("\0")
        )
    return Colours(**codes)


class ConsolePrinter:
    """Prints a chat's events as AG2 does: plain text to a file or pipe, in colour at a terminal.

    Every event is written at once, in one write, and flushed when the chat may wait after it, so that
    a chat printed to a file or a pipe can be followed as it runs (``tail -f``); or, with ``hold``, kept
    until the chat releases it (see the module's description).

    Args:
        file: where to write; by default ``sys.stdout`` as it is when each event arrives.
        colours: the styles' escape codes; by default the terminal's (see :func:`terminal_colours`)
            when the output is a terminal, and none otherwise.
        hold: keep each event's text until :func:`release` writes it (a chat's own console does, and
            releases it before the chat waits or runs code of yours, and when it stops).
        quiet_senders: the names of agents whose messages are not shown (agents made with
            ``silent=True``, as AG2 does not print what they send).
    """

    __slots__ = ("_file", "_mid_stream", "colours", "hold", "quiet_senders", "wants")

    def __init__(
        self,
        file: TextIO | None = None,
        *,
        colours: Colours | None = None,
        hold: bool = False,
        quiet_senders: frozenset[str] = frozenset(),
    ) -> None:
        self._file = file
        self.hold = hold
        self.quiet_senders = quiet_senders
        self._mid_stream = False
        """Whether streamed text was written last (without the end of its line)."""
        if colours is None:
            colours = terminal_colours() if _is_terminal(file or sys.stdout) else PLAIN
        self.colours = colours
        self.wants = frozenset(_shown)
        """The event kinds the console shows (the chat emits no other kind for it)."""

    def stream_to(self, agent: str) -> Callable[[StreamedText], None] | None:
        """Where a streamed reply of ``agent`` is shown as it arrives: at a terminal, this console; to a
        file or a pipe nowhere (the reply is printed whole, as without streaming)."""
        out = self._file or sys.stdout
        if not _is_terminal(out):
            return None
        c = self.colours
        started: set[Any] = set()

        def show(piece: StreamedText) -> None:
            if piece.broken_off:
                if started:
                    out.write(f"\n{c.alert}(the stream broke off; another model answers){c.reset}\n")
                    out.flush()
                    started.clear()
                    self._mid_stream = False
                return
            if not started:
                release()
                started.add(None)
                out.write(f"{c.sender}{agent} (streaming):{c.reset}\n")
            if piece.tool_call is not None and (call := (piece.tool_call, piece.call_index)) not in started:
                started.add(call)
                out.write(f"\n{c.banner}calling {piece.tool_call}:{c.reset} ")
            out.write(piece.text)
            out.flush()
            self._mid_stream = True

        return show

    def __call__(self, event: Event) -> None:
        shown = _shown.get(type(event))
        if shown is None:
            return
        show, flush = shown
        out = self._file or sys.stdout
        text = show(self, event)
        if self._mid_stream:  # what follows a streamed reply starts on a line of its own
            self._mid_stream = False
            text = f"\n{text}"
        if self.hold:
            with _held_lock:
                if _held_to and _held_to[0] is not out:
                    _write_held()
                if not _held_to:
                    _held_to.append(out)
                _held.append(text)
            return
        if _held:
            release()
        out.write(text)
        if flush is True or (flush is not False and flush(event)):
            out.flush()

    # one method per event kind: the event's text, each line ending with a newline ----------------------

    # A message's tool calls are executed next (a tool that runs prints its own event, which flushes).
    @shows(MessageSent, flush=lambda event: not event.message.get("tool_calls"))
    def message_sent(self, event: MessageSent) -> str:
        if self.quiet_senders and event.sender in self.quiet_senders:
            return ""
        c = self.colours
        message = event.message
        text = f"{c.sender}{event.sender} (to {event.recipient}):{c.reset}\n\n"
        if message.get("role") == "tool":
            for response in message.get("tool_responses") or (message,):
                banner = f"***** Response from calling tool ({response.get('tool_call_id')}) *****"
                text += (
                    f"{c.banner}{banner}{c.reset}\n{content_str(response.get('content'))}\n"
                    f"{c.banner}{'*' * len(banner)}{c.reset}\n"
                )
        else:
            content = message.get("content")
            if content is not None:
                text += f"{content_str(content)}\n"
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                banner = f"***** Suggested tool call ({call.get('id')}): {function.get('name')} *****"
                text += (
                    f"{c.banner}{banner}{c.reset}\n"
                    f"Arguments: \n{function.get('arguments') or '(No arguments found)'}\n"
                    f"{c.banner}{'*' * len(banner)}{c.reset}\n"
                )
        return f"{text}\n{c.rule}{RULE}{c.reset}\n"

    @shows(SpeakerSelected)
    def speaker_selected(self, event: SpeakerSelected) -> str:
        c = self.colours
        return f"\n{c.speaker}Next speaker: {event.speaker}{c.reset}\n\n"

    @shows(Handoff)
    def handoff(self, event: Handoff) -> str:
        c = self.colours
        return f"\n{c.action}>>>>>>>> {event.via}: {event.source} -> {event.target}{c.reset}\n"

    @shows(ToolExecuting)
    def tool_executing(self, event: ToolExecuting) -> str:
        c = self.colours
        return (
            f"\n{c.action}>>>>>>>> EXECUTING FUNCTION {event.tool}...{c.reset}\n"
            f"Call ID: {event.call_id}\nInput arguments: {event.arguments}\n"
        )

    # A tool changed the context: its result, or the next tool, comes next.
    @shows(ContextUpdated, flush=False)
    def context_updated(self, event: ContextUpdated) -> str:
        c = self.colours
        return f"\n{c.context}>>>>>>>> CONTEXT UPDATED by {event.agent}: {event.changes}{c.reset}\n"

    @shows(Notice)
    def notice(self, event: Notice) -> str:
        c = self.colours
        return f"\n{c.alert}>>>>>>>> {event.text}{c.reset}\n"

    @shows(ChatStopped)
    def chat_stopped(self, event: ChatStopped) -> str:
        if event.quiet:
            return ""
        c = self.colours
        return f"\n{c.alert}>>>>>>>> CHAT STOPPED: {event.reason.detail}{c.reset}\n"


def _is_terminal(file: Any) -> bool:
    try:
        return bool(file.isatty())
    except (AttributeError, ValueError, OSError):
        return False
