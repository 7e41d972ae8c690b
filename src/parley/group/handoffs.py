"""An agent's handoffs: conditions its model can choose (as ``transfer_to_<agent>`` tools), conditions on
the context variables checked before it replies, and its after-work target."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from parley.group.context_expression import ContextExpression, ContextStr
from parley.group.targets import AgentNameTarget, AgentTarget, FunctionTarget, TransitionTarget, as_target
from parley.messages import Message
from parley.timeouts import NO_LIMIT
from parley.tools import Tool

if TYPE_CHECKING:
    from parley.agent import ConversableAgent

Availability = str | ContextExpression | Callable[..., bool] | None
"""When a handoff is on: a context-variable name (its truth), a :class:`ContextExpression`, or
``(agent, messages) -> bool``."""


@dataclass(frozen=True)
class StringLLMCondition:
    """A condition the model evaluates: ``prompt`` becomes the handoff tool's description."""

    prompt: str

    def __post_init__(self) -> None:
        if not isinstance(self.prompt, str):
            raise ValueError(f"a StringLLMCondition's prompt must be text, not {self.prompt!r:.80}")

    def get_prompt(self, agent: ConversableAgent, messages: list[Message]) -> str:
        return self.prompt


def _check_available(available: Any) -> None:
    if available is not None and not (isinstance(available, str | ContextExpression) or callable(available)):
        raise ValueError(
            "'available' must be a context-variable name, a ContextExpression or a callable, "
            f"not {available!r}"
        )


def _is_available(available: Availability, agent: ConversableAgent, messages: list[Message]) -> bool:
    if available is None:
        return True
    if isinstance(available, str):
        return bool(agent.context_variables.get(available))
    if isinstance(available, ContextExpression):
        return bool(available.evaluate(agent.context_variables))
    return bool(available(agent, messages))


def _condition_target(target: Any, what: str) -> TransitionTarget:
    """A condition's target: an agent, or where an after-work can go (ending the chat, the user, the
    same agent, the group manager's choice); not an after-work function."""
    target = as_target(target, what=what)
    if isinstance(target, FunctionTarget):
        raise ValueError(f"{what} must be an agent or a transition target, not a function ({target!r})")
    return target


@dataclass
class OnCondition:
    """Hand off to ``target`` when the model decides that ``condition`` holds.

    The model sees a ``transfer_to_<target>`` tool described by the condition. ``target`` is an agent, an
    agent target, or a target that ends the chat, goes to the user, stays or lets the manager choose;
    ``condition`` is text, a :class:`StringLLMCondition`, a :class:`ContextStr` (filled from the context
    variables before each reply) or ``(agent, messages) -> str``; ``available`` switches the handoff on
    and off (a context-variable name, a :class:`ContextExpression`, or ``(agent, messages) -> bool``).

    Raises:
        ValueError: the target is a function, the condition is empty or of another kind, or
            ``available`` is of another kind.
    """

    target: Any = None
    condition: Any = None
    available: Availability = None

    def __post_init__(self) -> None:
        self.target = _condition_target(self.target, "an OnCondition's target")
        prompt = self.condition.prompt if isinstance(self.condition, StringLLMCondition) else self.condition
        if isinstance(prompt, str):
            if not prompt.strip():
                raise ValueError(f"an OnCondition needs a non-empty condition text, not {self.condition!r}")
        elif not (isinstance(prompt, ContextStr) or callable(prompt)):
            raise ValueError(
                f"an OnCondition's condition must be text, a ContextStr or a callable, not {self.condition!r}"
            )
        self.prompt: Any = prompt
        _check_available(self.available)

    @property
    def is_dynamic(self) -> bool:
        """Whether the condition's text is computed before each reply."""
        return not isinstance(self.prompt, str)

    def prompt_for(self, agent: ConversableAgent, messages: list[Message]) -> str:
        """The condition's text for ``agent``'s next reply."""
        if isinstance(self.prompt, str):
            return self.prompt
        if isinstance(self.prompt, ContextStr):
            return self.prompt.format(agent.context_variables)
        text = self.prompt(agent, messages)
        if not isinstance(text, str):
            raise ValueError(f"the condition function {self.prompt!r} returned {text!r}, not a string")
        return text

    def is_available(self, agent: ConversableAgent, messages: list[Message]) -> bool:
        return _is_available(self.available, agent, messages)


