"""Swarm agents run their own tool calls, in the same round, before anything else in their turn."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from parley.messages import Message

if TYPE_CHECKING:
    from parley.agent import Agent, ConversableAgent


def generate_swarm_tool_reply(
    agent: ConversableAgent,
    messages: list[Message] | None = None,
    sender: Agent | None = None,
    config: Any = None,
) -> tuple[bool, dict[str, Any] | None]:
    """Run the tool calls of the agent's own last message, with ``context_variables`` injected.

    Context updates from the results are applied, and a handoff a tool asks for is recorded for the
    chat's next-speaker rule (the first one wins; later ones are answered as not taken).
    """
    reply = agent._own_tool_reply(messages or [])
    return reply is not None, reply


def enable_own_tool_execution(agent: ConversableAgent) -> None:
    """Let the agent run its own tool calls, first thing in its next turn."""
    agent._runs_own_tools = True
