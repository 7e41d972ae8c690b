"""``ChatState``: everything a chat needs to continue, in one plain record owned by the chat.

Agents are definitions (name, prompts, tools, handoffs, model, reply functions, hooks) that any number of
chats use at once; whatever belongs to one conversation lives here. The log is the only source of truth:
each participant's view is a projection of it, kept by the chat. The state changes only through the
chat's door (:meth:`parley.engine.Chat.append` and its siblings), which is also where the store and the
listeners attach.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from parley.limits import Spent
from parley.messages import Message
from parley.models.usage import UsageSummary
from parley.records import fields_repr
from parley.termination import StopReason


@dataclass(slots=True, eq=False, init=False, repr=False)
class ChatState:
    """One chat's state.

    Attributes:
        chat_id: the chat's id (a string, unique in its store).
        shape: ``"chat"`` (two agents), ``"group"`` (a group chat) or ``"swarm"`` (swarms and patterns).
        messages: the log, in order; messages are never changed once appended.
        context_variables: the chat's shared context.
        rounds: messages appended since the chat started (messages it was seeded with do not count).
        tool_result_rounds: how many of those were tool results.
        last_speaker: the name of the agent that said the last message.
        turn: the agent that speaks next when that is already decided but not derivable from the log (a
            speaker chosen by a model or a human, or the agent a resumed swarm continues with).
        auto_replies: each agent's consecutive auto-replies (``max_consecutive_auto_reply``).
        handoff: the handoff the last tool results asked for, until the next speaker is chosen.
        system_messages: system messages agents were given during this chat (``update_system_message``).
        usage: the model calls of the chat.
        human_input: every answer a human gave, in order.
        tool_results: results of the tool calls of the last message recorded so far (by call index),
            while that message's results are not all in.
        spent: what the chat and the chats it started used, against its budgets (with ``stop_when``).
        stop_reason: why the chat stopped, once it has.
        summary: the chat's summary, once it is finished.
    """

    chat_id: str
    shape: str
    messages: list[Message]
    context_variables: dict[str, Any]
    rounds: int
    tool_result_rounds: int
    last_speaker: str | None
    turn: str | None
    auto_replies: dict[str, int]
    handoff: Any
    system_messages: dict[str, str]
    usage: UsageSummary
    human_input: list[str]
    tool_results: dict[int, dict[str, Any]]
    spent: Spent | None
    stop_reason: StopReason | None
    summary: Any

    __repr__ = fields_repr

    def __init__(self, chat_id: str, shape: str = "chat") -> None:
        self.chat_id = chat_id
        self.shape = shape
        self.messages = []
        self.context_variables = {}
        self.rounds = 0
        self.tool_result_rounds = 0
        self.last_speaker = None
        self.turn = None
        self.auto_replies = {}
        self.handoff = None
        self.system_messages = {}
        self.usage = UsageSummary()
        self.human_input = []
        self.tool_results = {}
        self.spent = None
        self.stop_reason = None
        self.summary = None

    def to_dict(self) -> dict[str, Any]:
        """The state as plain, JSON-serializable data (handoffs by name)."""
        from parley.journal import handoff_data

        return {
            "chat_id": self.chat_id,
            "shape": self.shape,
            "messages": list(self.messages),
            "context_variables": dict(self.context_variables),
            "rounds": self.rounds,
            "tool_result_rounds": self.tool_result_rounds,
            "last_speaker": self.last_speaker,
            "turn": self.turn,
            "auto_replies": dict(self.auto_replies),
            "handoff": handoff_data(self.handoff),
            "system_messages": dict(self.system_messages),
            "usage": self.usage.to_dict(),
            "human_input": list(self.human_input),
            "spent": None if self.spent is None else self.spent.to_dict(),
            "stop_reason": None if self.stop_reason is None else self.stop_reason.to_dict(),
        }
