"""Test doubles for models: a scripted model and a model that is a Python function.

Plug either in wherever a model goes, as an agent's ``llm_config``::

    agent = ConversableAgent("assistant", llm_config=ScriptedModel(["Hello!", "TERMINATE"]))
"""

from __future__ import annotations

import inspect
import itertools
import json
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, overload

from parley.messages import Message, MessageSequence, joined_item
from parley.models.base import ModelError, ModelResponse, Usage

_call_ids = itertools.count(1)


def tool_call(name: str, arguments: dict[str, Any] | str | None = None, *, id: str | None = None) -> Message:
    """An OpenAI-format tool call, for scripting a model that calls ``name`` with ``arguments``.

    ``arguments`` may be a dict (encoded as JSON) or a string passed through as is, so a script can
    also produce malformed arguments.
    """
    encoded = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    return {
        "id": id or f"call_{next(_call_ids)}",
        "type": "function",
        "function": {"name": name, "arguments": encoded},
    }


ScriptItem = str | Message | list[Message] | ModelResponse | BaseException
"""A scripted reply: text, a message dict, a list of tool calls, a full response, or an exception to raise."""


class RecordedMessages(Sequence[Message]):
    """The messages of one request as they were when it was sent, kept in O(1) without copying them.

    An agent's request is its system message(s) followed by its view of the conversation, a list that
    grows as the chat goes on and whose messages are never changed once appended. Keeping a reference to
    that list and its length at the time of the request is keeping exactly what was sent, however long
    the chat gets afterwards: later messages are past the recorded length and are not part of it. The
    system messages are copied (they are few, and ``update_system_message`` replaces them in place).

    A list a caller passes to ``create`` itself is held the same way: appending to it later does not
    change the record, changing its items in place would.
    """

    __slots__ = ("_head", "_length", "_tail")

    def __init__(self, messages: Sequence[Message]) -> None:
        if isinstance(messages, RecordedMessages):
            self._head: tuple[Message, ...] = messages._head
            self._tail: Sequence[Message] = messages._tail
            self._length: int = messages._length
            return
        if isinstance(messages, MessageSequence):
            # Its two parts, read directly: copying the sequence would copy the conversation.
            head, tail = messages.head, messages._tail
        else:
            head, tail = (), messages
        self._head = tuple(head)
        self._tail = tail
        self._length = len(tail)

    def __len__(self) -> int:
        return len(self._head) + self._length

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if isinstance(index, slice):
            return list(self)[index]
        return joined_item(self._head, self._tail, len(self), index)

    def __iter__(self) -> Iterator[Message]:
        yield from self._head
        yield from itertools.islice(self._tail, self._length)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Sequence[Message]) -> list[Message]:
        return [*self, *other]

    def __repr__(self) -> str:
        return f"RecordedMessages({list(self)!r})"


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One request a model received: messages (system first), tool schemas and parameters.

    ``messages`` is a read-only sequence of what was sent (a :class:`RecordedMessages` when a test
    double records it): index it, iterate it, compare it with a list, or ``list()`` it to get a list.
    """

    messages: Sequence[Message]
    tools: list[dict[str, Any]] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(
        cls, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None, params: dict[str, Any]
    ) -> ModelRequest:
        """The request a model was sent, kept in O(1) however long the conversation (see
        :class:`RecordedMessages`)."""
        return cls(RecordedMessages(messages), list(tools or ()), params)

    @property
    def system_message(self) -> str | None:
        """The content of the first system message, if any."""
        first = self.messages[0] if self.messages else None
        return first.get("content") if first and first.get("role") == "system" else None

    @property
    def tool_names(self) -> list[str]:
        """Names of the tools offered to the model."""
        return [tool["function"]["name"] for tool in self.tools]


class ScriptExhaustedError(ModelError):
    """A :class:`ScriptedModel` was called more times than it has replies."""


def to_response(item: Any, model: str, usage: Usage | None = None) -> ModelResponse:
    """Turn a scripted item (text, message dict, tool-call list, response) into a :class:`ModelResponse`."""
    if isinstance(item, ModelResponse):  # named after this model unless it names one
        return item if item.model else ModelResponse(item.message, item.usage, item.cost, model, item.cached)
    if isinstance(item, str):
        message: Message = {"role": "assistant", "content": item}
    elif isinstance(item, list):
        message = {"role": "assistant", "content": None, "tool_calls": item}
    elif isinstance(item, dict) and item.get("type") == "function" and "function" in item:
        message = {"role": "assistant", "content": None, "tool_calls": [item]}
    elif isinstance(item, dict):
        message = {"role": "assistant", "content": item.get("content"), **item}
        message["role"] = "assistant"
    else:
        raise TypeError(f"a model reply must be text, a message dict or a list of tool calls, not {item!r}")
    return ModelResponse(message, usage or Usage(), model=model)


class ScriptedModel:
    """A model that replies from a fixed script, in order, and records every request it received.

    Items are replies: a string, a message dict, a :func:`tool_call` or a list of them, a
    :class:`ModelResponse`, or an exception instance to raise. When the script runs out the model raises
    :class:`ScriptExhaustedError` rather than inventing a reply.

    A call costs O(1) however long the chat is: a recorded request holds references to what was sent,
    not copies (see :class:`RecordedMessages`).

    Args:
        replies: the script.
        model: the model name reported in usage and cost.
        usage: tokens to report for every call (default: none).
        cost: cost to report for every call.
        record: keep every request in :attr:`requests` (``False`` keeps none).
        params: request parameters it is configured with, as a real model's ``llm_config`` (a budget
            reads ``max_tokens`` there); a reply reports at most ``max_tokens`` completion tokens.
    """

    def __init__(
        self,
        replies: Iterable[ScriptItem],
        *,
        model: str = "scripted",
        usage: Usage | None = None,
        cost: float = 0.0,
        record: bool = True,
        params: dict[str, Any] | None = None,
    ) -> None:
        if isinstance(replies, str | dict) or not isinstance(replies, Iterable):
            raise TypeError(
                f"ScriptedModel takes a list of replies, not {type(replies).__name__} {replies!r:.60}; "
                "for one reply write ScriptedModel([reply])"
            )
        self._script = list(replies)
        self.params = dict(params or {})
        self._next = 0
        self.model = model
        self._usage = usage
        self._cost = cost
        self._record = record
        self.requests: list[ModelRequest] = []

    @property
    def remaining(self) -> int:
        """How many scripted replies are left."""
        return len(self._script) - self._next

    def create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse:
        if self._record:
            self.requests.append(ModelRequest.of(messages, tools, params))
        if self._next >= len(self._script):
            raise ScriptExhaustedError(
                f"ScriptedModel {self.model!r} has no reply left: it was called {self._next + 1} times "
                f"but its script has {len(self._script)} replies"
            )
        item = self._script[self._next]
        self._next += 1
        if isinstance(item, BaseException):
            raise item
        response = to_response(item, self.model, self._usage)
        response.cost = response.cost or self._cost
        limit = params.get("max_tokens", self.params.get("max_tokens"))
        if isinstance(limit, int) and response.usage.completion_tokens > limit:
            response = replace(response, usage=Usage(response.usage.prompt_tokens, limit))
        return response

    def count_tokens(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None) -> int:
        """The prompt tokens the next reply will report (how budgets see this model's prompts)."""
        return self._next_response().usage.prompt_tokens

    def price_of(self, prompt_tokens: int, completion_tokens: int) -> float:
        """What the next reply will cost, whatever its tokens (a scripted model has a price per call)."""
        return self._next_response().cost or self._cost

    def _next_response(self) -> ModelResponse:
        item = self._script[self._next] if self._next < len(self._script) else ""
        if isinstance(item, BaseException):
            return ModelResponse({}, self._usage or Usage(), self._cost, self.model)
        return to_response(item, self.model, self._usage)

    async def a_create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse:
        return self.create(messages, tools, **params)


ModelFunction = Callable[[ModelRequest], Any]


class FunctionModel:
    """A model whose reply is computed by a Python function of the request.

    The function takes a :class:`ModelRequest` and returns what a :class:`ScriptedModel` item may be
    (text, a message dict, tool calls, a :class:`ModelResponse`); it may be ``async``. The request is
    built in O(1) however long the chat is: ``request.messages`` is a read-only view of what was sent
    (see :class:`RecordedMessages`), so reading ``request.messages[-1]`` copies nothing.

    Args:
        function: the function of the request.
        model: the model name reported in usage and cost.
        record: keep every request in :attr:`requests` (``False`` keeps none).
    """

    def __init__(
        self,
        function: ModelFunction | Callable[[ModelRequest], Awaitable[Any]],
        *,
        model: str = "function",
        record: bool = True,
    ):
        if not callable(function):
            raise TypeError(f"FunctionModel needs a callable, not {function!r}")
        self.function = function
        self.model = model
        self._record = record
        self.requests: list[ModelRequest] = []

    def _request(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None, params: dict[str, Any]
    ) -> ModelRequest:
        request = ModelRequest.of(messages, tools, params)
        if self._record:
            self.requests.append(request)
        return request

    def create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse:
        result = self.function(self._request(messages, tools, params))
        if inspect.iscoroutine(result):
            result.close()
            raise TypeError("this FunctionModel's function is async: run the chat with a_initiate_chat")
        return to_response(result, self.model)

    async def a_create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse:
        result = self.function(self._request(messages, tools, params))
        if inspect.isawaitable(result):
            result = await result
        return to_response(result, self.model)
