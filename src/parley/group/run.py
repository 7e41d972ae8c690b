"""Running a swarm or group pattern on the engine: one function for both APIs, sync and async."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING, Any

from parley.agent import ConversableAgent
from parley.context_variables import context_problem
from parley.durable import chat_id_of, durability
from parley.engine import Chat, run_sync
from parley.events import Listener
from parley.exceptions import AgentNameConflictError
from parley.group.context_handoffs import enable_context_conditions
from parley.group.context_variables import ContextVariables
from parley.group.rounds import SwarmLimits
from parley.group.targets import AGENT_TARGETS, AgentTarget, GroupManagerTarget, TransitionTarget
from parley.group.tool_execution import enable_own_tool_execution
from parley.group.transit import Transit
from parley.group.transitions import HandoffRule
from parley.groupchat import GroupChat, GroupChatManager, speaker_named
from parley.messages import Message, as_own, to_message
from parley.summary import (
    SummaryMethod,
    empty_summary,
    last_message_summary,
    summarize_with_model,
    summary_text,
)
from parley.tracing import entry_listeners

if TYPE_CHECKING:
    from parley.chat_result import ChatResult

GroupOutcome = tuple["ChatResult", ContextVariables, "ConversableAgent"]


@dataclass(frozen=True)
class GroupApi:
    """Which public API runs a group, so that errors name its function and parameters."""

    entry: str
    manager: str
    manager_args: str
    manager_target: str


SWARM_API = GroupApi("initiate_swarm_chat", "swarm manager", "swarm_manager_args", "SWARM_MANAGER")
PATTERN_API = GroupApi("initiate_group_chat", "group manager", "group_manager_args", "GroupManagerTarget")


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
    manager_args: dict[str, Any] | None = None,
    exclude_transit_message: bool = False,
    store: Any = None,
    chat_id: str | None = None,
    listeners: Sequence[Listener] = (),
    stop_when: Any = None,
    trace: Any = None,
    summary_method: SummaryMethod = "last_msg",
    api: GroupApi = SWARM_API,
    after_the_user: TransitionTarget | None = None,
) -> GroupOutcome:
    """Run a swarm to its end; return ``(ChatResult, context_variables, last_speaker)``.

    The agents address a :class:`~parley.groupchat.GroupChatManager` (made with ``manager_args``) whose
    group chat holds the agents and the log; its ``is_termination_msg`` is checked on every message.
    """
    agents = _checked_agents(agents, initial_agent, user_agent, max_rounds, api)
    context = _checked_context(context_variables)
    members = [*agents, user_agent] if user_agent is not None else agents
    manager = _swarm_manager(members, max_rounds, manager_args, api)
    rule = HandoffRule(agents, initial_agent, user_agent, after_work, manager, after_the_user)
    _check_targets(rule, agents, api)
    transit: set[str] = set()
    for agent in members:
        enable_own_tool_execution(agent)
        handoffs = agent._handoffs
        if handoffs is not None:
            if handoffs.context_conditions:
                enable_context_conditions(agent)
            if exclude_transit_message:
                transit.update(handoffs._by_name)
        if agent._views:
            _forget_earlier_groups(agent)
    starter = user_agent or _outside_user()
    with durability(store, chat_id) as durable:
        chat = Chat(
            dict.fromkeys(members, manager),
            rule,
            shape="swarm",
            conditions=[SwarmLimits(max_rounds, manager, api.manager)],
            context_variables=context,
            silent=silent,
            listeners=entry_listeners(listeners, trace),
            host=manager,
            chat_id=chat_id_of(durable, chat_id),
            log=manager.groupchat.messages,
            model_form=Transit(transit) if transit else None,
            reply_filter=speaker_named,
            stop_when=stop_when,
        )
        manager._last_chat = chat
        chat.add_speaker(starter)
        chat.describe = lambda: _graph(agents, after_work, user_agent)
        initial = _initial_messages(chat, messages, starter)
        if durable is not None:
            durable.attach(chat, "swarm", members, messages)
        for agent in members:
            agent._joined(chat)
        finished = durable is not None and durable.finished
        if chat.state.rounds == 0:
            _start(chat, rule, initial, starter, len(messages) if isinstance(messages, list) else 1)
        if not finished:
            try:
                if sync:
                    chat.play()
                else:
                    await chat.a_play()
            except BaseException as error:
                partial = getattr(error, "chat_result", None)
                if partial is not None and partial.chat_id == chat.chat_id:
                    partial.chat_history = _history(chat, starter, user_agent)
                raise
            finally:
                # the manager is the chat's own: without it pointing back, a chat nobody holds any
                # more is freed at once rather than by the cycle collector
                manager._last_chat = None
        if user_agent is not None:
            result = chat.result(chat.views[user_agent].messages)
        else:
            result = chat.result(_as_seen_by(starter, chat), copy=False)
        if not finished:
            summary = await _summary(summary_method, result.chat_history, starter, manager, sync=sync)
            if sync:
                chat.finish(summary)
            else:
                await chat.a_finish(summary)
            result.summary = summary
    return result, chat.state.context_variables, chat.last_speaker or starter  # type: ignore[return-value]


async def _summary(
    method: SummaryMethod,
    history: list[Message],
    starter: ConversableAgent,
    manager: GroupChatManager,
    *,
    sync: bool,
) -> str:
    """The group chat's summary by AG2's ``summary_method``: the last message's text, nothing (``None``),
    a function's ``(sender, manager, summary_args)``, or the manager's model's summary (an empty one,
    with a warning, if that fails, as in AG2)."""
    if method == "last_msg":
        return last_message_summary(history)
    if method is None:
        return ""
    if method == "reflection_with_llm":
        no_model = f"the group manager {manager.name} has no model"
        if manager.client is None:  # AG2 finds this out when it asks, and warns
            return empty_summary(no_model)
        return await summarize_with_model(
            history,
            {},
            model_of=manager,
            fallback=manager,
            no_model=no_model,
            sync=sync,
            empty_if_the_call_fails=True,
        )
    assert callable(method)
    return summary_text(method(starter, manager, {}))


def _graph(
    agents: Sequence[ConversableAgent], after_work: TransitionTarget, user_agent: ConversableAgent | None
) -> dict[str, Any]:
    from parley.graph import handoff_graph

    return handoff_graph(agents, after_work, user_agent=user_agent).to_dict()


def run_group_sync(**kwargs: Any) -> GroupOutcome:
    """:func:`run_group`, synchronously."""
    return run_sync(run_group(sync=True, **kwargs))


_agent_name = operator.attrgetter("_name")

OUTSIDE_USER = "_User"
"""The name of whoever says the first message of a swarm without a user agent (not in the history)."""

_outside: list[ConversableAgent] = []


def _outside_user() -> ConversableAgent:
    """Who says the first message of a swarm without a user agent: ``_User``, outside the swarm."""
    if not _outside:
        _outside.append(ConversableAgent(OUTSIDE_USER, llm_config=False, human_input_mode="NEVER"))
    return _outside[0]


def _history(chat: Chat, starter: ConversableAgent, user_agent: ConversableAgent | None) -> list[Message]:
    """The swarm's history as its result shows it: the user agent's view, or the starter's."""
    if user_agent is not None:
        return list(chat.views[user_agent].messages)
    return _as_seen_by(starter, chat)


