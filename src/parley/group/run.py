"""Running a swarm or group pattern on the engine: one function for both APIs, sync and async."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from parley.agent import ConversableAgent
from parley.durable import chat_id_of, durability
from parley.engine import Chat, run_sync
from parley.events import Listener
from parley.exceptions import AgentNameConflictError
from parley.group.context_variables import ContextVariables
from parley.group.targets import AGENT_TARGETS, TransitionTarget
from parley.group.tool_execution import enable_own_tool_execution
from parley.group.transitions import GroupManager, HandoffRule
from parley.messages import Message, as_own, to_message
from parley.summary import last_message_summary
from parley.termination import max_round_condition
from parley.tracing import trace_listeners

if TYPE_CHECKING:
    from parley.chat_result import ChatResult

GroupOutcome = tuple["ChatResult", ContextVariables, "ConversableAgent"]


async def run_group(
    *,
    initial_agent: ConversableAgent,
    messages: str | list[dict[str, Any]],
    agents: Sequence[ConversableAgent],
    user_agent: ConversableAgent | None,
    max_rounds: int,
    context_variables: dict[str, Any] | None,
    after_work: TransitionTarget,
    silent: bool,
    sync: bool,
    store: Any = None,
    chat_id: str | None = None,
    listeners: Sequence[Listener] = (),
    stop_when: Any = None,
    trace: Any = None,
) -> GroupOutcome:
    """Run a swarm to its end; return ``(ChatResult, context_variables, last_speaker)``."""
    agents = _checked_agents(agents, initial_agent, user_agent, max_rounds)
    rule = HandoffRule(agents, initial_agent, user_agent, after_work)
    _check_targets(rule, agents)
    if context_variables is not None and not isinstance(context_variables, dict):
        raise TypeError(
            f"context_variables must be a dict or ContextVariables, not {type(context_variables).__name__}"
        )
    context = context_variables if isinstance(context_variables, ContextVariables) else None
    if context is None:
        context = ContextVariables(context_variables)
    members = [*agents, user_agent] if user_agent is not None else agents
    for agent in members:
        enable_own_tool_execution(agent)
        _forget_earlier_groups(agent)
    manager = GroupManager()
    starter = user_agent or _outside_user()
    with durability(store, chat_id) as durable:
        chat = Chat(
            dict.fromkeys(members, manager),
            rule,
            shape="swarm",
            conditions=[max_round_condition(max_rounds, count_tool_results=False)],
            context_variables=context,
            silent=silent,
            listeners=[*listeners, *trace_listeners(trace)],
            host=manager,
            chat_id=chat_id_of(durable, chat_id),
            stop_when=stop_when,
        )
        chat.add_speaker(starter)
        chat.describe = lambda: _graph(agents, after_work, user_agent)
        initial = _initial_messages(chat, messages, starter)
        if durable is not None:
            durable.attach(chat, "swarm", members)
        for agent in members:
            agent._joined(chat)
        finished = durable is not None and durable.finished
        if chat.state.rounds == 0:
            _start(chat, rule, initial, len(messages) if isinstance(messages, list) else 1)
        if not finished:
            if sync:
                chat.play()
            else:
                await chat.a_play()
        if user_agent is not None:
            result = chat.result(chat.views[user_agent].messages)
        else:
            result = chat.result(_as_seen_by(starter, chat), copy=False)
        if not finished:
            summary = last_message_summary(result.chat_history)
            if sync:
                chat.finish(summary)
            else:
                await chat.a_finish(summary)
            result.summary = summary
    return result, chat.state.context_variables, chat.last_speaker or starter  # type: ignore[return-value]


def _graph(
    agents: Sequence[ConversableAgent], after_work: TransitionTarget, user_agent: ConversableAgent | None
) -> dict[str, Any]:
    from parley.graph import handoff_graph

    return handoff_graph(agents, after_work, user_agent=user_agent).to_dict()


def run_group_sync(**kwargs: Any) -> GroupOutcome:
    """:func:`run_group`, synchronously."""
    return run_sync(run_group(sync=True, **kwargs))


_outside: list[ConversableAgent] = []


def _outside_user() -> ConversableAgent:
    """Who says the first message of a swarm without a user agent: ``_User``, outside the swarm."""
    if not _outside:
        _outside.append(ConversableAgent("_User", llm_config=False, human_input_mode="NEVER"))
    return _outside[0]


def _as_seen_by(starter: ConversableAgent, chat: Chat) -> list[Message]:
    name = starter.name
    return [as_own(message) if message["name"] == name else message for message in chat.messages]


def _forget_earlier_groups(agent: ConversableAgent) -> None:
    """Drop the agent's views of earlier swarms, whose managers are gone: one swarm is remembered."""
    stale = [peer for peer in agent._views if isinstance(peer, GroupManager)]
    for peer in stale:
        del agent._views[peer]


