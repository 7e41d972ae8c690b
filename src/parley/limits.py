"""Stop conditions and budgets for ``stop_when=`` on every chat entry point.

Conditions combine with ``|`` (stop when either holds) and ``&`` (stop when both hold)::

    chat = user.initiate_chat(
        assistant, "...", stop_when=MaxTokens(50_000) | MaxCost(0.50) | MaxTime(120) | Mentions("DONE")
    )

Budgets (:class:`MaxTokens`, :class:`MaxCost`, :class:`MaxModelCalls`, :class:`MaxToolCalls`,
:class:`MaxTime`) are checked before each model call against the worst case of that call: its prompt
(counted by the model when it can count, else bounded by the prompt's size in bytes, which no byte-level
tokenizer exceeds) plus the most it may answer, the ``max_tokens`` of its ``llm_config``. A call that
could cross a budget is not made: the chat stops with a :class:`~parley.termination.StopReason` of kind
``condition`` that names the budget and the figures. Without a configured ``max_tokens``, the reply is
bounded by the model's own limit, and a call is sent with ``max_tokens`` set to what the budget leaves
when that is less (see :mod:`parley.models.reply_limits`), so that it cannot cross it. A model whose price
parley does not know can overspend a cost budget by the one call that crossed it.

Chats started inside a chat with budgets (nested chats, swarms run by a tool) count against the same
budgets.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from parley.messages import content_str
from parley.records import Record
from parley.termination import StopKind, StopReason

if TYPE_CHECKING:
    from parley.engine import Chat


@dataclass(slots=True, init=False, repr=False, eq=False)
class PlannedCall(Record):
    """A model call about to be made: who makes it and its worst case."""

    agent: str
    prompt_tokens: int
    """The most tokens the prompt can be."""
    completion_tokens: int | None
    """The most tokens the reply may have (the request's ``max_tokens``), ``None`` if unbounded."""
    price: Callable[[int, int], float] | None
    """The cost of ``(prompt_tokens, completion_tokens)``, if known."""

    def __init__(
        self,
        agent: str,
        prompt_tokens: int,
        completion_tokens: int | None,
        price: Callable[[int, int], float] | None,
    ) -> None:
        self.agent = agent
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.price = price


class Spent:
    """What a chat and the chats it started have used so far, against its budgets."""

    __slots__ = ("cost", "model_calls", "started", "tokens", "tool_calls")

    def __init__(self, tokens: int = 0, cost: float = 0.0, model_calls: int = 0, tool_calls: int = 0) -> None:
        self.tokens = tokens
        self.cost = cost
        self.model_calls = model_calls
        self.tool_calls = tool_calls
        self.started = time.monotonic()

    def to_dict(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "cost": self.cost,
            "model_calls": self.model_calls,
            "tool_calls": self.tool_calls,
        }

    @property
    def elapsed(self) -> float:
        """Seconds since the chat started (in this process)."""
        return time.monotonic() - self.started


class Condition:
    """A reason to stop a chat. Subclasses override :meth:`check` (after each message) and, for budgets,
    :meth:`before_model_call`, :meth:`completion_limit` and :meth:`before_tool_calls`."""

    budget = False
    """Whether it limits spending (such conditions also bind the chats started inside the chat)."""
    checks_messages = True
    """Whether :meth:`check` needs to run after each message (spending budgets are enforced before each
    call instead)."""

    def check(self, chat: Chat, spent: Spent) -> StopReason | None:
        """Why the chat must stop now, after a message, or ``None``."""
        return None

    def before_model_call(self, spent: Spent, call: PlannedCall) -> StopReason | None:
        """Why the call must not be made, or ``None``."""
        return None

    def completion_limit(self, spent: Spent, call: PlannedCall) -> int | None:
        """The most tokens the call's reply may have to stay within this budget (``None``: no limit)."""
        return None

    def before_tool_calls(self, spent: Spent, count: int, agent: str) -> StopReason | None:
        """Why ``count`` tool calls must not run, or ``None``."""
        return None

    def reached(self, spent: Spent, agent: str | None) -> StopReason | None:
        """Why a budget's limit is reached (``None`` for a condition that is not a budget, or a budget
        with room left): how an ``&`` asks its parts before a call."""
        return None

    def holds(self, chat: Chat, spent: Spent) -> StopReason | None:
        """Why the condition holds now, after a message, budgets included (how an ``&`` asks its
        parts, which may hold at different points of the chat)."""
        return self.check(chat, spent)

    def __or__(self, other: Condition) -> Condition:
        return AnyOf(self, other)

    def __and__(self, other: Condition) -> Condition:
        return AllOf(self, other)


def _stop(detail: str, agent: str | None = None) -> StopReason:
    return StopReason(StopKind.CONDITION, detail, agent)


class AnyOf(Condition):
    """Stop when any of the conditions holds (``a | b``); the first that holds gives the reason."""

    def __init__(self, *conditions: Condition) -> None:
        self.conditions: list[Condition] = []
        for condition in conditions:
            _check_condition(condition)
            self.conditions.extend(condition.conditions if isinstance(condition, AnyOf) else [condition])
        self.budget = any(condition.budget for condition in self.conditions)
        self.checks_messages = any(condition.checks_messages for condition in self.conditions)

    def check(self, chat: Chat, spent: Spent) -> StopReason | None:  # after every message: a plain loop
        for condition in self.conditions:
            if condition.checks_messages:
                reason = condition.check(chat, spent)
                if reason is not None:
                    return reason
        return None

    def before_model_call(self, spent: Spent, call: PlannedCall) -> StopReason | None:
        return _first(condition.before_model_call(spent, call) for condition in self.conditions)

    def completion_limit(self, spent: Spent, call: PlannedCall) -> int | None:
        limits = [condition.completion_limit(spent, call) for condition in self.conditions]
        known = [limit for limit in limits if limit is not None]
        return min(known) if known else None

    def before_tool_calls(self, spent: Spent, count: int, agent: str) -> StopReason | None:
        return _first(condition.before_tool_calls(spent, count, agent) for condition in self.conditions)

    def reached(self, spent: Spent, agent: str | None) -> StopReason | None:
        return _first(condition.reached(spent, agent) for condition in self.conditions)

    def holds(self, chat: Chat, spent: Spent) -> StopReason | None:
        return _first(condition.holds(chat, spent) for condition in self.conditions)

    def __repr__(self) -> str:
        return " | ".join(repr(condition) for condition in self.conditions)


class AllOf(Condition):
    """Stop when all of the conditions hold (``a & b``).

    Its parts may come to hold at different points: it is asked after every message (a budget holds
    once its limit is reached), and before each model or tool call, which it refuses when every part
    refuses it or has already reached its limit.
    """

    checks_messages = True

    def __init__(self, *conditions: Condition) -> None:
        for condition in conditions:
            _check_condition(condition)
        self.conditions = list(conditions)
        self.budget = any(condition.budget for condition in self.conditions)

    def check(self, chat: Chat, spent: Spent) -> StopReason | None:
        return _all([condition.holds(chat, spent) for condition in self.conditions])

    def before_model_call(self, spent: Spent, call: PlannedCall) -> StopReason | None:
        return _all(
            [
                condition.before_model_call(spent, call) or condition.reached(spent, call.agent)
                for condition in self.conditions
            ]
        )

    def before_tool_calls(self, spent: Spent, count: int, agent: str) -> StopReason | None:
        return _all(
            [
                condition.before_tool_calls(spent, count, agent) or condition.reached(spent, agent)
                for condition in self.conditions
            ]
        )

    def reached(self, spent: Spent, agent: str | None) -> StopReason | None:
        return _all([condition.reached(spent, agent) for condition in self.conditions])

    def __repr__(self) -> str:
        return " & ".join(f"({condition!r})" for condition in self.conditions)


def _first(reasons: Iterator[StopReason | None]) -> StopReason | None:
    """The first reason that is not ``None`` (the conditions after it are not asked)."""
    return next((reason for reason in reasons if reason is not None), None)


def _all(reasons: list[StopReason | None]) -> StopReason | None:
    if any(reason is None for reason in reasons):
        return None
    held = [reason for reason in reasons if reason is not None]
    return _stop("; and ".join(reason.detail for reason in held), held[-1].agent)


class _Budget(Condition):
    """A limit on spending: enforced before each call it would cross, and held once it is reached (what an
    ``&`` asks after a message)."""

    budget = True
    checks_messages = False

    def check(self, chat: Chat, spent: Spent) -> StopReason | None:
        return self.reached(spent, chat.state.last_speaker)


class MaxTokens(_Budget):
    """Stop before the chat's tokens (prompt and completion, all model calls) could exceed ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = _positive_int(limit, "MaxTokens")

    def reached(self, spent: Spent, agent: str | None) -> StopReason | None:
        if spent.tokens >= self.limit:
            detail = f"the token budget of {self.limit:,} is spent ({spent.tokens:,} tokens used)"
            return _stop(detail, agent)
        return None

    def completion_limit(self, spent: Spent, call: PlannedCall) -> int | None:
        if call.completion_tokens is not None:
            return None
        return self.limit - spent.tokens - call.prompt_tokens

    def before_model_call(self, spent: Spent, call: PlannedCall) -> StopReason | None:
        reply = 1 if call.completion_tokens is None else call.completion_tokens
        if spent.tokens + call.prompt_tokens + reply <= self.limit:
            return None
        most = "" if call.completion_tokens is None else f" + {call.completion_tokens:,} completion"
        return _stop(
            f"the token budget of {self.limit:,} would be exceeded: {spent.tokens:,} tokens used, and "
            f"{call.agent}'s next model call could use {call.prompt_tokens:,} prompt{most} tokens",
            call.agent,
        )

    def __repr__(self) -> str:
        return f"MaxTokens({self.limit})"


class MaxCost(_Budget):
    """Stop before the chat's cost could exceed ``usd`` dollars (with models whose price parley knows;
    others are checked after each call)."""

    def __init__(self, usd: float) -> None:
        if isinstance(usd, bool) or not isinstance(usd, int | float) or not usd > 0:
            raise ValueError(f"MaxCost needs a positive number of dollars, not {usd!r}")
        self.usd = float(usd)

    def reached(self, spent: Spent, agent: str | None) -> StopReason | None:
        if spent.cost >= self.usd:
            return _stop(f"the cost budget of ${self.usd:g} is spent (${spent.cost:.6g} used)", agent)
        return None

    def _room(self, spent: Spent, call: PlannedCall) -> tuple[float, float] | None:
        """The reply tokens the budget leaves for the call (below 1: none), and each one's price."""
        if call.price is None:
            return None
        per_token = (call.price(0, 1_000_000) - call.price(0, 0)) / 1_000_000
        left = self.usd - spent.cost - call.price(call.prompt_tokens, call.completion_tokens or 0)
        left += _CENT_FRACTION
        if per_token <= 0:
            return (float("inf") if left >= 0 else -1.0), 0.0
        if call.completion_tokens is not None:
            return (float("inf") if left >= 0 else -1.0), per_token
        return left / per_token, per_token

    def completion_limit(self, spent: Spent, call: PlannedCall) -> int | None:
        room = self._room(spent, call)
        if room is None or room[1] == 0 or call.completion_tokens is not None:
            return None
        return int(room[0])

    def before_model_call(self, spent: Spent, call: PlannedCall) -> StopReason | None:
        room = self._room(spent, call)
        if room is None:
            return self.reached(spent, call.agent)
        if room[0] >= 1:
            return None
        assert call.price is not None
        least = call.price(call.prompt_tokens, call.completion_tokens or 1)
        return _stop(
            f"the cost budget of ${self.usd:g} would be exceeded: ${spent.cost:.6g} used, and "
            f"{call.agent}'s next model call could cost ${least:.6g}",
            call.agent,
        )

    def __repr__(self) -> str:
        return f"MaxCost({self.usd:g})"


