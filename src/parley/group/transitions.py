"""The next-speaker rule of swarms and group patterns: handoffs first, then after-work."""

from __future__ import annotations

import contextlib
import inspect
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from parley.agent import Agent
from parley.console import release
from parley.coroutines import run_sync
from parley.events import Handoff
from parley.group.context_expression import ContextStr
from parley.group.targets import (
    AGENT_TARGETS,
    AfterWorkOption,
    AgentNameTarget,
    AgentTarget,
    AskUserTarget,
    FunctionTarget,
    GroupManagerTarget,
    RevertToUserTarget,
    StayTarget,
    TerminateTarget,
    TransitionTarget,
    as_target,
)
from parley.speaker_selection import AutoSelection, SpeakerSelection, agent_list
from parley.termination import StopKind, StopReason

if TYPE_CHECKING:
    from parley.agent import ConversableAgent
    from parley.engine import Chat
    from parley.groupchat import GroupChatManager


_agent_name = operator.attrgetter("_name")


class _ManagerChoice:
    """A next speaker the swarm manager's model is to choose (sync or async, as the chat runs)."""

    __slots__ = ("by_human", "prompt", "speaker", "via")

    def __init__(
        self, speaker: ConversableAgent, prompt: str | None, via: str, by_human: bool = False
    ) -> None:
        self.speaker = speaker
        self.prompt = prompt
        self.via = via
        self.by_human = by_human
        """The human chooses (``AskUserTarget``), not the manager's model."""


