"""A chat's budgets at work: what it has spent, and whether its next model or tool call may run.

See :mod:`parley.limits` for the conditions themselves and what they guarantee.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from parley.limits import (
    AllOf,
    AnyOf,
    Condition,
    MaxCost,
    MaxModelCalls,
    MaxTime,
    MaxTokens,
    MaxToolCalls,
    PlannedCall,
    Spent,
)
from parley.messages import Message
from parley.models.reply_limits import ReplyBounds, reply_bounds
from parley.termination import StopReason

if TYPE_CHECKING:
    from parley.engine import Chat
    from parley.models.base import ModelResponse

_PER_MESSAGE = 8
"""Tokens a chat template may add around each message, on top of its content."""
_PER_REQUEST = 16
_NO_PARAMS: dict[str, Any] = {}
NO_TOOLS: Sequence[dict[str, Any]] = ()
"""The tools of a call that offers none: one object, so that an agent's later calls count only what is
new to them."""
_monotonic = time.monotonic
_TOOL_LISTS_KEPT = 16


class _ClientInfo:
    """What budgets need of a model client, read once: how it counts tokens, how long its replies can be
    and its price, and whether a budget needs a bound on its prompts (a time or call-count budget does
    not)."""

    __slots__ = (
        "at_ceiling",
        "bounds",
        "ceiling",
        "client",
        "count_tokens",
        "fast_guard",
        "fast_limit",
        "fast_params",
        "max_tokens",
        "needs_prompt",
        "price",
        "reply_need",
    )

    def __init__(self, client: Any) -> None:
        self.client = client
        count_tokens = getattr(client, "count_tokens", None)
        self.count_tokens = count_tokens if callable(count_tokens) else None
        self.bounds: ReplyBounds = reply_bounds(client)
        self.max_tokens = None if self.bounds.takes_cap else self.bounds.fixed
        """The reply's own bound when no budget can lower it (every config sets ``max_tokens``)."""
        self.reply_need = self.bounds.fixed or 1
        """The fewest tokens a budget must leave for the reply."""
        self.ceiling, sent = self.bounds.ceiling()
        self.at_ceiling: dict[str, Any] = _NO_PARAMS if sent is None else {"max_tokens": sent}
        """The parameters of a call whose budgets leave at least :attr:`ceiling` for the reply."""
        self.price = _price(client)
        self.needs_prompt = True
        self.fast_guard: _Guard | None = None
        """The chat's one guard, when its check of this client's calls takes the fast path (see
        :meth:`Budgets.before_model_call`)."""
        self.fast_limit = -math.inf
        """The most tokens spent plus the prompt's bound for which the fast path allows the call."""
        self.fast_params: dict[str, Any] = _NO_PARAMS
        """The call's parameters on the fast path."""

    def take_fast_path(self, guard: _Guard) -> None:
        """Let ``guard`` (the chat's only one, with no custom condition and no priced cost budget) decide
        this client's calls in a few comparisons: below :attr:`fast_limit`, no budget binds the reply."""
        self.fast_guard = guard
        if guard.token_limit is None:
            self.fast_limit = math.inf
        elif self.bounds.takes_cap:  # a budget that leaves the ceiling or more sends what the ceiling sends
            self.fast_limit = guard.token_limit - max(self.ceiling, self.reply_need)
            self.fast_params = self.at_ceiling
        else:
            self.fast_limit = guard.token_limit - self.reply_need


def _planned(agent: str, prompt: int, configured: int | None, client: _ClientInfo) -> PlannedCall:
    return PlannedCall(agent, prompt, configured, client.price)


def _refusal(condition: Condition, spent: Spent, call: PlannedCall) -> StopReason:
    """The reason a budget that refuses ``call`` gives."""
    reason = condition.before_model_call(spent, call)
    assert reason is not None, f"{condition!r} refused a call without a reason"
    return reason


