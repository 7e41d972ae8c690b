"""Handoffs on the context variables (``OnContextCondition``): checked before an agent replies, without
asking its model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from parley.agent_base import Agent
from parley.engine import current_chat
from parley.messages import Message

if TYPE_CHECKING:
    from parley.agent import ConversableAgent


def context_condition_reply(
    recipient: ConversableAgent,
    messages: list[Message] | None = None,
    sender: Agent | None = None,
    config: Any = None,
) -> tuple[bool, str | None]:
    """The reply of an agent one of whose context conditions holds: ``[Handing off to <target>]``, and
    the handoff for the chat's next-speaker rule. ``(False, None)`` when none holds."""
    handoffs = recipient._handoffs
    if handoffs is None:
        return False, None
    for condition in handoffs.context_conditions:
        if condition.holds(recipient, messages or []):
            chat = current_chat.get()
            if chat is not None:
                chat.state.handoff = condition.target
            return True, f"[Handing off to {condition.target.display_name()}]"
    return False, None


def enable_context_conditions(agent: ConversableAgent) -> None:
    """Check the agent's context conditions first thing in each of its replies (once it has any)."""
    handoffs = agent._handoffs
    if handoffs is None or not handoffs.context_conditions:
        return
    if any(entry["reply_func"] is context_condition_reply for entry in agent._reply_func_list):
        return
    agent.register_reply([Agent, None], context_condition_reply, position=0)
