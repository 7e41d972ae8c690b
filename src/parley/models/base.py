"""The protocol every model client implements, and what a model call returns."""

from __future__ import annotations

import functools
import json
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from parley.messages import Message
from parley.records import Record


class ModelError(RuntimeError):
    """A model could not produce a usable reply."""


@dataclass(slots=True, init=False, repr=False, eq=False)
class Usage(Record):
    """Tokens one model call used."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __init__(self, prompt_tokens: int = 0, completion_tokens: int = 0) -> None:
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


_MOST_TOKENS = 10**9
"""More tokens than any one call reports: a bigger count is not taken for one."""
_UNREPORTED: set[str] = set()


def reported_usage(raw: Any, keys: tuple[str, str]) -> Usage | None:
    """The ``Usage`` a response's usage object reports under ``keys`` (prompt, completion), or ``None`` if
    it reports none, or counts that are not whole numbers of tokens (negative, text, out of range)."""
    if not isinstance(raw, dict) or all(raw.get(key) is None for key in keys):
        return None
    counts = [raw.get(key) or 0 for key in keys]
    if not all(type(count) is int and 0 <= count < _MOST_TOKENS for count in counts):
        return None
    return Usage(counts[0], counts[1])


def usage_bound(request: dict[str, Any], reply: Message, source: str) -> Usage:
    """For a server that reports no usage: the most tokens the call can have used, the bytes of what was
    sent and of the reply (no tokenizer makes more tokens than bytes), the reply's at most the
    ``max_tokens`` (or ``max_completion_tokens``) it was sent with, so that budgets stay safe and exact
    where they capped the reply. Warns once per ``source``."""
    if source not in _UNREPORTED:
        _UNREPORTED.add(source)
        warnings.warn(
            f"{source} reported no usable token usage: parley counts the most the call can have used (the "
            "bytes sent and received) for its budgets and cost",
            stacklevel=2,
        )
    sent = {key: request.get(key) for key in ("system", "messages", "tools")}
    as_bytes = functools.partial(json.dumps, ensure_ascii=False, default=str)
    completion = len(as_bytes(reply).encode())
    cap = request.get("max_completion_tokens", request.get("max_tokens"))
    if type(cap) is int and 0 < cap < completion:
        completion = cap
    return Usage(len(as_bytes(sent).encode()), completion)


@dataclass(slots=True, init=False, repr=False, eq=False)
class ModelResponse(Record):
    """One model reply: an assistant message (``content`` and/or ``tool_calls``), usage and cost."""

    message: Message
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0
    model: str = ""
    cached: bool = False

    def __init__(
        self,
        message: Message,
        usage: Usage | None = None,
        cost: float = 0.0,
        model: str = "",
        cached: bool = False,
    ) -> None:
        self.message = message
        self.usage = Usage() if usage is None else usage
        self.cost = cost
        self.model = model
        self.cached = cached


@runtime_checkable
class ModelClient(Protocol):
    """A model: OpenAI-format messages and tool schemas in, one assistant message out.

    ``messages`` starts with the system message(s) and is read-only; copy it to keep it. ``tools`` are
    OpenAI tool schemas (``{"type": "function", "function": {...}}``). ``params`` are request
    parameters such as ``temperature``.
    """

    def create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse: ...

    async def a_create(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, **params: Any
    ) -> ModelResponse: ...


def is_model_client(value: Any) -> bool:
    """``isinstance(value, ModelClient)``, as a protocol check makes it (it has ``create`` and
    ``a_create``), in a fraction of its time: a runtime protocol check lists the protocol's members
    again at each call."""
    return getattr(value, "create", None) is not None and getattr(value, "a_create", None) is not None
