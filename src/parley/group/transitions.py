"""The next-speaker rule of swarms and group patterns: handoffs first, then after-work."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from parley.agent import Agent
from parley.events import Handoff
from parley.group.targets import (
    AGENT_TARGETS,
    AfterWorkOption,
    AgentNameTarget,
    AgentTarget,
    FunctionTarget,
    RevertToUserTarget,
    StayTarget,
    TerminateTarget,
    TransitionTarget,
    as_target,
)
from parley.messages import Message
from parley.termination import StopKind, StopReason

if TYPE_CHECKING:
    from parley.agent import ConversableAgent
    from parley.engine import Chat


class GroupManager(Agent):
    """The peer every agent of a swarm addresses, as AG2's ``chat_manager``; it never speaks itself."""

    def __init__(self, name: str = "chat_manager") -> None:
        super().__init__(name, "Passes the conversation between the agents of a swarm.")


class Group:
    """What an after-work function is given as ``groupchat``: the agents and the messages so far."""

    def __init__(self, agents: Sequence[ConversableAgent], messages: list[Message]) -> None:
        self.agents = list(agents)
        self.messages = messages

    @property
    def agent_names(self) -> list[str]:
        return [agent.name for agent in self.agents]

    def agent_by_name(self, name: str) -> ConversableAgent | None:
        return next((agent for agent in self.agents if agent.name == name), None)