def _as_seen_by(starter: ConversableAgent, chat: Chat) -> list[Message]:
    """The chat as its starter saw it: its own messages as ``assistant``; the outside user's unnamed."""
    name = starter._name
    own = _unnamed if name == OUTSIDE_USER else as_own
    messages = chat.messages
    seen = list(messages)
    names = list(map(_message_name, messages))
    index = -1
    while True:
        try:
            index = names.index(name, index + 1)
        except ValueError:
            return seen
        seen[index] = own(seen[index])


_message_name = operator.itemgetter("name")


def _unnamed(message: Message) -> Message:
    """The outside user's message as the history shows it: the starter's own, without a name."""
    unnamed = dict(message)
    unnamed.pop("name", None)
    if unnamed["role"] == "user":
        unnamed["role"] = "assistant"
    return unnamed


def _forget_earlier_groups(agent: ConversableAgent) -> None:
    """Drop the agent's views of earlier swarms, whose managers are gone: one swarm is remembered."""
    stale = [peer for peer in agent._views if getattr(peer, "_runs_swarm", False)]
    for peer in stale:
        del agent._views[peer]


def _swarm_manager(
    members: list[ConversableAgent], max_rounds: int, manager_args: dict[str, Any] | None, api: GroupApi
) -> GroupChatManager:
    """The group's ``GroupChatManager``, from AG2's ``swarm_manager_args`` (``group_manager_args``)."""
    if manager_args is None:
        manager_args = {}
    if not isinstance(manager_args, dict):
        raise ValueError(f"{api.manager_args} must be a dict, not {type(manager_args).__name__}")
    if "groupchat" in manager_args:
        raise ValueError(f"'groupchat' cannot be specified in {api.manager_args} as it is set by {api.entry}")
    groupchat = GroupChat._of_checked(list(members), max_rounds)
    manager = GroupChatManager(groupchat, **manager_args)
    manager._runs_swarm = True
    return manager


