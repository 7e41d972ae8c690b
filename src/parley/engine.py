"""The one conversation engine behind two-agent chats, group chats and swarms.

A :class:`Chat` has participants, their views, a rule that picks who speaks next (:class:`SpeakerRule`)
and conditions that end it; everything that belongs to the conversation is its :class:`ChatState`. The
loop:

1. the rule picks the next speaker, or says why there is none;
2. the speaker replies through its reply-function chain (termination and human checks first);
3. a ``None`` reply ends the chat, with the reason the agent gives;
4. the reply goes through :meth:`Chat.append`, the one door every message passes (the store, the views,
   the listeners);
5. the chat-level conditions (``max_turns``, ``max_round``...) are checked.

The loop is written once, as a coroutine. A synchronous run drives it without an event loop: nothing
in it suspends, so it finishes on its first step. While it runs, :data:`current_chat` holds the chat, so
that an agent serving several chats at once (AG2's signatures do not carry the chat) reaches the one it
is serving.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

from parley import events
from parley.budgets import Budgets
from parley.chat_result import ChatResult
from parley.console import release
from parley.coroutines import run_sync
from parley.durable import ChatScope, chat_scope
from parley.events import (
    ChatStarted,
    ChatStopped,
    ConsolePrinter,
    Event,
    Listener,
    MessageSent,
    ModelRequested,
    ModelResponded,
    SpeakerSelected,
)
from parley.journal import handoff_data, usage_data
from parley.limits import Condition, Spent, check_stop_when
from parley.messages import Message, View, as_own, model_form, to_logged
from parley.reply_chain import ReplyChain
from parley.state import ChatState
from parley.termination import StopCondition, StopKind, StopReason
from parley.tracing import environment_trace as _environment_trace

if TYPE_CHECKING:
    from parley.agent import Agent, ConversableAgent
    from parley.journal import Journal, Replayed
    from parley.models.base import ModelResponse
    from parley.models.streaming import TokenSink
    from parley.store import ChatStore

current_chat: ContextVar[Chat | None] = ContextVar("parley_current_chat", default=None)
"""The chat being served in this context (this task, under asyncio; this thread, in threads)."""

_clock = time.time


def _start_numbering() -> None:
    """Draw this process's random part of chat ids, and number its chats from 1 (again in a forked
    child, which would otherwise make the ids its parent makes)."""
    global _process, _chat_numbers
    _process = os.urandom(8).hex()
    _chat_numbers = itertools.count(1)


_process = ""
_chat_numbers = itertools.count(1)
_start_numbering()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_start_numbering)


def new_chat_id() -> str:
    """A chat id unique across processes: 64 random bits drawn per process (and per forked child), and
    the chat's number in the process."""
    return f"{_process}-{next(_chat_numbers)}"


class Named(Protocol):
    """Anything with a name: an agent, or one of its reply mixins."""

    @property
    def name(self) -> str: ...


class SpeakerRule(Protocol):
    """Picks the next speaker of a chat, or returns why there is none."""

    def next_speaker(self, chat: Chat) -> ConversableAgent | StopReason: ...

    async def a_next_speaker(self, chat: Chat) -> ConversableAgent | StopReason: ...