class MaxModelCalls(_Budget):
    """Stop before the chat makes more than ``limit`` model calls."""

    def __init__(self, limit: int) -> None:
        self.limit = _positive_int(limit, "MaxModelCalls")

    def reached(self, spent: Spent, agent: str | None) -> StopReason | None:
        if spent.model_calls < self.limit:
            return None
        return _stop(f"the limit of {self.limit} model calls is reached", agent)

    def before_model_call(self, spent: Spent, call: PlannedCall) -> StopReason | None:
        return self.reached(spent, call.agent)

    def __repr__(self) -> str:
        return f"MaxModelCalls({self.limit})"


class MaxToolCalls(_Budget):
    """Stop before the chat runs more than ``limit`` tool calls."""

    def __init__(self, limit: int) -> None:
        self.limit = _positive_int(limit, "MaxToolCalls")

    def reached(self, spent: Spent, agent: str | None) -> StopReason | None:
        if spent.tool_calls < self.limit:
            return None
        return _stop(f"the limit of {self.limit} tool calls is reached", agent)

    def before_tool_calls(self, spent: Spent, count: int, agent: str) -> StopReason | None:
        if spent.tool_calls + count <= self.limit:
            return None
        return _stop(
            f"the limit of {self.limit} tool calls would be exceeded: {spent.tool_calls} run, and {agent} "
            f"is about to run {count} more",
            agent,
        )

    def __repr__(self) -> str:
        return f"MaxToolCalls({self.limit})"