@dataclass
class OnContextCondition:
    """Hand off to ``target`` when ``condition`` holds on the context variables, before the agent's
    model is asked anything.

    ``condition`` is a context-variable name (its truth) or a :class:`ContextExpression` (or any object
    with ``evaluate(context_variables)``). The conditions of an agent are checked in order each time it
    is about to reply; the first that holds makes the agent say ``[Handing off to <target>]`` and hands
    the conversation over. ``available`` switches the condition on and off, as for :class:`OnCondition`.

    Raises:
        ValueError: the target is a function, or the condition or ``available`` is of another kind.
    """

    target: Any = None
    condition: Any = None
    available: Availability = None

    def __post_init__(self) -> None:
        self.target = _condition_target(self.target, "an OnContextCondition's target")
        if isinstance(self.condition, str):
            if not self.condition.strip():
                raise ValueError("an OnContextCondition's condition must be a non-empty variable name")
        elif not callable(getattr(self.condition, "evaluate", None)):
            raise ValueError(
                "an OnContextCondition's condition must be a context-variable name or a ContextExpression, "
                f"not {self.condition!r}"
            )
        _check_available(self.available)

    def holds(self, agent: ConversableAgent, messages: list[Message]) -> bool:
        """Whether the handoff is available and its condition holds now."""
        if not _is_available(self.available, agent, messages):
            return False
        context = agent.context_variables
        if isinstance(self.condition, str):
            if self.condition not in context:
                raise KeyError(
                    f"Missing context variable: {self.condition!r} (the condition of {agent.name}'s "
                    f"OnContextCondition to {self.target.display_name()})"
                )
            return bool(context[self.condition])
        return bool(self.condition.evaluate(context))