class Chat:
    """One conversation: its participants and their views, its rule and conditions, and its state.

    Args:
        participants: the agents that speak, each with the peer it addresses (``{agent: peer}``): the
            other agent in a two-agent chat, the manager in a group chat.
        rule: picks the next speaker.
        shape: ``"chat"``, ``"group"`` or ``"swarm"``.
        conditions: chat-level stop conditions, checked after each message.
        context_variables: the shared context (the dict itself is used, not copied).
        silent: do not print the conversation.
        listeners: event listeners of this chat (tracing, UIs), besides those of every chat.
        report_stop: tell listeners when the chat stops (not for a bare ``send``).
        host: whom a speaker that is not a participant addresses (a swarm's first message comes from
            outside the swarm when there is no user agent).
        chat_id: the chat's id (default: a new unique one).
        stop_when: stop conditions and budgets (:mod:`parley.limits`); a chat started inside a chat with
            budgets counts against them too.
        views: views the participants continue with (a continued conversation); new ones otherwise.
        log: the list to use as the log (a group chat's ``messages``); a new one otherwise.
        model_form: ``(message) -> messages | None``: what the participants' models see for a message
            with tool calls or tool results, when it differs from the message itself (a swarm leaves its
            handoff calls out); ``None`` from it, or no ``model_form``, keeps the message as it is.
        reply_filter: ``(reply, speaker) -> reply``, applied to every reply that is a message dict before
            it is appended (a group chat's own processing of what its members say).
    """

    __slots__ = (
        "_announcing",
        "_answers",
        "_emitted",
        "_reply_stop",
        "_routes",
        "_view_list",
        "budgets",
        "by_name",
        "conditions",
        "describe",
        "handoff_tool",
        "holding",
        "host",
        "journal",
        "last_speaker",
        "listeners",
        "model_form",
        "observes_models",
        "peers",
        "reply_filter",
        "report_stop",
        "rule",
        "running",
        "silent",
        "state",
        "stop_event_waits",
        "store",
        "streamers",
        "views",
    )

    def __init__(
        self,
        participants: Mapping[ConversableAgent, Agent],
        rule: SpeakerRule,
        *,
        shape: str = "chat",
        conditions: Iterable[StopCondition] = (),
        context_variables: dict[str, Any] | None = None,
        silent: bool = False,
        listeners: Iterable[Listener] = (),
        report_stop: bool = True,
        host: Agent | None = None,
        chat_id: str | None = None,
        views: Mapping[ConversableAgent, View] | None = None,
        log: list[Message] | None = None,
        stop_when: Condition | None = None,
        model_form: Callable[[Message], list[Message] | None] | None = None,
        reply_filter: Callable[[Any, ConversableAgent], Any] | None = None,
    ) -> None:
        state = self.state = ChatState(new_chat_id() if chat_id is None else chat_id, shape)
        if log is not None:
            state.messages = log
        if context_variables is not None:
            state.context_variables = context_variables
        peers = self.peers = dict(participants)
        self.by_name: dict[str, ConversableAgent] = {agent._name: agent for agent in peers}
        self.host = host
        self.rule = rule
        self.conditions = list(conditions)
        self.report_stop = report_stop
        self.silent = silent
        self.handoff_tool = ""
        """The tool whose handoff the chat took last (for events)."""
        self.describe: Callable[[], dict[str, Any] | None] | None = None
        """What the ``chat_started`` event says of the chat's handoff graph (set by swarms)."""
        self.model_form = model_form
        self.reply_filter = reply_filter
        self.last_speaker: ConversableAgent | None = None
        self.journal: Journal | None = None
        self.store: ChatStore | None = None
        self.running = False
        self._reply_stop: tuple[Named, StopReason, int] | None = None
        self.stop_event_waits = False
        """Whether the ``chat_stopped`` event waits for :meth:`send_held_stop_event` (a summary of the
        chat by a model is a call of the chat, which the event counts)."""
        self._answers: list[tuple[str, str]] = []
        self._emitted = 0
        self._routes: dict[type[Event], list[Listener]] = {}
        outer = current_chat.get()
        self._listen(listeners, outer)
        if views:
            self.views: dict[ConversableAgent, View] = {
                agent: views.get(agent) or View(for_model=agent.client is not None) for agent in peers
            }
        else:
            self.views = {agent: View(for_model=agent.client is not None) for agent in peers}
        self._view_list = list(self.views.items())
        scope = chat_scope.get()
        if scope is not None:
            scope.chats.append(self)
        self.budgets: Budgets | None = None
        if stop_when is not None or (outer is not None and outer.budgets is not None):
            own = check_stop_when(stop_when)
            if own is not None:
                state.spent = Spent()
            if outer is None:
                self.budgets = Budgets(own, state.spent, None)
            else:
                self.budgets = Budgets(own, state.spent, outer.budgets, outer.stop)

    def _listen(self, listeners: Iterable[Listener], outer: Chat | None) -> None:
        """Gather the chat's listeners: everyone's, its own, the environment's trace, those it inherits
        from the chat it runs in, and the console unless it is silent."""
        own = events.checked_listeners(listeners) if listeners else ()
        gathered: list[Listener] = [*events.subscribers, *own, *_environment_trace()]
        if outer is not None and outer.listeners:
            gathered.extend(events.inherited(outer.listeners))
        if len(gathered) > 1:
            gathered = list({id(listener): listener for listener in gathered}.values())
        self.holding = not self.silent
        """Whether the chat's console holds its text until :func:`release` (see :mod:`parley.console`)."""
        if self.holding:
            quiet = [agent._name for agent in self.peers if agent.silent]
            gathered.append(ConsolePrinter(hold=True, quiet_senders=frozenset(quiet)))
        self.listeners: list[Listener] = gathered
        if gathered:
            self._announcing = self.wants(MessageSent)
            self.observes_models = self.wants(ModelRequested) or self.wants(ModelResponded)
            self.streamers = [listener.stream_to for listener in gathered if hasattr(listener, "stream_to")]
        else:
            self._announcing = self.observes_models = False
            self.streamers = []

    # ------------------------------------------------------------------------------------------------
    # reading the state

    @property
    def chat_id(self) -> str:
        return self.state.chat_id

    @property
    def messages(self) -> list[Message]:
        """The log."""
        return self.state.messages

    @property
    def context_variables(self) -> dict[str, Any]:
        return self.state.context_variables

    @property
    def rounds(self) -> int:
        return self.state.rounds

    @property
    def tool_result_rounds(self) -> int:
        return self.state.tool_result_rounds

    @property
    def stop_reason(self) -> StopReason | None:
        return self.state.stop_reason

    @property
    def participants(self) -> list[ConversableAgent]:
        """The agents that speak in this chat."""
        return list(self.peers)

    @property
    def last_speaker_name(self) -> str | None:
        return self.state.last_speaker

    def view_of(self, agent: ConversableAgent) -> View:
        """``agent``'s view of this chat."""
        return self.views[agent]

    def seed(self, message: Message, speaker: ConversableAgent) -> None:
        """Start the chat from a conversation: ``message`` joins the log and the views, before the chat's
        own messages (it counts as no round)."""
        logged = to_logged(message, speaker.name)
        self.state.messages.append(logged)
        self._project(logged, speaker)
        self.state.last_speaker = speaker.name
        self.last_speaker = speaker

    def add_speaker(self, agent: ConversableAgent) -> None:
        """Let an agent that is not a participant say a message (a swarm's outside starter)."""
        self.by_name.setdefault(agent.name, agent)

    # ------------------------------------------------------------------------------------------------
    # the door

    def append(self, message: str | Message, speaker: ConversableAgent) -> Message:
        """Append a message: the store, the log, every participant's view, and the listeners. The one door.

        ``message`` is text or a message dict (validated, then copied); it is logged under ``speaker``.
        """
        logged = to_logged(message, speaker._name)
        if self.journal is not None:
            self.journal.write("message", self._message_fields(logged, speaker))
        self._add(logged, speaker)
        if self._announcing:
            self._announce(logged, speaker)
        return logged

    async def a_append(self, message: str | Message, speaker: ConversableAgent) -> Message:
        """Async twin of :meth:`append` (a store is written without blocking the event loop)."""
        logged = to_logged(message, speaker.name)
        if self.journal is not None:
            await self.journal.a_write("message", self._message_fields(logged, speaker))
        self._add(logged, speaker)
        if self._announcing:
            self._announce(logged, speaker)
        return logged

    def _message_fields(self, logged: Message, speaker: ConversableAgent) -> dict[str, Any]:
        fields: dict[str, Any] = {"speaker": speaker.name, "message": logged}
        if self.state.handoff is not None:
            fields["handoff"] = handoff_data(self.state.handoff)
        return fields

    def _add(self, logged: Message, speaker: ConversableAgent) -> None:
        state = self.state
        state.messages.append(logged)
        if "tool_responses" in logged:
            self._project(logged, speaker)
        else:
            own = logged
            if logged["role"] == "user":
                own = dict(logged)
                own["role"] = "assistant"
            flat = None
            if self.model_form is not None and "tool_calls" in logged:
                flat = self.model_form(logged)
            for agent, view in self._view_list:
                view.add_flattened(own if agent is speaker else logged, flat)
        state.rounds += 1
        if logged["role"] == "tool":
            state.tool_result_rounds += 1
            if state.tool_results:
                state.tool_results = {}
        state.last_speaker = speaker._name
        self.last_speaker = speaker

    def _project(self, logged: Message, speaker: ConversableAgent) -> None:
        own = as_own(logged)
        flat = model_form(logged)
        own_flat = flat if own is logged or flat is None else model_form(own)
        if self.model_form is not None and ("tool_calls" in logged or flat is not None):
            form = self.model_form(logged)
            if form is not None:
                flat = own_flat = form
        for agent, view in self._view_list:
            if agent is speaker:
                view.add_flattened(own, own_flat)
            else:
                view.add_flattened(logged, flat)

    def _announce(self, logged: Message, speaker: ConversableAgent) -> None:
        recipient = self.peers.get(speaker) or self.host
        index = len(self.state.messages) - 1
        self.emit(MessageSent(speaker._name, recipient.name if recipient else "", logged, index))

    def record_turn(self, speaker: ConversableAgent) -> None:
        """Keep a choice of the next speaker that the log cannot tell (a model's or a human's), so that a
        resumed chat does not choose again (``state.turn`` is set only in a restored state)."""
        if self.journal is not None:
            self.journal.write("turn", {"speaker": speaker.name})

    def record_human_input(self, agent: Named, answer: str) -> None:
        """Keep a human's answer."""
        if self.journal is not None:
            self.journal.write("human_input", {"agent": agent.name, "answer": answer})
        self.state.human_input.append(answer)

    def recorded_answer(self, agent: Named) -> str | None:
        """A human answer ``agent`` got in the step a crash interrupted, to use instead of asking again."""
        for index, (name, answer) in enumerate(self._answers):
            if name == agent.name:
                del self._answers[: index + 1]
                return answer
        return None

    def record_tool_outcome(self, index: int, fields: dict[str, Any]) -> None:
        """Keep the outcome of one of several tool calls of the last message, as soon as it is known."""
        self.state.tool_results[index] = fields
        if self.journal is not None:
            self.journal.write("tool_result", {"call": index, "outcome": fields})

    def add_usage(self, response: ModelResponse, agent: str) -> None:
        """Count a model call of this chat (agents' model replies count theirs themselves, the same way)."""
        self.state.usage.add(response)
        if self.journal is not None:
            self.journal.usage.append(usage_data(response))
        if self.budgets is not None:
            self.budgets.spend_model_call(agent, response)

    def take_handoff(self) -> Any:
        """The handoff the last tool results asked for (once)."""
        handoff, self.state.handoff = self.state.handoff, None
        return handoff

    def note_reply_stop(self, agent: Named, reason: StopReason) -> None:
        """Why ``agent``'s reply chain produced no reply (the first reason of a step wins)."""
        step = len(self.state.messages)
        noted = self._reply_stop
        if noted is None or noted[0] is not agent or noted[2] != step:
            self._reply_stop = (agent, reason, step)

    def _take_reply_stop(self, agent: ConversableAgent) -> StopReason:
        noted, self._reply_stop = self._reply_stop, None
        if noted is not None and noted[0] is agent and noted[2] == len(self.state.messages):
            return noted[1]
        return StopReason(StopKind.REPLY_FUNC_FINAL_NONE, f"{agent.name} produced no reply", agent.name)

    def wants(self, kind: type[Event]) -> bool:
        """Whether a listener of the chat takes events of ``kind`` (emit only those: free otherwise)."""
        route = self._routes.get(kind)
        if route is None:
            route = self._routes[kind] = [
                listener for listener in self.listeners if events.wants(listener, kind)
            ]
        return bool(route)

    def emit(self, event: Event) -> None:
        """Stamp an event with the chat's id, its sequence number and the time, and send it to the
        listeners that take its kind (after a ``chat_started`` event, if it is the chat's first)."""
        seq = self._emitted
        if seq == 0:
            self._emitted = 1
            if self.wants(ChatStarted):
                self.emit(self._started())
            seq = self._emitted
        event.chat_id = self.state.chat_id
        event.seq = seq - 1
        event.ts = _clock()
        self._emitted = seq + 1
        route = self._routes.get(type(event))
        if route is None:
            self.wants(type(event))
            route = self._routes[type(event)]
        for listener in route:
            listener(event)

    def token_sink(self, agent: str) -> TokenSink | None:
        """Where ``agent``'s streamed reply goes as it arrives: the first listener that shows streams."""
        for stream_to in self.streamers:
            found: TokenSink | None = stream_to(agent)
            if found is not None:
                return found
        return None

    def _started(self) -> ChatStarted:
        agents = [agent.name for agent in self.peers]
        graph = self.describe() if self.describe is not None else None
        return ChatStarted(self.state.shape, agents, dict(self.state.context_variables), graph)

    def stop(self, reason: StopReason) -> None:
        """End the chat for ``reason`` (the first reason given wins); a refusal by a budget of the chat
        this chat was started in ends that chat too."""
        if self.state.stop_reason is None:
            self.state.stop_reason = reason
            budgets = self.budgets
            if budgets is not None and reason is budgets.outer_refusal and budgets.stop_outer is not None:
                budgets.stop_outer(reason)

    def check_conditions(self) -> None:
        """Stop if a chat-level condition holds."""
        for condition in self.conditions:
            reason = condition.check(self)
            if reason is not None:
                self.stop(reason)
                return
        budgets = self.budgets
        if budgets is not None and budgets._checked:
            reason = budgets.check(self)
            if reason is not None:
                self.stop(reason)

    def finish(self, summary: Any) -> None:
        """Record the summary of a chat that stopped: it is finished."""
        self.state.summary = summary
        if self.journal is not None:
            self.journal.write("result", {"summary": summary})

    async def a_finish(self, summary: Any) -> None:
        """Async twin of :meth:`finish`."""
        self.state.summary = summary
        if self.journal is not None:
            await self.journal.a_write("result", {"summary": summary})

    # ------------------------------------------------------------------------------------------------
    # running

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
        if self.state.stop_reason is not None:
            return
        if sync:
            refuse_async_reply_functions(self.peers)
        token = current_chat.set(self)
        self.running = True
        speaking: ConversableAgent | None = None
        try:
            self.check_conditions()
            state = self.state
            while state.stop_reason is None:
                if state.turn is not None:
                    choice: ConversableAgent | StopReason = self.by_name[state.turn]
                    state.turn = None
                else:
                    if self.holding and getattr(self.rule, "runs_user_code", True):
                        release()
                    choice = self.rule.next_speaker(self) if sync else await self.rule.a_next_speaker(self)
                if isinstance(choice, StopReason):
                    self.stop(choice)
                    break
                speaking = choice
                if self.holding and runs_user_code(choice):
                    release()
                if self.journal is None:
                    reply = choice._take_turn(self) if sync else await choice._a_take_turn(self)
                else:
                    step = chat_scope.set(self._step_scope())
                    try:
                        reply = choice._take_turn(self) if sync else await choice._a_take_turn(self)
                    finally:
                        chat_scope.reset(step)
                if reply is None:
                    self.stop(self._take_reply_stop(choice))
                    break
                if self.reply_filter is not None and type(reply) is dict:
                    reply = self.reply_filter(reply, choice)
                if sync or self.journal is None:  # only a store's write needs waiting for
                    self.append(reply, choice)
                else:
                    await self.a_append(reply, choice)
                speaking = None
                self.check_conditions()
        except BaseException as caught:
            error = _raisable(caught)
            failed = speaking.name if speaking is not None else self.state.last_speaker
            self.stop(StopReason(StopKind.ERROR, f"{type(error).__name__}: {error}", failed))
            attach_partial_result(error, self.result())
            try:
                self._stopped()
            except Exception as also:  # the chat's own error is the one to see
                error.add_note(f"A listener also failed on the chat's stop: {type(also).__name__}: {also}")
            if error is caught:
                raise
            raise error from caught
        finally:
            self.running = False
            current_chat.reset(token)
        reason = self.state.stop_reason
        if self.journal is not None and reason is not None:
            try:
                if sync:
                    self.journal.write("stopped", {"stop_reason": reason.to_dict()})
                else:
                    await self.journal.a_write("stopped", {"stop_reason": reason.to_dict()})
            except BaseException:
                if self.holding:
                    release()
                raise
        if self.stop_event_waits:
            if self.holding:
                release()
            return
        try:
            self._stopped()
        except BaseException as error:
            attach_partial_result(error, self.result())
            raise

    def send_held_stop_event(self) -> None:
        """Send the ``chat_stopped`` event that :attr:`stop_event_waits` held back."""
        if self.stop_event_waits:
            self.stop_event_waits = False
            self._stopped()

    def _stopped(self) -> None:
        """Tell the listeners that the chat stopped, and write what its console holds."""
        reason = self.state.stop_reason
        try:
            if (
                self.listeners
                and reason is not None
                and (self.wants(ChatStopped) or (self._emitted == 0 and self.wants(ChatStarted)))
            ):  # (a chat_started event goes out before the chat's first event)
                self.emit(ChatStopped(reason, self.state.usage.totals(), quiet=not self.report_stop))
        finally:
            if self.holding:
                release()

    def _step_scope(self) -> ChatScope:
        """Where the chats a step of a durable chat starts are kept: in the same store, with ids from this
        step, listed with the chat's own (a batch's item)."""
        outer = chat_scope.get()
        return ChatScope(
            self.store,
            f"{self.state.chat_id}/{len(self.state.messages)}",
            None if outer is None else outer.chats,
        )

    def announce_speaker(self, speaker: ConversableAgent, reason: str = "") -> None:
        """Tell listeners which agent the rule picked, and why (group chats print it)."""
        if self.listeners and self.wants(SpeakerSelected):
            self.emit(SpeakerSelected(speaker.name, reason))

    # ------------------------------------------------------------------------------------------------
    # results and resuming

    def result(
        self, history: Sequence[Message] | None = None, *, copy: bool = True, cost: bool = True
    ) -> ChatResult:
        """The chat's result so far (summary is filled in by the caller).

        ``history`` is the chat as the initiator saw it (default: the log); it is copied unless ``copy``
        is off, for a list the caller made for the result. Without ``cost`` the caller fills it in.
        """
        state = self.state
        chosen = state.messages if history is None else history
        return ChatResult(
            chat_id=state.chat_id,
            chat_history=list(chosen) if copy or not isinstance(chosen, list) else chosen,
            summary=state.summary,
            cost=state.usage.to_dict() if cost else {},
            human_input=list(state.human_input),
            stop_reason=state.stop_reason,
        )

    def restore(self, replayed: Replayed) -> None:
        """Continue from recorded state: the log, the views, the counters, the pending step.

        Raises:
            ValueError: the records name a speaker this chat does not have.
        """
        state = replayed.state
        log = self.state.messages
        log[:] = state.messages
        state.messages = log
        context = self.state.context_variables
        context.clear()
        context.update(state.context_variables)
        state.context_variables = context
        counted = self.state.spent
        if counted is not None:  # the budgets count on from what the records say was spent
            _take_spending(counted, state)
            state.spent = counted
        self.state = state
        by_name = self.by_name
        self.views = {agent: View(for_model=agent.client is not None) for agent in self.peers}
        self._view_list = list(self.views.items())
        for agent, view in self._view_list:
            for message in replayed.seeds.get(agent.name, ()):
                view.add(message)
        seeded = replayed.seeded
        self._project_all(
            state.messages[seeded:],
            self._speakers(replayed.speakers),
            [index - seeded for index in replayed.tool_messages if index >= seeded],
        )
        if state.last_speaker is not None:
            self.last_speaker = by_name.get(state.last_speaker)
        self._answers = list(replayed.pending_answers)

    def _speakers(self, names: list[str]) -> list[ConversableAgent]:
        """The agents ``names`` name, in order.

        Raises:
            ValueError: one of them is not an agent of this chat.
        """
        by_name = self.by_name
        try:
            return list(map(by_name.__getitem__, names))
        except KeyError:
            name = next(name for name in names if name not in by_name)
            raise ValueError(
                f"chat {self.state.chat_id!r} was recorded with a message from {name!r}, an agent this run "
                f"does not have (it has {', '.join(by_name)})"
            ) from None

    def _project_all(
        self, messages: list[Message], speakers: list[ConversableAgent], with_tools: list[int]
    ) -> None:
        """:meth:`_project` each message of ``speakers``'; only those at ``with_tools`` may hold tool calls
        or results. The messages between those that need more go into every view at once."""
        special = self.model_form is not None
        start = 0
        for index in with_tools:
            message = messages[index]
            if message.get("tool_responses") or (special and "tool_calls" in message):
                self._project_plain(messages[start:index], speakers[start:index])
                self._project(message, speakers[index])
                start = index + 1
        self._project_plain(messages[start:], speakers[start:])

    def _project_plain(self, messages: list[Message], speakers: list[ConversableAgent]) -> None:
        """Project messages without tool results (nor, in a chat with a ``model_form``, tool calls)."""
        for agent, view in self._view_list:
            view.extend_plain(
                [
                    as_own(message) if speaker is agent else message
                    for message, speaker in zip(messages, speakers, strict=True)
                ]
            )


