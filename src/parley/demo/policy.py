"""How the demo's agents use their tools: a wrapper that keeps a small model on track.

A 1.5B-parameter model left to choose freely tends either to answer at once without doing anything, or
to call tools over and over. So a specialist's first turn starts with a tool call (a handoff is a tool
call too), and once it has called a tool it answers; later turns choose freely.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from parley.models import ModelClient, ModelResponse

Message = dict[str, Any]


class ToolsThenAnswer:
    """Wraps an agent's model: a turn starts with a tool call, and after a tool the agent answers.

    Args:
        model: the agent's model.
        agent_name: the agent's name, to tell its own messages from the others'.
        every_turn: start every turn with a tool call; otherwise only the agent's first turn in the
            chat, and later turns may answer at once.
    """

    def __init__(self, model: ModelClient, agent_name: str, *, every_turn: bool = False) -> None:
        self.model = model
        self.agent_name = agent_name
        self.every_turn = every_turn

    def create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse:
        """Ask the model, with the ``tool_choice`` this point of the turn calls for."""
        return self.model.create(messages, tools, **self._params(messages, tools, params))

    async def a_create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse:
        """Async twin of :meth:`create`."""
        return await self.model.a_create(messages, tools, **self._params(messages, tools, params))

    def _params(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None, params: dict[str, Any]
    ) -> dict[str, Any]:
        if not tools or "tool_choice" in params:
            return params
        if self.called_a_tool_this_turn(messages):
            return {**params, "tool_choice": "none"}
        if self.every_turn or not self.spoke_before(messages):
            return {**params, "tool_choice": "required"}
        return params

    def called_a_tool_this_turn(self, messages: Sequence[Message]) -> bool:
        """Whether the agent called a tool since it last got the conversation."""
        for message in reversed(messages):
            if message.get("role") != "tool":
                return bool(message.get("tool_calls")) and message.get("name") == self.agent_name
        return False

    def spoke_before(self, messages: Sequence[Message]) -> bool:
        """Whether the agent has said anything in this conversation."""
        return any(
            message.get("name") == self.agent_name and message.get("role") == "assistant"
            for message in messages
        )