@dataclass
class Handoffs:
    """The handoffs of one agent: LLM conditions, in order, and an optional after-work target.

    ``version`` counts the changes, for caches of the tools built from it.
    """

    llm_conditions: list[OnCondition] = field(default_factory=list)
    context_conditions: list[OnContextCondition] = field(default_factory=list)
    after_work: TransitionTarget | None = None
    version: int = 0
    _tools: list[Tool] = field(default_factory=list)
    _by_name: dict[str, Tool] = field(default_factory=dict)
    # each transfer tool by name, with the function it was made with and the target that returns
    _transfers: dict[str, tuple[Tool, Callable[[], TransitionTarget], TransitionTarget]] = field(
        default_factory=dict
    )
    _unconditional: bool = True
    _dynamic: bool = False
    _offered: dict[tuple[int, tuple[bool, ...]], tuple[list[dict[str, Any]], list[dict[str, Any]]]] = field(
        default_factory=dict
    )
    _always: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None

    @property
    def runs_user_code(self) -> bool:
        """Whether offering these handoffs may call a function of the user's: an ``available`` or a
        prompt function, or a context condition."""
        return not self._unconditional or self._dynamic or bool(self.context_conditions)

    def add_llm_condition(self, condition: OnCondition) -> Handoffs:
        """Offer the model a handoff tool for ``condition``."""
        if not isinstance(condition, OnCondition):
            raise TypeError(f"expected an OnCondition, not {condition!r}")
        taken = {tool.name for tool in self._tools}
        target = condition.target
        named = (
            target.display_name()
            if isinstance(target, AgentTarget | AgentNameTarget)
            else target.display_name().lower()
        )
        name = _transfer_name(named, taken)
        self.llm_conditions.append(condition)
        self._unconditional = self._unconditional and condition.available is None
        self._dynamic = self._dynamic or condition.is_dynamic
        description = condition.prompt if isinstance(condition.prompt, str) else ""
        transfer = _transfer(condition.target)
        tool = Tool(transfer, name=name, description=description, in_thread=False, timeout=NO_LIMIT)
        self._tools.append(tool)
        self._by_name[tool.name] = tool
        self._transfers[tool.name] = (tool, transfer, condition.target)
        self._offered = {}
        self._always = None
        self.version += 1
        return self

    def add_llm_conditions(self, conditions: list[OnCondition]) -> Handoffs:
        """Add several LLM conditions, in order."""
        for condition in _listed(conditions, "add_llm_conditions", "add_llm_condition"):
            self.add_llm_condition(condition)
        return self

    def add_context_condition(self, condition: OnContextCondition) -> Handoffs:
        """Hand off, without asking the model, when ``condition`` holds (checked before each reply)."""
        if not isinstance(condition, OnContextCondition):
            raise TypeError(f"expected an OnContextCondition, not {condition!r}")
        self.context_conditions.append(condition)
        self.version += 1
        return self

    def add_context_conditions(self, conditions: list[OnContextCondition]) -> Handoffs:
        """Add several context conditions, in order."""
        for condition in _listed(conditions, "add_context_conditions", "add_context_condition"):
            self.add_context_condition(condition)
        return self

    def set_after_work(self, target: Any) -> Handoffs:
        """Where the conversation goes when the agent replies without handing off."""
        self.after_work = as_target(target, what="the after-work target")
        return self

    def add(self, condition: OnCondition | OnContextCondition) -> Handoffs:
        """Add a handoff condition (an LLM or a context condition)."""
        if isinstance(condition, OnContextCondition):
            return self.add_context_condition(condition)
        return self.add_llm_condition(condition)

    def add_many(self, conditions: list[OnCondition | OnContextCondition]) -> Handoffs:
        """Add several handoff conditions."""
        for condition in _listed(conditions, "add_many", "add"):
            self.add(condition)
        return self

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
        if self._unconditional and not self._dynamic:
            last = self._always
            if last is not None and last[0] is schemas:
                return last[1]
        elif self._dynamic:
            return schemas + self._current_schemas(agent, messages)
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
        if not available:
            self._always = (schemas, offered)
        return offered

    def _current_schemas(self, agent: ConversableAgent, messages: list[Message]) -> list[dict[str, Any]]:
        """The available handoff tools, described by their conditions' texts for this reply."""
        schemas = []
        for condition, tool in zip(self.llm_conditions, self._tools, strict=True):
            if not condition.is_available(agent, messages):
                continue
            function = {**tool.schema["function"], "description": condition.prompt_for(agent, messages)}
            schemas.append({"type": "function", "function": function})
        return schemas

    def transit_tool_names(self) -> set[str]:
        """The names of the handoff tools (transit calls, which other agents' models need not see)."""
        return set(self._by_name)


def _transfer(target: TransitionTarget) -> Callable[[], TransitionTarget]:
    # unannotated: its tool has no parameters, and reading an annotation costs more than the rest
    return lambda: target


_TOOL_NAME_LENGTH = 64
"""The longest tool name model APIs take."""


def _transfer_name(target: str, taken: set[str]) -> str:
    """``transfer_to_<target>``, in the letters, digits, ``_`` and ``-`` that model APIs take (others
    become ``_``), cut to 64 characters, with ``_2``, ``_3``... when the name is taken."""
    base = re.sub(r"[^A-Za-z0-9_-]", "_", f"transfer_to_{target}")[:_TOOL_NAME_LENGTH]
    name, number = base, 2
    while name in taken:
        suffix = f"_{number}"
        name, number = base[: _TOOL_NAME_LENGTH - len(suffix)] + suffix, number + 1
    return name


def _listed(conditions: Any, method: str, for_one: str) -> Sequence[Any]:
    """``conditions`` if it is a list (or tuple), else a clear error (a single condition, say)."""
    if not isinstance(conditions, list | tuple):
        raise TypeError(
            f"{method} takes a list of conditions, not {type(conditions).__name__}; for one condition "
            f"use {for_one}"
        )
    return conditions
