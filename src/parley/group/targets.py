"""Where a swarm or group chat goes next: transition targets and AG2's after-work options."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from parley.agent import ConversableAgent


class AfterWorkOption(Enum):
    """What happens after an agent replies without handing off: end, go back to the user, stay, or let
    the swarm manager's model choose the next agent."""

    TERMINATE = "TERMINATE"
    REVERT_TO_USER = "REVERT_TO_USER"
    STAY = "STAY"
    SWARM_MANAGER = "SWARM_MANAGER"


class TransitionTarget:
    """Base of every transition target. A tool may return one to hand the conversation over."""

    _is_handoff_target = True

    def display_name(self) -> str:
        """How the target is named in events and stop reasons."""
        return type(self).__name__


@dataclass(frozen=True)
class AgentTarget(TransitionTarget):
    """Hand the conversation to ``agent``."""

    agent: ConversableAgent

    def __post_init__(self) -> None:
        if not isinstance(self.agent, ConversableAgent):
            hint = " (for an agent's name, use AgentNameTarget)" if isinstance(self.agent, str) else ""
            raise ValueError(f"AgentTarget needs an agent, not {self.agent!r:.80}{hint}")

    def display_name(self) -> str:
        return self.agent._name

    @property
    def agent_name(self) -> str:
        return self.agent._name


@dataclass(frozen=True)
class AgentNameTarget(TransitionTarget):
    """Hand the conversation to the agent called ``agent_name``."""

    agent_name: str

    def display_name(self) -> str:
        return self.agent_name


@dataclass(frozen=True)
class TerminateTarget(TransitionTarget):
    """End the chat."""

    def display_name(self) -> str:
        return "TERMINATE"


@dataclass(frozen=True)
class RevertToUserTarget(TransitionTarget):
    """Hand the conversation to the user agent; end the chat if there is none."""

    def display_name(self) -> str:
        return "REVERT_TO_USER"


@dataclass(frozen=True)
class StayTarget(TransitionTarget):
    """Let the agent that just spoke speak again."""

    def display_name(self) -> str:
        return "STAY"


@dataclass(frozen=True)
class GroupManagerTarget(TransitionTarget):
    """Let the manager's model choose the next agent (AG2's ``AfterWorkOption.SWARM_MANAGER``).

    ``selection_message`` replaces the closing instruction the model is given: text with
    ``{agentlist}``, a ``ContextStr`` (filled from the context variables), or
    ``(agent, messages) -> str``; ``None`` keeps the group chat's ``select_speaker_prompt_template``.
    """

    selection_message: Any = None

    def display_name(self) -> str:
        return "SWARM_MANAGER"


@dataclass(frozen=True)
class AskUserTarget(TransitionTarget):
    """Let the human choose the next agent, as the group chat's ``"manual"`` selection asks, through the
    manager's ``get_human_input`` (AG2's ``AskUserTarget``)."""

    def display_name(self) -> str:
        return "ASK_USER"


AfterWorkFunction = Callable[..., Any]
"""``(last_speaker, messages, groupchat, context_variables) -> agent | AfterWorkOption | name | None``."""


@dataclass(frozen=True)
class FunctionTarget(TransitionTarget):
    """Ask ``function`` where to go: an agent, an agent's name, an option or target, or ``None`` to end.

    It is called as ``function(last_speaker, messages, groupchat, context_variables)``; a function that
    takes three parameters (AG2 0.13.4's form) is called without ``context_variables``.
    """

    function: AfterWorkFunction

    def display_name(self) -> str:
        return getattr(self.function, "__name__", "after-work function")


AGENT_TARGETS = (AgentTarget, AgentNameTarget)
"""The targets that name an agent (a tuple, for ``isinstance``)."""

_OPTION_TARGETS: dict[AfterWorkOption, TransitionTarget] = {
    AfterWorkOption.TERMINATE: TerminateTarget(),
    AfterWorkOption.REVERT_TO_USER: RevertToUserTarget(),
    AfterWorkOption.STAY: StayTarget(),
    AfterWorkOption.SWARM_MANAGER: GroupManagerTarget(),
}


def as_target(value: Any, *, what: str) -> TransitionTarget:
    """Normalize an agent, agent name, option, target or after-work function to a target.

    Raises:
        ValueError: ``value`` is none of these; the message names ``what`` it was given as.
    """
    if isinstance(value, TransitionTarget):
        return value
    if isinstance(value, AfterWorkOption):
        return _OPTION_TARGETS[value]
    if isinstance(value, ConversableAgent):
        return AgentTarget(value)
    if isinstance(value, str):
        return AgentNameTarget(value)
    if callable(value):
        return FunctionTarget(value)
    raise ValueError(
        f"{what} must be an agent, an agent's name, an AfterWorkOption, a transition target or a callable, "
        f"not {value!r}"
    )