def _checked_agents(
    agents: Sequence[ConversableAgent],
    initial_agent: ConversableAgent,
    user_agent: ConversableAgent | None,
    max_rounds: int,
) -> list[ConversableAgent]:
    if not isinstance(agents, list | tuple) or not agents:
        raise ValueError("agents must be a non-empty list of agents")
    for agent in agents:
        if not isinstance(agent, ConversableAgent):
            raise TypeError(f"agents must be ConversableAgents, not {agent!r}")
    names = [agent.name for agent in agents] + ([user_agent.name] if user_agent is not None else [])
    duplicates = (
        sorted({name for name in names if names.count(name) > 1}) if len(set(names)) < len(names) else []
    )
    if duplicates:
        raise AgentNameConflictError(f"agent names must be unique in a chat; repeated: {duplicates}")
    if initial_agent not in agents:
        raise ValueError(f"initial_agent {getattr(initial_agent, 'name', initial_agent)!r} is not in agents")
    if user_agent is not None and not isinstance(user_agent, ConversableAgent):
        raise TypeError(f"user_agent must be a ConversableAgent, not {user_agent!r}")
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or max_rounds < 1:
        raise ValueError(f"max_rounds must be a positive int, not {max_rounds!r}")
    return list(agents)


def _check_targets(rule: HandoffRule, agents: list[ConversableAgent]) -> None:
    _check_target(rule, rule.after_work, "the chat's after_work")
    for agent in agents:
        handoffs = agent.handoffs
        _check_target(rule, handoffs.after_work, "after-work", agent)
        for condition in handoffs.llm_conditions:
            _check_target(rule, condition.target, "handoff", agent)


def _check_target(
    rule: HandoffRule, target: TransitionTarget | None, what: str, owner: ConversableAgent | None = None
) -> None:
    if isinstance(target, AGENT_TARGETS):
        try:
            rule.agent_for(target)
        except ValueError as error:
            label = what if owner is None else f"{owner.name}'s {what}"
            raise ValueError(f"{label}: {error}") from None


def _initial_messages(
    chat: Chat, messages: str | list[dict[str, Any]], starter: ConversableAgent
) -> tuple[Any, ConversableAgent]:
    """Seed the chat with all but the last of a list of messages (a conversation to continue); return
    the message that starts the chat (round 1) and who says it."""
    if isinstance(messages, str):
        return messages, starter
    if not isinstance(messages, list) or not messages:
        raise TypeError("messages must be a string or a non-empty list of message dicts")
    speakers = {agent.name: agent for agent in [starter, *chat.participants]}
    chosen: list[tuple[Message, ConversableAgent]] = []
    for index, message in enumerate(messages):
        name = message.get("name") if isinstance(message, dict) else None
        if name is not None and name not in speakers:
            raise ValueError(f"messages[{index}] is named {name!r}, which is not an agent of this chat")
        speaker = speakers.get(name or "", starter)
        chosen.append((to_message(message, parameter=f"messages[{index}]"), speaker))
    for message, speaker in chosen[:-1]:
        chat.seed(message, speaker)
    return chosen[-1]


def _start(chat: Chat, rule: HandoffRule, initial: tuple[Any, ConversableAgent], count: int) -> None:
    """Say the first message; a continued conversation goes on with the initial agent."""
    message, speaker = initial
    chat.append(message, speaker)
    if count > 1:
        chat.state.turn = rule.initial_agent.name
        chat.record_turn(rule.initial_agent)
