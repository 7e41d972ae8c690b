"""The result of a chat."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from parley.messages import Message
from parley.records import Record
from parley.termination import StopReason


@dataclass(init=False, repr=False, eq=False)
class ChatResult(Record):
    """What a finished chat returns, as in AG2, plus why it stopped.

    Attributes:
        chat_id: the chat's id (unique across processes; the id to continue it by, when it is durable).
        chat_history: the initiator's view of the conversation, OpenAI-format dicts named by speaker.
        summary: the chat's summary (``summary_method``), by default the last message's content.
        cost: usage and cost in AG2's shape: ``{"usage_including_cached_inference": {...},
            "usage_excluding_cached_inference": {...}}``.
        human_input: every answer a human gave during the chat, in order.
        stop_reason: which rule ended the chat and which agent triggered it.
    """

    chat_id: str | None = None
    chat_history: list[Message] = field(default_factory=list)
    summary: Any = None
    cost: dict[str, Any] = field(default_factory=dict)
    human_input: list[str] = field(default_factory=list)
    stop_reason: StopReason | None = None

    def __init__(
        self,
        chat_id: str | None = None,
        chat_history: list[Message] | None = None,
        summary: Any = None,
        cost: dict[str, Any] | None = None,
        human_input: list[str] | None = None,
        stop_reason: StopReason | None = None,
    ) -> None:
        self.chat_id = chat_id
        self.chat_history = [] if chat_history is None else chat_history
        self.summary = summary
        self.cost = {} if cost is None else cost
        self.human_input = [] if human_input is None else human_input
        self.stop_reason = stop_reason
