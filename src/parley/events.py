"""Typed events a chat emits; the console that prints them is :class:`parley.console.ConsolePrinter`.

Every event a chat emits carries the chat's id, a sequence number (from 0 in each chat), a timestamp and
the agent it is about, stamped by the chat as it emits it; :meth:`ChatEvent.to_dict` gives it as the
plain data of a JSONL trace line. A chat emits events only to its listeners; with none (``silent=True``
and no tracing) emitting costs a single ``if``.

Listeners are functions of an event: the console, :class:`parley.tracing.JsonlTrace`, OpenTelemetry
(:mod:`parley.telemetry`), or a UI. Give them to one chat (``listeners=`` on the chat entry points) or to
every chat (:func:`subscribe`, :func:`listening`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar

from parley.messages import Message
from parley.records import Record
from parley.termination import StopReason

if TYPE_CHECKING:
    from parley.console import ConsolePrinter as ConsolePrinter

FORMAT = 1
"""The version of the events' plain-data form (the ``v`` of a trace line)."""

_SHOWN = frozenset({"sender", "source", "speaker"})
"""Fields that name the event's agent and keep their own key in its plain data too."""


class ChatEvent(Record):
    """What every event has: the chat's id, its sequence number in the chat, when, and the agent."""

    __slots__ = ("chat_id", "seq", "ts")
    kind: ClassVar[str] = "event"
    agent_field: ClassVar[str | None] = None
    """The field that names the event's agent (shown as ``agent`` in its plain data)."""

    def __post_init__(self) -> None:
        self.chat_id = ""
        self.seq = 0
        self.ts = 0.0

    @property
    def agent(self) -> str | None:
        """The agent the event is about."""
        field_name = self.agent_field
        return None if field_name is None else getattr(self, field_name)

    def to_dict(self) -> dict[str, Any]:
        """The event as plain, JSON-serializable data (a trace line)."""
        data: dict[str, Any] = {
            "v": FORMAT,
            "chat_id": self.chat_id,
            "seq": self.seq,
            "ts": self.ts,
            "kind": self.kind,
            "agent": self.agent,
        }
        for item in fields(self):  # type: ignore[arg-type]
            if item.name == self.agent_field and item.name not in _SHOWN:
                continue
            value = getattr(self, item.name)
            data[item.name] = value.to_dict() if isinstance(value, StopReason) else value
        return data


@dataclass(slots=True, init=False, repr=False, eq=False)
class ChatStarted(ChatEvent):
    """The chat started: its shape, its agents, its context, and (swarms) its handoff graph."""

    kind: ClassVar[str] = "chat_started"
    shape: str
    agents: list[str]
    context: dict[str, Any]
    graph: dict[str, Any] | None = None

    def __init__(
        self, shape: str, agents: list[str], context: dict[str, Any], graph: dict[str, Any] | None = None
    ) -> None:
        self.shape = shape
        self.agents = agents
        self.context = context
        self.graph = graph
        self.__post_init__()


@dataclass(slots=True, init=False, repr=False, eq=False)
class MessageSent(ChatEvent):
    """A message was appended to the chat: ``sender`` said it to ``recipient``."""

    kind: ClassVar[str] = "message"
    agent_field: ClassVar[str | None] = "sender"
    sender: str
    recipient: str
    message: Message
    index: int = -1
    """The message's position in the chat's log."""

    def __init__(self, sender: str, recipient: str, message: Message, index: int = -1) -> None:
        self.sender = sender
        self.recipient = recipient
        self.message = message
        self.index = index
        self.__post_init__()


@dataclass(slots=True, init=False, repr=False, eq=False)
class SpeakerSelected(ChatEvent):
    """The chat's rule picked the next speaker, and why."""

    kind: ClassVar[str] = "speaker_selected"
    agent_field: ClassVar[str | None] = "speaker"
    speaker: str
    reason: str = ""

    def __init__(self, speaker: str, reason: str = "") -> None:
        self.speaker = speaker
        self.reason = reason
        self.__post_init__()