class _Guard:
    """The limits one spending answers to: the common budgets by kind (the tightest of each), and any
    other condition; ``seconds``, ``token_limit``, ``call_limit`` and ``usd`` are the limits of ``time``,
    ``tokens``, ``model_calls`` and ``cost`` (the last two infinite without one)."""

    __slots__ = (
        "call_limit",
        "cost",
        "model_calls",
        "others",
        "seconds",
        "spent",
        "time",
        "token_limit",
        "tokens",
        "tool_calls",
        "usd",
    )

    def __init__(self, spent: Spent) -> None:
        self.spent = spent
        self.tokens: MaxTokens | None = None
        self.cost: MaxCost | None = None
        self.model_calls: MaxModelCalls | None = None
        self.tool_calls: MaxToolCalls | None = None
        self.time: MaxTime | None = None
        self.others: list[Condition] = []
        self.seconds: float | None = None
        self.token_limit: int | None = None
        self.call_limit = math.inf
        self.usd = math.inf

    def add(self, condition: Condition) -> None:
        if isinstance(condition, AnyOf):
            for part in condition.conditions:
                self.add(part)
        elif isinstance(condition, MaxTokens):
            if self.tokens is None or condition.limit < self.tokens.limit:
                self.tokens = condition
                self.token_limit = condition.limit
        elif isinstance(condition, MaxCost):
            if self.cost is None or condition.usd < self.cost.usd:
                self.cost = condition
                self.usd = condition.usd
        elif isinstance(condition, MaxModelCalls):
            if self.model_calls is None or condition.limit < self.model_calls.limit:
                self.model_calls = condition
                self.call_limit = condition.limit
        elif isinstance(condition, MaxToolCalls):
            if self.tool_calls is None or condition.limit < self.tool_calls.limit:
                self.tool_calls = condition
        elif isinstance(condition, MaxTime):
            if self.time is None or condition.seconds < self.time.seconds:
                self.time = condition
                self.seconds = condition.seconds
        else:
            self.others.append(condition)


