"""What a tool returns to answer the model, update the context and hand the conversation over.

``SwarmResult`` and ``ReplyResult`` are pydantic models, as in AG2; this module imports pydantic, so the
packages that re-export them load it only when they are first used.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_serializer, field_validator

from parley.agent_base import Agent
from parley.group.context_variables import ContextVariables
from parley.group.targets import AfterWorkOption, TransitionTarget
from parley.tools import ToolResult


def _checked_handoff(value: Any, what: str) -> Any:
    if value is None or isinstance(value, Agent | AfterWorkOption | str | TransitionTarget):
        return value
    raise ValueError(
        f"{what} must be an agent, an agent's name, an AfterWorkOption or a transition target, not {value!r}"
    )


def _as_context(value: Any) -> ContextVariables | None:
    if value is None or isinstance(value, ContextVariables):
        return value
    if isinstance(value, dict):
        context = ContextVariables.empty()
        context.update(value)
        return context
    raise ValueError(f"context_variables must be a dict or ContextVariables, not {type(value).__name__}")


def _handoff_json(value: Any) -> Any:
    if isinstance(value, Agent):
        return value.name
    if isinstance(value, AfterWorkOption):
        return value.value
    if isinstance(value, TransitionTarget):
        return value.display_name()
    return value


def _context_json(value: ContextVariables | None) -> Any:
    return None if value is None else {"data": dict(value)}


def _validate_fields(model: BaseModel, own_type: type[BaseModel], fields: dict[str, Any]) -> None:
    """``BaseModel.__init__(model, **fields)``; for an instance of ``own_type`` itself, whose
    validators never return another object (``__init__`` warns when they do), its validator is called
    directly (a result is made for every tool call)."""
    if type(model) is own_type:
        model.__pydantic_validator__.validate_python(fields, self_instance=model)
    else:
        BaseModel.__init__(model, **fields)


class SwarmResult(BaseModel, ToolResult):
    """A swarm tool's result: ``values`` for the model, an optional handoff ``agent`` (an agent, its name,
    an ``AfterWorkOption`` or a target), and ``context_variables`` merged into the shared context.

    A plain dict given as ``context_variables`` becomes a ``ContextVariables``; without one, the result
    carries an empty ``ContextVariables``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    values: str = ""
    agent: Any = None
    context_variables: Any = None

    def __init__(self, values: str = "", agent: Any = None, context_variables: Any = None, **data: Any):
        fields = {"values": values, "agent": agent, "context_variables": context_variables, **data}
        _validate_fields(self, SwarmResult, fields)

    @field_validator("agent")
    @classmethod
    def _agent(cls, value: Any) -> Any:
        return _checked_handoff(value, "SwarmResult.agent")

    @field_validator("context_variables")
    @classmethod
    def _context(cls, value: Any) -> ContextVariables:
        context = _as_context(value)
        return ContextVariables.empty() if context is None else context

    @field_serializer("agent", when_used="json")
    def _agent_json(self, value: Any) -> Any:
        return _handoff_json(value)

    @field_serializer("context_variables")
    def _context_json(self, value: ContextVariables | None) -> Any:
        return _context_json(value)

    def result_text(self) -> str:
        return self.values

    def result_handoff(self) -> Any:
        return self.agent

    def result_context(self) -> Any:
        return self.context_variables

    def __str__(self) -> str:
        return self.values


class ReplyResult(BaseModel, ToolResult):
    """A group-chat tool's result: ``message`` for the model, an optional transition ``target``, and
    ``context_variables`` merged into the shared context."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    message: str
    target: Any = None
    context_variables: Any = None

    def __init__(self, message: str, target: Any = None, context_variables: Any = None, **data: Any):
        fields = {"message": message, "target": target, "context_variables": context_variables, **data}
        _validate_fields(self, ReplyResult, fields)

    @field_validator("target")
    @classmethod
    def _target(cls, value: Any) -> Any:
        return _checked_handoff(value, "ReplyResult.target")

    @field_validator("context_variables")
    @classmethod
    def _context(cls, value: Any) -> ContextVariables | None:
        return _as_context(value)

    @field_serializer("target", when_used="json")
    def _target_json(self, value: Any) -> Any:
        return _handoff_json(value)

    @field_serializer("context_variables")
    def _context_json(self, value: ContextVariables | None) -> Any:
        return _context_json(value)

    def result_text(self) -> str:
        return self.message

    def result_handoff(self) -> Any:
        return self.target

    def result_context(self) -> Any:
        return self.context_variables

    def __str__(self) -> str:
        return self.message
