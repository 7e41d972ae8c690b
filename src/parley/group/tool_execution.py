"""Swarm agents run their own tool calls, in the same round, before anything else in their reply chain."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from parley.messages import Message
from parley.tools import HandoffCheck, Tool, a_run_tool_calls, run_tool_calls

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
    calls = _own_pending_calls(agent, messages)
    if not calls:
        return False, None
    outcomes = run_tool_calls(
        calls, _tools_of(agent), agent._context_variables, agent._on_execute, _check(agent)
    )
    return True, agent._tool_reply(outcomes)


async def a_generate_swarm_tool_reply(
    agent: ConversableAgent,
    messages: list[Message] | None = None,
    sender: Agent | None = None,
    config: Any = None,
) -> tuple[bool, dict[str, Any] | None]:
    """Async twin of :func:`generate_swarm_tool_reply`: async tools run concurrently."""
    calls = _own_pending_calls(agent, messages)
    if not calls:
        return False, None
    outcomes = await a_run_tool_calls(
        calls, _tools_of(agent), agent._context_variables, agent._on_execute, _check(agent)
    )
    return True, agent._tool_reply(outcomes)


def enable_own_tool_execution(agent: ConversableAgent) -> None:
    """Put :func:`generate_swarm_tool_reply` first in the agent's reply chain (once)."""
    from parley.agent import Agent

    if any(entry["reply_func"] is generate_swarm_tool_reply for entry in agent._reply_func_list):
        return
    agent.register_reply(
        [Agent, None], generate_swarm_tool_reply, position=0, async_twin=a_generate_swarm_tool_reply
    )


def _own_pending_calls(agent: ConversableAgent, messages: list[Message] | None) -> list[dict[str, Any]]:
    if not messages:
        return []
    last = messages[-1]
    if last.get("name") != agent.name or not last.get("tool_calls"):
        return []
    return list(last["tool_calls"])


def _tools_of(agent: ConversableAgent) -> dict[str, Tool]:
    handoff_tools = agent.handoffs.tools
    if not handoff_tools:
        return agent._function_map
    return {**agent._function_map, **{tool.name: tool for tool in handoff_tools}}


def _check(agent: ConversableAgent) -> HandoffCheck | None:
    rule = agent._chat.rule if agent._chat is not None else None
    check: HandoffCheck | None = getattr(rule, "handoff_problem", None)
    return check