class Budgets:
    """The conditions a chat answers to (its own ``stop_when``, and the budgets of the chats it was started
    in), each with the spending it counts."""

    def __init__(
        self,
        own: Condition | None,
        spent: Spent | None,
        outer: Budgets | None,
        stop_outer: Callable[[StopReason], None] | None = None,
    ) -> None:
        self._own = spent if own is not None else None
        self.outer_refusal: StopReason | None = None
        """The latest refusal by a budget of a chat this chat was started in: when it stops this chat,
        :attr:`stop_outer` stops that chat too (its budget is spent; the step it waits on cannot be
        done)."""
        self.stop_outer = stop_outer
        self.entries: list[tuple[Condition, Spent]] = []
        if own is not None and spent is not None:
            self.entries.append((own, spent))
        if outer is not None:  # the outer chat's spending limits bind this chat, not its other conditions
            for condition, counts in outer.entries:
                inherited = _budget_part(condition)
                if inherited is not None:
                    self.entries.append((inherited, counts))
        guards: dict[int, _Guard] = {}
        for condition, counts in self.entries:
            guards.setdefault(id(counts), _Guard(counts)).add(condition)
        self._guards = list(guards.values())
        self.spents = [guard.spent for guard in self._guards]
        self._only = self._guards[0] if len(self._guards) == 1 else None
        """The one guard, when the chat's budgets all count one spending (a chat not started in another)."""
        self._checked = [(condition, spent) for condition, spent in self.entries if condition.checks_messages]
        self.log_bytes = 0
        """The bytes of the chat's messages counted so far (see :meth:`_prompt_bound`)."""
        self._counted = 0
        self._marks: dict[str, _Mark] = {}
        self._tool_bytes: dict[int, tuple[Any, int]] = {}
        self._clients: dict[int, _ClientInfo] = {}
        self._last_client: _ClientInfo | None = None

    def check(self, chat: Chat) -> StopReason | None:
        """Why the chat must stop now (after a message), or ``None``."""
        for condition, spent in self._checked:
            reason = condition.check(chat, spent)
            if reason is not None:
                return reason
        return None

    def before_model_call(
        self,
        agent: str,
        client: Any,
        request: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        log: Sequence[Message] = (),
    ) -> dict[str, Any] | StopReason:
        """The request parameters that keep the call within budget (``max_tokens``), or why it must not run.

        ``log`` is the chat's log, whose new messages the prompt's bound counts.
        """
        info = self._last_client
        if info is None or info.client is not client:
            info = self._client_info(client)
        guard = info.fast_guard
        prompt: int | None = None
        if guard is not None:
            spent = guard.spent
            seconds = guard.seconds
            if (
                spent.model_calls < guard.call_limit
                and spent.cost < guard.usd
                and (seconds is None or _monotonic() - spent.started < seconds)
            ):
                if not info.needs_prompt:
                    return info.fast_params
                if len(log) > self._counted:
                    self._count(log)
                prompt = self._prompt_bound(agent, info, request, tools)
                if spent.tokens + prompt <= info.fast_limit:
                    return info.fast_params
        return self._decide(agent, info, request, tools, log, prompt)

    def _decide(
        self,
        agent: str,
        info: _ClientInfo,
        request: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        log: Sequence[Message],
        prompt: int | None,
    ) -> dict[str, Any] | StopReason:
        """:meth:`before_model_call` for any budgets (``prompt``: the prompt's bound, if measured)."""
        # None: no budget needs it (a refusal measures it, to say what the call would have cost)
        if prompt is None and info.needs_prompt:
            if len(log) > self._counted:
                self._count(log)
            prompt = self._prompt_bound(agent, info, request, tools)
        takes_cap = info.bounds.takes_cap
        cap: int | None = None
        for guard in self._guards:
            spent = guard.spent
            seconds = guard.seconds
            if seconds is not None and _monotonic() - spent.started >= seconds:
                return self._refused(guard.time, spent, agent, info, prompt, request, tools, log)
            if spent.model_calls >= guard.call_limit:
                return self._refused(guard.model_calls, spent, agent, info, prompt, request, tools, log)
            limit = guard.token_limit
            if limit is not None:
                assert prompt is not None, "a token budget needs the prompt's bound"
                room = limit - spent.tokens - prompt
                if room < info.reply_need:
                    return self._refused(guard.tokens, spent, agent, info, prompt, request, tools, log)
                if takes_cap and (cap is None or room < cap):
                    cap = room
            priced = info.price is not None
            if spent.cost >= guard.usd and not priced:
                return self._refused(guard.cost, spent, agent, info, prompt, request, tools, log)
            if guard.others or (priced and guard.cost is not None):
                asked = self._ask(guard, guard.cost if priced else None, agent, info, prompt, cap)
                if isinstance(asked, StopReason):
                    return self._noted(spent, asked)
                cap = asked
        if cap is None or not takes_cap:
            return _NO_PARAMS
        if cap >= info.ceiling:
            return info.at_ceiling
        return {"max_tokens": cap if cap > 1 else 1}

    def _client_info(self, client: Any) -> _ClientInfo:
        info = self._clients.get(id(client))
        if info is not None and info.client is client:
            self._last_client = info
            return info
        info = self._clients[id(client)] = self._last_client = _ClientInfo(client)
        info.needs_prompt = any(
            guard.tokens is not None or guard.others or (guard.cost is not None and info.price is not None)
            for guard in self._guards
        )
        only = self._only
        if only is not None and not only.others and (only.cost is None or info.price is None):
            info.take_fast_path(only)
        return info

    @staticmethod
    def _ask(
        guard: _Guard,
        cost: MaxCost | None,
        agent: str,
        info: _ClientInfo,
        prompt: int | None,
        cap: int | None,
    ) -> int | StopReason | None:
        """Ask a priced cost budget and the custom conditions about the call: why it must not run, or the
        tightest ``max_tokens`` cap so far."""
        assert prompt is not None, "a priced cost budget and a custom condition need the prompt's bound"
        call = _planned(agent, prompt, info.max_tokens, info)
        priced: list[Condition] = [] if cost is None else [cost]
        for condition in priced + guard.others:
            reason = condition.before_model_call(guard.spent, call)
            if reason is not None:
                return reason
            allowed = condition.completion_limit(guard.spent, call)
            if allowed is not None and (cap is None or allowed < cap):
                cap = allowed
        return cap

    def _refused(
        self,
        condition: Condition | None,
        spent: Spent,
        agent: str,
        info: _ClientInfo,
        prompt: int | None,
        request: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        log: Sequence[Message],
    ) -> StopReason:
        """Why ``condition`` refuses the call, which it plans with the prompt's bound (measured now if no
        budget needed it before)."""
        assert condition is not None, "only a budget that is set refuses a call"
        if prompt is None:
            if len(log) > self._counted:
                self._count(log)
            prompt = self._prompt_bound(agent, info, request, tools)
        return self._noted(spent, _refusal(condition, spent, _planned(agent, prompt, info.max_tokens, info)))

    def _noted(self, spent: Spent, reason: StopReason) -> StopReason:
        """``reason``, a refusal by a budget counting ``spent``: noted as :attr:`outer_refusal` if the
        budget is one of the chats this chat was started in."""
        if spent is not self._own:
            self.outer_refusal = reason
        return reason

    def _count(self, log: Sequence[Message]) -> None:
        """Add the bytes of the messages appended since the last call to :attr:`log_bytes`."""
        total = 0
        for message in log[self._counted :]:
            content = message.get("content")
            if type(content) is str:
                if len(message) <= 3:  # content, role, name: a plain message
                    name = message.get("name")
                    total += len(content) if content.isascii() else len(content.encode())
                    total += _PER_MESSAGE if not name else len(name.encode()) + _PER_MESSAGE
                    continue
            elif content is None and len(message) <= 4:  # content, role, name and tool calls
                calls = message.get("tool_calls")
                if calls:
                    name = message.get("name")
                    total += _calls_bound(calls) + (
                        _PER_MESSAGE if not name else len(name.encode()) + _PER_MESSAGE
                    )
                    continue
            responses = message.get("tool_responses")
            if not responses:
                total += _message_bound(message)
                continue
            for response in responses:  # the model sees each result as a message of its own
                text = response.get("content")
                if type(text) is str and len(response) <= 3:  # role, content, tool_call_id
                    total += len(text) if text.isascii() else len(text.encode())
                    total += len(response.get("tool_call_id") or "") + _PER_MESSAGE
                else:
                    total += _message_bound(response)
            if message.get("role") != "tool":
                total += _message_bound(message)
        self.log_bytes += total
        self._counted = len(log)

    def before_tool_calls(self, agent: str, count: int) -> StopReason | None:
        """Why ``count`` tool calls must not run; if they may, they are counted."""
        only = self._only
        if only is not None and only.tool_calls is None and not only.others:
            spent = only.spent
            seconds = only.seconds
            if seconds is None or _monotonic() - spent.started < seconds:
                spent.tool_calls += count
                return None
        for guard in self._guards:
            spent = guard.spent
            if guard.tool_calls is not None:
                reason = guard.tool_calls.before_tool_calls(spent, count, agent)
                if reason is not None:
                    return self._noted(spent, reason)
            if guard.seconds is not None and _monotonic() - spent.started >= guard.seconds:
                reason = guard.time.before_tool_calls(spent, count, agent)  # type: ignore[union-attr]
                return self._noted(spent, reason)  # type: ignore[arg-type]
            for condition in guard.others:
                reason = condition.before_tool_calls(spent, count, agent)
                if reason is not None:
                    return self._noted(spent, reason)
        for spent in self.spents:
            spent.tool_calls += count
        return None

    def spend_model_call(self, agent: str, response: ModelResponse) -> None:
        """Count a model call against every budget."""
        usage = response.usage
        prompt_tokens = usage.prompt_tokens
        tokens = prompt_tokens + usage.completion_tokens
        cost = response.cost
        for spent in self.spents:
            spent.tokens += tokens
            spent.cost += cost
            spent.model_calls += 1
        if prompt_tokens > 0:
            mark = self._marks.get(agent)
            if mark is not None and prompt_tokens - self.log_bytes < mark.base:
                mark.base = prompt_tokens - self.log_bytes

    def _prompt_bound(
        self, agent: str, client: _ClientInfo, request: Sequence[Message], tools: Sequence[dict[str, Any]]
    ) -> int:
        """The most tokens the prompt can be: as the model counts it, if it can; else its size in bytes (no
        byte-level tokenizer makes more tokens than bytes), or, if smaller, the tokens the model reported
        for an earlier prompt of the same agent plus the bytes of what the chat appended since (every
        message reaches every view). The first call of an agent with a system message and tools reads its
        whole prompt; later ones cost O(1).
        """
        if client.count_tokens is not None:
            return int(client.count_tokens(request, tools))
        head = getattr(request, "head", None)
        system = head[0].get("content") if head else (request[0].get("content") if len(request) else None)
        mark = self._marks.get(agent)
        if (
            mark is not None
            and (mark.tools is tools or mark.tools == tools)
            and (mark.system is system or mark.system == system)
        ):
            return mark.base + self.log_bytes
        size = self._tools_bound(tools) + _PER_REQUEST
        size += sum(_message_bound(request[index]) for index in range(len(request)))
        self._marks[agent] = _Mark(size - self.log_bytes, system, tools)
        return size

    def _tools_bound(self, tools: Sequence[dict[str, Any]]) -> int:
        cached = self._tool_bytes.get(id(tools))
        if cached is not None and cached[0] is tools:
            return cached[1]
        size = len(json.dumps(list(tools), ensure_ascii=False).encode()) if tools else 0
        if len(self._tool_bytes) >= _TOOL_LISTS_KEPT:  # lists rebuilt at every call would pile up
            self._tool_bytes.clear()
        self._tool_bytes[id(tools)] = (tools, size)
        return size