class MaxTime(_Budget):
    """Stop once the chat has run ``seconds`` (checked before each model call and each tool call; a call
    under way is not interrupted)."""

    def __init__(self, seconds: float) -> None:
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not seconds > 0:
            raise ValueError(f"MaxTime needs a positive number of seconds, not {seconds!r}")
        self.seconds = float(seconds)

    def check(self, chat: Chat, spent: Spent) -> StopReason | None:
        return self.reached(spent, None)  # the time ran out for the chat, not for one agent

    def reached(self, spent: Spent, agent: str | None) -> StopReason | None:
        elapsed = spent.elapsed
        if elapsed < self.seconds:
            return None
        return _stop(f"the time limit of {self.seconds:g} s is reached ({elapsed:.3g} s)", agent)

    def before_model_call(self, spent: Spent, call: PlannedCall) -> StopReason | None:
        return self.reached(spent, call.agent)

    def before_tool_calls(self, spent: Spent, count: int, agent: str) -> StopReason | None:
        return self.reached(spent, agent)

    def __repr__(self) -> str:
        return f"MaxTime({self.seconds:g})"


class Mentions(Condition):
    """Stop after a message that contains ``text``."""

    def __init__(self, text: str) -> None:
        if not isinstance(text, str) or not text:
            raise ValueError(f"Mentions needs a non-empty string, not {text!r}")
        self.text = text

    def check(self, chat: Chat, spent: Spent) -> StopReason | None:
        messages = chat.state.messages
        if not messages or self.text not in content_str(messages[-1].get("content")):
            return None
        speaker = messages[-1].get("name")
        return _stop(f"the message from {speaker} mentions {self.text!r}", speaker)

    def __repr__(self) -> str:
        return f"Mentions({self.text!r})"


