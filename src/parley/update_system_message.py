"""``UPDATE_SYSTEM_MESSAGE``: rewrite an agent's system message from the context before each reply."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from parley.messages import Message

if TYPE_CHECKING:
    from parley.agent import ConversableAgent


class UpdateSystemMessage:
    """Before each reply, set the agent's system message from ``content_updater``.

    ``content_updater`` is a template filled from the chat's context variables with ``str.format``
    (``"Help {customer_name} with {issue}"``), or a function ``(agent, messages) -> str``. Register it with
    ``update_agent_state_before_reply=[...]`` or ``register_update_agent_state_before_reply``.
    """

    def __init__(self, content_updater: str | Callable[[ConversableAgent, list[Message]], str]) -> None:
        if not (isinstance(content_updater, str) or callable(content_updater)):
            raise ValueError(  # as AG2's (a pydantic validation error)
                f"UPDATE_SYSTEM_MESSAGE needs a template string or a function, not {content_updater!r}"
            )
        self.content_updater = content_updater

    def __call__(self, agent: ConversableAgent, messages: list[Message]) -> None:
        agent.update_system_message(self.render(agent, messages))

    def render(self, agent: ConversableAgent, messages: list[Message]) -> str:
        """The system message for ``agent`` now."""
        if isinstance(self.content_updater, str):
            return fill_template(self.content_updater, agent.context_variables, owner=agent.name)
        text: Any = self.content_updater(agent, messages)
        if not isinstance(text, str):
            raise TypeError(f"the system-message function of {agent.name} returned {text!r}, not a string")
        return text


UPDATE_SYSTEM_MESSAGE = UpdateSystemMessage


def fill_template(template: str, context: dict[str, Any], *, owner: str) -> str:
    """``template`` with ``{name}`` fields filled from ``context``, or a clear error naming a missing one."""
    try:
        return template.format(**context)
    except KeyError as missing:
        raise KeyError(
            f"the system-message template of {owner} uses the context variable {missing}, which is not set "
            f"(set: {sorted(context)})"
        ) from None
