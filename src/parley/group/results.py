"""What a tool returns to answer the model, update the context and hand the conversation over."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from parley.tools import ToolResult


@dataclass
class SwarmResult(ToolResult):
    """A swarm tool's result: ``values`` for the model, an optional handoff ``agent`` (an agent, its name,
    an ``AfterWorkOption`` or a target), and ``context_variables`` merged into the shared context."""

    values: str = ""
    agent: Any = None
    context_variables: Any = None

    def result_text(self) -> str:
        return str(self.values)

    def result_handoff(self) -> Any:
        return self.agent

    def result_context(self) -> Any:
        return self.context_variables

    def __str__(self) -> str:
        return self.values


@dataclass
class ReplyResult(ToolResult):
    """A group-chat tool's result: ``message`` for the model, an optional transition ``target``, and
    ``context_variables`` merged into the shared context."""

    message: str = ""
    target: Any = None
    context_variables: Any = None

    def result_text(self) -> str:
        return str(self.message)

    def result_handoff(self) -> Any:
        return self.target

    def result_context(self) -> Any:
        return self.context_variables

    def __str__(self) -> str:
        return self.message