def _checked_context(context_variables: dict[str, Any] | None) -> ContextVariables:
    if context_variables is not None and (problem := context_problem(context_variables)) is not None:
        raise ValueError(problem)
    if isinstance(context_variables, ContextVariables):
        return context_variables
    return ContextVariables(context_variables)


def _checked_agents(
    agents: Sequence[ConversableAgent],
    initial_agent: ConversableAgent,
    user_agent: ConversableAgent | None,
    max_rounds: int,
    api: GroupApi,
) -> list[ConversableAgent]:
    if not isinstance(initial_agent, ConversableAgent):
        raise ValueError(f"initial_agent must be a ConversableAgent, not {initial_agent!r}")
    if not isinstance(agents, list | tuple) or not agents:
        raise ValueError("agents must be a non-empty list of agents")
    if not all(map(isinstance, agents, repeat(ConversableAgent))):
        for agent in agents:
            if not isinstance(agent, ConversableAgent):
                raise ValueError(f"agents must be a list of ConversableAgents, not {agent!r}")
    if user_agent is not None and not isinstance(user_agent, ConversableAgent):
        raise ValueError(f"user_agent must be a ConversableAgent, not {user_agent!r}")
    names = list(map(_agent_name, agents))
    if user_agent is not None:
        names.append(user_agent._name)
    if len(set(names)) < len(names):
        duplicates = sorted({name for name in names if names.count(name) > 1})
        raise AgentNameConflictError(f"agent names must be unique in a chat; repeated: {duplicates}")
    if OUTSIDE_USER in names:
        raise ValueError(
            f"{OUTSIDE_USER!r} is the name a swarm gives whoever says its first message when there is no "
            "user agent; give your agent another name"
        )
    if initial_agent not in agents:
        raise ValueError(f"initial_agent {initial_agent.name!r} is not in agents")
    if isinstance(max_rounds, dict) and api is SWARM_API:
        raise ValueError(
            "max_rounds got a dict: initiate_swarm_chat's fifth parameter is max_rounds (as the swarm "
            "documentation has it); pass swarm_manager_args by keyword"
        )
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or max_rounds < 1:
        raise ValueError(f"max_rounds must be a positive int, not {max_rounds!r}")
    return list(agents)


def _check_targets(rule: HandoffRule, agents: list[ConversableAgent], api: GroupApi) -> None:
    _check_target(rule, rule.after_work, "the chat's after_work")
    by_manager = isinstance(rule.after_work, GroupManagerTarget)
    reachable = rule._reachable
    for agent in agents:
        handoffs = agent._handoffs
        if handoffs is None:
            continue
        after_work = handoffs.after_work
        if after_work is not None:
            _check_target(rule, after_work, "after-work", agent)
            by_manager = by_manager or isinstance(after_work, GroupManagerTarget)
        for condition in handoffs.llm_conditions:
            target = condition.target
            if type(target) is not AgentTarget or reachable.get(target.agent._name) is not target.agent:
                _check_target(rule, target, "handoff", agent)
        for context_condition in handoffs.context_conditions:
            _check_target(rule, context_condition.target, "context handoff", agent)
    if by_manager and rule.manager.client is None:
        raise ValueError(
            f"an after-work is {api.manager_target}, which needs the {api.manager}'s model: give it one "
            f"with {api.manager_args}={{'llm_config': ...}}"
        )


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


def _start(
    chat: Chat,
    rule: HandoffRule,
    initial: tuple[Any, ConversableAgent],
    starter: ConversableAgent,
    count: int,
) -> None:
    """Say the first message; a continued conversation, or a first message said by one of the swarm's
    agents, goes on with the initial agent."""
    message, speaker = initial
    chat.append(message, speaker)
    if count > 1 or speaker is not starter:
        chat.state.turn = rule.initial_agent.name
        chat.record_turn(rule.initial_agent)