def _take_spending(counted: Spent, recorded: ChatState) -> None:
    """Set ``counted`` to what a recorded chat spent: its records' figures, or, for a chat recorded
    without budgets, its model calls' usage and the tool calls in its log."""
    spent = recorded.spent
    if spent is not None:
        counted.tokens, counted.cost = spent.tokens, spent.cost
        counted.model_calls, counted.tool_calls = spent.model_calls, spent.tool_calls
        return
    totals = recorded.usage.totals()
    counted.tokens = totals["prompt_tokens"] + totals["completion_tokens"]
    counted.cost = totals["cost"]
    counted.model_calls = totals["calls"]
    counted.tool_calls = sum(
        len(message.get("tool_responses") or ())
        for message in recorded.messages
        if message.get("role") == "tool"
    )


def refuse_async_reply_functions(agents: Iterable[ConversableAgent]) -> None:
    """Refuse to run a synchronous chat in which an agent has an async reply function (it cannot be run
    there, and skipping it would change the agent's replies).

    Raises:
        RuntimeError: naming the agent and its functions.
    """
    for agent in agents:
        unusable = agent._async_reply_functions_unusable_in_sync_chat()
        if unusable:
            raise RuntimeError(
                f"{agent.name} has async reply functions {unusable}: run the chat with its a_ twin "
                "(a_initiate_chat...), or register them with ignore_async_in_sync_chat=True"
            )


