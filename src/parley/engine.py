"""The one conversation engine behind two-agent chats, group chats and swarms.

A :class:`Chat` has participants, an append-only message log, shared context variables, a rule that
picks who speaks next (:class:`SpeakerRule`) and conditions that end it. The loop:

1. the rule picks the next speaker, or says why there is none;
2. the speaker replies through its reply-function chain (termination and human checks first);
3. a ``None`` reply ends the chat, with the reason the agent gives;
4. the reply goes through :meth:`Chat.append`, the one door every message passes;
5. the chat-level conditions (``max_turns``, ``max_round``...) are checked.

The loop is written once, as a coroutine. A synchronous run drives it without an event loop: nothing
in it suspends, so it finishes on its first step.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from parley import events
from parley.chat_result import ChatResult
from parley.coroutines import run_sync
from parley.events import ChatStopped, ConsolePrinter, Event, Listener, MessageSent, SpeakerSelected
from parley.messages import Message, View, as_own, model_form, to_logged
from parley.models.usage import UsageSummary
from parley.termination import StopCondition, StopKind, StopReason

if TYPE_CHECKING:
    from parley.agent import Agent, ConversableAgent

_chat_ids = itertools.count(1)


class SpeakerRule(Protocol):
    """Picks the next speaker of a chat, or returns why there is none."""

    def next_speaker(self, chat: Chat) -> ConversableAgent | StopReason: ...

    async def a_next_speaker(self, chat: Chat) -> ConversableAgent | StopReason: ...


class Chat:
    """One conversation: participants, their views, the log, context variables and the stop reason.

    Args:
        participants: the agents that speak, each with the peer it addresses (``{agent: peer}``): the
            other agent in a two-agent chat, the manager in a group chat.
        rule: picks the next speaker.
        conditions: chat-level stop conditions, checked after each message.
        context_variables: the shared context (the dict itself is shared, not copied).
        silent: do not print the conversation.
        listeners: extra event listeners (tracing, UIs).
        report_stop: tell listeners when the chat stops (not for a bare ``send``).
        host: whom a speaker that is not a participant addresses (a swarm's first message comes from
            outside the swarm when there is no user agent).
    """

    def __init__(
        self,
        participants: Mapping[ConversableAgent, Agent],
        rule: SpeakerRule,
        *,
        conditions: Iterable[StopCondition] = (),
        context_variables: dict[str, Any] | None = None,
        silent: bool = False,
        listeners: Iterable[Listener] = (),
        report_stop: bool = True,
        host: Agent | None = None,
    ) -> None:
        self.chat_id = next(_chat_ids)
        self.peers = dict(participants)
        self.host = host
        self.rule = rule
        self.conditions = list(conditions)
        self.context_variables: dict[str, Any] = {} if context_variables is None else context_variables
        self.listeners: list[Listener] = [*events.subscribers, *listeners]
        self.report_stop = report_stop
        if not silent:
            self.listeners.append(ConsolePrinter())
        self.messages: list[Message] = []
        self.rounds = 0
        self.tool_result_rounds = 0
        self.last_speaker: ConversableAgent | None = None
        self.stop_reason: StopReason | None = None
        self.usage = UsageSummary()
        self.human_input: list[str] = []
        self._views: list[tuple[ConversableAgent, View]] = [
            (agent, agent._view(peer)) for agent, peer in self.peers.items()
        ]

    @property
    def participants(self) -> list[ConversableAgent]:
        """The agents that speak in this chat."""
        return list(self.peers)

    @property
    def last_speaker_name(self) -> str | None:
        return None if self.last_speaker is None else self.last_speaker.name

    def append(self, message: str | Message, speaker: ConversableAgent) -> Message:
        """Append a message: the log, every participant's view, and the listeners. The one door.

        ``message`` is text or a message dict (validated, then copied); it is logged under ``speaker``.
        """
        logged = to_logged(message, speaker.name)
        self.messages.append(logged)
        own = as_own(logged)
        flat = model_form(logged)
        own_flat = flat if own is logged or flat is None else model_form(own)
        for agent, view in self._views:
            if agent is speaker:
                view.add_flattened(own, own_flat)
            else:
                view.add_flattened(logged, flat)
        self.rounds += 1
        if logged["role"] == "tool":
            self.tool_result_rounds += 1
        self.last_speaker = speaker
        if self.listeners:
            recipient = self.peers.get(speaker) or self.host
            self.emit(MessageSent(speaker.name, recipient.name if recipient else "", logged))
        return logged

    def emit(self, event: Event) -> None:
        """Send an event to every listener."""
        for listener in self.listeners:
            listener(event)

    def stop(self, reason: StopReason) -> None:
        """End the chat for ``reason`` (the first reason given wins)."""
        if self.stop_reason is None:
            self.stop_reason = reason

    def check_conditions(self) -> None:
        """Stop if a chat-level condition holds."""
        for condition in self.conditions:
            reason = condition.check(self)
            if reason is not None:
                self.stop(reason)
                return

    def run(self) -> ChatResult:
        """Run the chat to its end, synchronously."""
        run_sync(self._loop(sync=True))
        return self.result()

    async def a_run(self) -> ChatResult:
        """Run the chat to its end on the running event loop."""
        await self._loop(sync=False)
        return self.result()

    def play(self) -> None:
        """Run the chat to its end, synchronously, without building a result (see :meth:`result`)."""
        run_sync(self._loop(sync=True))

    async def a_play(self) -> None:
        """Async twin of :meth:`play`."""
        await self._loop(sync=False)

    async def _loop(self, *, sync: bool) -> None:
        saved = self._enter()
        try:
            self.check_conditions()
            while self.stop_reason is None:
                choice = self.rule.next_speaker(self) if sync else await self.rule.a_next_speaker(self)
                if isinstance(choice, StopReason):
                    self.stop(choice)
                    break
                reply = choice._take_turn(self) if sync else await choice._a_take_turn(self)
                if reply is None:
                    self.stop(choice._pop_stop_reason())
                    break
                self.append(reply, choice)
                self.check_conditions()
        except BaseException as error:
            self.stop(StopReason(StopKind.ERROR, f"{type(error).__name__}: {error}", self.last_speaker_name))
            attach_partial_result(error, self.result())
            raise
        finally:
            self._leave(saved)
        if self.listeners and self.report_stop and self.stop_reason is not None:
            self.emit(ChatStopped(self.stop_reason))

    def announce_speaker(self, speaker: ConversableAgent) -> None:
        """Tell listeners which agent the rule picked (group chats print it)."""
        if self.listeners:
            self.emit(SpeakerSelected(speaker.name))

    def result(self, history: Sequence[Message] | None = None, *, copy: bool = True) -> ChatResult:
        """The chat's result so far (summary is filled in by the caller).

        ``history`` is the chat as the initiator saw it (default: the log); it is copied unless ``copy``
        is off, for a list the caller made for the result.
        """
        chosen = self.messages if history is None else history
        return ChatResult(
            chat_id=self.chat_id,
            chat_history=list(chosen) if copy or not isinstance(chosen, list) else chosen,
            summary=None,
            cost=self.usage.to_dict(),
            human_input=list(self.human_input),
            stop_reason=self.stop_reason,
        )

    def state(self) -> dict[str, Any]:
        """The chat as plain, JSON-serializable data: log, counters, context, last speaker, stop reason."""
        return {
            "chat_id": self.chat_id,
            "messages": list(self.messages),
            "context_variables": dict(self.context_variables),
            "rounds": self.rounds,
            "tool_result_rounds": self.tool_result_rounds,
            "last_speaker": self.last_speaker_name,
            "auto_reply_counters": {
                agent.name: agent._consecutive_auto_reply_counter[peer] for agent, peer in self.peers.items()
            },
            "stop_reason": None if self.stop_reason is None else self.stop_reason.to_dict(),
        }

    def _enter(self) -> list[tuple[ConversableAgent, Chat | None, dict[str, Any]]]:
        saved = [(agent, agent._chat, agent._context_variables) for agent in self.peers]
        for agent in self.peers:
            agent._chat = self
            agent._context_variables = self.context_variables
        return saved

    def _leave(self, saved: list[tuple[ConversableAgent, Chat | None, dict[str, Any]]]) -> None:
        for agent, chat, context in saved:
            agent._chat = chat
            agent._context_variables = context


def attach_partial_result(error: BaseException, result: ChatResult) -> None:
    """Keep the conversation so far on an exception that ended a chat, as ``error.chat_result``."""
    if getattr(error, "chat_result", None) is None:
        try:
            error.chat_result = result  # type: ignore[attr-defined]
        except AttributeError:
            return
        error.add_note(
            f"parley: the chat stopped after {len(result.chat_history)} messages; "
            "the conversation so far is on this exception's .chat_result"
        )


class Alternating:
    """Two-agent chats: the agents take turns."""

    __slots__ = ("first", "second")

    def __init__(self, first: ConversableAgent, second: ConversableAgent) -> None:
        self.first = first
        self.second = second

    def next_speaker(self, chat: Chat) -> ConversableAgent | StopReason:
        return self.second if chat.last_speaker is self.first else self.first

    async def a_next_speaker(self, chat: Chat) -> ConversableAgent | StopReason:
        return self.next_speaker(chat)


class RepliesOnReceive(Alternating):
    """``send``/``receive`` outside ``initiate_chat``: an agent answers only if it replies on receive."""

    __slots__ = ("requested",)

    def __init__(self, first: ConversableAgent, second: ConversableAgent, *, requested: bool) -> None:
        super().__init__(first, second)
        self.requested = requested

    def next_speaker(self, chat: Chat) -> ConversableAgent | StopReason:
        speaker = self.second if chat.last_speaker is self.first else self.first
        if self.requested:
            self.requested = False
            return speaker
        if speaker.reply_at_receive[chat.peers[speaker]]:
            return speaker
        return StopReason(StopKind.NO_NEXT_SPEAKER, f"{speaker.name} does not reply on receive", speaker.name)
