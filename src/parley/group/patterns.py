"""The newer group API: ``DefaultPattern`` and ``initiate_group_chat``, on the same engine as swarms."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from parley.engine import run_sync
from parley.events import Listener
from parley.group.context_variables import ContextVariables
from parley.group.run import GroupOutcome, run_group
from parley.group.targets import TerminateTarget, TransitionTarget, as_target

if TYPE_CHECKING:
    from parley.agent import ConversableAgent


class DefaultPattern:
    """A group of agents that pass the conversation by handoffs, starting with ``initial_agent``.

    ``group_after_work`` applies to every agent without an after-work of its own (``agent.handoffs``);
    it ends the chat by default. ``group_manager_args`` are the arguments of the group's
    ``GroupChatManager`` (its ``llm_config``, its ``is_termination_msg``...).
    """

    def __init__(
        self,
        initial_agent: ConversableAgent,
        agents: Sequence[ConversableAgent],
        user_agent: ConversableAgent | None = None,
        group_manager_args: dict[str, Any] | None = None,
        context_variables: ContextVariables | dict[str, Any] | None = None,
        group_after_work: TransitionTarget | None = None,
        **kwargs: Any,
    ) -> None:
        self.initial_agent = initial_agent
        self.agents = list(agents)
        self.user_agent = user_agent
        self.group_manager_args = group_manager_args or {}
        self.context_variables = (
            context_variables
            if isinstance(context_variables, ContextVariables)
            else ContextVariables(context_variables)
        )
        self.group_after_work = as_target(group_after_work or TerminateTarget(), what="group_after_work")


def initiate_group_chat(
    pattern: DefaultPattern,
    messages: str | list[dict[str, Any]],
    max_rounds: int = 20,
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
    *,
    silent: bool = False,
    store: Any = None,
    chat_id: str | None = None,
    listeners: Sequence[Listener] = (),
    stop_when: Any = None,
    trace: Any = None,
) -> GroupOutcome:
    """Async twin of :func:`initiate_group_chat`."""
    arguments = _pattern_arguments(pattern, messages, max_rounds, silent)
    extra = {
        "store": store,
        "chat_id": chat_id,
        "listeners": listeners,
        "stop_when": stop_when,
        "trace": trace,
    }
    return await run_group(**arguments, **extra, sync=False)


def _pattern_arguments(
    pattern: DefaultPattern, messages: str | list[dict[str, Any]], max_rounds: int, silent: bool
) -> dict[str, Any]:
    if not isinstance(pattern, DefaultPattern):
        raise TypeError(f"pattern must be a DefaultPattern, not {pattern!r}")
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
    }
