"""The newer group API: ``DefaultPattern`` and ``initiate_group_chat``, on the same engine as swarms."""

from __future__ import annotations

import random
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from parley.context_variables import context_problem
from parley.engine import run_sync
from parley.events import Listener
from parley.group.context_variables import ContextVariables
from parley.group.run import PATTERN_API, GroupOutcome, run_group
from parley.group.targets import (
    AskUserTarget,
    FunctionTarget,
    GroupManagerTarget,
    TerminateTarget,
    TransitionTarget,
    as_target,
)
from parley.summary import SummaryMethod, check_summary_method

if TYPE_CHECKING:
    from parley.agent import ConversableAgent
    from parley.run_response import AsyncRunResponse, RunResponse


class DefaultPattern:
    """A group of agents that pass the conversation by handoffs, starting with ``initial_agent``.

    ``group_after_work`` applies to every agent without an after-work of its own (``agent.handoffs``);
    it ends the chat by default. ``group_manager_args`` are the arguments of the group's
    ``GroupChatManager`` (its ``llm_config``, its ``is_termination_msg``...). As in AG2, the calls of
    handoff tools and their results are kept from the models (``exclude_transit_message``), and
    ``summary_method`` is ``"last_msg"``, ``"reflection_with_llm"`` (with the manager's model), a
    function of ``(sender, manager, summary_args)``, or ``None``.
    """

    def __init__(
        self,
        initial_agent: ConversableAgent,
        agents: Sequence[ConversableAgent],
        user_agent: ConversableAgent | None = None,
        group_manager_args: dict[str, Any] | None = None,
        context_variables: ContextVariables | dict[str, Any] | None = None,
        group_after_work: TransitionTarget | None = None,
        exclude_transit_message: bool = True,
        summary_method: SummaryMethod = "last_msg",
    ) -> None:
        check_summary_method(summary_method)
        self.after_the_user: TransitionTarget | None = None
        """Where the user agent hands over if it has no after-work of its own (``None``: back to the
        agent that spoke before it)."""
        self.exclude_transit_message = exclude_transit_message
        self.summary_method = summary_method
        self.initial_agent = initial_agent
        self.agents = list(agents)
        self.user_agent = user_agent
        self.group_manager_args = group_manager_args or {}
        if context_variables is not None and (problem := context_problem(context_variables)) is not None:
            raise ValueError(problem)
        self.context_variables = (
            context_variables
            if isinstance(context_variables, ContextVariables)
            else ContextVariables(context_variables)
        )
        self.group_after_work = as_target(group_after_work or TerminateTarget(), what="group_after_work")


class _OwnAfterWork(DefaultPattern):
    """A pattern whose group after-work is its kind's own (:meth:`_after_work`), with AG2's parameters.

    ``hands_over_the_user``: whether it also decides where the user agent hands over.
    """

    hands_over_the_user = False

    def __init__(
        self,
        initial_agent: ConversableAgent,
        agents: Sequence[ConversableAgent],
        user_agent: ConversableAgent | None = None,
        group_manager_args: dict[str, Any] | None = None,
        context_variables: ContextVariables | dict[str, Any] | None = None,
        exclude_transit_message: bool = True,
        summary_method: SummaryMethod = "last_msg",
    ) -> None:
        super().__init__(
            initial_agent,
            agents,
            user_agent,
            group_manager_args,
            context_variables,
            self._after_work(initial_agent, agents, user_agent),
            exclude_transit_message,
            summary_method,
        )
        if self.hands_over_the_user:
            self.after_the_user = self.group_after_work

    def _after_work(
        self,
        initial_agent: ConversableAgent,
        agents: Sequence[ConversableAgent],
        user_agent: ConversableAgent | None,
    ) -> TransitionTarget:
        raise NotImplementedError


class AutoPattern(_OwnAfterWork):
    """The group manager's model chooses who speaks after each agent (AG2's ``AutoPattern``): a
    :class:`DefaultPattern` whose group after-work is :class:`GroupManagerTarget`, so the manager needs a
    model (``group_manager_args={"llm_config": ...}``). ``selection_message`` is the target's."""

    def __init__(
        self,
        initial_agent: ConversableAgent,
        agents: Sequence[ConversableAgent],
        user_agent: ConversableAgent | None = None,
        group_manager_args: dict[str, Any] | None = None,
        context_variables: ContextVariables | dict[str, Any] | None = None,
        selection_message: Any = None,
        exclude_transit_message: bool = True,
        summary_method: SummaryMethod = "last_msg",
    ) -> None:
        self.selection_message = selection_message
        super().__init__(
            initial_agent,
            agents,
            user_agent,
            group_manager_args,
            context_variables,
            exclude_transit_message,
            summary_method,
        )

    def _after_work(self, *_: Any) -> TransitionTarget:
        return GroupManagerTarget(self.selection_message)