@dataclass(slots=True, init=False, repr=False, eq=False)
class Handoff(ChatEvent):
    """A swarm or pattern passed the conversation from one agent to another: ``via`` a tool's handoff or
    an after-work, and why."""

    kind: ClassVar[str] = "handoff"
    agent_field: ClassVar[str | None] = "source"
    source: str
    target: str
    via: str
    reason: str = ""

    def __init__(self, source: str, target: str, via: str, reason: str = "") -> None:
        self.source = source
        self.target = target
        self.via = via
        self.reason = reason
        self.__post_init__()


@dataclass(slots=True, init=False, repr=False, eq=False)
class ModelRequested(ChatEvent):
    """An agent asked its model for a reply."""

    kind: ClassVar[str] = "model_request"
    agent_field: ClassVar[str | None] = "requester"
    requester: str
    model: str
    messages: int
    tools: int = 0
    provider: str = "_OTHER"
    """Who serves the model, as OpenTelemetry's GenAI conventions name it (``openai``, ``anthropic``...)."""

    def __init__(
        self, requester: str, model: str, messages: int, tools: int = 0, provider: str = "_OTHER"
    ) -> None:
        self.requester = requester
        self.model = model
        self.messages = messages
        self.tools = tools
        self.provider = provider
        self.__post_init__()


@dataclass(slots=True, init=False, repr=False, eq=False)
class ModelResponded(ChatEvent):
    """A model answered: how long it took, the tokens and the cost, and whether the cache answered."""

    kind: ClassVar[str] = "model_response"
    agent_field: ClassVar[str | None] = "requester"
    requester: str
    model: str
    latency_s: float
    prompt_tokens: int
    completion_tokens: int
    cost: float
    cached: bool = False

    def __init__(
        self,
        requester: str,
        model: str,
        latency_s: float,
        prompt_tokens: int,
        completion_tokens: int,
        cost: float,
        cached: bool = False,
    ) -> None:
        self.requester = requester
        self.model = model
        self.latency_s = latency_s
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.cost = cost
        self.cached = cached
        self.__post_init__()


@dataclass(slots=True, init=False, repr=False, eq=False)
class ToolExecuting(ChatEvent):
    """An agent is about to run a tool."""

    kind: ClassVar[str] = "tool_call"
    agent_field: ClassVar[str | None] = "executor"
    executor: str
    tool: str
    arguments: str
    call_id: str | None

    def __init__(self, executor: str, tool: str, arguments: str, call_id: str | None) -> None:
        self.executor = executor
        self.tool = tool
        self.arguments = arguments
        self.call_id = call_id
        self.__post_init__()


@dataclass(slots=True, init=False, repr=False, eq=False)
class ToolFinished(ChatEvent):
    """A tool call's outcome: what the model is told, how long it took, and its error if it failed."""

    kind: ClassVar[str] = "tool_result"
    agent_field: ClassVar[str | None] = "executor"
    executor: str
    tool: str
    call_id: str | None
    content: str
    duration_s: float = 0.0
    error: str | None = None

    def __init__(
        self,
        executor: str,
        tool: str,
        call_id: str | None,
        content: str,
        duration_s: float = 0.0,
        error: str | None = None,
    ) -> None:
        self.executor = executor
        self.tool = tool
        self.call_id = call_id
        self.content = content
        self.duration_s = duration_s
        self.error = error
        self.__post_init__()


@dataclass(slots=True, init=False, repr=False, eq=False)
class ContextUpdated(ChatEvent):
    """Context variables changed: the keys set (with their new values) and the keys removed."""

    kind: ClassVar[str] = "context_updated"
    agent_field: ClassVar[str | None] = "updater"
    updater: str
    changes: dict[str, Any]
    removed: list[str] = field(default_factory=list)

    def __init__(self, updater: str, changes: dict[str, Any], removed: list[str] | None = None) -> None:
        self.updater = updater
        self.changes = changes
        self.removed = [] if removed is None else removed
        self.__post_init__()