class HandoffRule:
    """Who speaks next in a swarm.

    After the first message, the initial agent. After an agent's tool calls, the same agent (which runs
    them). After its tool results, the agent a tool handed off to, or the same agent to read them. After
    a plain reply, the agent's after-work target, else the chat's. After the user, the agent that handed
    the conversation to the user.

    A context condition that held (``OnContextCondition``) hands off like a tool's handoff. The
    ``SWARM_MANAGER`` option asks the manager's model, as a group chat's ``"auto"`` selection does.

    The rule keeps nothing of one chat but the manager's transcript for its model: it reads the chat's
    state.
    """

    runs_user_code = False
    """Choosing runs no code of the user's but an after-work function, or asks the manager's model or
    the human; before those, a printing chat's held text is written (see :mod:`parley.console`)."""

    def __init__(
        self,
        agents: Sequence[ConversableAgent],
        initial_agent: ConversableAgent,
        user_agent: ConversableAgent | None,
        after_work: TransitionTarget,
        manager: GroupChatManager,
        after_the_user: TransitionTarget | None = None,
    ) -> None:
        self.agents = list(agents)
        self.by_name: dict[str, ConversableAgent] = dict(
            zip(map(_agent_name, self.agents), self.agents, strict=True)
        )
        self._members = set(self.agents)
        self._reachable = dict(self.by_name)
        if user_agent is not None:
            self._reachable.setdefault(user_agent._name, user_agent)
        self.initial_agent = initial_agent
        self.user_agent = user_agent
        self.after_work = after_work
        self.after_the_user = after_the_user
        """Where the user agent hands over when it has no after-work of its own (``None``: back to the
        agent that spoke before it)."""
        self.manager = manager
        self._auto: AutoSelection | None = None
        self._handoff_checked: dict[Any, None] = {}
        self._agents_for: dict[TransitionTarget, ConversableAgent] = {}

    async def a_next_speaker(self, chat: Chat) -> ConversableAgent | StopReason:
        self._deferring = True
        try:
            choice = self.next_speaker(chat)
        finally:
            self._deferring = False
        if type(choice) is _ManagerChoice:
            return await self._choose(choice, chat, sync=False)
        return choice

    _deferring = False
    """Whether :meth:`next_speaker` leaves a choice of the manager's model to its async caller."""

    def next_speaker(self, chat: Chat) -> ConversableAgent | StopReason:
        speaker = chat.last_speaker
        if speaker is None or speaker not in self._members:
            if speaker is None or speaker is not self.user_agent or chat.state.rounds <= 1:
                return self.initial_agent  # the first message goes to the initial agent
            handoffs = speaker._handoffs
            target = (
                self.after_the_user
                if handoffs is None or handoffs.after_work is None
                else handoffs.after_work
            )
            if target is None:
                return self._after_the_user(chat)
            choice = self.resolve(target, speaker, chat, via="after-work")
            if type(choice) is not _ManagerChoice or self._deferring:
                return choice  # type: ignore[return-value]
            return run_sync(self._choose(choice, chat, sync=True))
        message = chat.state.messages[-1]
        if message.get("tool_calls"):
            return speaker
        if message["role"] == "tool":
            handoff = chat.take_handoff()
            if handoff is None:
                return speaker
            if type(handoff) is AgentTarget:
                agent = handoff.agent
                if self._reachable.get(agent._name) is agent:
                    return self._hand(speaker, agent, chat, "handoff") if chat.listeners else agent
            choice = self.resolve(as_target(handoff, what="a handoff"), speaker, chat, via="handoff")
        elif chat.state.handoff is not None:
            target = as_target(chat.take_handoff(), what="a handoff")
            choice = self.resolve(target, speaker, chat, via="context condition")
        else:
            target = speaker.handoffs.after_work or self.after_work
            choice = self.resolve(target, speaker, chat, via="after-work")
        if type(choice) is not _ManagerChoice or self._deferring:
            return choice  # type: ignore[return-value]
        return run_sync(self._choose(choice, chat, sync=True))

    def _after_the_user(self, chat: Chat) -> ConversableAgent:
        """Who speaks after the user: the agent that spoke last before (the initial agent at first)."""
        by_name = self.by_name
        for message in reversed(chat.state.messages):
            agent = by_name.get(message.get("name"))  # type: ignore[arg-type]
            if agent is not None:
                return agent
        return self.initial_agent

    def resolve(
        self, target: TransitionTarget, speaker: ConversableAgent, chat: Chat, *, via: str
    ) -> ConversableAgent | StopReason | _ManagerChoice:
        """The agent ``target`` names, or why the chat ends there (or that the manager's model is to
        choose)."""
        if type(target) is AgentTarget:
            agent = target.agent
            if self._reachable.get(agent._name) is agent:
                return self._hand(speaker, agent, chat, via)
        known = self._agents_for.get(target) if isinstance(target, AGENT_TARGETS) else None
        if known is not None:
            return self._hand(speaker, known, chat, via)
        if isinstance(target, FunctionTarget):
            return self._call(target, speaker, chat, via)
        if isinstance(target, TerminateTarget):
            if via == "after-work" and speaker.handoffs.after_work is None:  # the chat's, not the agent's
                detail = f"{speaker.name} replied without handing off; the chat's after-work ends the chat"
            else:
                detail = f"{speaker.name}'s {via} ends the chat"
            return StopReason(StopKind.TERMINATE_TARGET, detail, speaker.name)
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
        if isinstance(target, GroupManagerTarget):
            return _ManagerChoice(speaker, self._selection_prompt(target, speaker, chat), via)
        if isinstance(target, AskUserTarget):
            return _ManagerChoice(speaker, None, via, by_human=True)
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
        if type(target) is AgentTarget:
            agent = target.agent
            if self._reachable.get(agent._name) is agent:
                return agent
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
                option = name.upper() if isinstance(name, str) else None
                hint = (
                    f"; for the option, give AfterWorkOption.{option}"
                    if option in AfterWorkOption.__members__ and agent is None
                    else ""
                )
                if agent is not None:  # the same name, another object: agents built again, handoffs not
                    raise ValueError(
                        f"handoff to an agent named {name!r} that is not this chat's {name!r} but another "
                        "object of the same name: register the handoff with the agent the chat runs"
                    )
                raise ValueError(
                    f"handoff to {name!r}, which is not an agent of this chat ({', '.join(self.by_name)})"
                    + hint
                )
            return agent
        raise ValueError(f"not an agent target: {target!r}")

    def handoff_problem(self, handoff: Any) -> str | None:
        """Check a handoff a tool asked for: ``None`` if it can be taken.

        Raises:
            ValueError: it names no agent of the swarm, or is not a handoff at all (as in AG2, this ends
                the chat with the error; a ``transfer_to_...`` tool the model invents is answered with a
                tool message instead, as any unknown tool is).
        """
        if type(handoff) is AgentTarget:
            agent = handoff.agent
            if self._reachable.get(agent._name) is agent:
                return None
        try:
            if handoff in self._handoff_checked:
                return None
        except TypeError:
            pass
        target = as_target(handoff, what="a handoff")
        if isinstance(target, AGENT_TARGETS):
            self.agent_for(target)
        with contextlib.suppress(TypeError):
            self._handoff_checked[handoff] = None
        return None

    def _selection_prompt(
        self, target: GroupManagerTarget, speaker: ConversableAgent, chat: Chat
    ) -> str | None:
        message = target.selection_message
        if message is None:
            return None
        if isinstance(message, ContextStr):
            template = message.template.replace("{agentlist}", agent_list(self._candidates()))
            return ContextStr(template).format(chat.context_variables)
        if callable(message):
            message = message(speaker, chat.messages)
        return str(message).replace("{agentlist}", agent_list(self._candidates()))

    def _candidates(self) -> list[ConversableAgent]:
        return [*self.agents, self.user_agent] if self.user_agent is not None else list(self.agents)

    async def _choose(
        self, choice: _ManagerChoice, chat: Chat, *, sync: bool
    ) -> ConversableAgent | StopReason:
        if chat.holding:
            release()
        if choice.by_human:
            manual = SpeakerSelection(self.manager.groupchat, self.manager)
            picked = await manual._manual(chat, self._candidates(), sync)
            if isinstance(picked, StopReason):
                return picked
            return self._hand(choice.speaker, picked, chat, f"{choice.via} (the human chose)")
        if self._auto is None:
            self._auto = AutoSelection(self.manager.groupchat, self.manager)
        picked = await self._auto.select(chat, self._candidates(), sync, prompt=choice.prompt)
        if isinstance(picked, StopReason):
            return picked
        chat.record_turn(picked)  # a resumed chat does not ask the model again
        return self._hand(choice.speaker, picked, chat, f"{choice.via} (the swarm manager chose)")

    def _hand(
        self, speaker: ConversableAgent, target: ConversableAgent, chat: Chat, via: str
    ) -> ConversableAgent:
        if chat.listeners and target is not speaker and chat.wants(Handoff):
            chat.emit(Handoff(speaker._name, target._name, via, self._why(speaker, chat, via)))
        return target

    def _why(self, speaker: ConversableAgent, chat: Chat, via: str) -> str:
        """Why a handoff happened: the tool that asked for it (and its condition), or whose after-work."""
        name = speaker._name
        if via == "handoff":
            tool = speaker.handoffs.tools_by_name.get(chat.handoff_tool)
            if tool is not None:
                return f"{name} called {tool.name}: {tool.description}"
            return f"{name}'s tool {chat.handoff_tool} handed off"
        if speaker.handoffs.after_work is not None:
            return f"{name} replied without handing off; its after-work goes on"
        return f"{name} replied without handing off; the chat's after-work goes on"

    def _call(
        self, target: FunctionTarget, speaker: ConversableAgent, chat: Chat, via: str
    ) -> ConversableAgent | StopReason | _ManagerChoice:
        function = target.function
        if chat.holding:
            release()
        arguments: list[Any] = [speaker, chat.messages, self.manager.groupchat, chat.context_variables]
        result = function(*arguments[: _positional_count(function)])
        if result is None:
            return StopReason(  # "return None to terminate", the swarm's documentation says
                StopKind.TERMINATE_TARGET,
                f"{speaker.name}'s {via} function {target.display_name()} returned None",
                speaker.name,
            )
        if isinstance(result, FunctionTarget) or not isinstance(
            result, Agent | str | AfterWorkOption | TransitionTarget
        ):
            raise ValueError(
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