class ManualPattern(_OwnAfterWork):
    """The human chooses who speaks after each agent (AG2's ``ManualPattern``): the group after-work is
    :class:`AskUserTarget`, which asks through the group manager's ``get_human_input`` as the
    ``"manual"`` speaker selection does (``exit`` ends the chat)."""

    def _after_work(self, *_: Any) -> TransitionTarget:
        return AskUserTarget()


class _TurnPattern(_OwnAfterWork):
    """A pattern that takes :class:`DefaultPattern`'s parameters, ``group_after_work`` included, which its
    own after-work replaces (AG2's ``RoundRobinPattern`` and ``RandomPattern`` take them so; a given one
    is ignored, with a warning)."""

    def __init__(
        self,
        initial_agent: ConversableAgent,
        agents: Sequence[ConversableAgent],
        user_agent: ConversableAgent | None = None,
        group_manager_args: dict[str, Any] | None = None,
        context_variables: ContextVariables | dict[str, Any] | None = None,
        group_after_work: TransitionTarget | None = None,
        exclude_transit_message: bool = True,
        summary_method: SummaryMethod = "last_msg",
    ) -> None:
        if group_after_work is not None:
            warnings.warn(
                f"{type(self).__name__} chooses who speaks next itself: its group_after_work is not used",
                stacklevel=2,
            )
        super().__init__(
            initial_agent,
            agents,
            user_agent,
            group_manager_args,
            context_variables,
            exclude_transit_message,
            summary_method,
        )


class RoundRobinPattern(_TurnPattern):
    """The agents speak in turn (AG2's ``RoundRobinPattern``): the initial agent, the others in the
    order given, then the user agent if there is one, and round again. An agent's own after-work, if it
    has one, still decides where it hands over (AG2 replaces it)."""

    hands_over_the_user = True

    def _after_work(
        self,
        initial_agent: ConversableAgent,
        agents: Sequence[ConversableAgent],
        user_agent: ConversableAgent | None,
    ) -> TransitionTarget:
        order = [initial_agent, *(a for a in agents if a is not initial_agent and a is not user_agent)]
        if user_agent is not None:
            order.append(user_agent)

        def next_in_turn(last: ConversableAgent, messages: Any, groupchat: Any) -> ConversableAgent:
            return order[(order.index(last) + 1) % len(order)] if last in order else order[0]

        return FunctionTarget(next_in_turn)


class RandomPattern(_TurnPattern):
    """After each agent, another agent of the group (or the user agent) chosen at random speaks (AG2's
    ``RandomPattern``). An agent's own after-work, if it has one, still applies (AG2 replaces it)."""

    hands_over_the_user = True

    def _after_work(
        self,
        initial_agent: ConversableAgent,
        agents: Sequence[ConversableAgent],
        user_agent: ConversableAgent | None,
    ) -> TransitionTarget:
        everyone = [*agents, *([] if user_agent is None else [user_agent])]

        def anyone_else(last: ConversableAgent, messages: Any, groupchat: Any) -> ConversableAgent:
            others = [agent for agent in everyone if agent is not last]
            return random.choice(others or everyone)

        return FunctionTarget(anyone_else)


def initiate_group_chat(
    pattern: DefaultPattern,
    messages: str | list[dict[str, Any]],
    max_rounds: int = 20,
    safeguard_policy: dict[str, Any] | str | None = None,
    safeguard_llm_config: Any = None,
    mask_llm_config: Any = None,
    *,
    silent: bool = False,
    store: Any = None,
    chat_id: str | None = None,
    listeners: Sequence[Listener] = (),
    stop_when: Any = None,
    trace: Any = None,
) -> GroupOutcome:
    """Run the pattern's group chat; return ``(ChatResult, context_variables, last_agent)``.

    ``store``, ``chat_id``, ``listeners``, ``stop_when`` and ``trace`` are as for
    :func:`~parley.swarm.initiate_swarm_chat`.
    """
    _no_safeguards(safeguard_policy, safeguard_llm_config, mask_llm_config)
    arguments = _pattern_arguments(pattern, messages, max_rounds, silent)
    extra = {
        "store": store,
        "chat_id": chat_id,
        "listeners": listeners,
        "stop_when": stop_when,
        "trace": trace,
    }
    return run_sync(run_group(**arguments, **extra, sync=True))


