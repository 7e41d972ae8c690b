"""Where a streaming model call sends its text as it arrives.

A model client whose request parameters include ``stream=True`` streams the reply and, while doing so,
passes every piece of text (and of tool-call arguments) to the sink in :data:`token_sink`, if one is
set. The :class:`~parley.models.base.ModelResponse` it returns is the same as without streaming. The
console sets a sink for the duration of an agent's model call when it prints to a terminal.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass

from parley.records import FrozenRecord


@dataclass(slots=True, init=False, repr=False, eq=False)
class StreamedText(FrozenRecord):
    """A piece of a streamed reply: text of the content, or of a tool call's arguments; or, with
    ``broken_off``, word that the reply streamed so far was given up (its model failed, and another is
    asked)."""

    text: str
    tool_call: str | None = None
    """The name of the tool whose arguments this text belongs to; ``None`` for the content."""
    call_index: int = 0
    """Which of the reply's tool calls the text belongs to (several may call the same tool)."""
    broken_off: bool = False

    def __init__(
        self, text: str, tool_call: str | None = None, call_index: int = 0, broken_off: bool = False
    ) -> None:
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "tool_call", tool_call)
        object.__setattr__(self, "call_index", call_index)
        object.__setattr__(self, "broken_off", broken_off)


TokenSink = Callable[[StreamedText], None]

token_sink: ContextVar[TokenSink | None] = ContextVar("parley_token_sink", default=None)
"""The sink of the model call running in this context, or ``None``."""
