"""An agent's handoffs: conditions its model can choose (as ``transfer_to_<agent>`` tools) and its
after-work target."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from parley.group.targets import AgentNameTarget, AgentTarget, TransitionTarget, as_target
from parley.messages import Message
from parley.timeouts import NO_LIMIT
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
            return bool(agent.context_variables.get(self.available))
        return bool(self.available(agent, messages))


@dataclass
class Handoffs:
    """The handoffs of one agent: LLM conditions, in order, and an optional after-work target.

    ``version`` counts the changes, for caches of the tools built from it.
    """

    llm_conditions: list[OnCondition] = field(default_factory=list)
    after_work: TransitionTarget | None = None
    version: int = 0
    _tools: list[Tool] = field(default_factory=list)
    _by_name: dict[str, Tool] = field(default_factory=dict)
    _unconditional: bool = True
    _offered: dict[tuple[int, tuple[bool, ...]], tuple[list[dict[str, Any]], list[dict[str, Any]]]] = field(
        default_factory=dict
    )

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
        tool = Tool(
            _transfer(condition.target),
            name=name[:64],
            description=condition.prompt,
            in_thread=False,
            timeout=NO_LIMIT,
        )
        self._tools.append(tool)
        self._by_name[tool.name] = tool
        self._offered = {}
        self.version += 1
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

    def available(self, agent: ConversableAgent, messages: list[Message]) -> tuple[bool, ...]:
        """Which handoffs ``agent`` may take now (by condition), in the chat it is serving."""
        if self._unconditional:
            return ()
        return tuple(condition.is_available(agent, messages) for condition in self.llm_conditions)

    def offered_with(
        self, agent: ConversableAgent, messages: list[Message], schemas: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """``schemas`` followed by the handoff tools available now (the same list while nothing changes)."""
        available = self.available(agent, messages)
        key = (id(schemas), available)
        cached = self._offered.get(key)
        if cached is not None and cached[0] is schemas:
            return cached[1]
        if len(self._offered) > 64:
            self._offered = {}
        tools = self._tools
        if available:
            tools = [tool for tool, ok in zip(tools, available, strict=True) if ok]
        offered = schemas + [tool.schema for tool in tools]
        self._offered[key] = (schemas, offered)
        return offered


def _transfer(target: TransitionTarget) -> Callable[[], TransitionTarget]:
    def transfer() -> TransitionTarget:
        return target

    return transfer