async def a_initiate_group_chat(
    pattern: DefaultPattern,
    messages: str | list[dict[str, Any]],
    max_rounds: int = 20,
    safeguard_policy: dict[str, Any] | str | None = None,
    safeguard_llm_config: Any = None,
    mask_llm_config: Any = None,
    *,
    silent: bool = False,
    store: Any = None,
    chat_id: str | None = None,
    listeners: Sequence[Listener] = (),
    stop_when: Any = None,
    trace: Any = None,
) -> GroupOutcome:
    """Async twin of :func:`initiate_group_chat`."""
    _no_safeguards(safeguard_policy, safeguard_llm_config, mask_llm_config)
    arguments = _pattern_arguments(pattern, messages, max_rounds, silent)
    extra = {
        "store": store,
        "chat_id": chat_id,
        "listeners": listeners,
        "stop_when": stop_when,
        "trace": trace,
    }
    return await run_group(**arguments, **extra, sync=False)


def _no_safeguards(policy: Any, llm_config: Any, mask_llm_config: Any) -> None:
    """AG2's safeguards are not in parley: ``None`` is accepted, anything else is an error."""
    given = [
        name
        for name, value in (
            ("safeguard_policy", policy),
            ("safeguard_llm_config", llm_config),
            ("mask_llm_config", mask_llm_config),
        )
        if value is not None
    ]
    if given:
        raise NotImplementedError(f"parley has no safeguards: leave {', '.join(given)} out (or None)")


def _pattern_arguments(
    pattern: DefaultPattern, messages: str | list[dict[str, Any]], max_rounds: int, silent: bool
) -> dict[str, Any]:
    if not isinstance(pattern, DefaultPattern):
        raise TypeError(f"pattern must be a DefaultPattern (or one of its kinds), not {pattern!r}")
    return {
        "initial_agent": pattern.initial_agent,
        "messages": messages,
        "agents": pattern.agents,
        "user_agent": pattern.user_agent,
        "max_rounds": max_rounds,
        "context_variables": pattern.context_variables,
        "after_work": pattern.group_after_work,
        "silent": silent,
        "manager_args": pattern.group_manager_args,
        "exclude_transit_message": pattern.exclude_transit_message,
        "summary_method": pattern.summary_method,
        "api": PATTERN_API,
        "after_the_user": pattern.after_the_user,
    }


def run_group_chat(
    pattern: DefaultPattern,
    messages: str | list[dict[str, Any]],
    max_rounds: int = 20,
    safeguard_policy: dict[str, Any] | str | None = None,
    safeguard_llm_config: Any = None,
    mask_llm_config: Any = None,
    *,
    store: Any = None,
    chat_id: str | None = None,
    listeners: Sequence[Listener] = (),
    stop_when: Any = None,
    trace: Any = None,
) -> RunResponse:
    """AG2's run API for group patterns: the group chat runs in a worker thread and the response's
    ``process()`` prints it; ``messages``, ``summary``, ``cost``, ``last_speaker`` and
    ``context_variables`` are the chat's once it has finished (see :func:`initiate_group_chat`, whose
    ``store``, ``chat_id``, ``listeners``, ``stop_when`` and ``trace`` these are too)."""
    _no_safeguards(safeguard_policy, safeguard_llm_config, mask_llm_config)
    arguments = _pattern_arguments(pattern, messages, max_rounds, True)
    extra = {"store": store, "chat_id": chat_id, "stop_when": stop_when, "trace": trace}
    from parley.run_response import RunOutcome, RunResponse

    def start(listener: Listener) -> RunOutcome:
        chat = run_group(**arguments, **extra, listeners=[listener, *listeners], sync=True)
        result, context, last = run_sync(chat)
        return RunOutcome(result, last.name, context)

    return RunResponse(start, list(pattern.agents))


async def a_run_group_chat(
    pattern: DefaultPattern,
    messages: str | list[dict[str, Any]],
    max_rounds: int = 20,
    safeguard_policy: dict[str, Any] | str | None = None,
    safeguard_llm_config: Any = None,
    mask_llm_config: Any = None,
    *,
    store: Any = None,
    chat_id: str | None = None,
    listeners: Sequence[Listener] = (),
    stop_when: Any = None,
    trace: Any = None,
) -> AsyncRunResponse:
    """Async twin of :func:`run_group_chat`: the group chat runs in a task on the running event loop."""
    _no_safeguards(safeguard_policy, safeguard_llm_config, mask_llm_config)
    arguments = _pattern_arguments(pattern, messages, max_rounds, True)
    extra = {"store": store, "chat_id": chat_id, "stop_when": stop_when, "trace": trace}
    from parley.run_response import AsyncRunResponse, RunOutcome

    async def start(listener: Listener) -> RunOutcome:
        chat = run_group(**arguments, **extra, listeners=[listener, *listeners], sync=False)
        result, context, last = await chat
        return RunOutcome(result, last.name, context)

    return AsyncRunResponse(start, list(pattern.agents))