class When(Condition):
    """Stop when ``function(chat)`` returns something true; a string it returns is the stop reason's text."""

    def __init__(self, function: Callable[[Chat], Any]) -> None:
        if not callable(function):
            raise TypeError(f"When needs a callable (chat) -> bool, not {function!r}")
        self.function = function

    def check(self, chat: Chat, spent: Spent) -> StopReason | None:
        result = self.function(chat)
        if not result:
            return None
        name = getattr(self.function, "__name__", "a condition")
        return _stop(result if isinstance(result, str) else f"{name} holds", chat.state.last_speaker)

    def __repr__(self) -> str:
        return f"When({getattr(self.function, '__name__', self.function)!r})"


_CENT_FRACTION = 1e-9
"""Dollars below which sums of prices are taken as equal (floating point)."""


def _positive_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} needs a positive int, not {value!r}")
    return value


def _check_condition(condition: Any) -> None:
    if not isinstance(condition, Condition):
        raise TypeError(
            "stop conditions combine with other conditions (MaxTokens, MaxCost, Mentions...), "
            f"not {condition!r}"
        )


def check_stop_when(stop_when: Any) -> Condition | None:
    """``stop_when`` as a condition, or a clear error."""
    if stop_when is None:
        return None
    if isinstance(stop_when, list | tuple):
        return AnyOf(*stop_when)
    _check_condition(stop_when)
    condition: Condition = stop_when
    return condition