class HandoffRule:
    """Who speaks next in a swarm.

    After the first message, the initial agent. After an agent's tool calls, the same agent (which runs
    them). After its tool results, the agent a tool handed off to, or the same agent to read them. After
    a plain reply, the agent's after-work target, else the chat's. After the user, the agent that handed
    the conversation to the user.

    The rule keeps nothing of one chat: it reads the chat's state, so one rule could serve many chats.
    """

    def __init__(
        self,
        agents: Sequence[ConversableAgent],
        initial_agent: ConversableAgent,
        user_agent: ConversableAgent | None,
        after_work: TransitionTarget,
    ) -> None:
        self.agents = list(agents)
        self.by_name = {agent.name: agent for agent in self.agents}
        self._members = set(self.agents)
        self.initial_agent = initial_agent
        self.user_agent = user_agent
        self.after_work = after_work
        self._handoff_problems: dict[Any, str | None] = {}
        self._agents_for: dict[TransitionTarget, ConversableAgent] = {}

    def next_speaker(self, chat: Chat) -> ConversableAgent | StopReason:
        speaker = chat.last_speaker
        if speaker is None or speaker not in self._members:
            return self.initial_agent
        message = chat.state.messages[-1]
        if message.get("tool_calls"):
            return speaker
        if message["role"] == "tool":
            handoff = chat.take_handoff()
            if handoff is None:
                return speaker
            return self.resolve(as_target(handoff, what="a handoff"), speaker, chat, via="handoff")
        target = speaker.handoffs.after_work or self.after_work
        return self.resolve(target, speaker, chat, via="after-work")

    async def a_next_speaker(self, chat: Chat) -> ConversableAgent | StopReason:
        return self.next_speaker(chat)

    def resolve(
        self, target: TransitionTarget, speaker: ConversableAgent, chat: Chat, *, via: str
    ) -> ConversableAgent | StopReason:
        """The agent ``target`` names, or why the chat ends there."""
        known = self._agents_for.get(target) if isinstance(target, AGENT_TARGETS) else None
        if known is not None:
            return self._hand(speaker, known, chat, via)
        if isinstance(target, FunctionTarget):
            return self._call(target, speaker, chat, via)
        if isinstance(target, TerminateTarget):
            return StopReason(
                StopKind.TERMINATE_TARGET, f"{speaker.name}'s {via} ends the chat", speaker.name
            )
        if isinstance(target, RevertToUserTarget):
            if self.user_agent is None:
                return StopReason(
                    StopKind.NO_USER_TO_REVERT_TO,
                    f"{speaker.name}'s {via} reverts to the user, but the chat has no user agent",
                    speaker.name,
                )
            return self._hand(speaker, self.user_agent, chat, via)
        if isinstance(target, StayTarget):
            return self._hand(speaker, speaker, chat, via)
        if isinstance(target, AgentNameTarget) and target.agent_name not in self.by_name:
            option = _option_named(target.agent_name)
            if option is not None:
                return self.resolve(as_target(option, what=via), speaker, chat, via=via)
        return self._hand(speaker, self.agent_for(target), chat, via)

    def agent_for(self, target: TransitionTarget) -> ConversableAgent:
        """The agent of the chat an agent target names.

        Raises:
            ValueError: the agent is not in the chat.
        """
        known = self._agents_for.get(target)
        if known is not None:
            return known
        agent = self._find_agent(target)
        self._agents_for[target] = agent
        return agent

    def _find_agent(self, target: TransitionTarget) -> ConversableAgent:
        if isinstance(target, AGENT_TARGETS):
            name = target.agent_name
            agent = self.by_name.get(name)
            if agent is None and self.user_agent is not None and self.user_agent.name == name:
                agent = self.user_agent
            if agent is None or (isinstance(target, AgentTarget) and agent is not target.agent):
                raise ValueError(
                    f"handoff to {name!r}, which is not an agent of this chat ({', '.join(self.by_name)})"
                )
            return agent
        raise TypeError(f"not an agent target: {target!r}")

    def handoff_problem(self, handoff: Any) -> str | None:
        """Why a tool's handoff cannot be taken (for the tool message), or ``None`` if it can."""
        try:
            return self._handoff_problems[handoff]
        except (KeyError, TypeError):
            pass
        problem = self._handoff_problem(handoff)
        with contextlib.suppress(TypeError):
            self._handoff_problems[handoff] = problem
        return problem

    def _handoff_problem(self, handoff: Any) -> str | None:
        try:
            target = as_target(handoff, what="a handoff")
            if isinstance(target, AGENT_TARGETS):
                self.agent_for(target)
        except (TypeError, ValueError) as error:
            return str(error)
        return None

    def _hand(
        self, speaker: ConversableAgent, target: ConversableAgent, chat: Chat, via: str
    ) -> ConversableAgent:
        if chat.listeners and target is not speaker and chat.wants(Handoff):
            chat.emit(Handoff(speaker.name, target.name, via, self._why(speaker, chat, via)))
        return target

    def _why(self, speaker: ConversableAgent, chat: Chat, via: str) -> str:
        """Why a handoff happened: the tool that asked for it (and its condition), or whose after-work."""
        if via == "handoff":
            tool = speaker.handoffs.tools_by_name.get(chat.handoff_tool)
            if tool is not None:
                return f"{speaker.name} called {tool.name}: {tool.description}"
            return f"{speaker.name}'s tool {chat.handoff_tool} handed off"
        if speaker.handoffs.after_work is not None:
            return f"{speaker.name} replied without handing off; its after-work goes on"
        return f"{speaker.name} replied without handing off; the chat's after-work goes on"

    def _call(
        self, target: FunctionTarget, speaker: ConversableAgent, chat: Chat, via: str
    ) -> ConversableAgent | StopReason:
        function = target.function
        arguments: list[Any] = [
            speaker,
            chat.messages,
            Group(self.agents, chat.messages),
            chat.context_variables,
        ]
        result = function(*arguments[: _positional_count(function)])
        if result is None:
            return StopReason(
                StopKind.NO_NEXT_SPEAKER,
                f"{speaker.name}'s {via} function {target.display_name()} returned None",
                speaker.name,
            )
        if isinstance(result, FunctionTarget) or not isinstance(
            result, Agent | str | AfterWorkOption | TransitionTarget
        ):
            raise TypeError(
                f"the {via} function {target.display_name()} returned {result!r}; it must return an agent, "
                "an agent's name, an AfterWorkOption, a transition target or None"
            )
        return self.resolve(as_target(result, what=f"the {via} function's result"), speaker, chat, via=via)


def _positional_count(function: Any) -> int:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return 4
    if any(p.kind is p.VAR_POSITIONAL for p in parameters):
        return 4
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return min(4, max(3, len(positional)))


def _option_named(name: str) -> AfterWorkOption | None:
    return next((option for option in AfterWorkOption if option.value == name.upper()), None)
