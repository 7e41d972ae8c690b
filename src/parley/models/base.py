"""The protocol every model client implements, and what a model call returns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from parley.messages import Message


class ModelError(RuntimeError):
    """A model could not produce a usable reply."""


@dataclass(slots=True)
class Usage:
    """Tokens one model call used."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(slots=True)
class ModelResponse:
    """One model reply: an assistant message (``content`` and/or ``tool_calls``), usage and cost."""

    message: Message
    usage: Usage = field(default_factory=Usage)
    cost: float = 0.0
    model: str = ""
    cached: bool = False


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