@dataclass(slots=True, init=False, repr=False, eq=False)
class HumanInputRequested(ChatEvent):
    """The human behind an agent was asked for input."""

    kind: ClassVar[str] = "human_input_requested"
    agent_field: ClassVar[str | None] = "asker"
    asker: str
    prompt: str

    def __init__(self, asker: str, prompt: str) -> None:
        self.asker = asker
        self.prompt = prompt
        self.__post_init__()


@dataclass(slots=True, init=False, repr=False, eq=False)
class HumanInputGiven(ChatEvent):
    """The human behind an agent answered."""

    kind: ClassVar[str] = "human_input"
    agent_field: ClassVar[str | None] = "asker"
    asker: str
    answer: str

    def __init__(self, asker: str, answer: str) -> None:
        self.asker = asker
        self.answer = answer
        self.__post_init__()


@dataclass(slots=True, init=False, repr=False, eq=False)
class Notice(ChatEvent):
    """A line for the human watching: auto-reply in use, no human input received, and the like."""

    kind: ClassVar[str] = "notice"
    text: str

    def __init__(self, text: str) -> None:
        self.text = text
        self.__post_init__()


@dataclass(slots=True, init=False, repr=False, eq=False)
class ChatStopped(ChatEvent):
    """The chat ended, why, and what its model calls used."""

    kind: ClassVar[str] = "chat_stopped"
    reason: StopReason
    usage: dict[str, Any] = field(default_factory=dict)
    quiet: bool = False
    """The console does not show it (the end of a bare ``send``, not of a chat)."""

    def __init__(self, reason: StopReason, usage: dict[str, Any] | None = None, quiet: bool = False) -> None:
        self.reason = reason
        self.usage = {} if usage is None else usage
        self.quiet = quiet
        self.__post_init__()

    @property
    def agent(self) -> str | None:
        return self.reason.agent

    def to_dict(self) -> dict[str, Any]:
        data = ChatEvent.to_dict(self)
        data["stop_reason"] = data.pop("reason")
        return data


Event = ChatEvent
Listener = Callable[[Any], None]
"""A function of an event (``ChatEvent``)."""

EVENT_KINDS: dict[str, type[ChatEvent]] = {
    kind.kind: kind
    for kind in (
        ChatStarted,
        MessageSent,
        SpeakerSelected,
        Handoff,
        ModelRequested,
        ModelResponded,
        ToolExecuting,
        ToolFinished,
        ContextUpdated,
        HumanInputRequested,
        HumanInputGiven,
        Notice,
        ChatStopped,
    )
}
"""Every event class by its ``kind``."""

subscribers: list[Listener] = []
"""Listeners that get the events of every chat (tracing, UIs); see :func:`subscribe`."""


def checked_listeners(listeners: Any) -> list[Listener]:
    """``listeners`` as a list; fails, naming it, unless it is a list (or other iterable) of callables."""
    if callable(listeners) or isinstance(listeners, str) or not hasattr(listeners, "__iter__"):
        raise TypeError(f"listeners must be a list of callables that take an event, not {listeners!r:.80}")
    checked = list(listeners)
    for listener in checked:
        if not callable(listener):
            raise TypeError(f"a listener must be a callable that takes an event, not {listener!r:.80}")
    return checked


def subscribe(listener: Listener) -> Callable[[], None]:
    """Send the events of every chat started from now on to ``listener``; call the result to stop."""
    checked_listeners([listener])
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


def wants(listener: Listener, kind: type[ChatEvent]) -> bool:
    """Whether ``listener`` takes events of ``kind``: a listener with a ``wants`` attribute (a set of event
    classes) takes only those; any other takes every event."""
    wanted = getattr(listener, "wants", None)
    return wanted is None or kind in wanted


def inherited(listeners: Sequence[Listener]) -> list[Listener]:
    """The listeners a chat passes on to the chats started inside it (traces, not consoles)."""
    return [listener for listener in listeners if getattr(listener, "follows_nested_chats", False)]


def __getattr__(name: str) -> Any:
    # The console printer lives in parley.console, which imports the event types above.
    if name == "ConsolePrinter":
        from parley.console import ConsolePrinter as ConsolePrinter

        return ConsolePrinter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
