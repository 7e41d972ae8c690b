"""AG2's classic swarm: ``SwarmAgent``, handoffs, after-work and ``initiate_swarm_chat``, on the engine.

A swarm is a chat whose next speaker is decided by handoffs (a tool's result, or an ``ON_CONDITION``
the model chose), else by the speaker's after-work, else by the chat's after-work. See
:class:`parley.group.transitions.HandoffRule`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from parley.agent import ConversableAgent
from parley.assistants import UserProxyAgent
from parley.engine import run_sync
from parley.events import Listener
from parley.group.context_expression import ContextExpression, ContextStr
from parley.group.context_handoffs import enable_context_conditions
from parley.group.handoffs import OnCondition, OnContextCondition
from parley.group.run import GroupOutcome, run_group
from parley.group.targets import AfterWorkOption, GroupManagerTarget, TransitionTarget, as_target
from parley.group.tool_execution import enable_own_tool_execution, generate_swarm_tool_reply
from parley.messages import Message
from parley.nested import process_nested_chat_carryover
from parley.tools import Tool
from parley.update_system_message import UPDATE_SYSTEM_MESSAGE, UpdateSystemMessage

if TYPE_CHECKING:
    from parley.group.results import SwarmResult
    from parley.run_response import AsyncRunResponse, RunResponse

__all__ = [
    "AFTER_WORK",
    "ON_CONDITION",
    "UPDATE_SYSTEM_MESSAGE",
    "AfterWork",
    "AfterWorkOption",
    "ContextExpression",
    "ContextStr",
    "OnCondition",
    "OnContextCondition",
    "SwarmAgent",
    "SwarmResult",
    "UpdateSystemMessage",
    "a_initiate_swarm_chat",
    "a_run_swarm",
    "initiate_swarm_chat",
    "register_hand_off",
    "run_swarm",
]


def __getattr__(name: str) -> Any:
    if name == "SwarmResult":
        from parley.group.results import SwarmResult

        return SwarmResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class AFTER_WORK:
    """What happens when an agent replies with neither a handoff nor a tool call.

    ``agent`` is an agent, an :class:`AfterWorkOption` (or its name: ``"TERMINATE"``, ``"REVERT_TO_USER"``,
    ``"STAY"``, ``"SWARM_MANAGER"``), or a function ``(last_speaker, messages, groupchat,
    context_variables)`` returning an agent, an option, or ``None`` to end the chat.
    ``next_agent_selection_msg`` is the closing instruction the swarm manager's model is given with
    ``SWARM_MANAGER``: text with ``{agentlist}``, a ``ContextStr``, or ``(agent, messages) -> str``.

    Raises:
        ValueError: ``agent`` is none of these, or ``next_agent_selection_msg`` is of another kind.
    """

    agent: Any
    next_agent_selection_msg: str | ContextStr | Callable[..., str] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.agent, str):
            try:
                self.agent = AfterWorkOption(self.agent.upper())
            except ValueError:
                options = ", ".join(option.value for option in AfterWorkOption)
                raise ValueError(
                    f"AFTER_WORK({self.agent!r}): a string must name an option ({options})"
                ) from None
        message = self.next_agent_selection_msg
        if message is not None:
            if not (isinstance(message, str | ContextStr) or callable(message)):
                raise ValueError("next_agent_selection_msg must be a string, a ContextStr or a callable")
            if self.agent is not AfterWorkOption.SWARM_MANAGER:
                warnings.warn(
                    "next_agent_selection_msg applies only to AfterWorkOption.SWARM_MANAGER; it is ignored",
                    UserWarning,
                    stacklevel=3,
                )
                self.next_agent_selection_msg = message = None
        self.target: TransitionTarget = (
            GroupManagerTarget(message)
            if message is not None
            else as_target(self.agent, what="AFTER_WORK's agent")
        )


AfterWork = AFTER_WORK


class ON_CONDITION(OnCondition):
    """Hand off to ``target`` when the model calls the ``transfer_to_<target>`` tool described by
    ``condition``; ``available`` (a context-variable name or ``(agent, messages) -> bool``) switches it."""


def register_hand_off(agent: ConversableAgent, hand_to: Any) -> None:
    """Register handoffs on ``agent``: ``ON_CONDITION``\\ s and ``OnContextCondition``\\ s (each kind
    checked in order) and an optional ``AFTER_WORK``.

    Raises:
        ValueError: ``hand_to`` holds anything else.
    """
    if not isinstance(agent, ConversableAgent):
        raise ValueError(f"register_hand_off needs a ConversableAgent, not {agent!r}")
    if not isinstance(hand_to, list | OnCondition | OnContextCondition | AFTER_WORK):
        raise ValueError(
            f"hand_to must be a list of ON_CONDITION, OnContextCondition or AFTER_WORK, not {hand_to!r}"
        )
    for item in hand_to if isinstance(hand_to, list) else [hand_to]:
        if isinstance(item, OnCondition):
            agent.handoffs.add_llm_condition(item)
        elif isinstance(item, OnContextCondition):
            agent.handoffs.add_context_condition(item)
            enable_context_conditions(agent)
        elif isinstance(item, AFTER_WORK):
            agent.handoffs.set_after_work(item.target)
        else:
            raise ValueError(
                f"invalid hand off condition {item!r}: use ON_CONDITION, OnContextCondition or AFTER_WORK"
            )


_DEFAULT_MAX_ROUNDS = 20
"""``max_rounds`` when neither it nor ``max_round`` is given."""


class SwarmAgent(ConversableAgent):
    """A ``ConversableAgent`` for swarms: it runs its own tools (with ``context_variables`` injected),
    takes handoffs, and can update its state before each reply.

    Args:
        functions: tools the agent offers its model and runs itself.
        update_agent_state_before_reply: functions ``(agent, messages)`` or ``UPDATE_SYSTEM_MESSAGE``\\ s
            called each time the agent is selected, before it speaks.
        **kwargs: everything ``ConversableAgent`` takes.
    """

    def __init__(
        self,
        name: str,
        system_message: str | None = "You are a helpful AI Assistant.",
        llm_config: Any = None,
        functions: list[Callable[..., Any]] | Callable[..., Any] | None = None,
        update_agent_state_before_reply: list[Callable[..., Any]] | Callable[..., Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            name,
            system_message,
            llm_config=llm_config,
            functions=functions,
            update_agent_state_before_reply=update_agent_state_before_reply,
            **kwargs,
        )
        enable_own_tool_execution(self)

    def register_hand_off(self, hand_to: Any) -> None:
        """Register ``ON_CONDITION``\\ s and an optional ``AFTER_WORK`` on this agent."""
        register_hand_off(self, hand_to)

    def register_update_agent_state_before_reply(
        self, functions: list[Callable[..., Any]] | Callable[..., Any] | None
    ) -> None:
        """Call each function before every reply of this agent.

        A function takes ``(agent, messages)``, or nothing at all; an ``UPDATE_SYSTEM_MESSAGE`` rewrites
        the system message.
        """
        self._add_state_functions(functions)

    def add_single_function(
        self, func: Callable[..., Any], name: str | None = None, description: str = ""
    ) -> None:
        """Offer ``func`` to the model and run it here; ``context_variables`` stays out of its schema."""
        tool = Tool(func, name=name, description=description or None)
        self._add_llm_tool(tool)
        self._set_function(tool.name, tool)

    def add_functions(self, func_list: list[Callable[..., Any]]) -> None:
        """:meth:`add_single_function` for each function."""
        for func in func_list:
            self.add_single_function(func)

    def generate_swarm_tool_reply(
        self, messages: list[Message] | None = None, sender: Any = None, config: Any = None
    ) -> tuple[bool, dict[str, Any] | None]:
        """Run the tool calls of the last message (see :func:`generate_swarm_tool_reply`)."""
        return generate_swarm_tool_reply(self, messages, sender, config)

    process_nested_chat_carryover = staticmethod(process_nested_chat_carryover)


def initiate_swarm_chat(
    initial_agent: ConversableAgent,
    messages: str | list[dict[str, Any]],
    agents: list[ConversableAgent],
    user_agent: UserProxyAgent | ConversableAgent | None = None,
    max_rounds: int = _DEFAULT_MAX_ROUNDS,
    context_variables: dict[str, Any] | None = None,
    after_work: AFTER_WORK | Callable[..., Any] | None = AFTER_WORK(AfterWorkOption.TERMINATE),  # noqa: B008
    swarm_manager_args: dict[str, Any] | None = None,
    exclude_transit_message: bool = True,
    *,
    max_round: int | None = None,
    silent: bool = False,
    store: Any = None,
    chat_id: str | None = None,
    listeners: Sequence[Listener] = (),
    stop_when: Any = None,
    trace: Any = None,
) -> GroupOutcome:
    """Run a swarm from ``initial_agent`` until a handoff, after-work or limit ends it.

    Args:
        initial_agent: the first agent to reply.
        messages: the first message, or a list of message dicts to resume a conversation (the initial
            agent speaks next).
        agents: the swarm's agents.
        user_agent: the agent ``REVERT_TO_USER`` hands to; without one, reverting ends the chat.
        max_rounds: the most messages in the chat, the first included; an agent's tool results belong
            to its round.
        max_round: the same limit under the name group chats give it (``max_round=5``), for either
            spelling; giving both with different values is an error.
        context_variables: the shared context (updated in place when it is a ``ContextVariables``).
        after_work: what happens when an agent replies with neither a handoff nor a tool call and has no
            after-work of its own: an ``AFTER_WORK``, an option, an agent, or a function.
        swarm_manager_args: arguments of the swarm's ``GroupChatManager`` (its ``llm_config``, for
            ``SWARM_MANAGER``; its ``is_termination_msg``, checked on every message; its ``name``...).
        exclude_transit_message: leave the handoff tool calls and their results out of what the agents'
            models see (they stay in the history).
        silent: do not print the conversation.
        store: keep the chat in this store (a URL such as ``"sqlite:///chats.db"``, or a store object):
            it survives a crash, and the same call continues it (see docs/durability.md).
        chat_id: the chat's id; with ``store``, the chat to continue if it exists.
        listeners: functions that get this chat's events.
        stop_when: stop conditions and budgets (:mod:`parley.limits`).
        trace: a JSONL file to append the chat's events to (``parley view`` shows it).

    Returns:
        ``(ChatResult, context_variables, last_speaker)``.
    """
    return run_sync(run_group(**_swarm_arguments(locals()), sync=True))


async def a_initiate_swarm_chat(
    initial_agent: ConversableAgent,
    messages: str | list[dict[str, Any]],
    agents: list[ConversableAgent],
    user_agent: UserProxyAgent | ConversableAgent | None = None,
    max_rounds: int = _DEFAULT_MAX_ROUNDS,
    context_variables: dict[str, Any] | None = None,
    after_work: AFTER_WORK | Callable[..., Any] | None = AFTER_WORK(AfterWorkOption.TERMINATE),  # noqa: B008
    swarm_manager_args: dict[str, Any] | None = None,
    exclude_transit_message: bool = True,
    *,
    max_round: int | None = None,
    silent: bool = False,
    store: Any = None,
    chat_id: str | None = None,
    listeners: Sequence[Listener] = (),
    stop_when: Any = None,
    trace: Any = None,
) -> GroupOutcome:
    """Async twin of :func:`initiate_swarm_chat`: async tools, models and humans are awaited."""
    return await run_group(**_swarm_arguments(locals()), sync=False)


def run_swarm(
    initial_agent: ConversableAgent,
    messages: str | list[dict[str, Any]],
    agents: list[ConversableAgent],
    user_agent: UserProxyAgent | ConversableAgent | None = None,
    swarm_manager_args: dict[str, Any] | None = None,
    max_rounds: int = _DEFAULT_MAX_ROUNDS,
    context_variables: dict[str, Any] | None = None,
    after_work: AFTER_WORK | Callable[..., Any] | None = AFTER_WORK(AfterWorkOption.TERMINATE),  # noqa: B008
    exclude_transit_message: bool = True,
    *,
    max_round: int | None = None,
    store: Any = None,
    chat_id: str | None = None,
    listeners: Sequence[Listener] = (),
    stop_when: Any = None,
    trace: Any = None,
) -> RunResponse:
    """AG2's run API for swarms (its parameters in AG2's order): the swarm runs in a worker thread and
    the response's ``process()`` prints it; ``messages``, ``summary``, ``cost``, ``last_speaker`` and
    ``context_variables`` are the swarm's once it has finished. ``store``, ``chat_id``, ``listeners``,
    ``stop_when`` and ``trace`` are as for :func:`initiate_swarm_chat`."""
    arguments = _swarm_arguments({**locals(), "silent": True})
    more = arguments.pop("listeners")
    from parley.run_response import RunOutcome, RunResponse

    def start(listener: Listener) -> RunOutcome:
        result, context, last = run_sync(run_group(**arguments, listeners=[listener, *more], sync=True))
        return RunOutcome(result, last.name, context)

    return RunResponse(start, list(agents))


async def a_run_swarm(
    initial_agent: ConversableAgent,
    messages: str | list[dict[str, Any]],
    agents: list[ConversableAgent],
    user_agent: UserProxyAgent | ConversableAgent | None = None,
    swarm_manager_args: dict[str, Any] | None = None,
    max_rounds: int = _DEFAULT_MAX_ROUNDS,
    context_variables: dict[str, Any] | None = None,
    after_work: AFTER_WORK | Callable[..., Any] | None = AFTER_WORK(AfterWorkOption.TERMINATE),  # noqa: B008
    exclude_transit_message: bool = True,
    *,
    max_round: int | None = None,
    store: Any = None,
    chat_id: str | None = None,
    listeners: Sequence[Listener] = (),
    stop_when: Any = None,
    trace: Any = None,
) -> AsyncRunResponse:
    """Async twin of :func:`run_swarm`: the swarm runs in a task on the running event loop."""
    arguments = _swarm_arguments({**locals(), "silent": True})
    more = arguments.pop("listeners")
    from parley.run_response import AsyncRunResponse, RunOutcome

    async def start(listener: Listener) -> RunOutcome:
        result, context, last = await run_group(**arguments, listeners=[listener, *more], sync=False)
        return RunOutcome(result, last.name, context)

    return AsyncRunResponse(start, list(agents))


def _swarm_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    max_round = arguments.pop("max_round")
    if max_round is not None:
        if arguments["max_rounds"] not in (max_round, _DEFAULT_MAX_ROUNDS):
            raise ValueError(
                f"max_round={max_round!r} and max_rounds={arguments['max_rounds']!r} are the same limit: "
                "give one of them"
            )
        arguments["max_rounds"] = max_round
    arguments["manager_args"] = arguments.pop("swarm_manager_args")
    after_work = arguments.pop("after_work")
    if after_work is None:
        after_work = AfterWorkOption.TERMINATE
    arguments["after_work"] = (
        after_work.target if isinstance(after_work, AFTER_WORK) else as_target(after_work, what="after_work")
    )
    return arguments
