"""An agent's handoffs: conditions its model can choose (as ``transfer_to_<agent>`` tools) and its
after-work target."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from parley.group.targets import AgentNameTarget, AgentTarget, TransitionTarget, as_target
from parley.messages import Message
from parley.tools import Tool

if TYPE_CHECKING:
    from parley.agent import ConversableAgent

Availability = str | Callable[..., bool] | None
"""A context-variable name whose truth switches a handoff on, or ``(agent, messages) -> bool``."""


@dataclass(frozen=True)
class StringLLMCondition:
    """A condition the model evaluates: ``prompt`` becomes the handoff tool's description."""

    prompt: str

    def get_prompt(self, agent: ConversableAgent, messages: list[Message]) -> str:
        return self.prompt


@dataclass
class OnCondition:
    """Hand off to ``target`` when the model decides that ``condition`` holds.

    The model sees a ``transfer_to_<target>`` tool described by the condition. ``target`` is an agent or
    a transition target; ``condition`` is text or a :class:`StringLLMCondition`; ``available`` switches
    the handoff on and off (a context-variable name, or ``(agent, messages) -> bool``).
    """

    target: Any = None
    condition: Any = None
    available: Availability = None

    def __post_init__(self) -> None:
        self.target = as_target(self.target, what="the handoff target")
        if not isinstance(self.target, AgentTarget | AgentNameTarget):
            raise TypeError(f"an OnCondition's target must be an agent, not {self.target!r}")
        prompt = self.condition.prompt if isinstance(self.condition, StringLLMCondition) else self.condition
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError(f"an OnCondition needs a non-empty condition text, not {self.condition!r}")
        self.prompt: str = prompt
        if self.available is not None and not (isinstance(self.available, str) or callable(self.available)):
            raise TypeError(
                f"'available' must be a context-variable name or a callable, not {self.available!r}"
            )

    def is_available(self, agent: ConversableAgent, messages: list[Message]) -> bool:
        if self.available is None:
            return True
        if isinstance(self.available, str):
            return bool(agent._context_variables.get(self.available))
        return bool(self.available(agent, messages))


@dataclass
class Handoffs:
    """The handoffs of one agent: LLM conditions, in order, and an optional after-work target."""

    llm_conditions: list[OnCondition] = field(default_factory=list)
    after_work: TransitionTarget | None = None
    _tools: list[Tool] = field(default_factory=list)
    _offered: list[dict[str, Any]] = field(default_factory=list)
    _by_name: dict[str, Tool] = field(default_factory=dict)
    _unconditional: bool = True
    _combined_from: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None
    _combined: list[dict[str, Any]] = field(default_factory=list)
    _merged_from: tuple[dict[str, Tool], tuple[int, int]] | None = None
    _merged: dict[str, Tool] = field(default_factory=dict)

    def add_llm_condition(self, condition: OnCondition) -> Handoffs:
        """Offer the model a handoff tool for ``condition``."""
        if not isinstance(condition, OnCondition):
            raise TypeError(f"expected an OnCondition, not {condition!r}")
        taken = {tool.name for tool in self._tools}
        base = f"transfer_to_{condition.target.display_name()}"
        name, suffix = base, 2
        while name in taken:
            name, suffix = f"{base}_{suffix}", suffix + 1
        self.llm_conditions.append(condition)
        self._unconditional = self._unconditional and condition.available is None
        tool = Tool(_transfer(condition.target), name=name[:64], description=condition.prompt)
        self._tools.append(tool)
        self._by_name[tool.name] = tool
        if self._unconditional:
            self._offered = [*self._offered, tool.schema]
        return self

    def add_llm_conditions(self, conditions: list[OnCondition]) -> Handoffs:
        """Add several LLM conditions, in order."""
        for condition in conditions:
            self.add_llm_condition(condition)
        return self

    def set_after_work(self, target: Any) -> Handoffs:
        """Where the conversation goes when the agent replies without handing off."""
        self.after_work = as_target(target, what="the after-work target")
        return self

    def add(self, condition: OnCondition) -> Handoffs:
        """Add a handoff condition."""
        return self.add_llm_condition(condition)

    def add_many(self, conditions: list[OnCondition]) -> Handoffs:
        """Add several handoff conditions."""
        return self.add_llm_conditions(conditions)

    @property
    def tools(self) -> list[Tool]:
        """The ``transfer_to_...`` tools, one per condition."""
        return list(self._tools)

    @property
    def tools_by_name(self) -> dict[str, Tool]:
        """The ``transfer_to_...`` tools by name."""
        return self._by_name

    def refresh(self, agent: ConversableAgent, messages: list[Message]) -> None:
        """Recompute which handoff tools the model is offered for its next reply."""
        if self._unconditional and len(self._offered) == len(self._tools):
            return
        self._offered = [
            tool.schema
            for tool, condition in zip(self._tools, self.llm_conditions, strict=True)
            if condition.is_available(agent, messages)
        ]

    def with_tools(self, tools: dict[str, Tool]) -> dict[str, Tool]:
        """``tools`` and the ``transfer_to_...`` tools, by name (the same dict while neither changes)."""
        built_from = self._merged_from
        if (
            built_from is None
            or built_from[0] is not tools
            or built_from[1] != (len(tools), len(self._tools))
        ):
            self._merged_from = (tools, (len(tools), len(self._tools)))
            self._merged = {**tools, **self.tools_by_name}
        return self._merged

    @property
    def offered_schemas(self) -> list[dict[str, Any]]:
        """The schemas of the handoff tools available now."""
        return self._offered

    def offered_with(self, schemas: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``schemas`` followed by the handoff tools available now (the same list while nothing changes)."""
        built_from = self._combined_from
        if built_from is None or built_from[0] is not schemas or built_from[1] is not self._offered:
            self._combined_from = (schemas, self._offered)
            self._combined = schemas + self._offered
        return self._combined


def _transfer(target: TransitionTarget) -> Callable[[], TransitionTarget]:
    def transfer() -> TransitionTarget:
        return target

    return transfer