def _budget_part(condition: Condition) -> Condition | None:
    """What of ``condition`` limits spending, for the chats started inside a chat: a budget, the budgets
    of an ``|``, an ``&`` of budgets only; ``None`` if nothing does (a mention of a word, a custom rule
    about the outer chat)."""
    if isinstance(condition, AnyOf):
        parts = [part for part in map(_budget_part, condition.conditions) if part is not None]
        return None if not parts else parts[0] if len(parts) == 1 else AnyOf(*parts)
    if isinstance(condition, AllOf):
        return condition if all(part.budget for part in condition.conditions) else None
    return condition if condition.budget else None


class _Mark:
    """An agent's prompts since its system message and tools were last measured: every later prompt is
    at most :attr:`base` plus the chat's :attr:`Budgets.log_bytes` at the time (the measured prompt, or
    the tokens the model reported for a later one, plus what the chat appended since)."""

    __slots__ = ("base", "system", "tools")

    def __init__(self, base: int, system: Any, tools: Sequence[dict[str, Any]]) -> None:
        self.base = base
        self.system = system
        self.tools = tools


def _message_bound(message: Message) -> int:
    """The bytes of a message in a model request: its text (UTF-8, measured without encoding ASCII),
    its tool calls, its name and the id of the call it answers, and the template's tokens around it."""
    content = message.get("content")
    if type(content) is str:
        total = len(content) if content.isascii() else len(content.encode())
    elif content is None:
        total = 0
    else:
        total = len(json.dumps(content, ensure_ascii=False).encode())
    calls = message.get("tool_calls")
    if calls:
        total += _calls_bound(calls)
    for key in ("name", "tool_call_id"):
        text = message.get(key)
        if type(text) is str:
            total += len(text.encode())
    return total + _PER_MESSAGE


def _calls_bound(calls: list[dict[str, Any]]) -> int:
    """The bytes of a message's tool calls in a model request: each function's name and arguments, and
    the template's tokens around them."""
    total = 0
    for call in calls:
        function = call.get("function") or {}
        arguments = function.get("arguments", "")
        if type(arguments) is not str:
            arguments = str(arguments)
        total += len(str(function.get("name", ""))) + 16
        total += len(arguments) if arguments.isascii() else len(arguments.encode())
    return total


def _price(client: Any) -> Any:
    """What a call of ``client`` will cost, as ``price(prompt_tokens, completion_tokens)``, if known before
    the call: its ``price_of``, else its ``token_price`` per 1,000 tokens."""
    price = getattr(client, "price_of", None)
    if callable(price):
        return price
    per_1k = getattr(client, "token_price", None)
    if per_1k is None:
        return None
    prompt_price, completion_price = per_1k
    return lambda prompt, completion: (prompt * prompt_price + completion * completion_price) / 1000
