"""How a swarm ends by itself: its round limit, and its manager's termination check."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.agent import default_is_termination_msg
from parley.termination import StopKind, StopReason

if TYPE_CHECKING:
    from parley.engine import Chat
    from parley.groupchat import GroupChatManager


class SwarmLimits:
    """Stop a swarm after ``limit`` rounds, or when its manager's ``is_termination_msg`` accepts a
    message (the first one included), as AG2's swarm manager does.

    A round is an agent speaking, with the tool calls it made run to the end (the first message is round
    1); a round is not cut between tool calls and their results. Whatever the replies hold (tool calls
    that are never answered, tool messages of their own), the swarm ends: a second message with tool
    calls past the limit, or twice the limit in messages, stops it too.
    """

    __slots__ = ("cap", "default_check", "is_termination_msg", "limit", "manager", "manager_noun")

    def __init__(self, limit: int, manager: GroupChatManager, manager_noun: str = "swarm manager") -> None:
        self.limit = limit
        self.manager_noun = manager_noun
        self.cap = 2 * limit
        self.manager = manager
        self.is_termination_msg = manager._is_termination_msg
        self.default_check = self.is_termination_msg is default_is_termination_msg

    def check(self, chat: Chat) -> StopReason | None:
        state = chat.state
        rounds = state.rounds
        message = state.messages[-1]
        if rounds - state.tool_result_rounds >= self.limit or rounds >= self.cap:
            count = rounds - state.tool_result_rounds
            if not (count == self.limit and message.get("tool_calls")):
                return StopReason(
                    StopKind.MAX_ROUND, f"Maximum rounds ({self.limit}) reached", state.last_speaker
                )
        if self.default_check:
            content = message.get("content")
            if content is None or (content != "TERMINATE" and type(content) is str):
                return None
        if not self.is_termination_msg(message):
            return None
        return StopReason(
            StopKind.TERMINATION_MSG,
            f"The {self.manager_noun} {self.manager.name} received a termination message from "
            f"{message.get('name')}",
            self.manager.name,
        )