def runs_user_code(agent: ConversableAgent) -> bool:
    """Whether ``agent``'s turn may run code of the user's before it waits for a model, a tool or a
    human: hooks, reply functions other than parley's own (nested chats count as the user's: they
    may call the user's functions), or handoffs whose availability or prompt a function decides."""
    if agent._hooks is not None:
        return True
    chain = agent._reply_func_list
    own = chain.own_only if type(chain) is ReplyChain else None
    if own is None:
        own = all(_is_own(entry["reply_func"]) for entry in chain)
        if type(chain) is ReplyChain:
            chain.own_only = own
    if not own:
        return True
    handoffs = agent._handoffs
    return handoffs is not None and handoffs.runs_user_code


def _is_own(function: Any) -> bool:
    module = getattr(function, "__module__", None) or ""
    return module.startswith("parley.") and module != "parley.nested"


_PARTIAL_RESULT_NOTE = "parley: the chat stopped after "

_STOP_ITERATION = (
    "code the chat called raised StopIteration (an iterator that ran out, such as a scripted human's "
    "next(answers))"
)


def _raisable(error: BaseException) -> BaseException:
    """The exception a chat ends with for ``error``: a ``StopIteration`` cannot leave the chat's
    coroutines as itself (Python makes it a ``RuntimeError: coroutine raised StopIteration``), so it is
    a ``RuntimeError`` that says what happened."""
    stopped = isinstance(error, StopIteration) or (
        type(error) is RuntimeError and isinstance(error.__cause__, StopIteration)
    )
    return RuntimeError(_STOP_ITERATION) if stopped else error


