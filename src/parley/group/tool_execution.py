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
    """Run the tool calls of the last message with the agent's functions and handoff tools, with
    ``context_variables`` injected.

    ``messages`` defaults to the agent's conversation with ``sender``. Context updates from the results
    are applied, and a handoff a tool asks for is recorded for the chat's next-speaker rule (the first one
    wins; later ones are answered as not taken). ``(False, None)`` when the last message calls no tools.
    """
    if messages is None:
        messages = agent._view_messages(sender)
    calls = messages[-1].get("tool_calls") if messages else None
    if not calls:
        return False, None
    return True, agent._own_tool_reply(messages, calls)


def enable_own_tool_execution(agent: ConversableAgent) -> None:
    """Let the agent run its own tool calls, first thing in its next turn: those of the functions it
    executes and of the tools it offers its model (which AG2's swarm runs in its tool executor)."""
    agent._runs_own_tools = True
    for name, tool in agent._llm_tools.items():
        if name not in agent._function_map:
            agent._set_function(name, tool)