def attach_partial_result(error: BaseException, result: ChatResult) -> None:
    """Keep the conversation so far on an exception that ended a chat, as ``error.chat_result``: of the
    outermost chat it ended, as it leaves the chats started inside others (a nested chat's failure ends
    the chat the caller started, whose conversation is the one to see)."""
    try:
        error.chat_result = result  # type: ignore[attr-defined]
    except AttributeError:
        return
    notes = getattr(error, "__notes__", None)
    if notes:
        notes[:] = [note for note in notes if not note.startswith(_PARTIAL_RESULT_NOTE)]
    error.add_note(
        f"{_PARTIAL_RESULT_NOTE}{len(result.chat_history)} messages; "
        "the conversation so far is on this exception's .chat_result"
    )


class Alternating:
    """Two-agent chats: the agents take turns."""

    __slots__ = ("first", "second")

    runs_user_code = False
    """Whether choosing the next speaker may run code of the user's; a rule without this attribute is
    taken to (a printing chat writes what its console holds first)."""

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

    def __init__(self, first: ConversableAgent, second: ConversableAgent, *, requested: bool | None) -> None:
        super().__init__(first, second)
        self.requested = requested
        """Whether the first message asks for a reply (``None``: as its recipient replies on receive)."""

    def next_speaker(self, chat: Chat) -> ConversableAgent | StopReason:
        speaker = self.second if chat.last_speaker is self.first else self.first
        first_reply, self.requested = self.requested, None
        if first_reply is True or (first_reply is None and speaker.reply_at_receive[chat.peers[speaker]]):
            return speaker
        if first_reply is False:
            return StopReason(StopKind.NO_NEXT_SPEAKER, "no reply was requested", speaker.name)
        return StopReason(StopKind.NO_NEXT_SPEAKER, f"{speaker.name} does not reply on receive", speaker.name)
